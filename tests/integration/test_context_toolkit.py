"""The stateless toolkit through the API: agents that keep their own history."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from app.budget.assembly import chat_problems
from tests.support import independent_prompt_tokens, words


def history(exchanges: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for number in range(exchanges):
        call = f"call_{number}"
        messages += [
            {"role": "user", "content": f"question {number}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "search", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": words(400, number)},
            {"role": "assistant", "content": f"answer {number}"},
        ]
    return [*messages, {"role": "user", "content": "and now?"}]


async def test_trim_brings_a_long_history_under_the_threshold(client: httpx.AsyncClient) -> None:
    messages = history(20)

    response = await client.post("/v1/context/trim", json={"model": "gpt-4", "messages": messages})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["within_threshold"]
    assert body["trimmed_up_to_message_index"] > 0
    assert body["threshold_tokens"] == int(0.8 * 5530)
    assert independent_prompt_tokens(body["messages"], "gpt-4") <= body["threshold_tokens"]
    assert chat_problems(body["messages"]) == []
    assert [m["content"] for m in body["messages"] if m["role"] == "user"] == [
        m["content"] for m in messages if m["role"] == "user"
    ]


async def test_trim_is_lazy_and_its_index_carries_over(client: httpx.AsyncClient) -> None:
    short = await client.post("/v1/context/trim", json={"model": "gpt-4", "messages": history(2)})
    first = (
        await client.post("/v1/context/trim", json={"model": "gpt-4", "messages": history(20)})
    ).json()

    again = (
        await client.post(
            "/v1/context/trim",
            json={
                "model": "gpt-4",
                "messages": history(20),
                "trimmed_up_to_message_index": first["trimmed_up_to_message_index"],
            },
        )
    ).json()

    assert short.json()["trimmed_up_to_message_index"] == 0
    assert short.json()["messages"] == history(2)
    assert again["trimmed_up_to_message_index"] == first["trimmed_up_to_message_index"]
    assert again["messages"] == first["messages"]


async def test_truncate_keeps_the_tail_with_its_calls(client: httpx.AsyncClient) -> None:
    messages = history(5)

    body = (
        await client.post("/v1/context/truncate", json={"messages": messages, "keep": 3})
    ).json()

    assert body["messages"][0] == messages[0]
    assert chat_problems(body["messages"]) == []
    assert body["removed"] == len(messages) - len(body["messages"])


async def test_a_message_with_an_unknown_role_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/context/truncate", json={"messages": [{"role": "robot", "content": "hi"}]}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_healthz_answers_while_a_maximal_trim_runs(client: httpx.AsyncClient) -> None:
    messages = [{"role": "user", "content": "Plan the trip."}] + [
        {"role": "assistant" if i % 2 else "user", "content": f"message {i} about Lisbon"}
        for i in range(99_999)
    ]
    body = json.dumps({"model": "gpt-4", "messages": messages}).encode()
    trim_done = asyncio.Event()
    answered_meanwhile = 0

    async def trim() -> None:
        response = await client.post(
            "/v1/context/trim", content=body, headers={"content-type": "application/json"}
        )
        trim_done.set()
        assert response.status_code == 200, response.text

    async def healthz_until_trimmed() -> None:
        nonlocal answered_meanwhile
        while not trim_done.is_set():
            response = await client.get("/healthz")
            assert response.status_code == 200
            if not trim_done.is_set():
                answered_meanwhile += 1

    await asyncio.gather(trim(), healthz_until_trimmed())

    # Held on the event loop, the trim would let through at most the probe or two that slip
    # in before its handler starts; in a worker thread, probes keep being answered all along.
    assert answered_meanwhile >= 20
