from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


class SummaryJobOut(BaseModel):
    """A summary job as an operator sees it."""

    id: int
    session_id: str
    turn_id: str | None
    turn_seq: int
    reason: str
    from_seq: int
    to_seq: int
    status: str
    attempts: int
    lease_expires_at: datetime | None
    heartbeat_at: datetime | None
    summary_id: int | None
    failure: str | None
    applied_at: datetime | None
    created_at: datetime
    finished_at: datetime | None


class SummaryJobList(BaseModel):
    jobs: list[SummaryJobOut]
