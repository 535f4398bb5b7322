"""Engine factory, schema-version check, and the request's unit of work."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import asyncpg
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from fastapi import Depends, Request
from sqlalchemy import (
    Connection,
    Delete,
    Insert,
    Select,
    Update,
    bindparam,
    event,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.caches import LRU
from app.errors import DatabaseUnavailableError, InvalidRequestError, ServiceError
from app.recovery import DatabaseRecovery

logger = logging.getLogger(__name__)


def _migrations_dir() -> Path:
    """Alembic's folder: ``migrations/`` beside the package in a checkout, ``app/migrations``
    inside it once installed from a wheel (pyproject.toml ships it there)."""
    package = Path(__file__).resolve().parent
    installed = package / "migrations"
    return installed if (installed / "env.py").is_file() else package.parent / "migrations"


MIGRATIONS_DIR = _migrations_dir()


def create_engine(
    database_url: str, *, connect_timeout: float = 10.0, pool_size: int = 5
) -> AsyncEngine:
    """An async engine; SQLite gets the settings that make it a safe embedded store."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        engine = create_async_engine(
            url, pool_size=pool_size, max_overflow=10, connect_args={"timeout": connect_timeout}
        )
        event.listen(engine.sync_engine, "checkout", _replace_if_closed)
        return engine

    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(url, connect_args={"timeout": 30})

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
    combined statement once per sequence of shapes; a request only binds values, which is
    what keeps this cheaper than the ORM's unit of work."""

    def __init__(self) -> None:
        self._writes: list[tuple[Hashable, StatementBuilder, Mapping[str, Any]]] = []

    def add(self, shape: Hashable, build: StatementBuilder, params: Mapping[str, Any]) -> None:
        self._writes.append((shape, build, params))

    def __len__(self) -> int:
        return len(self._writes)

    async def send(self, connection: AsyncConnection) -> None:
        writes, self._writes = self._writes, []
        if not writes:
            return
        if connection.dialect.name != "postgresql":
            for shape, build, params in writes:
                statement = _statement(shape, build, "w_")
                await connection.execute(statement, {f"w_{k}": v for k, v in params.items()})
            return
        shapes = tuple(shape for shape, _, _ in writes)
        combined = _COMBINED.get(shapes)
        if combined is None:
            ctes = [
                _statement(shape, build, f"w{index}_").cte(f"write_{index}")
                for index, (shape, build, _) in enumerate(writes)
            ]
            combined = select(literal_column("1")).add_cte(*ctes)
            _COMBINED.put(shapes, combined)
        await connection.execute(
            combined,
            {
                f"w{index}_{name}": value
                for index, (_, _, params) in enumerate(writes)
                for name, value in params.items()
            },
        )


# Shapes are few; the bound keeps a pathological client from growing these without end.
_BUILT: LRU[tuple[Hashable, str], DmlStatement] = LRU(512)
_COMBINED: LRU[tuple[Hashable, ...], Select[Any]] = LRU(512)


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


def _schema_state(connection: Connection) -> tuple[str | None, str | None]:
    current = MigrationContext.configure(connection).get_current_revision()
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    return current, head


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
        except ServiceError:
            raise
        except Exception as error:
            if is_database_unreachable(error):
                raise _unavailable(error, recovery) from error
            if is_unstorable_value(error):
                raise InvalidRequestError(
                    f"the database refused a value of the request: {error.orig}"  # type: ignore[attr-defined]
                ) from error
            raise


# scope="function": the transaction ends (commits) before the response is sent, so that an
# answer the client receives is always stored, and a failed commit is the client's error.
DbSession = Annotated[AsyncSession, Depends(get_db, scope="function")]
