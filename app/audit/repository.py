"""Every query on the audit table."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import AuditRecord


class AuditRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    def add(self, record: AuditRecord) -> None:
        self.db.add(record)

    async def get(self, audit_id: int, *, tenant_id: str) -> AuditRecord | None:
        query = select(AuditRecord).where(
            AuditRecord.id == audit_id, AuditRecord.tenant_id == tenant_id
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    async def list(
        self,
        *,
        tenant_id: str,
        session_id: str | None,
        turn_id: str | None,
        since: datetime | None,
        until: datetime | None,
        summary_triggered: bool | None,
        prune_triggered: bool | None,
        overflow_rejected: bool | None,
        before_id: int | None,
        limit: int,
    ) -> Sequence[AuditRecord]:
        """Newest first; ``before_id`` is the cursor (ids only grow, so pages stay stable
        while rows are being added)."""
        query = (
            select(AuditRecord)
            .where(AuditRecord.tenant_id == tenant_id)
            .order_by(AuditRecord.id.desc())
            .limit(limit)
        )
        if session_id is not None:
            query = query.where(AuditRecord.session_id == session_id)
        if turn_id is not None:
            query = query.where(AuditRecord.turn_id == turn_id)
        if since is not None:
            query = query.where(AuditRecord.created_at >= since)
        if until is not None:
            query = query.where(AuditRecord.created_at < until)
        if summary_triggered is not None:
            query = query.where(AuditRecord.summary_triggered == summary_triggered)
        if prune_triggered is not None:
            query = query.where(AuditRecord.prune_triggered == prune_triggered)
        if overflow_rejected is not None:
            query = query.where(AuditRecord.overflow_rejected == overflow_rejected)
        if before_id is not None:
            query = query.where(AuditRecord.id < before_id)
        return (await self.db.execute(query)).scalars().all()
