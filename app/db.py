"""Engine factory, schema-version check, and the request's unit of work."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import AsyncIterator, Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Annotated, Any

import asyncpg
import orjson
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from fastapi import Depends, Request
from sqlalchemy import (
    JSON,
    Boolean,
    ColumnElement,
    Connection,
    Delete,
    Dialect,
    Executable,
    Insert,
    Text,
    Update,
    any_,
    bindparam,
    cast,
    event,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.sqlite.aiosqlite import SQLiteDialect_aiosqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import QueryableAttribute
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.util import greenlet_spawn

from app import sqlite_driver
from app.caches import LRU
from app.errors import DatabaseUnavailableError, InvalidRequestError, ServiceError
from app.recovery import RETRY_AFTER_MIN_SECONDS, DatabaseRecovery

logger = logging.getLogger(__name__)


def _migrations_dir() -> Path:
    """Alembic's folder: ``migrations/`` beside the package in a checkout, ``app/migrations``
    inside it once installed from a wheel (pyproject.toml ships it there)."""
    package = Path(__file__).resolve().parent
    installed = package / "migrations"
    return installed if (installed / "env.py").is_file() else package.parent / "migrations"


MIGRATIONS_DIR = _migrations_dir()


def dump_json(value: Any) -> str:
    """A JSON column's text: orjson's, several times faster than ``json.dumps`` on the turn
    path's columns (each message's content, the audit row's breakdowns, a summary's items).
    ``json.dumps`` writes it, as it always did, where the two would store something
    different: what orjson refuses (an integer past 64 bits, a string with a lone surrogate,
    what neither can encode) and a value holding NaN or an infinity, which orjson writes as
    null where ``json`` writes ``NaN`` (which Postgres refuses: a 422, not a value lost).
    Only such a float turns into a ``null`` of orjson's, so a text without one is kept as is
    and one with a ``null`` is looked through for such a float, not encoded a second time."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(value)
    if b"null" in text and _holds_non_finite_float(value):
        return json.dumps(value)
    return text.decode()


#: The scalars orjson never writes as ``null`` unless they are ``None`` (it refuses a float's
#: subclass, which ``json`` then writes: only ``float`` itself is NaN or an infinity to it).
_FINITE_SCALARS = frozenset({str, int, bool, type(None)})

#: From this many members on, a container's types are sorted in one pass in C before any
#: member is looked at: a list of hundreds of ids then costs a set, not a loop in Python;
#: below it the loop is the cheaper of the two.
_SORTED_BY_TYPE_FROM = 8


def _holds_non_finite_float(value: Any) -> bool:
    """Whether NaN or an infinity is anywhere in ``value``, a key of its dicts included."""
    if type(value) is float:
        return not math.isfinite(value)
    if isinstance(value, dict):
        return _any_non_finite(value.keys()) or _any_non_finite(value.values())
    if isinstance(value, list | tuple):
        return _any_non_finite(value)
    return False


def _any_non_finite(members: Collection[Any]) -> bool:
    """Whether NaN or an infinity is among or within ``members``."""
    if len(members) >= _SORTED_BY_TYPE_FROM and set(map(type, members)) <= _FINITE_SCALARS:
        return False
    for member in members:
        if type(member) not in _FINITE_SCALARS and _holds_non_finite_float(member):
            return True
    return False


#: A run of digits that may be an integer past 64 bits, which orjson would read as a float.
_LONG_NUMBER = re.compile(r"\d{19}")


