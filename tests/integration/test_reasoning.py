"""An assistant's reasoning (Anthropic thinking blocks, OpenAI-shaped ``reasoning_content``)
goes back to the model exactly as it came, in the format it belongs to, and is cleared from
completed turns first when the prompt needs room."""

from __future__ import annotations

import random
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from tests.support import (
    audit_rows,
    create_session,
    independent_prompt_tokens,
    start_turn,
    words,
)

# Opaque to contextd: a signature as the API hands it out (base64 with padding and slashes).
SIGNATURE = "EqQBCkYIBxgCKkBl3+kR/0a9Zq==" + "Zm9vYmFy/+" * 8
THINKING = {"type": "thinking", "thinking": "The weather, then.  \n", "signature": SIGNATURE}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT+=="}
TURNS = 300


def step_with(
    assistant: dict[str, Any], call_id: str = "call_1", result: str = "21C and sunny"
) -> dict[str, Any]:
    return {
        "assistant": {
            **assistant,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Lisbon"}'},
                }
            ],
        },
        "tool_results": [{"tool_call_id": call_id, "content": result}],
    }


async def post(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    body: dict[str, Any],
    *,
    prompt_format: str = "openai",
    expect: int = 200,
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps",
        json={**body, "format": prompt_format},
    )
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


