"""Every query on turns, messages and summaries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Select, bindparam, literal, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import MessageRecord, MessageState, SummaryRecord, TurnRecord, TurnStatus


@dataclass(frozen=True)
class SummaryHead:
    """What an assembly reads of a session's latest summary on every turn; its content is
    read once per process (summaries never change once written, see ``SummaryCache``)."""

    id: int
    turn_seq: int
    from_message_id: int | None
    from_seq: int
    to_seq: int


# The statements of every assembly, built once: making a statement and its cache key costs
# more than running it on an index.
_TURN = select(TurnRecord).where(
    TurnRecord.id == bindparam("turn_id"),
    TurnRecord.tenant_id == bindparam("tenant_id"),
    TurnRecord.session_id == bindparam("session_id"),
)
_ACTIVE_MESSAGES = (
    select(MessageRecord)
    .where(
        MessageRecord.tenant_id == bindparam("tenant_id"),
        MessageRecord.session_id == bindparam("session_id"),
        MessageRecord.state == MessageState.ACTIVE,
    )
    .order_by(MessageRecord.seq)
)
_LATEST_SUMMARY_HEAD = (
    select(
        SummaryRecord.id,
        SummaryRecord.turn_seq,
        SummaryRecord.from_message_id,
        SummaryRecord.from_seq,
        SummaryRecord.to_seq,
    )
    .where(
        SummaryRecord.tenant_id == bindparam("tenant_id"),
        SummaryRecord.session_id == bindparam("session_id"),
    )
    .order_by(SummaryRecord.id.desc())
    .limit(1)
)
_OPEN_TURN_ID = (
    select(TurnRecord.id)
    .where(
        TurnRecord.tenant_id == bindparam("tenant_id"),
        TurnRecord.session_id == bindparam("session_id"),
        TurnRecord.status == TurnStatus.OPEN,
    )
    .limit(1)
    .scalar_subquery()
)


def _open_turn_and_latest_summary() -> Select[str | None, int, int, int | None, int, int]:
    head = _LATEST_SUMMARY_HEAD.subquery()
    # One row whatever there is: a constant row, the summary head joined to it if any.
    one = select(literal(1).label("one")).subquery()
    return select(
        _OPEN_TURN_ID,
        head.c.id,
        head.c.turn_seq,
        head.c.from_message_id,
        head.c.from_seq,
        head.c.to_seq,
    ).select_from(one.outerjoin(head, true()))


_OPEN_TURN_AND_LATEST_SUMMARY = _open_turn_and_latest_summary()


class TurnRepository:
    """One tenant's turns, messages and summaries: every query filters on the tenant, so
    that a session id another tenant also uses never reaches that tenant's rows."""

    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    def _params(self, session_id: str) -> dict[str, str]:
        return {"tenant_id": self.tenant_id, "session_id": session_id}

    async def get_turn(self, session_id: str, turn_id: str) -> TurnRecord | None:
        params = {**self._params(session_id), "turn_id": turn_id}
        return (await self.db.execute(_TURN, params)).scalar_one_or_none()

    async def active_messages(self, session_id: str) -> Sequence[MessageRecord]:
        """The prompt's raw conversation: active messages in order (one index range scan;
        summarised and pruned history is never read)."""
        return (await self.db.execute(_ACTIVE_MESSAGES, self._params(session_id))).scalars().all()

    async def latest_summary(self, session_id: str) -> SummaryRecord | None:
        query = (
            select(SummaryRecord)
            .where(
                SummaryRecord.tenant_id == self.tenant_id, SummaryRecord.session_id == session_id
            )
            .order_by(SummaryRecord.id.desc())
            .limit(1)
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    async def open_turn_and_latest_summary(
        self, session_id: str
    ) -> tuple[str | None, SummaryHead | None]:
        """The id of the session's open turn, if any, and its latest summary's head, if any:
        what a turn start reads besides the messages, in one round trip.

        Run it after the session lock, never within the locking statement: a statement's
        snapshot predates its wait for the lock, so it would miss a turn just opened."""
        query = _OPEN_TURN_AND_LATEST_SUMMARY
        row = (await self.db.execute(query, self._params(session_id))).one()
        return row[0], SummaryHead(*row[1:]) if row[1] is not None else None

    async def latest_summary_head(self, session_id: str) -> SummaryHead | None:
        query = _LATEST_SUMMARY_HEAD
        row = (await self.db.execute(query, self._params(session_id))).one_or_none()
        return SummaryHead(*row) if row is not None else None

    async def summary(self, summary_id: int) -> SummaryRecord | None:
        query = select(SummaryRecord).where(
            SummaryRecord.tenant_id == self.tenant_id, SummaryRecord.id == summary_id
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    async def set_state(
        self,
        session_id: str,
        message_ids: Sequence[int],
        state: MessageState,
        *,
        summary_id: int | None = None,
    ) -> None:
        if not message_ids:
            return
        values: dict[str, object] = {"state": state}
        if summary_id is not None:
            values["summary_id"] = summary_id
        await self.db.execute(
            update(MessageRecord)
            .where(
                MessageRecord.tenant_id == self.tenant_id,
                MessageRecord.session_id == session_id,
                MessageRecord.id.in_(message_ids),
            )
            .values(**values)
            .execution_options(synchronize_session=False)
        )

    async def list_messages(
        self, session_id: str, *, after_seq: int, limit: int, state: MessageState | None
    ) -> Sequence[MessageRecord]:
        query = (
            select(MessageRecord)
            .where(
                MessageRecord.tenant_id == self.tenant_id,
                MessageRecord.session_id == session_id,
                MessageRecord.seq > after_seq,
            )
            .order_by(MessageRecord.seq)
            .limit(limit)
        )
        if state is not None:
            query = query.where(MessageRecord.state == state)
        return (await self.db.execute(query)).scalars().all()

    async def list_summaries(self, session_id: str, *, limit: int) -> Sequence[SummaryRecord]:
        query = (
            select(SummaryRecord)
            .where(
                SummaryRecord.tenant_id == self.tenant_id, SummaryRecord.session_id == session_id
            )
            .order_by(SummaryRecord.id.desc())
            .limit(limit)
        )
        return (await self.db.execute(query)).scalars().all()
