"""A worker keeps a session's decoded rows between its assemblies (``app.turns.kept_rows``)
and reads back only what was written since: its answers are the same, byte for byte, as a
worker's that reads every row, and a step on one worker after another worker wrote sees
what that worker wrote."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from fastapi import FastAPI

from tests.conftest import RunningApp

SESSION_ID = "long-open-turn"
#: Small enough that the open turn's older results are set aside before the end.
CONTEXT_LIMIT = 16_000
STEPS = 14
CALLS = 6


def _step(number: int) -> dict[str, Any]:
    """A step of parallel calls whose results vary in shape: text, content parts, errors,
    non-ASCII text, large integers and nested arguments."""
    ids = [f"call_{number:02d}_{index}" for index in range(CALLS)]
    calls = [
        {
            "id": call_id,
            "type": "function",
            "function": {
                "name": "read_file",
                "arguments": json.dumps(
                    {"path": f"src/m{number}/f{index}.py", "range": [index, 2**70 + number]}
                ),
            },
        }
        for index, call_id in enumerate(ids)
    ]
    results: list[dict[str, Any]] = []
    for index, call_id in enumerate(ids):
        text = f"résumé {number}.{index}: total = Σ lines ✓ " * (8 + 3 * index)
        result: dict[str, Any] = {"tool_call_id": call_id, "content": text}
        if index == 1:
            result["content"] = [{"type": "text", "text": text}, {"type": "text", "text": "ok"}]
        if index == 2:
            result["is_error"] = True
        results.append(result)
    assistant: dict[str, Any] = {"content": f"Reading batch {number}.", "tool_calls": calls}
    if number % 3 == 0:
        assistant["reasoning_content"] = f"Batch {number} may hold the rounding bug."
    return {
        "assistant": assistant,
        "tool_results": results,
        "format": "anthropic" if number % 4 == 3 else "openai",
    }


def _comparable(response: httpx.Response, turn_id: str, seqs: dict[int, int]) -> bytes:
    """The answer's bytes but its turn's id, its audit row's id and its message ids (each
    database row's own), the ids written as the messages' seqs in their session."""
    assert response.status_code in (200, 201), response.text
    body = response.content.replace(turn_id.encode(), b"<turn>")
    body = re.sub(rb'"audit_id":\d+', b'"audit_id":0', body)
    return re.sub(
        rb'_message_ids":\[([\d,]*)\]',
        lambda ids: (
            b'_message_ids":[%s]' % b",".join(b"%d" % seqs[int(i)] for i in ids[1].split(b",") if i)
        ),
        body,
    )


async def _seqs(client: httpx.AsyncClient) -> dict[int, int]:
    """Every message's seq by its id, in the test's session."""
    seqs: dict[int, int] = {}
    after = 0
    while True:
        page = await client.get(
            f"/v1/sessions/{SESSION_ID}/messages", params={"after_seq": after, "limit": 1000}
        )
        assert page.status_code == 200, page.text
        seqs.update((m["id"], m["seq"]) for m in page.json()["messages"])
        after = page.json()["next_after_seq"]
        if after is None:
            return seqs


async def _session(client: httpx.AsyncClient) -> str:
    created = await client.post(
        "/v1/sessions",
        json={
            "id": SESSION_ID,
            "model": "gpt-4o",
            "context_limit": CONTEXT_LIMIT,
            "system": {"global": "You are a careful auditor."},
        },
    )
    assert created.status_code == 201, created.text
    return f"/v1/sessions/{SESSION_ID}/turns"


async def _compare_with_a_worker_that_keeps_nothing(
    apps: RunningApp, workers: list[FastAPI], *, kept_tenant: str
) -> None:
    """Two turns (a long open one, then another) through ``workers`` in turn, and the same
    calls for another tenant through a worker that keeps no rows: the same answers."""
    cold_app, _ = await apps.start(kept_rows_mib=0)
    cold = apps.client(cold_app, await apps.key("cold"))
    kept_key = await apps.key(kept_tenant)
    kept = [apps.client(app, kept_key) for app in workers]
    cold_base, kept_base = await _session(cold), await _session(kept[0])

    set_aside = False
    answers: list[tuple[httpx.Response, str, httpx.Response, str]] = []
    for turn_number in range(2):
        start = {"message": {"content": f"Audit the invoices, part {turn_number}."}}
        cold_start = await cold.post(cold_base, json=start)
        kept_start = await kept[0].post(kept_base, json=start)
        cold_turn, kept_turn = cold_start.json()["turn_id"], kept_start.json()["turn_id"]
        answers.append((kept_start, kept_turn, cold_start, cold_turn))
        steps = STEPS if turn_number == 0 else 3
        for number in range(steps):
            body = _step(number + 100 * turn_number)
            worker = kept[(number + 1) % len(kept)]
            cold_step = await cold.post(f"{cold_base}/{cold_turn}/steps", json=body)
            kept_step = await worker.post(f"{kept_base}/{kept_turn}/steps", json=body)
            answers.append((kept_step, kept_turn, cold_step, cold_turn))
            set_aside = set_aside or b"tool result set aside for room" in kept_step.content
        complete = {"assistant": {"content": "The cents drift on long invoices."}}
        assert (await cold.post(f"{cold_base}/{cold_turn}/complete", json=complete)).is_success
        assert (await kept[0].post(f"{kept_base}/{kept_turn}/complete", json=complete)).is_success

    kept_seqs, cold_seqs = await _seqs(kept[0]), await _seqs(cold)
    for number, (kept_answer, kept_turn, cold_answer, cold_turn) in enumerate(answers):
        assert _comparable(kept_answer, kept_turn, kept_seqs) == _comparable(
            cold_answer, cold_turn, cold_seqs
        ), number
    # The long turn's older results were set aside (so the answers above covered that), and
    # the keeping workers did keep the session's rows.
    assert set_aside
    assert cold_app.state.runtime.kept_rows.get("cold", SESSION_ID) is None
    for app in workers:
        held = app.state.runtime.kept_rows.get(kept_tenant, SESSION_ID)
        assert held is not None
        assert len(held.rows) > STEPS * CALLS


async def test_a_worker_keeping_the_open_turns_rows_answers_as_one_reading_them(
    apps: RunningApp,
) -> None:
    worker, _ = await apps.start()
    await _compare_with_a_worker_that_keeps_nothing(apps, [worker], kept_tenant="warm")


async def test_a_step_after_another_worker_wrote_sees_what_it_wrote(apps: RunningApp) -> None:
    first, _ = await apps.start()
    second, _ = await apps.start()
    await _compare_with_a_worker_that_keeps_nothing(apps, [first, second], kept_tenant="two")


async def _turn(client: httpx.AsyncClient, session_id: str, text: str) -> httpx.Response:
    """Start a turn with ``text``; answer it unless it is a question."""
    started = await client.post(
        f"/v1/sessions/{session_id}/turns", json={"message": {"content": text}}
    )
    assert started.status_code in (200, 201), started.text
    if not text.endswith("?"):
        turn_id = started.json()["turn_id"]
        done = await client.post(
            f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
            json={"assistant": {"content": "Noted."}},
        )
        assert done.is_success, done.text
    return started


async def test_a_session_deleted_and_created_again_elsewhere_is_not_served_the_old_rows(
    apps: RunningApp,
) -> None:
    """Deleted on another worker and created again with the same id, a session can get the
    same ids, seqs and roles back (SQLite): the worker that kept the old session's rows
    must not serve their text."""
    first, _ = await apps.start()
    second, _ = await apps.start()
    key = await apps.key("reborn")
    a, b = apps.client(first, key), apps.client(second, key)
    session_id = "reborn"
    for client in (a, b):
        if client is b:
            assert (await b.delete(f"/v1/sessions/{session_id}")).status_code == 204
        created = await client.post("/v1/sessions", json={"id": session_id, "model": "gpt-4o"})
        assert created.status_code == 201, created.text
        colour = "BLUE" if client is a else "RED"
        await _turn(client, session_id, f"My deploy target is {colour}-cluster.")
        if client is a:
            await _turn(a, session_id, "Second point.")
            assert first.state.runtime.kept_rows.get("reborn", session_id) is not None
    prompt = json.dumps((await _turn(a, session_id, "Which target?")).json()["messages"])
    assert "RED-cluster" in prompt
    assert "BLUE-cluster" not in prompt


async def test_a_worker_keeping_nothing_keeps_no_rows(apps: RunningApp) -> None:
    app, _ = await apps.start(kept_rows_mib=0)
    client = apps.client(app, await apps.key("none"))
    created = await client.post("/v1/sessions", json={"id": "none", "model": "gpt-4o"})
    assert created.status_code == 201, created.text
    await _turn(client, "none", "My deploy target is BLUE-cluster.")
    assert len(app.state.runtime.kept_rows) == 0


def _calls_step(*call_ids: str) -> dict[str, Any]:
    """A step of one call per id, each answered."""
    return {
        "assistant": {
            "content": None,
            "tool_calls": [
                {"id": c, "type": "function", "function": {"name": "grep", "arguments": "{}"}}
                for c in call_ids
            ],
        },
        "tool_results": [{"tool_call_id": c, "content": f"{c}: 3 matches"} for c in call_ids],
    }


#: (worker, call ids, Idempotency-Key or None). Worker 0 keeps the rows from the start, 1
#: keeps them too and writes between 0's steps, 2 serves the session only from the middle
#: (as after a restart); the refusals are of ids made on the same worker, on another one,
#: before a refused step, and by a step retried with its Idempotency-Key.
_REUSE_SCRIPT: list[tuple[int, tuple[str, ...], str | None]] = [
    (0, ("c1", "c2"), None),
    (0, ("c1",), None),
    (0, ("c9", "c2"), None),
    (0, ("c3",), "retried"),
    (0, ("c3",), "retried"),
    (0, ("c3",), None),
    (1, ("c4",), None),
    (0, ("c4", "c5"), None),
    (0, ("c5",), None),
    (2, ("c1",), None),
    (2, ("c6",), None),
    (2, ("c6",), None),
    (1, ("c5", "c7"), None),
    (0, ("c6",), None),
    (0, ("c7",), None),
]


async def test_reused_call_ids_are_refused_alike_whether_the_rows_are_kept_or_read(
    apps: RunningApp,
) -> None:
    """The check that a step's call ids are new uses the ids kept with the rows: its
    answers (refusals and prompts) are those of a worker that reads every row, whichever
    worker wrote the earlier calls, after a restart, a refused step or a retried one."""
    workers = [(await apps.start())[0] for _ in range(3)]
    cold_app, _ = await apps.start(kept_rows_mib=0)
    kept_key, cold_key = await apps.key("reuse-kept"), await apps.key("reuse-cold")
    kept = [apps.client(app, kept_key) for app in workers]
    cold = apps.client(cold_app, cold_key)
    start = {"message": {"content": "Find where the rounding happens."}}
    worlds = []
    for clients in (kept, [cold] * 3):
        base = await _session(clients[0])
        started = await clients[0].post(base, json=start)
        turn_id = started.json()["turn_id"]
        answers = []
        for worker, call_ids, idempotency_key in _REUSE_SCRIPT:
            headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
            answers.append(
                await clients[worker].post(
                    f"{base}/{turn_id}/steps", json=_calls_step(*call_ids), headers=headers
                )
            )
        worlds.append((answers, turn_id, await _seqs(clients[0])))

    (kept_answers, kept_turn, kept_seqs), (cold_answers, cold_turn, cold_seqs) = worlds
    codes = [answer.status_code for answer in kept_answers]
    assert codes == [200, 422, 422, 200, 200, 422, 200, 422, 200, 422, 200, 422, 422, 422, 200]
    pairs = zip(kept_answers, cold_answers, strict=True)
    for number, (kept_answer, cold_answer) in enumerate(pairs):
        assert kept_answer.status_code == cold_answer.status_code, number
        if kept_answer.status_code == 422:
            assert kept_answer.json()["error"]["code"] == "tool_call_id_reused", number
            assert kept_answer.json() == cold_answer.json(), number
        else:
            assert _comparable(kept_answer, kept_turn, kept_seqs) == _comparable(
                cold_answer, cold_turn, cold_seqs
            ), number
    assert kept_answers[2].json()["error"]["details"]["tool_call_ids"] == ["c2"]
    # Each worker keeps the ids of the calls as its last accepted step left them (the first
    # worker's came last, after the others wrote theirs).
    held = [app.state.runtime.kept_rows.get("reuse-kept", SESSION_ID) for app in workers]
    assert [sorted(h.call_ids) if h else None for h in held] == [
        ["c1", "c2", "c3", "c4", "c5", "c6", "c7"],
        ["c1", "c2", "c3", "c4"],
        ["c1", "c2", "c3", "c4", "c5", "c6"],
    ]
