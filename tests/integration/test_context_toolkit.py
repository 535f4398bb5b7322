"""The stateless toolkit through the API: agents that keep their own history."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest

from app.budget.assembly import chat_problems
from tests.support import independent_prompt_tokens, no_collection_meanwhile, words


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


#: Between two health probes. Probes back to back would keep this process's event loop
#: busy all the time, which a server's loop never is: the worker thread, which lets the GIL
#: go at each encoding, would then wait a switch interval to get it back for every message.
PROBE_INTERVAL = 0.002
#: Times a measurement is taken before a probe's wait counts against the service. Work held
#: on the event loop stalls a probe every time; this process stalling as a whole (the
#: machine is shared) does once in a while, and a second time rarely.
ATTEMPTS = 3


async def probed(
    client: httpx.AsyncClient, request: Coroutine[Any, Any, httpx.Response]
) -> tuple[httpx.Response, float, float]:
    """``request``'s answer, with /healthz probed while it runs: the longest a probe waited
    (from when it was due), and how long the request took."""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    waits = [0.0]

    async def answered() -> httpx.Response:
        try:
            return await request
        finally:
            done.set()

    async def probes() -> None:
        # From when a probe is due (the previous one answered and the interval passed) to
        # its answer: a stall while the prober sleeps counts too.
        due = loop.time()
        while not done.is_set():
            assert (await client.get("/healthz")).status_code == 200
            answered_at = loop.time()
            waits.append(answered_at - due)
            await asyncio.sleep(PROBE_INTERVAL)
            due = answered_at + PROBE_INTERVAL

    with no_collection_meanwhile():
        started = loop.time()
        response, _ = await asyncio.gather(answered(), probes())
        return response, max(waits), loop.time() - started


async def probed_at_best(
    client: httpx.AsyncClient, request: Callable[[], Coroutine[Any, Any, httpx.Response]]
) -> tuple[httpx.Response, float, float]:
    """:func:`probed`, taken again (up to :data:`ATTEMPTS` times) while a probe waited for
    half the request or more; the last measurement."""
    for _ in range(ATTEMPTS):
        response, longest, took = await probed(client, request())
        if longest < took / 2:
            break
    return response, longest, took


def json_post(
    client: httpx.AsyncClient, path: str, body: bytes
) -> Callable[[], Coroutine[Any, Any, httpx.Response]]:
    return lambda: client.post(path, content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize("path", ["/v1/context/trim", "/v1/tokens/count"])
async def test_healthz_answers_while_a_maximal_request_is_worked_on(
    client: httpx.AsyncClient, path: str
) -> None:
    messages = [{"role": "user", "content": "Plan the trip."}] + [
        {"role": "assistant" if i % 2 else "user", "content": f"message {i} about Lisbon"}
        for i in range(99_999)
    ]
    body = json.dumps({"model": "gpt-4", "messages": messages}).encode()

    response, longest, took = await probed_at_best(client, json_post(client, path, body))

    assert response.status_code == 200, response.text
    # Held on the event loop, the work would make one probe wait for most of the request
    # (the counting or trimming itself: 68-96% of it measured so); in a worker thread, no
    # probe waits for more than a small part of it (11-17%, up to a third when a collector
    # pass over the test process's heap falls inside). A ratio within one run.
    assert longest < took / 2, f"a probe waited {longest:.3f}s of {took:.3f}s"


async def test_healthz_answers_while_a_turn_counts_a_huge_message(
    client: httpx.AsyncClient,
) -> None:
    created = await client.post("/v1/sessions", json={"model": "gpt-4o"})
    assert created.status_code == 201, created.text
    # A first turn loads what a process loads once (the model's encoding); the turn measured
    # below then differs from it only by the size of its message.
    warm = f"/v1/sessions/{created.json()['id']}/turns"
    first = await client.post(warm, json={"message": {"role": "user", "content": "Hello."}})
    assert first.status_code == 201, first.text
    completed = await client.post(
        f"{warm}/{first.json()['turn_id']}/complete", json={"assistant": {"content": "Hi."}}
    )
    assert completed.status_code == 200, completed.text
    # The longest content a message may have, on one line: counting it is most of a second
    # of CPU or more, and it cannot fit anyway.
    words = " ".join(f"w{i % 9973}" for i in range(400_000))[:2_000_000]
    body = json.dumps({"message": {"role": "user", "content": words}}).encode()

    response, longest, took = await probed_at_best(client, json_post(client, warm, body))

    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "context_budget_exceeded"
    assert longest < took / 2, f"a probe waited {longest:.3f}s of {took:.3f}s"


async def test_healthz_answers_while_a_turn_folds_a_long_range_into_its_summary(
    client: httpx.AsyncClient,
) -> None:
    created = await client.post("/v1/sessions", json={"model": "gpt-4o"})
    assert created.status_code == 201, created.text
    session = created.json()["id"]

    async def turn_with_probes(index: int) -> tuple[dict[str, Any], float, float]:
        # Each message under the size that sends a turn's own counting to a thread: what is
        # heavy here is the fold of several of them at the summary trigger.
        words = ("the", "hotel", "near", "river", "booking", "price", "window", "quiet", "city")
        content = f"Turn {index}. " + ". ".join(
            " ".join(words[(index + i * j) % len(words)] for j in range(12)) for i in range(1_000)
        )
        start = client.post(
            f"/v1/sessions/{session}/turns",
            json={"message": {"role": "user", "content": content}},
        )
        response, longest, took = await probed(client, start)
        assert response.status_code == 201, response.text
        prompt: dict[str, Any] = response.json()
        completed = await client.post(
            f"/v1/sessions/{session}/turns/{prompt['turn_id']}/complete",
            json={"assistant": {"content": f"Noted, part {index}."}},
        )
        assert completed.status_code == 200, completed.text
        return prompt, longest, took

    folds: list[tuple[float, float]] = []
    for index in range(30):
        prompt, longest, took = await turn_with_probes(index)
        if prompt["actions"]["summary_triggered"]:
            folds.append((longest, took))
            if longest < took / 2 or len(folds) == ATTEMPTS:
                break

    # Folded on the event loop, the extractive summary of the range (several hundred
    # thousand characters) held a probe for nearly all of the turn.
    assert folds, "no turn folded its history into a summary"
    longest, took = folds[-1]
    assert longest < took / 2, f"a probe waited {longest:.3f}s of {took:.3f}s"
