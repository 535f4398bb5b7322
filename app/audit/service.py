from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.audit.schemas import (
    AuditFilter,
    AuditOut,
    AuditPage,
    AuditRollup,
    LatencyStats,
    TokenStats,
)
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
        self, filters: AuditFilter, *, before_id: int | None = None, limit: int = 50
    ) -> AuditPage:
        """Audit rows, newest first, filtered, a page at a time."""
        if filters.tenant_id not in (None, self.tenant_id):
            return AuditPage(items=[], next_before_id=None)  # another tenant's: none of yours
        scoped = filters.model_copy(update={"tenant_id": self.tenant_id})
        rows = await self.audit.list(scoped, before_id=before_id, limit=limit + 1)
        page = rows[:limit]
        return AuditPage(
            items=[AuditOut.model_validate(row) for row in page],
            next_before_id=page[-1].id if len(rows) > limit else None,
        )

    async def rollup(self, session_id: str) -> AuditRollup:
        """A session's assemblies summed up; 404 when it has none (the rows outlive the
        session, so a deleted session still has its roll-up)."""
        figures = await self.audit.rollup(self.tenant_id, session_id)
        if figures is None:
            raise NotFoundError("audit_not_found", f"no audit rows for session {session_id!r}")
        return AuditRollup(
            session_id=session_id,
            tenant_id=figures.newest.tenant_id,
            model_alias=figures.newest.model_alias,
            first_at=figures.first_at,
            last_at=figures.last_at,
            assemblies=figures.assemblies,
            turns=figures.turns,
            rejections=figures.rejections,
            summaries=figures.summaries,
            summary_triggers=figures.summary_triggers,
            prunes=figures.prunes,
            summary_fallbacks=figures.summary_fallbacks,
            estimator_fallbacks=figures.estimator_fallbacks,
            prompt_tokens=TokenStats(
                min=figures.tokens_min, avg=figures.tokens_avg, max=figures.tokens_max
            ),
            latency_ms=LatencyStats(
                p50=figures.latency_p50, p95=figures.latency_p95, max=figures.latency_max
            ),
            last_rejection_id=figures.last_rejection_id,
        )
