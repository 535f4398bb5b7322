"""Engine factory, schema-version check, and the request's unit of work."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from fastapi import Depends, Request
from sqlalchemy import Connection, event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app.errors import ServiceError

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def create_engine(database_url: str) -> AsyncEngine:
    """An async engine; SQLite gets the settings that make it a safe embedded store."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        return create_async_engine(url, pool_pre_ping=True)

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


async def migrate(engine: AsyncEngine) -> None:
    """Apply every pending migration."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)


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


async def get_db(request: Request) -> AsyncIterator[AsyncSession]:
    """The request's unit of work: committed when the endpoint succeeds, rolled back when it
    raises, except for errors that carry a record of their own (a rejected turn's audit row)."""
    sessionmaker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    async with sessionmaker() as session:
        try:
            yield session
        except ServiceError as error:
            if error.keeps_writes:
                await session.commit()
            else:
                await session.rollback()
            raise
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()


# scope="function": the unit of work ends (commits) before the response is sent, so a client
# never reads a success whose writes could still fail to commit, nor races its own writes.
DbSession = Annotated[AsyncSession, Depends(get_db, scope="function")]