def load_json(text: str) -> Any:
    """A JSON column's value: orjson's parse, or ``json.loads``'s where they differ (an
    integer past 64 bits, which orjson reads as a float; NaN, which only ``json`` reads)."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def create_engine(
    database_url: str, *, connect_timeout: float = 10.0, pool_size: int = 5
) -> AsyncEngine:
    """An async engine; SQLite gets the settings that make it a safe embedded store."""
    url = make_url(database_url)
    codecs = {"json_serializer": dump_json, "json_deserializer": load_json}
    if url.get_backend_name() != "sqlite":
        engine = create_async_engine(
            url,
            pool_size=pool_size,
            max_overflow=10,
            connect_args={"timeout": connect_timeout},
            **codecs,
        )
        event.listen(engine.sync_engine, "checkout", _replace_if_closed)
        return engine

    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    # The dialect's own reading of the URL (the file, a ``file:`` URI, its options), opened
    # with cursors that cost one hand-off to the connection's thread a statement.
    connect_args, connect_options = SQLiteDialect_aiosqlite().create_connect_args(url)
    engine = create_async_engine(
        url,
        async_creator=partial(sqlite_driver.connect, *connect_args, **connect_options, timeout=30),
        **codecs,
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the driver so that BEGIN IMMEDIATE below is
        # what starts every transaction: writers queue on SQLite's lock instead of failing
        # with "database is locked" when two read-then-write transactions meet.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _replace_if_closed(_dbapi_connection: Any, record: Any, _proxy: Any) -> None:
    """A pooled connection the database closed (restart, failover, idle timeout) is replaced
    on checkout, so that service resumes by itself when the database is back.

    asyncpg sees the server close its socket, so asking it costs nothing; SQLAlchemy's
    ``pool_pre_ping`` instead spends three round trips (BEGIN, a ping, ROLLBACK) on every
    request. A connection that died silently (no FIN, a network partition) fails its first
    statement instead: that request is a 503 with Retry-After, and the disconnect invalidates
    the pool, so the retry gets a fresh connection."""
    driver = record.driver_connection
    is_closed = getattr(driver, "is_closed", None)
    if is_closed is not None and is_closed():
        raise DisconnectionError("the database closed this pooled connection")


class AnyOf(ColumnElement[bool]):
    """``column`` is one of the values of the list bound as ``name``.

    On Postgres, ``column = ANY($n)`` with the list as one array parameter: the statement's
    text is the same whatever the list's length, so the driver prepares it once per
    connection (an expanding ``IN`` writes a new text, a new statement, for every length).
    Elsewhere, an expanding ``IN``."""

    inherit_cache = True
    type = Boolean()
    _traverse_internals = [  # noqa: RUF012 (SQLAlchemy's own declaration)
        ("column", InternalTraversal.dp_clauseelement),
        ("name", InternalTraversal.dp_string),
    ]

    def __init__(self, column: ColumnElement[Any] | QueryableAttribute[Any], name: str) -> None:
        self.column = column if isinstance(column, ColumnElement) else column.expression
        self.name = name


@compiles(AnyOf)
def _any_of(element: AnyOf, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.column.in_(bindparam(element.name, expanding=True)), **kw)


@compiles(AnyOf, "postgresql")
def _any_of_postgresql(element: AnyOf, compiler: SQLCompiler, **kw: Any) -> str:
    array = bindparam(element.name, type_=ARRAY(element.column.type))
    return compiler.process(element.column == any_(array), **kw)


@dataclass(frozen=True)
class _DriverText:
    """A statement compiled for asyncpg: its text (``$n`` placeholders), the name of each
    positional parameter, and the value each takes when the caller gives none (a literal)."""

    sql: str
    names: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]
    defaults: Mapping[str, Any]

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        values = []
        for name, process in zip(self.names, self.processors, strict=True):
            if name in params:
                value = params[name]
                values.append(process(value) if process is not None else value)
            else:
                values.append(self.defaults[name])
        return values


class DriverStatement:
    """A statement of the turn path, defined once with SQLAlchemy Core.

    On Postgres it runs as a prepared statement on the asyncpg connection itself (asyncpg
    prepares a statement once per connection and keeps it): compiled once, its parameters
    bound by SQLAlchemy's own bind processing (JSON, timestamps), its rows taken as asyncpg
    returns them, without SQLAlchemy's statement execution and result processing. The
    transaction and the pooled connection stay SQLAlchemy's. Elsewhere (SQLite) it runs
    through SQLAlchemy; either way its rows are indexed by position, in the order of the
    statement's columns."""

    def __init__(self, statement: Executable) -> None:
        self.statement = statement
        self._text: _DriverText | None = None

    def text(self, dialect: Dialect) -> _DriverText:
        if self._text is None:
            compiled: Any = self.statement.compile(dialect=dialect)  # type: ignore[attr-defined]
            if "POSTCOMPILE" in compiled.string:
                raise TypeError("a statement run on the driver needs one text: no expanding IN")
            # A column default computed in Python (a timestamp, a new list) would be computed
            # once, here, and then written on every execution: bind every such column.
            computed = [
                *(c for c in compiled.insert_prefetch if getattr(c.default, "is_callable", 0)),
                *(c for c in compiled.update_prefetch if getattr(c.onupdate, "is_callable", 0)),
            ]
            if computed:
                missing = ", ".join(sorted(str(c.name) for c in computed))
                raise TypeError(f"a statement run on the driver must bind {missing}")
            names = tuple(compiled.positiontup or ())
            processors = tuple(
                compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect)
                for name in names
            )
            defaults = {}
            for name, process in zip(names, processors, strict=True):
                bind = compiled.binds[name]
                if not bind.required:
                    value = bind.effective_value
                    defaults[name] = process(value) if process is not None else value
            self._text = _DriverText(compiled.string, names, processors, defaults)
        return self._text


