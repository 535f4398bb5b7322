"""Alembic environment: async engines, and a connection handed in by contextd itself."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy import Connection

from app.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    from app.db import create_engine, sqlite_foreign_keys

    engine = create_engine(url)
    async with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            # As in app.db.migrate: rebuilding a table must not cascade into its children.
            await connection.run_sync(sqlite_foreign_keys, False)
        async with connection.begin():
            await connection.run_sync(_run)
    await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from app.settings import get_settings

        url = get_settings().database_url
    asyncio.run(_run_async(url))


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
run_migrations_online()
