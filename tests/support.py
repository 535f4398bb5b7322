"""What the integration tests share: an agent's calls, and a token count made without any
of contextd's code, so that a prompt's fit is checked independently."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
import tiktoken

ENCODINGS = {"gpt-4": "cl100k_base", "gpt-4o": "o200k_base"}


def independent_prompt_tokens(messages: Sequence[Mapping[str, Any]], model: str) -> int:
    """OpenAI's published counting rules (3 per message, 1 per name, 3 to prime the reply)
    with tiktoken, and tool calls costed as their JSON, which is at most what contextd
    reserves for them."""
    encoding = tiktoken.get_encoding(ENCODINGS[model])

    def tokens(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    total = 3
    for message in messages:
        total += 3 + tokens(message["role"])
        content = message.get("content")
        if isinstance(content, str):
            total += tokens(content)
        elif isinstance(content, list):
            total += tokens("\n".join(p["text"] for p in content if p.get("type") == "text"))
        if message.get("name"):
            total += 1 + tokens(message["name"])
        for call in message.get("tool_calls") or ():
            total += tokens(call["id"] + call["function"]["name"] + call["function"]["arguments"])
        if message.get("tool_call_id"):
            total += tokens(message["tool_call_id"])
    return total


def words(count: int, seed: int = 0) -> str:
    """Filler text of about ``count`` tokens (one common word is one token)."""
    vocabulary = ("alpha", "delta", "echo", "golf", "hotel", "river", "stone", "cloud")
    return " ".join(vocabulary[(seed + i) % len(vocabulary)] for i in range(count))


async def create_session(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-4",
        "system": {"global": "You are a careful assistant.", "role": "You book travel."},
        "goal": "Plan a trip to Lisbon",
        "mode": "planning",
    }
    body.update(fields)
    response = await client.post("/v1/sessions", json=body)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    return session


async def start_turn(
    client: httpx.AsyncClient, session_id: str, content: str, *, expect: int = 201
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns", json={"message": {"role": "user", "content": content}}
    )
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


def step_body(call_ids: Sequence[str], results: Sequence[str]) -> dict[str, Any]:
    return {
        "assistant": {
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "search", "arguments": f'{{"query": "{call_id}"}}'},
                }
                for call_id in call_ids
            ],
        },
        "tool_results": [
            {"tool_call_id": call_id, "content": result}
            for call_id, result in zip(call_ids, results, strict=True)
        ],
    }


async def post_step(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    call_ids: Sequence[str],
    results: Sequence[str],
    *,
    expect: int = 200,
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json=step_body(call_ids, results)
    )
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


async def complete_turn(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    content: str | None,
    *,
    status: str = "completed",
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
        json={"assistant": {"content": content}, "status": status},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


#: What a user says at the turns a test leaves to chatter: requests of a few shapes that an
#: agent hears again and again (``{n}`` is the turn's number).
ROUTINE = (
    "grep the logs for trace 4be19c02d7",
    "rerun job nightly-{n}",
    "thanks!",
    "tail api-{n}.log",
    "why did test_invoice_totals fail?",
)


async def run_turns(
    client: httpx.AsyncClient,
    session_id: str,
    said: Mapping[int, str],
    turns: Iterable[int],
    *,
    replies: Mapping[int, str] | None = None,
) -> None:
    """Turns ``turns`` of a session whose user says ``said[n]`` at turn n and a ``ROUTINE``
    request otherwise, each turn with a tool result of about 900 tokens (so that the early
    turns are summarised long before a 28-turn session ends on an 8k model), and the
    assistant's answer ``replies[n]`` or a routine line."""
    replies = replies or {}
    for n in turns:
        prompt = await start_turn(
            client, session_id, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n))
        )
        await post_step(client, session_id, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        reply = replies.get(n, f"Job {n} done in {n}s, exit code 0.")
        await complete_turn(client, session_id, prompt["turn_id"], reply)


async def audit_rows(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    """Every audit row of a session, oldest first."""
    rows: list[dict[str, Any]] = []
    cursor: int | None = None
    while True:
        params: dict[str, Any] = {"session_id": session_id, "limit": 500}
        if cursor is not None:
            params["before_id"] = cursor
        page = (await client.get("/v1/audit", params=params)).json()
        rows.extend(page["items"])
        cursor = page["next_before_id"]
        if cursor is None:
            return rows[::-1]


async def stored_messages(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    after = 0
    while True:
        page = (
            await client.get(
                f"/v1/sessions/{session_id}/messages", params={"after_seq": after, "limit": 1000}
            )
        ).json()
        messages.extend(page["messages"])
        if page["next_after_seq"] is None:
            return messages
        after = page["next_after_seq"]


@contextmanager
def no_collection_meanwhile() -> Iterator[None]:
    """A window timed for stalls of the event loop, with the garbage collected before it and
    none during it: a test process holds the heap of every test before it, and a full
    collection of it stalls every thread for up to a second (seen in CI), which says nothing
    of the service, whose heap is small."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
