"""A scripted agent runs a long tool-using session on an 8k model: every prompt it gets back
must fit (counted independently with tiktoken), be valid for the provider, and be audited."""

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
    step_body,
    words,
)

TURNS = 300


def _check(prompt: dict[str, Any], current: list[dict[str, Any]]) -> int:
    messages = prompt["messages"]
    assert chat_problems(messages) == []
    assert anthropic_problems(to_anthropic(messages)) == []
    tokens = independent_prompt_tokens(messages, "gpt-4")
    assert tokens <= prompt["budget"]["estimated_input_tokens"] <= prompt["budget"]["input_budget"]
    # Never dropped: the system layers and everything of the current turn, at the end; a
    # tool result over its cap (a quarter of the budget) shows its head and tail.
    assert messages[0]["content"].startswith("You are a careful assistant.")
    for shown, sent in zip(messages[-len(current) :], current, strict=True):
        if shown.get("content") != sent.get("content"):
            assert shown["role"] == "tool"
            assert "tokens of this tool result are left out here" in shown["content"]
            assert sent["content"].startswith(shown["content"][:100])
            assert sent["content"].endswith(shown["content"][-100:])
    return tokens


async def test_long_tool_session_always_fits_and_stays_valid(client: httpx.AsyncClient) -> None:
    rng = random.Random(20261122)
    # Its own generator: reuse attempts leave the session's own sequence of turns as it is.
    reuse = random.Random(7)
    session = await create_session(client)
    sid = session["id"]
    assemblies = 0
    largest = 0
    used_ids: list[str] = []
    reuses = {"refused": 0, "taken": 0}
    for turn_number in range(TURNS):
        text = f"Turn {turn_number}: booking ref BK-{turn_number:04d}. " + words(
            rng.randint(5, 150), turn_number
        )
        prompt = await start_turn(client, sid, text)
        current: list[dict[str, Any]] = [{"content": text}]
        largest = max(largest, _check(prompt, current))
        assemblies += 1
        if turn_number % 25 == 0:
            # The same stored conversation, rendered for Anthropic by the service itself.
            native = await client.post(
                f"/v1/sessions/{sid}/turns/{prompt['turn_id']}/steps",
                json={**step_body([f"x{turn_number}"], ["ok"]), "format": "anthropic"},
            )
            assert native.status_code == 200, native.text
            body = native.json()
            assert body["format"] == "anthropic"
            assert anthropic_problems(AnthropicPrompt(body["system"], body["messages"])) == []
            current += [{"content": None}, {"content": "ok"}]
            assemblies += 1
        if used_ids and reuse.random() < 0.1:
            # An agent that reuses a tool-call id: refused while the id is in the active
            # history (a prompt would hold two calls with it), taken once it left.
            reused = reuse.choice(used_ids)
            active = await client.get(f"/v1/sessions/{sid}/messages", params={"state": "active"})
            in_use = any(
                call["id"] == reused
                for message in active.json()["messages"]
                for call in message["tool_calls"] or ()
            )
            response = await client.post(
                f"/v1/sessions/{sid}/turns/{prompt['turn_id']}/steps",
                json=step_body([reused], ["again"]),
            )
            if in_use:
                assert response.status_code == 422, response.text
                assert response.json()["error"]["code"] == "tool_call_id_reused"
                reuses["refused"] += 1
            else:
                reuses["taken"] += 1
                assert response.status_code == 200, response.text
                prompt = response.json()
                current += [{"content": None}, {"content": "again"}]
                largest = max(largest, _check(prompt, current))
                assemblies += 1
        for step in range(rng.choice([0, 1, 1, 2])):
            calls = [f"call_{turn_number}_{step}_{i}" for i in range(rng.randint(1, 2))]
            used_ids += calls
            # Mostly modest tool output, now and then a large one.
            results = [
                words(1800 if rng.random() < 0.08 else rng.randint(20, 600), rng.randint(0, 9))
                for _ in calls
            ]
            prompt = await post_step(client, sid, prompt["turn_id"], calls, results)
            current += [{"content": None}] + [{"content": r} for r in results]
            largest = max(largest, _check(prompt, current))
            assemblies += 1
        await complete_turn(
            client, sid, prompt["turn_id"], "Done: " + words(rng.randint(5, 80), turn_number)
        )

    rows = await audit_rows(client, sid)
    assert len(rows) == assemblies
    assert not any(r["overflow_rejected"] for r in rows)
    assert sum(r["summary_id"] is not None for r in rows) >= 10
    assert any(r["prune_triggered"] for r in rows)
    assert largest <= session["budget"]["input_budget"]
    assert reuses["refused"] > 0, reuses
    assert reuses["taken"] > 0, reuses
