"""Long turns of realistic agent traffic (tests/agent_traffic.py: ``call_`` ids of 24
characters, arguments of 15-35 tokens, parallel calls, two results of ~20k tokens in a step,
Claude's signed and redacted thinking) go on to their end on an 8k window: older steps fold
into a note, parallel results share one cap, and older history gives way before a step is
refused; a step is refused only when it and the user's message cannot fit alone."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import httpx
import pytest

from app.budget.anthropic import AnthropicPrompt, anthropic_problems, to_anthropic
from app.budget.assembly import chat_problems
from tests.agent_traffic import agent_step, tool_output
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    independent_prompt_tokens,
    start_turn,
    stored_messages,
    words,
)

STEPS = 60
QUESTION = "Find why invoices round wrongly and fix it."
NOTE = "Earlier steps of this turn, folded for room"


def called_ids(messages: list[dict[str, Any]]) -> set[str]:
    return {c["id"] for m in messages for c in m.get("tool_calls") or ()}


def anthropic_called_ids(messages: list[dict[str, Any]]) -> set[str]:
    return {b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"}


async def post_step(
    client: httpx.AsyncClient, sid: str, turn_id: str, body: dict[str, Any], fmt: str
) -> httpx.Response:
    return await client.post(
        f"/v1/sessions/{sid}/turns/{turn_id}/steps", json={**body, "format": fmt}
    )


@pytest.mark.parametrize(
    ("model", "fmt", "thinking"),
    [
        ("gpt-4", "openai", False),
        ("gpt-4", "anthropic", False),
        ("claude-sonnet-4-5", "anthropic", True),
    ],
)
async def test_a_sixty_step_turn_of_real_agent_traffic_at_8k_completes(
    client: httpx.AsyncClient, model: str, fmt: str, thinking: bool
) -> None:
    rng = random.Random(24)
    extra = {"context_limit": 8192, "max_output_tokens": 1024} if model != "gpt-4" else {}
    session = await create_session(client, model=model, **extra)
    sid, budget = session["id"], session["budget"]["input_budget"]
    turn_id = (await start_turn(client, sid, QUESTION))["turn_id"]
    gone: set[str] = set()
    posted: list[str] = []
    for step in range(STEPS):
        # Two results of about 20k tokens in the first step, and one step in eight after.
        sent = agent_step(rng, thinking=thinking, huge=True if step == 0 else None)
        response = await post_step(client, sid, turn_id, sent.body, fmt)
        assert response.status_code == 200, (step, response.text)
        prompt = response.json()
        posted.extend(sent.call_ids)
        assert prompt["budget"]["estimated_input_tokens"] <= budget
        if fmt == "openai":
            messages = prompt["messages"]
            assert chat_problems(messages) == []
            assert anthropic_problems(to_anthropic(messages)) == []
            assert independent_prompt_tokens(messages, "gpt-4") <= budget
            assert messages[1] == {"role": "user", "content": QUESTION}
            # The latest step whole: its calls, then every one of its results.
            assert [c["id"] for c in messages[-1 - len(sent.call_ids)]["tool_calls"]] == list(
                sent.call_ids
            )
            shown = called_ids(messages)
        else:
            native = AnthropicPrompt(prompt["system"], prompt["messages"])
            assert anthropic_problems(native) == []
            assert prompt["messages"][0]["content"][0]["text"] == QUESTION
            last_call = prompt["messages"][-2]
            if thinking:
                # The step's own thinking goes back first and unchanged, as the API requires.
                assert last_call["content"][0] == sent.body["assistant"]["content"][0]
            shown = anthropic_called_ids(prompt["messages"])
            assert {b["id"] for b in last_call["content"] if b["type"] == "tool_use"} == set(
                sent.call_ids
            )
        # Folding moves forward only: a call that left the prompt never comes back.
        now_gone = set(posted) - shown
        assert gone <= now_gone
        gone = now_gone

    rows = await audit_rows(client, sid)
    assert not any(row["overflow_rejected"] for row in rows)
    assert rows[-1]["block_telemetry"]["open_turn"]["steps_folded"] > 0
    assert len(gone) > 20
    # Steps fold in batches: not every prompt rewrites what the previous one showed.
    folds = [r for r in rows if r["change_reason"] == "long_turn"]
    assert 0 < len(folds) < STEPS
    await complete_turn(client, sid, turn_id, "Fixed the rounding.")


async def test_a_folded_step_is_named_in_the_note_and_stays_readable_whole(
    client: httpx.AsyncClient,
) -> None:
    rng = random.Random(3)
    session = await create_session(client, model="gpt-4")
    sid = session["id"]
    turn_id = (await start_turn(client, sid, QUESTION))["turn_id"]
    first = agent_step(rng, huge=False)
    await post_step(client, sid, turn_id, first.body, "openai")
    prompt: dict[str, Any] = {}
    while NOTE not in json.dumps(prompt):
        response = await post_step(client, sid, turn_id, agent_step(rng).body, "openai")
        assert response.status_code == 200, response.text
        prompt = response.json()

    note = prompt["messages"][2]
    assert note["role"] == "user"
    assert NOTE in note["content"]
    call = first.body["assistant"]["tool_calls"][0]["function"]
    assert f"- {call['name']} {call['arguments'][:40]}" in note["content"]
    seq = int(re.search(r"→ result seq (\d+)", note["content"]).group(1))  # type: ignore[union-attr]
    stored = {m["seq"]: m for m in await stored_messages(client, sid)}
    assert stored[seq]["content"] == first.body["tool_results"][0]["content"]
    assert first.call_ids[0] not in called_ids(prompt["messages"])


async def test_parallel_results_of_one_step_share_one_cap(client: httpx.AsyncClient) -> None:
    rng = random.Random(8)
    session = await create_session(client, model="gpt-4")
    sid, budget = session["id"], session["budget"]["input_budget"]
    turn_id = (await start_turn(client, sid, QUESTION))["turn_id"]
    sent = agent_step(rng, huge=True)
    assert min(sent.result_tokens) > 15_000

    response = await post_step(client, sid, turn_id, sent.body, "openai")

    assert response.status_code == 200, response.text
    results = [m for m in response.json()["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == list(sent.call_ids)
    shown = independent_prompt_tokens(results, "gpt-4")
    # Both results within one result's share of the budget (25 %, each message's own
    # overhead aside), each cut around a marker: not 25 % each.
    assert shown <= 0.25 * budget + 40
    assert all("tokens of this tool result are left out" in m["content"] for m in results)


async def test_older_turns_give_way_before_a_step_that_fits_alone_is_refused(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    sid, budget = session["id"], session["budget"]["input_budget"]
    for index in range(5):
        turn = await start_turn(client, sid, f"Task {index}: " + words(700, index))
        await complete_turn(client, sid, turn["turn_id"], words(60, index))
    turn_id = (await start_turn(client, sid, "Write the fix. " + words(300)))["turn_id"]
    # The agent writes a file: 3,200 tokens of arguments, which fit beside the user's message
    # but not beside the whole recent window too.
    call_id = "call_Xw7Rk2mQ9pL4sT8vB1nC6yZ3"
    arguments = json.dumps({"path": "billing/rounding.py", "content": tool_output(rng, 3200)})
    body = {
        "assistant": {
            "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "write_file", "arguments": arguments}}
            ]
        },
        "tool_results": [{"tool_call_id": call_id, "content": "wrote 212 lines"}],
    }  # fmt: skip

    response = await post_step(client, sid, turn_id, body, "openai")

    assert response.status_code == 200, response.text
    messages = response.json()["messages"]
    assert independent_prompt_tokens(messages, "gpt-4") <= budget
    assert chat_problems(messages) == []
    assert messages[-2]["tool_calls"][0]["function"]["arguments"] == arguments
    assert messages[-3]["content"].startswith("Write the fix.")
    row = (await audit_rows(client, sid))[-1]
    assert row["block_telemetry"]["open_turn"]["history_messages_left_out"] > 0
    assert row["change_reason"] == "long_turn"
    # Only this prompt: the next turn shows the recent window again.
    await complete_turn(client, sid, turn_id, "Done.")
    following = await start_turn(client, sid, "Thanks.")
    assert any(str(m["content"]).startswith("Task 4:") for m in following["messages"])


rng = random.Random(5)


async def test_a_step_too_big_to_fit_with_the_user_message_alone_is_refused_with_figures(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    sid, budget = session["id"], session["budget"]["input_budget"]
    turn_id = (await start_turn(client, sid, QUESTION))["turn_id"]
    call_id = "call_Zr4Nw8Lq2Vx6Bk1Ms9Tf3Hy7"
    arguments = json.dumps({"path": "billing/ledger.py", "content": tool_output(rng, 7000)})
    body = {
        "assistant": {
            "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "write_file", "arguments": arguments}}
            ]
        },
        "tool_results": [{"tool_call_id": call_id, "content": "wrote 480 lines"}],
    }  # fmt: skip

    response = await post_step(client, sid, turn_id, body, "openai")

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "context_budget_exceeded"
    assert error["details"]["input_budget"] == budget
    guidance = error["details"]["guidance"]
    found = re.search(r"this step's tool calls and results need (\d+)", guidance, re.I)
    assert found is not None
    assert int(found.group(1)) > budget
    assert "complete the turn as failed" in guidance
    # Nothing of the refused step was stored.
    assert call_id not in json.dumps(await stored_messages(client, sid))
