"""The Postgres test databases' set-up (tests/databases.py): each test gets a database as the
template left it, and a wedged server fails the run saying so instead of hanging it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from tests import databases
from tests.conftest import _admin_dsn
from tests.databases import PostgresDatabases, PostgresWedged


@pytest.fixture
def wedged_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[PostgresDatabases]:
    """Copies and drops against a server that takes connections and never answers."""
    monkeypatch.setattr(databases, "STATEMENT_SECONDS", 0.5)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        yield PostgresDatabases(f"postgresql://postgres@127.0.0.1:{port}/postgres", "template")


def test_taking_a_database_from_a_wedged_server_fails_saying_so(
    wedged_server: PostgresDatabases,
) -> None:
    # Whichever gives up first says so: the wait for the copy, or the copy's own statement.
    # Both have the same limit, and on a loaded machine either can be first.
    with pytest.raises(
        PostgresWedged,
        match=r"did not (copy the template|run 'CREATE DATABASE \S+ TEMPLATE \"template\"')"
        r" within 0\.5 s",
    ):
        wedged_server.take()
    with pytest.raises(PostgresWedged):
        wedged_server.close()


def test_closing_with_drops_stuck_on_a_wedged_server_fails_saying_so(
    wedged_server: PostgresDatabases,
) -> None:
    wedged_server.drop_later("contextd_test_stuck")

    with pytest.raises(PostgresWedged, match='DROP DATABASE IF EXISTS "contextd_test_stuck"'):
        wedged_server.close()


async def _run(dsn: str, *statements: str) -> list[Any]:
    connection = await asyncpg.connect(dsn)
    try:
        return [await connection.fetchval(statement) for statement in statements]
    finally:
        await connection.close()


@pytest.mark.postgres
def test_a_database_given_back_is_as_the_template_left_it_for_the_next_test(
    postgres_server_url: str, postgres_template: str
) -> None:
    admin = _admin_dsn(postgres_server_url)
    databases = PostgresDatabases(admin, postgres_template)
    try:
        first = databases.take()
        asyncio.run(
            _run(
                databases.dsn(first),
                "INSERT INTO sessions (id, tenant_id, model, metadata, turn_count, message_count,"
                " created_at, updated_at) VALUES ('s1', 't', 'gpt-4o', '{}', 0, 0, now(), now())",
                "SELECT nextval('messages_id_seq')",
            )
        )
        databases.give_back(first)

        second = databases.take()
        sessions, next_id = asyncio.run(
            _run(
                databases.dsn(second),
                "SELECT count(*) FROM sessions",
                "SELECT nextval('messages_id_seq')",
            )
        )
        assert (sessions, next_id) == (0, 1)
        assert second == first  # emptied, not copied again

        asyncio.run(
            _run(
                databases.dsn(second),
                "ALTER TABLE messages ALTER COLUMN name TYPE text",
            )
        )
        databases.give_back(second)

        third = databases.take()
        (name_type,) = asyncio.run(
            _run(
                databases.dsn(third),
                "SELECT data_type FROM information_schema.columns"
                " WHERE table_name = 'messages' AND column_name = 'name'",
            )
        )
        assert third != second  # a schema a test changed is dropped, never given out again
        assert name_type != "text"
        databases.give_back(third)
    finally:
        databases.close()
    (left,) = asyncio.run(
        _run(
            admin,
            f"SELECT count(*) FROM pg_database WHERE datname IN ('{first}', '{third}')",
        )
    )
    assert left == 0
