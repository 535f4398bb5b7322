"""Every query on turns, messages and summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    insert,
    literal,
    literal_column,
    null,
    nulls_first,
    select,
    true,
    type_coerce,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.dml import Update
from sqlalchemy.sql.selectable import CompoundSelect

from app.budget.summary import SummaryContent, SummaryItem
from app.db import (
    AnyOf,
    DmlStatement,
    DriverStatement,
    WriteBatch,
    bound_values,
    connection_of,
    dump_json,
    fetch_rows,
    insert_rows,
    update_row,
)
from app.models import (
    AuditRecord,
    MessageRecord,
    MessageState,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)
from app.models.base import utcnow


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


@dataclass(frozen=True, slots=True)
class TurnRow:
    """A turn as its calls read it: plain values, in the order of ``_TURN``'s columns."""

    id: str
    session_id: str
    seq: int
    status: str
    steps: int
    assistant_output: str | None
    usage: dict[str, Any] | None
    started_at: datetime
    completed_at: datetime | None


# The statements of every assembly, built once: making a statement and its cache key costs
# more than running it on an index.
_TURN = DriverStatement(
    select(
        TurnRecord.id,
        TurnRecord.session_id,
        TurnRecord.seq,
        TurnRecord.status,
        TurnRecord.steps,
        TurnRecord.assistant_output,
        TurnRecord.usage,
        TurnRecord.started_at,
        TurnRecord.completed_at,
    ).where(
        TurnRecord.id == bindparam("turn_id"),
        TurnRecord.tenant_id == bindparam("tenant_id"),
        TurnRecord.session_id == bindparam("session_id"),
    )
)


def _latest_summary(*columns: Any) -> Select[Any]:
    """A session's newest summary (the one every later prompt shows): the one definition of
    it, for the whole row or the head an assembly reads."""
    return (
        select(*columns)
        .where(
            SummaryRecord.tenant_id == bindparam("tenant_id"),
            SummaryRecord.session_id == bindparam("session_id"),
        )
        .order_by(SummaryRecord.id.desc())
        .limit(1)
    )


_LATEST_SUMMARY: Select[SummaryRecord] = _latest_summary(SummaryRecord)
_LATEST_SUMMARY_HEAD = _latest_summary(
    SummaryRecord.id,
    SummaryRecord.turn_seq,
    SummaryRecord.from_message_id,
    SummaryRecord.from_seq,
    SummaryRecord.to_seq,
    SummaryRecord.created_at,
)
_OPEN_TURN = (
    select(TurnRecord.id, TurnRecord.seq, TurnRecord.steps)
    .where(
        TurnRecord.tenant_id == bindparam("tenant_id"),
        TurnRecord.session_id == bindparam("session_id"),
        TurnRecord.status == TurnStatus.OPEN,
    )
    .limit(1)
    .subquery()
)
#: What an assembly reads of each active message: everything but the bookkeeping columns.
_MESSAGE_COLUMNS = (
    MessageRecord.id,
    MessageRecord.seq,
    MessageRecord.turn_seq,
    MessageRecord.role,
    MessageRecord.content,
    MessageRecord.name,
    MessageRecord.tool_calls,
    MessageRecord.tool_call_id,
    MessageRecord.reasoning_content,
    MessageRecord.is_error,
    MessageRecord.answers_seq,
    MessageRecord.token_count,
    MessageRecord.token_encoding,
)

#: The columns a kept row is not read again for: the large ones, which never change.
_KEPT_COLUMNS = frozenset({"content", "tool_calls", "reasoning_content"})


