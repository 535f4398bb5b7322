"""Every query on idempotency records."""

from __future__ import annotations

import hashlib

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import IdempotencyRecord


class IdempotencyRepository:
    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    async def lock(self, key: str) -> None:
        """Hold the key until the transaction ends, so that concurrent requests with one key
        run one after the other and the later ones find the first one's record. (SQLite
        needs nothing: every transaction there holds the database's write lock.)"""
        if self.db.get_bind().dialect.name != "postgresql":
            return
        digest = hashlib.sha256(f"{self.tenant_id}\x00{key}".encode()).digest()
        lock_id = int.from_bytes(digest[:8], "big", signed=True)
        await self.db.execute(select(func.pg_advisory_xact_lock(lock_id)))

    async def get(self, key: str) -> IdempotencyRecord | None:
        return await self.db.get(IdempotencyRecord, (self.tenant_id, key))

    def add(self, record: IdempotencyRecord) -> None:
        self.db.add(record)

    async def delete(self, record: IdempotencyRecord) -> None:
        await self.db.delete(record)
        await self.db.flush()