class _DriverExecution:
    """The execution context SQLAlchemy's statement events receive for a statement run on
    the driver: where a listener keeps what it needs until the statement ends (tracing keeps
    its span here)."""

    executemany = False

    def handle_dbapi_exception(self, error: BaseException) -> None:
        """Nothing of ours to clean up (SQLAlchemy calls this on a failed statement)."""


#: Where a session keeps the connection of its transaction (``AsyncSession.info``).
_CONNECTION = "contextd.connection"


async def connection_of(db: AsyncSession) -> AsyncConnection:
    """The connection of ``db``'s transaction, as ``db.connection()`` returns it.

    ``AsyncSession.connection()`` crosses into a greenlet and through the session's
    transaction on every call, even when the transaction holds its connection already: some
    40 µs, three or four times on every turn call. The connection is kept with the
    transaction it belongs to, and asked for again once that transaction ends, or once the
    connection was invalidated (a dropped database), so that the session says what is
    wrong as it always did."""
    transaction = db.sync_session.get_transaction()
    known = db.info.get(_CONNECTION)
    if (
        known is not None
        and transaction is not None
        and known[0] is transaction
        and transaction.is_active
        and not known[1].sync_connection.invalidated
    ):
        connection: AsyncConnection = known[1]
        return connection
    connection = await db.connection()
    db.info[_CONNECTION] = (db.sync_session.get_transaction(), connection)
    return connection


async def fetch_rows(
    connection: AsyncConnection, statement: DriverStatement, params: Mapping[str, Any]
) -> Sequence[Any]:
    """The rows of ``statement``, each indexed by position."""
    if connection.dialect.name != "postgresql":
        return (await connection.execute(statement.statement, params)).all()
    rows: Sequence[Any] = await _on_driver(connection, statement, params, rows=True)
    return rows


async def execute(
    connection: AsyncConnection, statement: DriverStatement, params: Mapping[str, Any]
) -> None:
    """Run ``statement`` (a write), its rows not read."""
    if connection.dialect.name != "postgresql":
        await connection.execute(statement.statement, params)
        return
    await _on_driver(connection, statement, params, rows=False)


