"""How many database round trips each agent call costs on Postgres.

A turn's cost is mostly round trips: these counts are part of the design (lock, one snapshot
read, one batch of writes), so a change that adds one has to change this test on purpose.
Counted with SQLAlchemy's engine events: BEGIN, each statement, COMMIT.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from tests.conftest import RunningApp
from tests.support import create_session, step_body, words

pytestmark = pytest.mark.postgres


class RoundTrips:
    def __init__(self) -> None:
        self.count = 0
        self.statements: list[str] = []

    def _statement(self, *args: Any) -> None:
        self.count += 1
        self.statements.append(str(args[2]).split("\n", 1)[0][:80])

    def _bump(self, *_args: Any) -> None:
        self.count += 1

    @contextmanager
    def counting(self) -> Iterator[RoundTrips]:
        hooks = [
            ("before_cursor_execute", self._statement),
            ("begin", self._bump),
            ("commit", self._bump),
            ("rollback", self._bump),
        ]
        self.count = 0
        self.statements = []
        for name, hook in hooks:
            event.listen(Engine, name, hook)
        try:
            yield self
        finally:
            for name, hook in hooks:
                event.remove(Engine, name, hook)


class AppsWithSteadyCaches(RunningApp):
    """Apps whose key and calibration caches do not expire during a test: they trust what they
    read for a second by default, and on a busy machine (the suite on every core, other work
    beside it) a turn can take longer, which would count a cache refresh that is no part of a
    turn's cost."""

    async def start(self, **settings: Any) -> Any:
        steady = {"api_key_cache_seconds": 60, "calibration_cache_seconds": 60}
        return await super().start(**{**steady, **settings})


@pytest.fixture
async def postgres_apps(postgres_url: str) -> Any:
    running = AppsWithSteadyCaches(postgres_url)
    try:
        yield running
    finally:
        await running.stop_all()


async def test_a_turn_start_a_step_and_a_completion_cost_five_round_trips_each(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    base = f"/v1/sessions/{session['id']}/turns"
    trips = RoundTrips()
    # Warm up: the first turn prepares every statement on its connection.
    for number in range(2):
        started = await client.post(base, json={"message": {"content": f"warm up {number}"}})
        done = await client.post(
            f"{base}/{started.json()['turn_id']}/complete",
            json={"assistant": {"content": "ok"}},
        )
        assert done.status_code == 200, done.text

    with trips.counting():
        started = await client.post(base, json={"message": {"content": words(40)}})
    assert started.status_code == 201, started.text
    # BEGIN, lock the session, the snapshot read, the batch of writes, COMMIT.
    assert trips.count == 5, trips.statements
    turn = started.json()["turn_id"]

    step = {
        "assistant": {
            "tool_calls": [
                {"id": "call_a", "function": {"name": "search", "arguments": "{}"}},
                {"id": "call_b", "function": {"name": "search", "arguments": "{}"}},
            ]
        },
        "tool_results": [
            {"tool_call_id": "call_a", "content": words(30)},
            {"tool_call_id": "call_b", "content": words(30, seed=1)},
        ],
    }
    with trips.counting():
        stepped = await client.post(f"{base}/{turn}/steps", json=step)
    assert stepped.status_code == 200, stepped.text
    assert trips.count == 5, trips.statements

    with trips.counting():
        done = await client.post(f"{base}/{turn}/complete", json={"assistant": {"content": "ok"}})
    assert done.status_code == 200, done.text
    # BEGIN, lock the session, read the turn, the batch of writes, COMMIT.
    assert trips.count == 5, trips.statements


async def test_a_rejected_turn_start_costs_the_same_and_stores_only_its_audit_row(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o", context_limit=4096)
    base = f"/v1/sessions/{session['id']}/turns"
    warm_up = (await client.post(base, json={"message": {"content": "warm up"}})).json()
    await client.post(
        f"{base}/{warm_up['turn_id']}/complete", json={"assistant": {"content": "ok"}}
    )
    first = (await client.get(f"/v1/sessions/{session['id']}")).json()
    trips = RoundTrips()
    with trips.counting():
        rejected = await client.post(base, json={"message": {"content": words(5000)}})
    assert rejected.status_code == 422, rejected.text
    assert rejected.json()["error"]["code"] == "context_budget_exceeded"
    assert trips.count == 5, trips.statements
    audit_id = rejected.json()["error"]["details"]["audit_id"]
    row = (await client.get(f"/v1/audit/{audit_id}")).json()
    assert row["overflow_rejected"] is True
    after = (await client.get(f"/v1/sessions/{session['id']}")).json()
    assert after["message_count"] == first["message_count"]
    assert after["turn_count"] == first["turn_count"]


async def test_the_turn_after_a_summary_needs_no_extra_read_of_it(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    base = f"/v1/sessions/{session['id']}/turns"
    trips = RoundTrips()
    summarised = False
    for number in range(12):
        with trips.counting():
            started = await client.post(base, json={"message": {"content": words(20, number)}})
        assert started.status_code == 201, started.text
        if summarised:
            # The summary made by the previous turn is shown without being read back.
            assert trips.count == 5, trips.statements
            break
        summarised = started.json()["actions"]["summary_triggered"]
        done = await client.post(
            f"{base}/{started.json()['turn_id']}/complete", json={"assistant": {"content": "ok"}}
        )
        assert done.status_code == 200, done.text
    assert summarised


async def test_recall_reads_once_at_a_turn_start_with_history_to_search_and_at_no_step(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    session = await create_session(client, model="gpt-4o", recall={"enabled": True})
    base = f"/v1/sessions/{session['id']}/turns"
    trips = RoundTrips()

    async def turn_start(content: str) -> str:
        with trips.counting():
            started = await client.post(base, json={"message": {"content": content}})
        assert started.status_code == 201, started.text
        turn_id: str = started.json()["turn_id"]
        return turn_id

    async def complete(turn_id: str) -> None:
        done = await client.post(
            f"{base}/{turn_id}/complete", json={"assistant": {"content": "ok"}}
        )
        assert done.status_code == 200, done.text

    # Nothing has left the prompt yet: nothing to search.
    await complete(await turn_start("The locker code for the Lisbon flat is 4471."))
    assert trips.count == 5, trips.statements
    for number in range(3):
        await complete(await turn_start(words(20, number)))

    turn = await turn_start("What was the locker code for the Lisbon flat?")
    # One more: the search.
    assert trips.count == 6, trips.statements

    with trips.counting():
        stepped = await client.post(f"{base}/{turn}/steps", json=step_body(["c1"], ["none"]))
    assert stepped.status_code == 200, stepped.text
    assert trips.count == 5, trips.statements
