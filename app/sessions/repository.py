"""Every query on sessions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import String, bindparam, delete, func, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import DriverStatement, WriteBatch, connection_of, fetch_rows, update_row
from app.models import (
    IdempotencyRecord,
    MessageRecord,
    SessionRecord,
    SummaryJobRecord,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)
from app.models.base import utcnow

# Built once: making a statement and its cache key costs more than running it on an index.
_SESSION = select(SessionRecord).where(
    SessionRecord.tenant_id == bindparam("tenant_id"), SessionRecord.id == bindparam("session_id")
)
_LOCKED_SESSION = _SESSION.with_for_update()


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A session as an agent call reads it under the session's lock: plain values, what the
    turn path needs (the ORM object costs more to load than the statement costs to run)."""

    tenant_id: str
    id: str
    model: str
    system_global: str | None
    system_mode: str | None
    system_role: str | None
    goal: str | None
    mode: str | None
    memory: str | None
    max_output_tokens: int | None
    context_limit: int | None
    tools: list[Any] | None
    turn_count: int
    message_count: int
    block_caps: dict[str, Any] | None
    recall: dict[str, Any] | None
    prompt_fingerprint: list[Any] | None
    created_at: datetime


#: The columns of ``SessionRow``, in its order (each named as the ORM's attribute).
_LOCKED_ROW = DriverStatement(
    select(*(getattr(SessionRecord, field.name) for field in fields(SessionRow)))
    .where(
        SessionRecord.tenant_id == bindparam("tenant_id"),
        SessionRecord.id == bindparam("session_id"),
    )
    .with_for_update()
)


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

    async def locked_row(self, session_id: str) -> SessionRow | None:
        """A session, its row locked until the request ends, so that concurrent calls on one
        session run one after the other (Postgres; SQLite takes its database lock at the
        start of every transaction)."""
        params = {"tenant_id": self.tenant_id, "session_id": session_id}
        rows = await fetch_rows(await connection_of(self.db), _LOCKED_ROW, params)
        return SessionRow(*rows[0]) if rows else None

    def add(self, record: SessionRecord) -> None:
        self.db.add(record)

    async def delete(self, record: SessionRecord) -> None:
        await self.db.delete(record)

    async def count(self) -> int:
        """How many sessions the tenant has."""
        query = select(func.count()).where(SessionRecord.tenant_id == self.tenant_id)
        return (await self.db.execute(query)).scalar_one()

    async def ids_also_used_by(self, tenant_id: str) -> Sequence[str]:
        """This tenant's session ids that ``tenant_id`` uses too, locking this tenant's
        sessions until the transaction ends (no turn runs on them meanwhile)."""
        ours = select(SessionRecord.id).where(SessionRecord.tenant_id == self.tenant_id)
        await self.db.execute(ours.with_for_update())
        theirs = select(SessionRecord.id).where(SessionRecord.tenant_id == tenant_id)
        query = ours.where(SessionRecord.id.in_(theirs)).order_by(SessionRecord.id)
        return (await self.db.execute(query)).scalars().all()

    async def hand_over(self, tenant_id: str) -> None:
        """Give every session of this tenant, with its turns, messages, summaries, summary
        jobs and recorded answers, to ``tenant_id``.

        A child row's key names its session's tenant, and the foreign keys are checked per
        statement (they do not cascade updates): so the sessions are copied under the new
        tenant, the children pointed at the copies, then the originals deleted, all in the
        caller's transaction. The caller has checked that no session id is taken
        (:meth:`ids_also_used_by`). A recorded answer whose Idempotency-Key the new tenant
        already uses is dropped: the key stands for the new tenant's own request.
        """
        sessions = SessionRecord.__table__
        copied = select(
            *(
                literal(tenant_id, String()).label("tenant_id")
                if column.name == "tenant_id"
                else column
                for column in sessions.columns
            )
        ).where(sessions.c.tenant_id == self.tenant_id)
        await self.db.execute(
            insert(SessionRecord).from_select([column.name for column in sessions.columns], copied)
        )
        taken = select(IdempotencyRecord.key).where(IdempotencyRecord.tenant_id == tenant_id)
        await self.db.execute(
            delete(IdempotencyRecord).where(
                IdempotencyRecord.tenant_id == self.tenant_id, IdempotencyRecord.key.in_(taken)
            )
        )
        for child in (
            TurnRecord,
            MessageRecord,
            SummaryRecord,
            SummaryJobRecord,
            IdempotencyRecord,
        ):
            await self.db.execute(
                update(child).where(child.tenant_id == self.tenant_id).values(tenant_id=tenant_id)
            )
        await self.db.execute(
            delete(SessionRecord).where(SessionRecord.tenant_id == self.tenant_id)
        )

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