async def _on_driver(
    connection: AsyncConnection,
    statement: DriverStatement,
    params: Mapping[str, Any],
    *,
    rows: bool,
) -> Any:
    text = statement.text(connection.dialect)
    arguments = text.arguments(params)
    sync: Any = connection.sync_connection
    pooled = sync.connection
    # SQLAlchemy's adapter of the asyncpg connection owns the transaction: it sends BEGIN
    # before its first statement (asyncpg's own transaction), and COMMIT or ROLLBACK when
    # SQLAlchemy ends it. A statement sent past the adapter starts it the same way.
    adapted = pooled.dbapi_connection
    driver: asyncpg.Connection = pooled.driver_connection
    sql = text.sql
    # The engine's statement events see this statement as they see every other (tracing,
    # the round-trip and session-scope tests).
    events = sync._has_events or sync.engine._has_events
    context = _DriverExecution()
    if events:
        for listener in sync.dispatch.before_cursor_execute:
            sql, arguments = listener(sync, None, sql, arguments, context, False)
    # One statement at a time on a connection, as SQLAlchemy's own statements are: asyncpg
    # refuses a second one while the first is under way ("another operation is in
    # progress"), which would read as a lost database. Two tasks sharing a request's
    # session (an ``asyncio.gather``) wait for each other on the adapter's own lock.
    async with adapted._execute_mutex:
        try:
            # A schema change another connection of this process met (below) makes this
            # one drop its prepared statements too before it uses them.
            await adapted._check_type_cache_invalidation(
                connection.dialect._invalidate_schema_cache_asof  # type: ignore[attr-defined]
            )
            opened = adapted._transaction is None
            if opened:
                await adapted._start_transaction()
            try:
                result = await _send(driver, sql, arguments, rows=rows)
            except _STALE_STATEMENT as error:
                if not _stale_statement(error):
                    raise
                # A migration changed a table under a statement this connection prepared
                # before it. asyncpg dropped this connection's statements; the dialect's
                # mark tells the pool's other connections to drop theirs.
                connection.dialect._invalidate_schema_cache()  # type: ignore[attr-defined]
                await driver.reload_schema_state()
                if not opened:
                    # Earlier statements of the transaction ran, and the error aborted it:
                    # only the whole request can be tried again.
                    raise StaleStatementError(str(error)) from error
                # Nothing else of the transaction ran: begin it again and retry once.
                await adapted._call_and_discard(adapted._transaction.rollback)
                await adapted._start_transaction()
                result = await _send(driver, sql, arguments, rows=rows)
        except StaleStatementError:
            raise
        except Exception as error:
            # As SQLAlchemy would have raised it: its DBAPIError (the 503 and 400 handling
            # read it), the pooled connection invalidated if the database dropped it.
            await greenlet_spawn(
                _raise_as_sqlalchemy, sync, adapted, error, sql, arguments, context
            )
            raise  # not reached: the line above raises
    if events:
        sync.dispatch.after_cursor_execute(sync, None, sql, arguments, context, False)
    return result


async def _send(driver: asyncpg.Connection, sql: str, arguments: list[Any], *, rows: bool) -> Any:
    return await (driver.fetch(sql, *arguments) if rows else driver.execute(sql, *arguments))


#: What Postgres says when a prepared statement outlived the schema it was planned for:
#: "cached plan must not change result type" (asyncpg's InvalidCachedStatementError), and
#: "cache lookup failed for type" after a type it used was dropped and made again.
_STALE_STATEMENT = (asyncpg.InvalidCachedStatementError, asyncpg.InternalServerError)


def _stale_statement(error: Exception) -> bool:
    if isinstance(error, asyncpg.InvalidCachedStatementError):
        return True
    return "cache lookup failed for type" in str(error)


class StaleStatementError(Exception):
    """A prepared statement met a schema changed since it was prepared, after earlier
    statements of its transaction had run: the transaction is lost, and the request can be
    tried again at once (this connection and the pool's others prepare afresh)."""


def _raise_as_sqlalchemy(
    sync: Any, adapted: Any, error: Exception, sql: str, arguments: Any, context: Any
) -> None:
    try:
        adapted._handle_exception(error)  # raises the error as the DBAPI adapter's
    except Exception as dbapi_error:
        sync._handle_dbapi_exception(dbapi_error, sql, arguments, None, context)
    raise error


DmlStatement = Insert | Update | Delete
#: Builds a write's statement with every bound parameter's name prefixed (``prefix + name``).
StatementBuilder = Callable[[str], DmlStatement]


