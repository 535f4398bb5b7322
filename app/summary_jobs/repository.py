"""Every query on summary jobs (and what a worker reads and writes to run one)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import (
    SummaryJobRecord,
    SummaryJobStatus,
)
from app.models.base import utcnow

PENDING = (SummaryJobStatus.QUEUED, SummaryJobStatus.RUNNING)


class SummaryJobRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    def add(self, job: SummaryJobRecord) -> None:
        self.db.add(job)

    async def pending_for_session(self, tenant_id: str, session_id: str) -> SummaryJobRecord | None:
        """The session's queued or running job, if any (there is at most one)."""
        query = (
            select(SummaryJobRecord)
            .where(
                SummaryJobRecord.tenant_id == tenant_id,
                SummaryJobRecord.session_id == session_id,
                SummaryJobRecord.status.in_(PENDING),
            )
            .order_by(SummaryJobRecord.id)
            .limit(1)
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    async def finished_unapplied(
        self, tenant_id: str, session_id: str
    ) -> Sequence[SummaryJobRecord]:
        """Done or failed jobs whose outcome no assembly has taken in yet, oldest first."""
        query = (
            select(SummaryJobRecord)
            .where(
                SummaryJobRecord.tenant_id == tenant_id,
                SummaryJobRecord.session_id == session_id,
                SummaryJobRecord.status.in_((SummaryJobStatus.DONE, SummaryJobStatus.FAILED)),
                SummaryJobRecord.applied_at.is_(None),
            )
            .order_by(SummaryJobRecord.id)
        )
        return (await self.db.execute(query)).scalars().all()

    async def list_for_session(
        self, tenant_id: str, session_id: str, *, limit: int
    ) -> Sequence[SummaryJobRecord]:
        query = (
            select(SummaryJobRecord)
            .where(
                SummaryJobRecord.tenant_id == tenant_id, SummaryJobRecord.session_id == session_id
            )
            .order_by(SummaryJobRecord.id.desc())
            .limit(limit)
        )
        return (await self.db.execute(query)).scalars().all()

    async def claim(self, *, token: str, lease_seconds: float) -> SummaryJobRecord | None:
        """Take the oldest queued job, or a running one whose lease expired (its worker is
        gone). Postgres: FOR UPDATE SKIP LOCKED lets many workers claim side by side; SQLite
        serialises writers, and the conditional UPDATE makes a lost race claim nothing."""
        now = utcnow()
        claimable = or_(
            SummaryJobRecord.status == SummaryJobStatus.QUEUED,
            (SummaryJobRecord.status == SummaryJobStatus.RUNNING)
            & (SummaryJobRecord.lease_expires_at < now),
        )
        candidate = (
            await self.db.execute(
                select(SummaryJobRecord.id)
                .where(claimable)
                .order_by(SummaryJobRecord.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
        ).scalar_one_or_none()
        if candidate is None:
            return None
        claimed = await self.db.execute(
            update(SummaryJobRecord)
            .where(SummaryJobRecord.id == candidate, claimable)
            .values(
                status=SummaryJobStatus.RUNNING,
                attempts=SummaryJobRecord.attempts + 1,
                lease_token=token,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                heartbeat_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        query = select(SummaryJobRecord).where(SummaryJobRecord.id == candidate)
        return (await self.db.execute(query.execution_options(populate_existing=True))).scalar_one()

    async def renew(self, job_id: int, *, token: str, lease_seconds: float) -> bool:
        """Extend a claim's lease; False when the claim was lost."""
        now = utcnow()
        result = await self.db.execute(
            update(SummaryJobRecord)
            .where(
                SummaryJobRecord.id == job_id,
                SummaryJobRecord.lease_token == token,
                SummaryJobRecord.status == SummaryJobStatus.RUNNING,
            )
            .values(heartbeat_at=now, lease_expires_at=now + timedelta(seconds=lease_seconds))
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]

    async def release(self, job_id: int, *, token: str) -> None:
        """Hand a claimed job back to the queue (its worker is shutting down)."""
        await self.db.execute(
            update(SummaryJobRecord)
            .where(
                SummaryJobRecord.id == job_id,
                SummaryJobRecord.lease_token == token,
                SummaryJobRecord.status == SummaryJobStatus.RUNNING,
            )
            .values(status=SummaryJobStatus.QUEUED, lease_token=None, lease_expires_at=None)
            .execution_options(synchronize_session=False)
        )

    async def finish(self, job_id: int, *, token: str | None, **values: Any) -> bool:
        """Close a job if ``token`` still holds it (None: whoever holds it); False if not."""
        conditions = [SummaryJobRecord.id == job_id, SummaryJobRecord.status.in_(PENDING)]
        if token is not None:
            conditions.append(SummaryJobRecord.lease_token == token)
        result = await self.db.execute(
            update(SummaryJobRecord)
            .where(*conditions)
            .values(finished_at=utcnow(), lease_expires_at=None, **values)
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]

    async def pending_stats(self) -> tuple[int, datetime | None]:
        """How many jobs are pending, and when the oldest was queued."""
        row = (
            await self.db.execute(
                select(func.count(), func.min(SummaryJobRecord.created_at)).where(
                    SummaryJobRecord.status.in_(PENDING)
                )
            )
        ).one()
        oldest = row[1]
        if isinstance(oldest, str):  # SQLite aggregates lose the column type
            oldest = datetime.fromisoformat(oldest)
        if oldest is not None and oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=utcnow().tzinfo)
        return int(row[0]), oldest

    async def mark_applied(self, job_ids: Sequence[int]) -> None:
        if not job_ids:
            return
        await self.db.execute(
            update(SummaryJobRecord)
            .where(SummaryJobRecord.id.in_(job_ids))
            .values(applied_at=utcnow())
            .execution_options(synchronize_session=False)
        )
