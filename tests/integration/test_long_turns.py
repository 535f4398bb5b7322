"""A turn with many large tool steps on a small model goes on: older steps of the open turn
set their results aside, oldest first, then fold into a note, instead of the next step being
rejected (tests/integration/test_long_turn_traffic.py drives it with realistic traffic)."""

from __future__ import annotations

import random
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems, to_anthropic
from app.budget.assembly import chat_problems
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    independent_prompt_tokens,
    post_step,
    start_turn,
    stored_messages,
    words,
)

STEPS = 60
SET_ASIDE = "tool result set aside for room"


def set_aside_ids(prompt: dict[str, Any]) -> set[str]:
    return {
        m["tool_call_id"]
        for m in prompt["messages"]
        if m["role"] == "tool" and SET_ASIDE in str(m["content"])
    }


async def test_a_sixty_step_turn_of_large_results_on_an_8k_model_completes(
    client: httpx.AsyncClient,
) -> None:
    rng = random.Random(15)
    session = await create_session(client, model="gpt-4")
    sid, budget = session["id"], session["budget"]["input_budget"]
    question = "Audit every log file of the fleet."
    turn = await start_turn(client, sid, question)
    turn_id = turn["turn_id"]
    previous: set[str] = set()
    sizes = []
    for step in range(STEPS):
        call = f"read_{step}"
        size = rng.choice((rng.randint(200, 2_000), rng.randint(2_000, 20_000)))
        sizes.append(size)
        if step % 10 == 9:
            response = await client.post(
                f"/v1/sessions/{sid}/turns/{turn_id}/steps",
                json={
                    "assistant": {
                        "tool_calls": [{"id": call, "function": {"name": "cat", "arguments": "{}"}}]
                    },
                    "tool_results": [{"tool_call_id": call, "content": words(size, step)}],
                    "format": "anthropic",
                },
            )
            assert response.status_code == 200, response.text
            native = response.json()
            assert anthropic_problems(AnthropicPrompt(native["system"], native["messages"])) == []
        prompt = await post_step(client, sid, turn_id, [f"{call}_x"], [words(size, step)])
        messages = prompt["messages"]

        assert chat_problems(messages) == []
        assert anthropic_problems(to_anthropic(messages)) == []
        assert independent_prompt_tokens(messages, "gpt-4") <= budget
        assert prompt["budget"]["estimated_input_tokens"] <= budget
        # The user's message and the latest step stay; the set-aside boundary only advances.
        assert messages[1]["content"] == question
        assert messages[-2]["tool_calls"][0]["id"] == f"{call}_x"
        assert SET_ASIDE not in str(messages[-1]["content"])
        # Set aside, or folded into the note with its step: never shown whole again.
        shown = {m.get("tool_call_id") for m in messages}
        now = set_aside_ids(prompt) | (previous - shown)
        assert previous <= now
        previous = now

    await complete_turn(client, sid, turn_id, "All logs audited.")
    rows = await audit_rows(client, sid)
    assert not any(row["overflow_rejected"] for row in rows)
    assert max(sizes) > 15_000
    open_turn = rows[-1]["block_telemetry"]["open_turn"]
    assert open_turn["tool_results_set_aside"] == len(set_aside_ids(prompt)) > 0
    assert open_turn["steps_folded"] > 0
    assert {row["change_reason"] for row in rows} <= {None, "long_turn"}
    # The originals stay readable, whole.
    stored = {m["tool_call_id"]: m["content"] for m in await stored_messages(client, sid)}
    assert stored["read_0_x"] == words(sizes[0], 0)
    # The next turn keeps them aside: the prefix does not change back.
    following = await start_turn(client, sid, "Summarise what you found.")
    still_shown = {m.get("tool_call_id") for m in following["messages"]}
    assert set_aside_ids(following) == previous & still_shown
    assert not still_shown & (previous - set_aside_ids(following))