class WriteBatch:
    """Writes that do not depend on each other's results, sent together.

    On Postgres they go out as one statement (each a data-modifying CTE, which Postgres runs
    against one snapshot and checks foreign keys for at its end), so an assembly's writes
    cost one round trip however many tables they touch; SQLite runs in-process and gets them
    one by one. A write must not read what another write of the batch changes: Postgres
    would show it the snapshot from before the batch.

    Each write comes as a *shape* (what names its statement: the same shape, the same SQL),
    a builder and its parameters. Statements are built and compiled once per shape, and the
    combined statement once per sequence of shapes (a :class:`DriverStatement`, prepared by
    the driver); a request only binds values, which is what keeps this cheaper than the
    ORM's unit of work."""

    def __init__(self) -> None:
        self._writes: list[_Write] = []

    def add(self, shape: Hashable, build: StatementBuilder, params: Mapping[str, Any]) -> None:
        self._writes.append(_Write(shape, build, params))

    def add_rows(
        self, shape: Hashable, model: Any, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """An INSERT of ``rows`` (each with every one of ``columns``), however many.

        On Postgres one statement text whatever their number: each column's values go as one
        array parameter, unnested into rows (``INSERT … SELECT * FROM unnest($1::…[], …)``).
        A multi-row ``VALUES`` would be a new text per row count, compiled again (some 2,000
        parameters for a step of 128 tool calls) whenever a batch's sequence of writes is
        new, and too long for asyncpg to keep prepared. Elsewhere, one row at a time
        (``executemany``)."""
        table = model.__table__
        params = {}
        for column in columns:
            values = [row[column] for row in rows]
            if isinstance(table.c[column].type, JSON):
                # As SQLAlchemy's JSON type binds a value (the engine's serialiser; None is
                # SQL NULL): an array's item processor would take a list value for a
                # dimension of the array.
                values = [None if v is None else dump_json(v) for v in values]
            params[column] = values
        self._writes.append(
            _Write(
                ("rows", shape, tuple(columns)),
                insert_columns(model, columns),
                params,
                rows=rows,
                model=model,
            )
        )

    def __len__(self) -> int:
        return len(self._writes)

    async def send(self, connection: AsyncConnection) -> None:
        writes, self._writes = self._writes, []
        if not writes:
            return
        if connection.dialect.name != "postgresql":
            for write in writes:
                if write.rows is not None:
                    await connection.execute(insert(write.model), [dict(row) for row in write.rows])
                    continue
                statement = _statement(write.shape, write.build, "w_")
                await connection.execute(statement, {f"w_{k}": v for k, v in write.params.items()})
            return
        shapes = tuple(write.shape for write in writes)
        combined = _COMBINED.get(shapes)
        if combined is None:
            ctes = [
                _statement(write.shape, write.build, f"w{index}_").cte(f"write_{index}")
                for index, write in enumerate(writes)
            ]
            combined = DriverStatement(select(literal_column("1")).add_cte(*ctes))
            _COMBINED.put(shapes, combined)
        await execute(
            connection,
            combined,
            {
                f"w{index}_{name}": value
                for index, write in enumerate(writes)
                for name, value in write.params.items()
            },
        )


@dataclass(frozen=True)
class _Write:
    """One write of a batch: its shape, how to build its statement, its parameters, and for
    an INSERT of rows (:meth:`WriteBatch.add_rows`) the rows themselves."""

    shape: Hashable
    build: StatementBuilder
    params: Mapping[str, Any]
    rows: Sequence[Mapping[str, Any]] | None = None
    model: Any = None


# Shapes are few; the bound keeps a pathological client from growing these without end.
_BUILT: LRU[tuple[Hashable, str], DmlStatement] = LRU(512)
_COMBINED: LRU[tuple[Hashable, ...], DriverStatement] = LRU(512)


def bound_values(model: Any, columns: Sequence[str], prefix: str) -> dict[str, Any]:
    """``{column: parameter}`` for a SET or VALUES clause, each parameter named
    ``prefix + column`` and typed by its column (JSON columns need their bind processing)."""
    table = model.__table__
    return {c: bindparam(prefix + c, type_=table.c[c].type) for c in columns}


def update_row(model: Any, key: Mapping[str, Any], columns: Sequence[str]) -> StatementBuilder:
    """A builder of an UPDATE of ``columns`` (bound as ``column``) of the row whose ``key``
    columns equal the parameters they name (``{column: parameter}``)."""

    def build(prefix: str) -> DmlStatement:
        return (
            update(model)
            .where(
                *(
                    getattr(model, column) == bindparam(prefix + name)
                    for column, name in key.items()
                )
            )
            .values(bound_values(model, columns, prefix))
        )

    return build


def insert_rows(model: Any, columns: Sequence[str], rows: int = 1) -> StatementBuilder:
    """A builder of an INSERT of ``rows`` rows, every value a bound parameter: ``column`` for
    one row, ``{row}_{column}`` for several."""

    def build(prefix: str) -> DmlStatement:
        # Typed by their columns: a parameter of a second VALUES row is not typed by itself.
        types = {c: model.__table__.c[c].type for c in columns}
        if rows == 1:
            return insert(model).values({c: bindparam(prefix + c, type_=types[c]) for c in columns})
        return insert(model).values(
            [
                {c: bindparam(f"{prefix}{row}_{c}", type_=types[c]) for c in columns}
                for row in range(rows)
            ]
        )

    return build


def insert_columns(model: Any, columns: Sequence[str]) -> StatementBuilder:
    """A builder of an INSERT of any number of rows: each column's values one array
    parameter (``prefix + column``), unnested into rows (Postgres)."""

    def build(prefix: str) -> DmlStatement:
        table = model.__table__
        arrays = [
            cast(
                bindparam(
                    prefix + c,
                    # JSON goes as its text (see ``WriteBatch.add_rows``), cast on the way in.
                    type_=ARRAY(Text if isinstance(table.c[c].type, JSON) else table.c[c].type),
                ),
                ARRAY(table.c[c].type),
            )
            for c in columns
        ]
        rows = func.unnest(*arrays).table_valued(*columns).render_derived()
        return insert(model).from_select(list(columns), select(*(rows.c[c] for c in columns)))

    return build


def _statement(shape: Hashable, build: StatementBuilder, prefix: str) -> DmlStatement:
    key = (shape, prefix)
    statement = _BUILT.get(key)
    if statement is None:
        statement = build(prefix)
        _BUILT.put(key, statement)
    return statement


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@cache
def _migrations_head() -> str | None:
    # Alembic reads every migration file to find the head: once per process, not once per
    # start-up check (the files do not change under a running process).
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _schema_state(connection: Connection) -> tuple[str | None, str | None]:
    current = MigrationContext.configure(connection).get_current_revision()
    return current, _migrations_head()


def _upgrade(connection: Connection) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
    if connection.dialect.name == "sqlite":
        broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise RuntimeError(f"the migration left rows without their parent: {broken[:5]}")


def sqlite_foreign_keys(connection: Connection, enforced: bool) -> None:
    # Through the driver's cursor: SQLite ignores this pragma inside a transaction, and a
    # statement through SQLAlchemy would open one (BEGIN IMMEDIATE, see create_engine).
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    cursor.execute(f"PRAGMA foreign_keys={'ON' if enforced else 'OFF'}")
    cursor.close()


async def migrate(engine: AsyncEngine) -> None:
    """Apply every pending migration."""
    async with engine.connect() as connection:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            # SQLite changes a table's keys by rebuilding it: dropping the old table would
            # cascade-delete every row that references it while foreign keys are enforced.
            # Rows are checked against their parents before the migration commits instead.
            await connection.run_sync(sqlite_foreign_keys, False)
        try:
            async with connection.begin():
                await connection.run_sync(_upgrade)
        finally:
            if sqlite:
                await connection.run_sync(sqlite_foreign_keys, True)


class SchemaNotReadyError(RuntimeError):
    """The database is not at the schema this code expects."""


async def ensure_schema(engine: AsyncEngine, *, auto_migrate: bool) -> None:
    """Refuse to serve on a database whose schema is not at head (or migrate it, if asked)."""
    async with engine.connect() as connection:
        current, head = await connection.run_sync(_schema_state)
    if current == head:
        return
    if auto_migrate:
        logger.info("migrating the database from %s to %s", current or "empty", head)
        await migrate(engine)
        return
    raise SchemaNotReadyError(
        f"the database schema is at {current or 'nothing (empty database)'}, this contextd "
        f"needs {head}. Run `contextd migrate` first, or start with CONTEXTD_AUTO_MIGRATE=true."
    )


_UNREACHABLE = (
    OSError,  # refused, reset, unreachable host
    TimeoutError,  # connect timeout
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,  # starting up or shutting down
    asyncpg.AdminShutdownError,
)


def is_database_unreachable(error: BaseException) -> bool:
    """Whether an error means the database could not be reached or dropped the connection,
    as opposed to a bug or a refused statement."""
    if isinstance(error, DBAPIError):
        if error.connection_invalidated or isinstance(error, OperationalError | InterfaceError):
            return True
        return isinstance(error.orig, _UNREACHABLE) or isinstance(
            getattr(error.orig, "__cause__", None), _UNREACHABLE
        )
    return isinstance(error, _UNREACHABLE)


def is_stale_statement(error: BaseException) -> bool:
    """Whether a prepared statement met a schema changed since it was prepared (a migration
    run by another process), on the driver's path or SQLAlchemy's own."""
    if isinstance(error, StaleStatementError):
        return True
    cause = getattr(getattr(error, "orig", None), "__cause__", None)
    return isinstance(error, DBAPIError) and isinstance(cause, asyncpg.InvalidCachedStatementError)


def is_unstorable_value(error: BaseException) -> bool:
    """Whether the database refused a value the request brought (SQLSTATE class 22, "data
    exception": out of range, bad encoding): the client's error, not a bug of ours."""
    sqlstate = getattr(getattr(error, "orig", None), "sqlstate", None)
    return isinstance(error, DBAPIError) and str(sqlstate or "").startswith("22")


def _unavailable(error: BaseException, recovery: DatabaseRecovery) -> DatabaseUnavailableError:
    logger.warning("database unavailable: %s: %s", type(error).__name__, error)
    recovery.unreachable()
    wait = recovery.retry_after()
    return DatabaseUnavailableError(
        f"the database cannot be reached; retry after {wait} s (with the same "
        "Idempotency-Key, so that a request whose answer was lost is not done twice)",
        retry_after_seconds=wait,
    )


async def _rollback(session: AsyncSession) -> None:
    try:
        await session.rollback()
    except Exception as error:
        # The connection is gone with its transaction: the database rolled it back.
        if not is_database_unreachable(error):
            raise


#: Where ``after_commit`` keeps its callbacks, in the unit of work's ``info``.
_AFTER_COMMIT = "after_commit"


def after_commit(db: AsyncSession, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the request's unit of work commits (``get_db``); never when it
    rolls back or ends otherwise."""
    callbacks: list[Callable[[], None]] = db.info.setdefault(_AFTER_COMMIT, [])
    callbacks.append(callback)


async def get_db(request: Request) -> AsyncIterator[AsyncSession]:
    """The request's unit of work: committed when the endpoint succeeds, rolled back when it
    raises, except for errors that carry a record of their own (a rejected turn's audit row).
    A database that cannot be reached is a 503 with Retry-After, whatever the query."""
    sessionmaker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    recovery: DatabaseRecovery = request.app.state.database_recovery
    async with sessionmaker() as session:
        try:
            try:
                yield session
            except ServiceError as error:
                if error.keeps_writes:
                    await session.commit()
                else:
                    await session.rollback()
                raise
            except BaseException:
                await _rollback(session)
                raise
            else:
                await session.commit()
                recovery.reachable()
                for callback in session.info.pop(_AFTER_COMMIT, ()):
                    callback()
        except ServiceError:
            raise
        except Exception as error:
            if is_database_unreachable(error):
                raise _unavailable(error, recovery) from error
            if is_stale_statement(error):
                # The connections prepare afresh from here on: a retry at once succeeds.
                raise DatabaseUnavailableError(
                    "the database's schema changed under this request (a migration); retry "
                    "it now, with the same Idempotency-Key",
                    retry_after_seconds=RETRY_AFTER_MIN_SECONDS,
                ) from error
            if is_unstorable_value(error):
                raise InvalidRequestError(
                    f"the database refused a value of the request: {error.orig}"  # type: ignore[attr-defined]
                ) from error
            raise


# scope="function": the transaction ends (commits) before the response is sent, so that an
# answer the client receives is always stored, and a failed commit is the client's error.
DbSession = Annotated[AsyncSession, Depends(get_db, scope="function")]