def _assembly_snapshot(dialect: str) -> CompoundSelect[Any]:
    head = _LATEST_SUMMARY_HEAD.subquery()
    # At least one row whatever there is: a constant row, the open turn and the summary head
    # joined to it if there are; then each active message.
    one = select(literal(1).label("one")).subquery()
    active = and_(
        MessageRecord.tenant_id == bindparam("tenant_id"),
        MessageRecord.session_id == bindparam("session_id"),
        MessageRecord.state == MessageState.ACTIVE,
    )
    # Ids for the rows this assembly will insert, taken in its snapshot read so that its
    # writes need nothing back from the database. Postgres draws them from each table's
    # sequence; SQLite (one writer at a time, BEGIN IMMEDIATE) continues from the largest id,
    # as its own rowid allocation does.
    # A summary's id is taken only when a turn start expects to store one (a fold made between
    # turns, ``app.summarize.ahead``), so that it goes in the batch with the other writes.
    tables: tuple[type[MessageRecord] | type[AuditRecord] | type[SummaryRecord], ...] = (
        MessageRecord,
        AuditRecord,
        SummaryRecord,
    )
    counts = ("new_messages", "new_audit_rows", "new_summaries")
    if dialect == "postgresql":
        reserved = [
            select(
                func.array_agg(func.nextval(func.pg_get_serial_sequence(table.__tablename__, "id")))
            )
            .select_from(func.generate_series(1, bindparam(count, type_=Integer)))
            .scalar_subquery()
            for table, count in zip(tables, counts, strict=True)
        ]
    else:
        reserved = [
            select(func.coalesce(func.max(table.id), 0)).scalar_subquery() for table in tables
        ]
    # The content of a row this worker keeps (its seq at most ``known_seq``) is left out:
    # it never changes once stored (app.turns.kept_rows). Everything else is read.
    unknown = MessageRecord.seq > bindparam("known_seq", type_=Integer)
    columns = [
        case((unknown, column), else_=null()).label(column.key)
        if column.key in _KEPT_COLUMNS
        else column
        for column in _MESSAGE_COLUMNS
    ]
    header = [
        _OPEN_TURN.c.id,
        _OPEN_TURN.c.seq,
        _OPEN_TURN.c.steps,
        head.c.id,
        head.c.turn_seq,
        head.c.from_message_id,
        head.c.from_seq,
        head.c.to_seq,
        head.c.created_at,
        reserved[0],
        reserved[1],
        reserved[2],
    ]
    # The open turn, the summary head and the reserved ids on a row of their own, then one
    # row per active message: joined to every message row, they were sent and decoded once
    # per row (the ids reserved for a 128-call step, 129 of them, a thousand times over in
    # a long open turn). NULL in the other half's columns, typed as that half's (SQLite's
    # rows are decoded by the first half's types).
    header_row = select(
        *(column.label(f"h{index}") for index, column in enumerate(header)),
        *(type_coerce(null(), column.type).label(column.key) for column in _MESSAGE_COLUMNS),
    ).select_from(one.outerjoin(_OPEN_TURN, true()).outerjoin(head, true()))
    message_rows = select(*(type_coerce(null(), column.type) for column in header), *columns).where(
        active
    )
    return union_all(header_row, message_rows).order_by(
        nulls_first(literal_column(MessageRecord.seq.key))
    )


_SNAPSHOTS = {
    dialect: DriverStatement(_assembly_snapshot(dialect)) for dialect in ("postgresql", "sqlite")
}


@dataclass(frozen=True)
class OpenTurn:
    id: str
    seq: int
    steps: int


class StoredRow(NamedTuple):
    """An active message as an assembly reads it. A tuple: an assembly reads every active
    message (a long open turn's thousand tool results among them), and a tuple is made
    several times faster than a frozen dataclass's field by field."""

    id: int
    seq: int
    turn_seq: int
    role: str
    content: Any
    name: str | None
    tool_calls: list[Any] | None
    tool_call_id: str | None
    reasoning_content: str | None
    is_error: bool | None
    answers_seq: int | None
    token_count: int
    token_encoding: str


@dataclass(frozen=True)
class AssemblyState:
    """What an assembly reads of its session after the lock, and the ids it may use."""

    open_turn: OpenTurn | None
    latest_summary: SummaryHead | None
    #: Active messages in order.
    active: list[StoredRow]
    #: Ids reserved for the messages and the audit row this assembly writes.
    message_ids: list[int]
    audit_id: int
    #: An id for a new summary, when one was asked for (SQLite: always).
    summary_id: int | None = None
    #: The active rows up to this seq are the worker's kept rows (0: every row was read).
    known_seq: int = 0