async def stored(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    page = (await client.get(f"/v1/sessions/{session_id}/messages")).json()
    messages: list[dict[str, Any]] = page["messages"]
    return messages


async def test_thinking_blocks_come_back_unchanged_and_first_in_the_anthropic_prompt(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in Lisbon?")
    content = [THINKING, REDACTED, {"type": "text", "text": "Let me check."}]

    prompt = await post(
        client, session["id"], turn["turn_id"], step_with({"content": content}),
        prompt_format="anthropic",
    )  # fmt: skip

    assistant = prompt["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:3] == content
    assert assistant["content"][3]["type"] == "tool_use"
    assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []


async def test_thinking_blocks_are_stored_and_shown_as_sent(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in Lisbon?")
    content = [THINKING, {"type": "text", "text": "Let me check."}]

    prompt = await post(client, session["id"], turn["turn_id"], step_with({"content": content}))

    assert prompt["messages"][-2]["content"] == content
    assert (await stored(client, session["id"]))[1]["content"] == content


async def test_reasoning_content_is_kept_in_the_openai_prompt_and_left_out_of_anthropics(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Weather in Lisbon?")
    reasoning = "I should call the weather tool.\n"
    body = step_with({"content": None, "reasoning_content": reasoning})

    openai = await post(client, session["id"], turn["turn_id"], body)
    anthropic = await post(
        client, session["id"], turn["turn_id"], step_with(body["assistant"], "call_2"),
        prompt_format="anthropic",
    )  # fmt: skip

    assert openai["messages"][-2]["reasoning_content"] == reasoning
    assert (await stored(client, session["id"]))[1]["reasoning_content"] == reasoning
    assert "reasoning_content" not in str(anthropic["messages"])
    assert anthropic_problems(AnthropicPrompt(anthropic["system"], anthropic["messages"])) == []


async def test_thinking_is_counted_in_the_prompt(client: httpx.AsyncClient) -> None:
    costs = []
    for content in ("Checking.", [THINKING, REDACTED]):
        session = await create_session(client, model="gpt-4o")
        turn = await start_turn(client, session["id"], "Weather in Lisbon?")
        prompt = await post(client, session["id"], turn["turn_id"], step_with({"content": content}))
        costs.append(prompt["budget"]["blocks"]["current"])

    assert costs[1] > costs[0] + 40  # the thinking, its signature and the redacted data


async def test_a_thinking_block_without_its_signature_is_refused(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in Lisbon?")
    unsigned = {"type": "thinking", "thinking": "hmm"}

    refused = await post(
        client, session["id"], turn["turn_id"], step_with({"content": [unsigned]}), expect=422
    )

    assert refused["error"]["code"] == "invalid_request"
    assert await stored(client, session["id"]) != []  # the turn's user message is still there


async def test_a_completion_keeps_its_thinking_and_answers_with_its_text(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in Lisbon?")
    content = [THINKING, {"type": "text", "text": "21C and sunny."}]

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/complete",
        json={"assistant": {"content": content}},
    )

    assert response.status_code == 200, response.text
    assert response.json()["assistant_output"] == "21C and sunny."
    assert (await stored(client, session["id"]))[-1]["content"] == content


async def test_reasoning_of_completed_turns_is_cleared_when_room_is_needed(
    client: httpx.AsyncClient,
) -> None:
    # gpt-4: an input budget of about 5,500 tokens, the summary trigger at about 3,900.
    session = await create_session(client, model="gpt-4")
    big_thinking = {**THINKING, "thinking": words(4000)}
    first = await start_turn(client, session["id"], "Weather in Lisbon?")
    during = await post(
        client, session["id"], first["turn_id"], step_with({"content": [big_thinking]})
    )
    await client.post(
        f"/v1/sessions/{session['id']}/turns/{first['turn_id']}/complete",
        json={"assistant": {"content": "21C and sunny."}},
    )

    second = await start_turn(client, session["id"], "And in Porto?")

    # The open turn kept its thinking whole; the completed one gave it up, nothing else.
    assert during["messages"][-2]["content"] == [big_thinking]
    assert "thinking" not in str(second["messages"])
    assert [m["role"] for m in second["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "user",
    ]  # fmt: skip
    assert second["budget"]["estimated_input_tokens"] < during["budget"]["estimated_input_tokens"]
    assert not second["actions"]["summary_triggered"]
    telemetry = (await audit_rows(client, session["id"]))[-1]["block_telemetry"]
    assert telemetry["reasoning"]["parts_cleared"] == 1
    assert telemetry["reasoning"]["tokens_cleared"] >= 4000
    assert (await stored(client, session["id"]))[1]["content"] == [big_thinking]


async def test_reasoning_of_completed_turns_stays_while_the_prompt_is_small(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    first = await start_turn(client, session["id"], "Weather in Lisbon?")
    await post(client, session["id"], first["turn_id"], step_with({"content": [THINKING]}))
    await client.post(
        f"/v1/sessions/{session['id']}/turns/{first['turn_id']}/complete",
        json={"assistant": {"content": "21C and sunny."}},
    )

    second = await start_turn(client, session["id"], "And in Porto?")

    assert second["messages"][2]["content"] == [THINKING]
    telemetry = (await audit_rows(client, session["id"]))[-1]["block_telemetry"]
    assert telemetry["reasoning"]["parts_cleared"] == 0


# -- oversized tool results --------------------------------------------------------------------


async def test_an_oversized_tool_result_is_capped_in_the_prompt_and_stored_whole(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    turn = await start_turn(client, session["id"], "Read the whole log.")
    log = "".join(f"line {i}: all systems nominal\n" for i in range(2_200))[:66_000]
    assert len(log) == 66_000

    prompt = await post(client, session["id"], turn["turn_id"], step_with({}, result=log))

    shown = prompt["messages"][-1]["content"]
    assert shown.startswith("line 0: all systems nominal")
    assert shown.endswith(log[-20:])
    assert f"GET /v1/sessions/{session['id']}/messages?after_seq=2&limit=1" in shown
    budget = prompt["budget"]
    assert budget["estimated_input_tokens"] <= budget["input_budget"]
    assert independent_prompt_tokens(prompt["messages"], "gpt-4") <= budget["input_budget"]
    page = (await client.get(f"/v1/sessions/{session['id']}/messages?after_seq=2&limit=1")).json()
    assert page["messages"][0]["content"] == log
    telemetry = (await audit_rows(client, session["id"]))[-1]["block_telemetry"]
    assert telemetry["tool_results"]["capped"] == 1
    assert telemetry["tool_results"]["tokens_left_out"] > 10_000


async def test_a_session_sets_its_own_tool_result_cap(client: httpx.AsyncClient) -> None:
    capped = []
    for share in (0.1, 0.3):
        session = await create_session(
            client, model="gpt-4", block_caps={"tool_result_share": share}
        )
        turn = await start_turn(client, session["id"], "Read it.")
        prompt = await post(
            client, session["id"], turn["turn_id"], step_with({}, result=words(5000))
        )
        capped.append(prompt["budget"]["blocks"]["current"])

    # About 10 % and 30 % of a 5,500-token budget, each with the user message and the call.
    assert 500 < capped[0] < 700 < 1_500 < capped[1] < 1_800


async def test_a_tool_result_cap_outside_zero_to_one_is_refused(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4", "block_caps": {"tool_result_share": 1.5}}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_a_capped_tool_result_reads_the_same_in_every_later_prompt(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    turn = await start_turn(client, session["id"], "Read it.")
    first = await post(client, session["id"], turn["turn_id"], step_with({}, result=words(5000)))

    second = await post(client, session["id"], turn["turn_id"], step_with({}, "call_2"))

    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert (await audit_rows(client, session["id"]))[-1]["prefix_kept"] is True


# -- a Claude-style agent over a long session ---------------------------------------------------


async def test_a_thinking_agent_runs_a_long_session_valid_and_within_budget(
    client: httpx.AsyncClient,
) -> None:
    rng = random.Random(300)
    session = await create_session(client, model="claude-sonnet-4-5", context_limit=16_000)
    sid = session["id"]
    for number in range(TURNS):
        turn = await start_turn(client, sid, f"Turn {number}: " + words(rng.randint(5, 120)))
        sent: list[list[dict[str, str]]] = []
        for step in range(rng.choice((0, 1, 1, 2, 3))):
            thinking = {
                "type": "thinking",
                "thinking": words(rng.randint(20, 600), step),
                "signature": f"{SIGNATURE}{number}/{step}==",
            }
            content = [thinking] if rng.random() < 0.7 else [thinking, REDACTED]
            sent.append(content)
            prompt = await post(
                client, sid, turn["turn_id"],
                step_with({"content": content}, f"c{number}_{step}", words(rng.randint(20, 900))),
                prompt_format="anthropic",
            )  # fmt: skip
            assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
            assert prompt["budget"]["estimated_input_tokens"] <= prompt["budget"]["input_budget"]
            # The open turn's thinking, unchanged and first in each of its assistant messages.
            shown = [
                [b for b in m["content"] if b["type"] in {"thinking", "redacted_thinking"}]
                for m in prompt["messages"]
                if m["role"] == "assistant"
            ]
            assert shown[-len(sent) :] == sent
        await client.post(
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/complete",
            json={"assistant": {"content": [THINKING, {"type": "text", "text": "Done."}]}},
        )

    rows = await audit_rows(client, sid)
    assert not any(row["overflow_rejected"] for row in rows)
    # Claude's earlier thinking is stripped by the API before it counts the window
    # (app/budget/reasoning.py): it stays in the prompt, counted as nothing, never cleared.
    assert any(row["block_telemetry"]["reasoning"]["tokens_not_counted"] for row in rows)
    assert not any(row["block_telemetry"]["reasoning"]["parts_cleared"] for row in rows)
    assert any(row["summary_id"] is not None for row in rows)
