"""Every statement of the turn path stays within one session.

On a sharded Postgres (Citus) the session is the unit of distribution: a statement that names a
session-owned table without saying which session is sent to every shard, and a turn's cost
would then grow with the cluster. This test runs the turn path (a turn start, a step, a
completion, each call after the first reporting the provider's usage and cache reads, a
summary, a recall search, a rejected turn) and fails on any statement that
touches a session-owned table without filtering by the session (or, for an INSERT, without
writing its session column). docs/scale-out.md relies on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from app.models.base import Base
from tests.conftest import RunningApp
from tests.support import create_session, step_body, words

pytestmark = pytest.mark.postgres

#: The tables whose rows belong to one session: every table with a ``session_id`` column,
#: and the sessions table itself (keyed by ``id``).
SESSION_TABLES = {
    name: ("id" if name == "sessions" else "session_id")
    for name, table in Base.metadata.tables.items()
    if name == "sessions" or "session_id" in table.c
}
_REFERENCE = re.compile(
    r"\b(?P<verb>FROM|JOIN|UPDATE|INSERT INTO)\s+(?P<table>\w+)(?:\s+(?:AS\s+)?(?P<alias>\w+))?",
    re.IGNORECASE,
)
_KEYWORDS = {"where", "set", "on", "values", "join", "left", "inner", "order", "limit", "for"}


def unscoped_references(statement: str, parameters: Any, session_id: str) -> list[str]:
    """The session-owned tables this statement reads or writes without naming the session."""
    values = parameters.values() if isinstance(parameters, Mapping) else parameters
    bound = session_id in (values if isinstance(values, Sequence) else list(values))
    matches = list(_REFERENCE.finditer(statement))
    problems = []
    for index, match in enumerate(matches):
        table = match["table"].lower()
        if table not in SESSION_TABLES:
            continue
        column = SESSION_TABLES[table]
        end = matches[index + 1].start() if index + 1 < len(matches) else len(statement)
        clause = statement[match.end() : end]
        if match["verb"].upper() == "INSERT INTO":
            columns = clause.split(")", 1)[0]
            scoped = re.search(rf"\b{column}\b", columns) is not None
        else:
            alias = match["alias"]
            name = alias if alias and alias.lower() not in _KEYWORDS else table
            scoped = re.search(rf"\b{name}\.{column}\s*=", clause) is not None
        if not (scoped and bound):
            problems.append(f"{match['verb']} {table}: {statement[:160]!r}")
    return problems


class Statements:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def _record(self, *args: Any) -> None:
        self.seen.append((str(args[2]), args[3]))

    @contextmanager
    def recording(self) -> Iterator[Statements]:
        event.listen(Engine, "before_cursor_execute", self._record)
        try:
            yield self
        finally:
            event.remove(Engine, "before_cursor_execute", self._record)


#: What a provider reports of a prompt, its cache reads included.
_USAGE = {"prompt_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 896}}


@pytest.fixture
async def postgres_apps(postgres_url: str) -> Any:
    running = RunningApp(postgres_url)
    try:
        yield running
    finally:
        await running.stop_all()


async def test_every_turn_path_statement_filters_by_its_session(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    session = await create_session(
        client, model="gpt-4o", context_limit=8192, recall={"enabled": True}
    )
    # A neighbour, so that a statement scoped by tenant alone would have other rows to see.
    await create_session(client, model="gpt-4o")
    base = f"/v1/sessions/{session['id']}/turns"
    statements = Statements()
    with statements.recording():
        for number in range(5):
            started = await client.post(
                base, json={"message": {"content": f"{words(30, number)} locker code 44{number}"}}
            )
            assert started.status_code == 201, started.text
            turn = started.json()["turn_id"]
            # The usage of the previous call's prompt: it updates that prompt's audit row.
            stepped = await client.post(
                f"{base}/{turn}/steps",
                json={**step_body([f"call_{number}"], ["none"]), "usage": _USAGE},
            )
            assert stepped.status_code == 200, stepped.text
            done = await client.post(
                f"{base}/{turn}/complete", json={"assistant": {"content": "ok"}, "usage": _USAGE}
            )
            assert done.status_code == 200, done.text
        asked = await client.post(base, json={"message": {"content": "What was the locker code?"}})
        assert asked.status_code == 201, asked.text
        done = await client.post(
            f"{base}/{asked.json()['turn_id']}/complete", json={"assistant": {"content": "ok"}}
        )
        assert done.status_code == 200, done.text
        assert asked.json()["actions"]["summary_triggered"] or any(
            "session_summaries" in text for text, _ in statements.seen
        )
        rejected = await client.post(base, json={"message": {"content": words(9000)}})
        assert rejected.status_code == 422, rejected.text

    touched = {t for text, _ in statements.seen for t in SESSION_TABLES if t in text}
    # The path did reach every table a turn writes, so the check below covered them.
    assert {"sessions", "turns", "messages", "session_summaries", "turn_context_audit"} <= touched
    assert any("UPDATE turn_context_audit" in text for text, _ in statements.seen)
    problems = [
        problem
        for text, parameters in statements.seen
        for problem in unscoped_references(text, parameters, session["id"])
    ]
    assert problems == []


def test_the_check_catches_a_statement_scoped_by_tenant_alone() -> None:
    statement = "UPDATE turns SET steps=$1::INTEGER WHERE turns.id = $2 AND turns.tenant_id = $3"
    assert unscoped_references(statement, (1, "t", "default"), "s1") != []
    scoped = statement + " AND turns.session_id = $4"
    assert unscoped_references(scoped, (1, "t", "default", "s1"), "s1") == []
