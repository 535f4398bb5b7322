"""The Postgres test databases' set-up (tests/databases.py) gives up on a wedged server
with a message that says so, instead of hanging the run."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests import databases
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
