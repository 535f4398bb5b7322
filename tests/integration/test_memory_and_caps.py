"""Pinned memory, per-block caps, and summary lines that repeat memory (seed 000)."""

from __future__ import annotations

import httpx

from app.budget.assembly import chat_problems
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    start_turn,
    stored_messages,
    words,
)


async def test_memory_is_shown_after_the_goal_and_before_the_summary(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    response = await client.put(
        f"/v1/sessions/{session['id']}/memory", json={"memory": "Traveller: Ana, vegetarian."}
    )
    for number in range(9):  # the ninth turn brings the first summary
        prompt = await start_turn(client, session["id"], f"Booking code QX-{number}?")
        await complete_turn(client, session["id"], prompt["turn_id"], f"Code QX-{number} ok.")

    system = prompt["messages"][0]["content"]
    assert response.status_code == 200
    assert response.json()["memory"] == "Traveller: Ana, vegetarian."
    assert system.index("## Session") < system.index("## Memory")
    assert system.index("## Memory") < system.index("## Summary of earlier conversation")
    assert "Traveller: Ana, vegetarian." in system


async def test_summary_lines_repeating_memory_are_left_out(client: httpx.AsyncClient) -> None:
    session = await create_session(client, memory="- Ana's passport number is P4411.")
    for number in range(9):
        fact = "Ana's passport number is P4411." if number == 0 else f"Seat {number}C is free."
        prompt = await start_turn(client, session["id"], fact)
        await complete_turn(client, session["id"], prompt["turn_id"], "Noted.")

    summary = prompt["messages"][0]["content"].split("## Summary of earlier conversation")[1]
    row = (await audit_rows(client, session["id"]))[-1]
    stored_summary = (await client.get(f"/v1/sessions/{session['id']}/summaries")).json()
    assert row["summary_id"] is not None
    assert "P4411" not in summary
    assert "Seat 1C is free." in summary
    assert row["block_telemetry"]["summary"]["duplicate_lines_removed"] == 1
    # The stored summary keeps the fact: only the prompt leaves out what memory says.
    assert any("P4411" in f["text"] for f in stored_summary["summaries"][0]["key_facts"])


async def test_history_cap_leaves_out_the_oldest_and_keeps_the_recent_floor(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, block_caps={"history": 400, "min_recent_messages": 2})
    for number in range(6):
        prompt = await start_turn(client, session["id"], f"Question {number}")
        await complete_turn(client, session["id"], prompt["turn_id"], words(150, number))

    last = await start_turn(client, session["id"], "Final question")

    assert last["budget"]["blocks"]["history"] <= 400
    assert chat_problems(last["messages"]) == []
    history = last["messages"][1:-1]
    assert [m["content"] for m in history[-2:]] == ["Question 5", words(150, 5)]
    assert "Question 0" not in [m["content"] for m in last["messages"]]
    # Left out of the prompt, not out of history: still active for a later summary.
    stored = await stored_messages(client, session["id"])
    assert stored[0]["state"] == "active"
    row = (await audit_rows(client, session["id"]))[-1]
    assert row["block_telemetry"]["history"]["messages_removed"] > 0
    assert row["block_telemetry"]["history"]["tokens_after"] <= 400
    assert row["change_reason"] == "block_cap"


async def test_total_cap_takes_history_first_then_the_summary(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(
        client, block_caps={"total": 150, "min_recent_messages": 2}, goal=None, mode=None
    )
    for number in range(9):
        prompt = await start_turn(
            client, session["id"], f"Order {number}: ref R-{number}00 ships on day {number}."
        )
        await complete_turn(client, session["id"], prompt["turn_id"], words(40, number))

    telemetry = (await audit_rows(client, session["id"]))[-1]["block_telemetry"]
    assert prompt["actions"]["summary_triggered"]
    assert prompt["budget"]["estimated_input_tokens"] <= 150
    assert telemetry["history"]["messages_removed"] > 0
    assert len(prompt["messages"]) == 4  # system, the two newest, the current message
    assert telemetry["summary"]["lines_removed"] > 0
    assert telemetry["summary"]["tokens_after"] < telemetry["summary"]["tokens_before"]


async def test_block_caps_are_validated(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4o", "block_caps": {"memory": 0, "colour": 1}}
    )

    assert response.status_code == 422
    locations = {e["location"] for e in response.json()["error"]["details"]["errors"]}
    assert {"body.block_caps.memory", "body.block_caps.colour"} <= locations


async def test_rollup_reports_what_capped_prompts_cost(client: httpx.AsyncClient) -> None:
    session = await create_session(client, block_caps={"history": 200})
    for number in range(5):
        prompt = await start_turn(client, session["id"], f"Question {number}")
        await complete_turn(client, session["id"], prompt["turn_id"], words(150, number))

    rollup = (await client.get("/v1/audit/rollup", params={"session_id": session["id"]})).json()
    rows = await audit_rows(client, session["id"])

    assert rollup["prompt_tokens"]["max"] == max(r["estimated_input_tokens"] for r in rows)
    assert any(r["estimated_input_tokens"] < r["estimated_input_tokens_after_prune"] for r in rows)
