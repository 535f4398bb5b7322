"""Every query on sessions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import WriteBatch, update_row
from app.models import SessionRecord, TurnRecord, TurnStatus
from app.models.base import utcnow

# Built once: making a statement and its cache key costs more than running it on an index.
_SESSION = select(SessionRecord).where(
    SessionRecord.tenant_id == bindparam("tenant_id"), SessionRecord.id == bindparam("session_id")
)
_LOCKED_SESSION = _SESSION.with_for_update()


class SessionRepository:
    """One tenant's sessions: no query here reaches another tenant's rows."""

    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    async def get(self, session_id: str, *, lock: bool = False) -> SessionRecord | None:
        """A session; with ``lock``, the row stays locked until the request ends, so that
        concurrent calls on one session run one after the other (Postgres; SQLite takes its
        database lock at the start of every transaction)."""
        query = _LOCKED_SESSION if lock else _SESSION
        params = {"tenant_id": self.tenant_id, "session_id": session_id}
        return (await self.db.execute(query, params)).scalar_one_or_none()

    def add(self, record: SessionRecord) -> None:
        self.db.add(record)

    async def delete(self, record: SessionRecord) -> None:
        await self.db.delete(record)

    async def open_turn(self, session_id: str) -> TurnRecord | None:
        query = select(TurnRecord).where(
            TurnRecord.tenant_id == self.tenant_id,
            TurnRecord.session_id == session_id,
            TurnRecord.status == TurnStatus.OPEN,
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    def record_assembly(
        self,
        batch: WriteBatch,
        session_id: str,
        *,
        turn_count: int,
        message_count: int,
        prompt_fingerprint: Sequence[str] | None = None,
    ) -> None:
        """The session's counters after a turn's writes (and the prompt it was handed)."""
        values: dict[str, Any] = {
            "turn_count": turn_count,
            "message_count": message_count,
            "updated_at": utcnow(),
        }
        if prompt_fingerprint is not None:
            values["prompt_fingerprint"] = list(prompt_fingerprint)
        columns = tuple(values)
        batch.add(
            ("record_assembly", columns),
            update_row(SessionRecord, {"tenant_id": "tenant_id", "id": "session_id"}, columns),
            {**values, "tenant_id": self.tenant_id, "session_id": session_id},
        )
