"""Each provider's rule for an earlier turn's reasoning (app/budget/reasoning.py), through
the app with a tool-using agent's traffic: DeepSeek keeps a tool-calling message's
reasoning_content in every later prompt (an empty one as ""), and drops an answer's, which it
ignores; Claude's earlier thinking stays as it came and is counted as nothing, since the API
strips it before counting the context window; OpenAI's is cleared when room is needed."""

from __future__ import annotations

import random
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from app.budget.assembly import chat_problems
from tests.agent_traffic import agent_step
from tests.support import audit_rows, complete_turn, create_session, start_turn, words

TURNS = 40


def reasoning_of(rng: random.Random) -> str:
    """What deepseek-reasoner thinks before a call: now and then nothing at all."""
    return "" if rng.random() < 0.2 else words(rng.randint(30, 200), rng.randint(0, 7))


def deepseek_problems(messages: list[dict[str, Any]], reasoning: dict[str, str]) -> list[str]:
    """DeepSeek's rule, between two user messages: where the model called a tool, every
    assistant message there carries its reasoning_content (a tool-calling one as it came);
    where it did not, none needs to (DeepSeek ignores it there)."""
    problems: list[str] = []
    spans: list[list[dict[str, Any]]] = [[]]
    for message in messages:
        if message["role"] == "user":
            spans.append([])
        elif message["role"] == "assistant":
            spans[-1].append(message)
    for span in spans:
        called = any(m.get("tool_calls") for m in span)
        for message in span:
            shown = message.get("reasoning_content")
            calls = message.get("tool_calls") or ()
            if called and not isinstance(shown, str):
                problems.append(f"reasoning_content missing: {message}")
            elif calls and shown != reasoning[calls[0]["id"]]:
                problems.append(f"reasoning_content changed: {calls[0]['id']}")
    return problems


async def test_a_deepseek_agent_keeps_every_tool_calling_reasoning_in_every_prompt(
    client: httpx.AsyncClient,
) -> None:
    rng = random.Random(31)
    session = await create_session(
        client, model="deepseek-reasoner", context_limit=16_000, max_output_tokens=2048
    )
    sid, budget = session["id"], session["budget"]["input_budget"]
    reasoning: dict[str, str] = {}  # by the first call id of the message
    prompts = 0
    for number in range(TURNS):
        turn_id = (await start_turn(client, sid, f"Ticket {number}: " + words(40, number)))[
            "turn_id"
        ]
        if number % 5 == 4:
            # A turn without tool calls: DeepSeek ignores its answer's reasoning.
            response = await client.post(
                f"/v1/sessions/{sid}/turns/{turn_id}/complete",
                json={"assistant": {"content": "Noted.", "reasoning_content": "plain"}},
            )
            assert response.status_code == 200, response.text
            continue
        for _ in range(rng.randint(1, 3)):
            sent = agent_step(rng, huge=False)
            thought = reasoning_of(rng)
            sent.body["assistant"]["reasoning_content"] = thought
            reasoning[sent.call_ids[0]] = thought
            response = await client.post(
                f"/v1/sessions/{sid}/turns/{turn_id}/steps", json=sent.body
            )
            assert response.status_code == 200, response.text
            prompt = response.json()
            prompts += 1
            assert prompt["budget"]["estimated_input_tokens"] <= budget
            assert chat_problems(prompt["messages"]) == []
            assert deepseek_problems(prompt["messages"], reasoning) == []
        response = await client.post(
            f"/v1/sessions/{sid}/turns/{turn_id}/complete",
            json={"assistant": {"content": "Done.", "reasoning_content": words(80, number)}},
        )
        assert response.status_code == 200, response.text

    rows = await audit_rows(client, sid)
    assert prompts > 60
    # The session was under pressure: summaries or prunes happened, and still no prompt
    # lost a tool-calling message's reasoning.
    assert any(row["summary_triggered"] for row in rows)
    assert not any(row["overflow_rejected"] for row in rows)
    assert "" in reasoning.values()


async def test_claude_keeps_earlier_thinking_as_it_came_and_does_not_count_it(
    client: httpx.AsyncClient,
) -> None:
    rng = random.Random(32)
    session = await create_session(
        client, model="claude-sonnet-4-5", context_limit=16_000, max_output_tokens=2048
    )
    sid = session["id"]
    first_thinking: dict[str, Any] = {}
    for number in range(12):
        turn_id = (await start_turn(client, sid, f"Ticket {number}: " + words(40, number)))[
            "turn_id"
        ]
        sent = agent_step(rng, thinking=True, huge=False)
        if number == 0:
            first_thinking = sent.body["assistant"]["content"][0]
        response = await client.post(
            f"/v1/sessions/{sid}/turns/{turn_id}/steps", json={**sent.body, "format": "anthropic"}
        )
        assert response.status_code == 200, response.text
        prompt = response.json()
        assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
        await complete_turn(client, sid, turn_id, "Done.")

    shown = [b for m in prompt["messages"] for b in m["content"] if b["type"] == "thinking"]
    rows = await audit_rows(client, sid)
    reasoning = rows[-1]["block_telemetry"]["reasoning"]
    if first_thinking in shown:
        # Still in the prompt, byte for byte, and counted as nothing.
        assert reasoning["tokens_not_counted"] > 0
    assert reasoning["messages_cleared"] == 0
    assert not any(row["change_reason"] == "reasoning" for row in rows)
    assert len(shown) > 1


async def test_a_claude_that_keeps_earlier_thinking_has_it_counted_and_never_cleared(
    client: httpx.AsyncClient,
) -> None:
    # Claude Opus 4.5 and later keep every earlier thinking block in the model's context:
    # counted as nothing, a prompt would pass the window.
    rng = random.Random(33)
    session = await create_session(
        client, model="claude-opus-4-5", context_limit=16_000, max_output_tokens=2048
    )
    sid = session["id"]
    sent_thinking = []
    for number in range(6):
        turn_id = (await start_turn(client, sid, f"Ticket {number}: " + words(40, number)))[
            "turn_id"
        ]
        sent = agent_step(rng, thinking=True, huge=False)
        sent_thinking.append(sent.body["assistant"]["content"][0])
        response = await client.post(
            f"/v1/sessions/{sid}/turns/{turn_id}/steps", json={**sent.body, "format": "anthropic"}
        )
        assert response.status_code == 200, response.text
        prompt = response.json()
        assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
        await complete_turn(client, sid, turn_id, "Done.")

    shown = [b for m in prompt["messages"] for b in m["content"] if b["type"] == "thinking"]
    # Older turns may have been pruned whole; every turn still shown has its thinking.
    assert len(shown) >= 2
    assert shown == sent_thinking[-len(shown) :]
    rows = await audit_rows(client, sid)
    reasoning = rows[-1]["block_telemetry"]["reasoning"]
    assert reasoning["tokens_not_counted"] == 0
    assert reasoning["messages_cleared"] == 0


async def test_an_openai_model_clears_earlier_reasoning_when_room_is_needed(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    sid = session["id"]
    for number in range(8):
        turn_id = (await start_turn(client, sid, f"Ticket {number}: " + words(300, number)))[
            "turn_id"
        ]
        await client.post(
            f"/v1/sessions/{sid}/turns/{turn_id}/complete",
            json={"assistant": {"content": "Done.", "reasoning_content": words(200, number)}},
        )
    rows = await audit_rows(client, sid)
    assert any(row["block_telemetry"]["reasoning"]["messages_cleared"] for row in rows)
