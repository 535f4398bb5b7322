"""Every query on API keys."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import ApiKeyRecord


class ApiKeyRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    def add(self, record: ApiKeyRecord) -> None:
        self.db.add(record)

    async def get(self, key_id: str) -> ApiKeyRecord | None:
        return await self.db.get(ApiKeyRecord, key_id)

    async def any_active(self) -> bool:
        query = select(ApiKeyRecord.id).where(ApiKeyRecord.revoked_at.is_(None)).limit(1)
        return (await self.db.execute(query)).first() is not None

    async def list(self) -> Sequence[ApiKeyRecord]:
        query = select(ApiKeyRecord).order_by(ApiKeyRecord.tenant_id, ApiKeyRecord.created_at)
        return (await self.db.execute(query)).scalars().all()