#: Every column a new message is written with (the tenant is the repository's).
MESSAGE_COLUMNS = (
    "tenant_id",
    "session_id",
    "turn_id",
    "seq",
    "turn_seq",
    "step",
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "reasoning_content",
    "is_error",
    "answers_seq",
    "token_count",
    "token_encoding",
    "state",
    "created_at",
)
_TURN_COLUMNS = ("id", "tenant_id", "session_id", "seq", "status", "steps", "started_at")
_SUMMARY_COLUMNS = (
    "tenant_id",
    "session_id",
    "turn_id",
    "turn_seq",
    "from_message_id",
    "to_message_id",
    "from_seq",
    "to_seq",
    "summary_text",
    "key_facts",
    "decisions",
    "open_questions",
    "action_items",
    "revisions",
    "rendered",
    "token_count",
    "token_encoding",
    "summarizer",
    "created_at",
)
# Built once, with bound parameters: a summary's values are large, and compiling a statement
# that holds them as literals costs more than storing them.
_INSERT_SUMMARY = DriverStatement(
    insert(SummaryRecord)
    .values(bound_values(SummaryRecord, _SUMMARY_COLUMNS, ""))
    .returning(SummaryRecord.id)
)


#: A summary's item lists: hundreds of items each in a long session's summary.
SUMMARY_ITEM_COLUMNS = ("key_facts", "decisions", "open_questions", "action_items")


def _insert_summary_encoded(prefix: str) -> DmlStatement:
    """A summary's INSERT with its item lists bound as JSON text, cast on the way in."""
    table = SummaryRecord.__table__
    return insert(SummaryRecord).values(
        {
            column: (
                cast(bindparam(prefix + column, type_=Text), table.c[column].type)
                if column in SUMMARY_ITEM_COLUMNS
                else bindparam(prefix + column, type_=table.c[column].type)
            )
            for column in ("id", *_SUMMARY_COLUMNS)
        }
    )


def _message_in_session(prefix: str) -> list[ColumnElement[bool]]:
    return [
        MessageRecord.tenant_id == bindparam(prefix + "tenant_id"),
        MessageRecord.session_id == bindparam(prefix + "session_id"),
    ]


def _recount(prefix: str) -> DmlStatement:
    return (
        update(MessageRecord)
        .where(*_message_in_session(prefix), MessageRecord.id == bindparam(prefix + "message_id"))
        .values(
            token_count=bindparam(prefix + "token_count"),
            token_encoding=bindparam(prefix + "token_encoding"),
        )
    )


def _set_state(prefix: str) -> Update:
    return (
        update(MessageRecord)
        .where(
            *_message_in_session(prefix),
            AnyOf(MessageRecord.id, prefix + "message_ids"),
        )
        .values(state=bindparam(prefix + "state"))
    )


def _set_state_and_summary(prefix: str) -> DmlStatement:
    return _set_state(prefix).values(summary_id=bindparam(prefix + "summary_id"))


