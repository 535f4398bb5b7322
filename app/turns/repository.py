"""Every query on turns, messages and summaries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, and_, bindparam, literal, select, true, update
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
    #: With the id, what names this summary for good: SQLite may give a deleted row's id to
    #: a new row, never its creation time too.
    created_at: datetime


# The statements of every assembly, built once: making a statement and its cache key costs
# more than running it on an index.
_TURN = select(TurnRecord).where(
    TurnRecord.id == bindparam("turn_id"),
    TurnRecord.tenant_id == bindparam("tenant_id"),
    TurnRecord.session_id == bindparam("session_id"),
)
_LATEST_SUMMARY_HEAD = (
    select(
        SummaryRecord.id,
        SummaryRecord.turn_seq,
        SummaryRecord.from_message_id,
        SummaryRecord.from_seq,
        SummaryRecord.to_seq,
        SummaryRecord.created_at,
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


def _assembly_state() -> Select[
    str | None,
    int | None,
    int | None,
    int | None,
    int | None,
    int | None,
    datetime | None,
    MessageRecord | None,
]:
    head = _LATEST_SUMMARY_HEAD.subquery()
    # At least one row whatever there is: a constant row, the summary head joined to it if
    # there is one, and each active message joined to that.
    one = select(literal(1).label("one")).subquery()
    active = and_(
        MessageRecord.tenant_id == bindparam("tenant_id"),
        MessageRecord.session_id == bindparam("session_id"),
        MessageRecord.state == MessageState.ACTIVE,
    )
    return (
        select(
            _OPEN_TURN_ID,
            head.c.id,
            head.c.turn_seq,
            head.c.from_message_id,
            head.c.from_seq,
            head.c.to_seq,
            head.c.created_at,
            MessageRecord,
        )
        .select_from(one.outerjoin(head, true()).outerjoin(MessageRecord, active))
        .order_by(MessageRecord.seq)
    )


_ASSEMBLY_STATE = _assembly_state()


@dataclass(frozen=True)
class AssemblyState:
    """What an assembly reads of its session after the lock."""

    open_turn_id: str | None
    latest_summary: SummaryHead | None
    #: Active messages in order.
    active: list[MessageRecord]


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

    async def assembly_state(self, session_id: str) -> AssemblyState:
        """The session's open turn, latest summary and active messages: everything an
        assembly reads besides the session row, in one round trip.

        Run it after the session lock, never within the locking statement: a statement's
        snapshot predates its wait for the lock, so it would miss what the previous holder
        of the lock wrote."""
        rows = (await self.db.execute(_ASSEMBLY_STATE, self._params(session_id))).all()
        first = rows[0]
        head = SummaryHead(*first[1:7]) if first[1] is not None else None  # type: ignore[arg-type]
        return AssemblyState(
            open_turn_id=first[0],
            latest_summary=head,
            active=[row[7] for row in rows if row[7] is not None],
        )

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
