"""Two real server processes on one Postgres, many concurrent calls on the same sessions:
nothing lost, nothing duplicated, nothing interleaved inside a turn."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import issue_key
from tests.processes import ServerProcess
from tests.support import step_body

SESSIONS = 3
ROUNDS = 3
STARTS_RACING = 4
STEPS_PER_TURN = 8


@pytest.fixture
async def two_workers(postgres_url: str, tmp_path: Path) -> AsyncIterator[list[httpx.AsyncClient]]:
    key = await issue_key(postgres_url, "acme", "agent")
    servers = [ServerProcess(postgres_url, tmp_path / f"worker-{i}.log") for i in range(2)]
    clients: list[httpx.AsyncClient] = []
    try:
        for server in servers:
            url = await asyncio.to_thread(server.ready)
            clients.append(
                httpx.AsyncClient(
                    base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60
                )
            )
        yield clients
    finally:
        for client in clients:
            await client.aclose()
        for server in servers:
            server.stop()


async def run_session(workers: list[httpx.AsyncClient], session_id: str) -> dict[str, Any]:
    """Rounds of: racing turn starts, concurrent steps, one step retried through both
    workers with one key, completion. Returns what the service answered."""
    worker = itertools.cycle(workers)
    base = f"/v1/sessions/{session_id}"
    answered_calls: list[str] = []
    start_statuses: list[int] = []
    for round_number in range(ROUNDS):
        starts = await asyncio.gather(
            *(
                next(worker).post(
                    f"{base}/turns", json={"message": {"content": f"r{round_number} u{i}"}}
                )
                for i in range(STARTS_RACING)
            )
        )
        start_statuses.extend(r.status_code for r in starts)
        turn_id = next(r.json()["turn_id"] for r in starts if r.status_code == 201)

        def step(number: int, round_number: int = round_number) -> dict[str, Any]:
            calls = [f"{session_id}-r{round_number}-s{number}-{c}" for c in "ab"]
            return step_body(calls, [f"result of {call}" for call in calls])

        steps = await asyncio.gather(
            *(
                next(worker).post(f"{base}/turns/{turn_id}/steps", json=step(n))
                for n in range(STEPS_PER_TURN)
            )
        )
        assert {s.status_code for s in steps} == {200}, [s.text for s in steps]
        answered_calls += [c for n in range(STEPS_PER_TURN) for c in _calls(step(n))]
        retried = step(STEPS_PER_TURN)
        retry_key = {"Idempotency-Key": f"{session_id}-r{round_number}-retry"}
        replies = await asyncio.gather(
            *(
                w.post(f"{base}/turns/{turn_id}/steps", json=retried, headers=retry_key)
                for w in workers
            )
        )
        assert [r.status_code for r in replies] == [200, 200]
        assert replies[0].json() == replies[1].json()
        answered_calls += _calls(retried)
        done = await next(worker).post(
            f"{base}/turns/{turn_id}/complete", json={"assistant": {"content": "done"}}
        )
        assert done.status_code == 200, done.text
    return {"calls": answered_calls, "starts": start_statuses}


def _calls(body: dict[str, Any]) -> list[str]:
    return [call["id"] for call in body["assistant"]["tool_calls"]]


async def stored(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    page = await client.get(f"/v1/sessions/{session_id}/messages", params={"limit": 1000})
    messages: list[dict[str, Any]] = page.json()["messages"]
    return messages


@pytest.mark.postgres
async def test_two_workers_serialise_concurrent_calls_on_shared_sessions(
    two_workers: list[httpx.AsyncClient],
) -> None:
    session_ids = [f"shared-{i}" for i in range(SESSIONS)]
    for session_id in session_ids:
        created = await two_workers[0].post(
            "/v1/sessions", json={"id": session_id, "model": "gpt-4o"}
        )
        assert created.status_code == 201, created.text

    answers = await asyncio.gather(*(run_session(two_workers, s) for s in session_ids))

    for session_id, answer in zip(session_ids, answers, strict=True):
        assert answer["starts"].count(201) == ROUNDS
        assert set(answer["starts"]) == {201, 409}
        messages = await stored(two_workers[1], session_id)
        assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))
        stored_calls = [c["id"] for m in messages for c in m["tool_calls"] or ()]
        assert sorted(stored_calls) == sorted(answer["calls"])  # none lost, none twice
        for turn_seq in range(1, ROUNDS + 1):
            turn = [m for m in messages if m["turn_seq"] == turn_seq]
            assert turn[0]["role"] == "user"
            assert (turn[-1]["role"], turn[-1]["content"]) == ("assistant", "done")
            middle = turn[1:-1]
            for index, message in enumerate(middle):
                if message["role"] == "assistant":
                    ids = [c["id"] for c in message["tool_calls"]]
                    answers_to = [m["tool_call_id"] for m in middle[index + 1 : index + 3]]
                    assert answers_to == ids  # each result right after its call
            assert len(middle) == 3 * (STEPS_PER_TURN + 1)
