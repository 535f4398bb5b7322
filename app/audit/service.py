from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.audit.schemas import AuditOut, AuditPage
from app.errors import NotFoundError


class AuditService:
    """One tenant's audit trail."""

    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.audit = AuditRepository(db)
        self.tenant_id = tenant_id

    async def get(self, audit_id: int) -> AuditOut:
        """One assembly's audit row."""
        record = await self.audit.get(audit_id, tenant_id=self.tenant_id)
        if record is None:
            raise NotFoundError("audit_not_found", f"no audit row {audit_id}")
        return AuditOut.model_validate(record)

    async def list(
        self,
        *,
        session_id: str | None = None,
        turn_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        summary_triggered: bool | None = None,
        prune_triggered: bool | None = None,
        overflow_rejected: bool | None = None,
        before_id: int | None = None,
        limit: int = 50,
    ) -> AuditPage:
        """Audit rows, newest first, filtered, a page at a time."""
        rows = await self.audit.list(
            tenant_id=self.tenant_id,
            session_id=session_id,
            turn_id=turn_id,
            since=since,
            until=until,
            summary_triggered=summary_triggered,
            prune_triggered=prune_triggered,
            overflow_rejected=overflow_rejected,
            before_id=before_id,
            limit=limit + 1,
        )
        page = rows[:limit]
        return AuditPage(
            items=[AuditOut.model_validate(row) for row in page],
            next_before_id=page[-1].id if len(rows) > limit else None,
        )