class TurnRepository:
    """One tenant's turns, messages and summaries: every query filters on the tenant, so
    that a session id another tenant also uses never reaches that tenant's rows."""

    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    def _params(self, session_id: str) -> dict[str, str]:
        return {"tenant_id": self.tenant_id, "session_id": session_id}

    async def get_turn(self, session_id: str, turn_id: str) -> TurnRow | None:
        params = {**self._params(session_id), "turn_id": turn_id}
        rows = await fetch_rows(await connection_of(self.db), _TURN, params)
        return TurnRow(*rows[0]) if rows else None

    async def latest_summary(self, session_id: str) -> SummaryRecord | None:
        """The session's newest summary (the one every later prompt shows)."""
        result = await self.db.execute(_LATEST_SUMMARY, self._params(session_id))
        latest: SummaryRecord | None = result.scalar_one_or_none()
        return latest

    async def unsummarised_messages_between(
        self, session_id: str, *, after_seq: int, to_seq: int
    ) -> Sequence[MessageRecord]:
        """Messages with ``after_seq < seq <= to_seq`` that no summary holds, in order: the
        active ones, and those a turn pruned while the summary was still being made (a turn
        at 90% cannot wait for the model; what it pruned must still reach the summary)."""
        query = (
            select(MessageRecord)
            .where(
                MessageRecord.tenant_id == self.tenant_id,
                MessageRecord.session_id == session_id,
                MessageRecord.state.in_((MessageState.ACTIVE, MessageState.PRUNED)),
                MessageRecord.seq > after_seq,
                MessageRecord.seq <= to_seq,
            )
            .order_by(MessageRecord.seq)
        )
        return (await self.db.execute(query)).scalars().all()

    async def assembly_state(
        self,
        session_id: str,
        *,
        new_messages: int,
        new_summary: bool = False,
        known: Mapping[int, StoredRow] | None = None,
        known_seq: int = 0,
    ) -> AssemblyState:
        """The session's open turn, latest summary and active messages, and ids for the
        ``new_messages`` messages and the audit row the assembly will write: everything an
        assembly reads besides the session row, in one round trip.

        ``known``: rows this worker keeps (``app.turns.kept_rows``), each active row up to
        ``known_seq`` among them: the content of those is not read again, the kept row is
        used, with the count the database has now. An active row up to ``known_seq`` that is
        not kept makes the read happen again in full (a second round trip).

        Run it after the session lock, never within the locking statement: a statement's
        snapshot predates its wait for the lock, so it would miss what the previous holder
        of the lock wrote."""
        connection = await connection_of(self.db)
        dialect = connection.dialect.name
        params = {
            **self._params(session_id),
            "new_messages": new_messages,
            "new_audit_rows": 1,
            "new_summaries": int(new_summary),
            "known_seq": known_seq if known else 0,
        }
        rows = await fetch_rows(connection, _SNAPSHOTS[dialect], params)
        active = _active_rows(rows, known, known_seq) if known else _read_rows(rows)
        if active is None:
            return await self.assembly_state(
                session_id, new_messages=new_messages, new_summary=new_summary
            )
        first = rows[0]
        if dialect == "postgresql":
            message_ids, audit_id = list(first[9] or []), first[10][0]
            summary_id = first[11][0] if first[11] else None
        else:
            message_ids = list(range(first[9] + 1, first[9] + 1 + new_messages))
            audit_id = first[10] + 1
            summary_id = first[11] + 1
        return AssemblyState(
            open_turn=OpenTurn(*first[0:3]) if first[0] is not None else None,
            latest_summary=SummaryHead(*first[3:9]) if first[3] is not None else None,
            active=active,
            message_ids=message_ids,
            audit_id=audit_id,
            summary_id=summary_id,
            known_seq=known_seq if known else 0,
        )

    async def summary(self, summary_id: int) -> SummaryRecord | None:
        query = select(SummaryRecord).where(
            SummaryRecord.tenant_id == self.tenant_id, SummaryRecord.id == summary_id
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    # -- writes: each adds to the request's batch (see ``WriteBatch``) --------------------------

    def insert_turn(self, batch: WriteBatch, *, session_id: str, turn_id: str, seq: int) -> None:
        batch.add(
            "insert_turn",
            insert_rows(TurnRecord, _TURN_COLUMNS),
            {
                "id": turn_id,
                "tenant_id": self.tenant_id,
                "session_id": session_id,
                "seq": seq,
                "status": TurnStatus.OPEN,
                "steps": 0,
                "started_at": utcnow(),
            },
        )

    def record_step(
        self,
        batch: WriteBatch,
        *,
        session_id: str,
        turn_id: str,
        step: int,
        usage: Mapping[str, Any] | None,
    ) -> None:
        values: dict[str, Any] = {"steps": step}
        if usage is not None:
            values["usage"] = usage
        self._update_turn(batch, session_id, turn_id, values)

    def close_turn(
        self,
        batch: WriteBatch,
        *,
        session_id: str,
        turn_id: str,
        status: TurnStatus,
        assistant_output: str | None,
        usage: Mapping[str, Any] | None,
        completed_at: datetime,
    ) -> None:
        values: dict[str, Any] = {
            "status": status,
            "assistant_output": assistant_output,
            "completed_at": completed_at,
        }
        if usage is not None:
            values["usage"] = usage
        self._update_turn(batch, session_id, turn_id, values)

    def _update_turn(
        self, batch: WriteBatch, session_id: str, turn_id: str, values: dict[str, Any]
    ) -> None:
        # Keyed by the session too: on a sharded Postgres the session is the distribution
        # column, and an UPDATE without it would be sent to every shard.
        columns = tuple(values)
        key = {"id": "turn_id", "tenant_id": "tenant_id", "session_id": "session_id"}
        batch.add(
            ("update_turn", columns),
            update_row(TurnRecord, key, columns),
            {**values, "turn_id": turn_id, "tenant_id": self.tenant_id, "session_id": session_id},
        )

    def insert_messages(self, batch: WriteBatch, rows: Sequence[Mapping[str, Any]]) -> None:
        """New messages (every column of ``MESSAGE_COLUMNS`` but the tenant, which is added
        here); with ``id`` when it was reserved."""
        if not rows:
            return
        columns = (*MESSAGE_COLUMNS, "id") if "id" in rows[0] else MESSAGE_COLUMNS
        if len(rows) == 1:
            batch.add(
                ("insert_message", len(columns)),
                insert_rows(MessageRecord, columns),
                {c: self.tenant_id if c == "tenant_id" else rows[0][c] for c in columns},
            )
            return
        batch.add_rows(
            "insert_messages",
            MessageRecord,
            columns,
            [{**row, "tenant_id": self.tenant_id} for row in rows],
        )

    def recount(
        self, batch: WriteBatch, session_id: str, counts: Sequence[tuple[int, int]], encoding: str
    ) -> None:
        """Cache new counts of stored messages (the session's estimator changed)."""
        for message_id, tokens in counts:
            batch.add(
                "recount",
                _recount,
                {
                    "tenant_id": self.tenant_id,
                    "session_id": session_id,
                    "message_id": message_id,
                    "token_count": tokens,
                    "token_encoding": encoding,
                },
            )

    def set_state(
        self,
        batch: WriteBatch,
        session_id: str,
        message_ids: Sequence[int],
        state: MessageState,
        *,
        summary_id: int | None = None,
    ) -> None:
        if not message_ids:
            return
        params: dict[str, Any] = {
            "tenant_id": self.tenant_id,
            "session_id": session_id,
            "message_ids": list(message_ids),
            "state": state,
        }
        if summary_id is not None:
            params["summary_id"] = summary_id
        if summary_id is None:
            batch.add("set_state", _set_state, params)
        else:
            batch.add(
                "set_state_and_summary",
                _set_state_and_summary,
                {**params, "summary_id": summary_id},
            )

    @property
    def sends_json_text(self) -> bool:
        """Whether ``add_summary`` takes item lists encoded already (Postgres casts the text
        on the way in; SQLite would store a cast text as a number)."""
        return self.db.get_bind().dialect.name == "postgresql"

    def add_summary(self, batch: WriteBatch, summary_id: int, values: Mapping[str, Any]) -> None:
        """Store a new summary with the batch, under an id the snapshot read reserved (the
        batch's other writes point to it). Item lists encoded already (``summary_values``
        with ``items_json``) go as text, cast on the way in."""
        params = {**values, "id": summary_id, "tenant_id": self.tenant_id}
        if isinstance(values["key_facts"], str):
            batch.add("insert_summary_encoded", _insert_summary_encoded, params)
            return
        batch.add("insert_summary", insert_rows(SummaryRecord, ("id", *_SUMMARY_COLUMNS)), params)

    async def insert_summary(self, values: Mapping[str, Any]) -> int:
        """Store a new summary now (its id is what the batch's writes point to)."""
        connection = await self.db.connection()
        params = {**values, "tenant_id": self.tenant_id}
        return int((await fetch_rows(connection, _INSERT_SUMMARY, params))[0][0])

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


def _read_rows(rows: Sequence[Any]) -> list[StoredRow]:
    return [StoredRow(*row[12:]) for row in rows if row[12] is not None]


def _active_rows(
    rows: Sequence[Any], known: Mapping[int, StoredRow], known_seq: int
) -> list[StoredRow] | None:
    """The active rows of a snapshot read that left out the content of the rows up to
    ``known_seq``, those taken from ``known``; None when one of them is not there."""
    active: list[StoredRow] = []
    for row in rows:
        message_id = row[12]
        if message_id is None:
            continue
        if row[13] > known_seq:
            active.append(StoredRow(*row[12:]))
            continue
        kept = known.get(message_id)
        if kept is None or kept.seq != row[13] or kept.role != row[15]:
            return None
        if kept.token_count != row[23] or kept.token_encoding != row[24]:
            kept = kept._replace(token_count=row[23], token_encoding=row[24])
        active.append(kept)
    return active


def summary_content(record: SummaryRecord) -> SummaryContent:
    """A stored summary's content."""
    return SummaryContent(
        summary_text=record.summary_text,
        key_facts=summary_items(record.key_facts),
        decisions=summary_items(record.decisions),
        open_questions=summary_items(record.open_questions),
        action_items=summary_items(record.action_items),
        **summary_revisions(record.revisions),
    )


def summary_revisions(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """A stored summary's record of superseded messages, as ``SummaryContent`` fields (none
    for a summary stored before summaries kept one: it records nothing, and says so)."""
    if raw is None:
        return {"partly_held": None}
    return {
        "superseded": tuple((int(old), int(by)) for old, by in raw.get("superseded", ())),
        "partly_held": tuple(int(i) for i in raw.get("partly_held", ())),
    }


def _stored_revisions(content: SummaryContent) -> dict[str, Any] | None:
    # Empty when there is nothing to record, and NULL only while it is unknown: a summary
    # stored before the record reads back as NULL.
    if content.partly_held is None:
        return None
    return {
        "superseded": [list(pair) for pair in content.superseded],
        "partly_held": list(content.partly_held),
    }


def summary_items(raw: Sequence[Any]) -> tuple[SummaryItem, ...]:
    return tuple(
        SummaryItem(
            str(item["text"]),
            tuple(int(i) for i in item.get("source_message_ids", ())),
            from_user=bool(item.get("from_user", False)),
        )
        for item in raw
    )


def summary_values(
    content: SummaryContent,
    *,
    session_id: str,
    turn_id: str | None,
    turn_seq: int,
    from_message_id: int | None,
    to_message_id: int,
    from_seq: int,
    to_seq: int,
    rendered: str,
    tokens: int,
    encoding: str,
    summarizer: str,
    items_json: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The row of a new summary (``TurnRepository.insert_summary`` adds the tenant).
    ``items_json``: its item lists already encoded (``summary_items_json``), which only
    ``TurnRepository.add_summary`` takes, on Postgres (``sends_json_text``)."""
    items: Mapping[str, Any] = items_json or {
        column: _stored_items(getattr(content, column)) for column in SUMMARY_ITEM_COLUMNS
    }
    return {
        "session_id": session_id,
        "turn_id": turn_id,
        "turn_seq": turn_seq,
        "from_message_id": from_message_id,
        "to_message_id": to_message_id,
        "from_seq": from_seq,
        "to_seq": to_seq,
        "summary_text": content.summary_text,
        **{column: items[column] for column in SUMMARY_ITEM_COLUMNS},
        "revisions": _stored_revisions(content),
        "rendered": rendered,
        "token_count": tokens,
        "token_encoding": encoding,
        "summarizer": summarizer,
        "created_at": utcnow(),
    }


def _stored_items(items: Sequence[SummaryItem]) -> list[dict[str, Any]]:
    """A summary's items as its row stores them."""
    return [
        {"text": i.text, "source_message_ids": list(i.source_message_ids)}
        | ({"from_user": True} if i.from_user else {})
        for i in items
    ]


def summary_items_json(content: SummaryContent) -> dict[str, str]:
    """A summary's item lists as the JSON text its row stores (what SQLAlchemy's JSON type
    would make of them): encoding them is most of the CPU of storing a long summary, so a
    fold made between turns does it there."""
    return {
        column: dump_json(_stored_items(getattr(content, column)))
        for column in SUMMARY_ITEM_COLUMNS
    }
