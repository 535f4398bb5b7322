"""The scripted model the LLM-path tests and benchmarks run against: the same request gets the
same answer whatever requests came before it, so split runs of one benchmark agree."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.fake_llm import FakeChat, serve_fake_chat


def fold_request(first_id: int) -> dict[str, Any]:
    """A summariser's request: ten user messages to fold in, each a fact of the user's."""
    prompt = {
        "previous_summary": None,
        "messages": [
            {"id": first_id + i, "role": "user", "text": f"My locker number is {first_id + i}."}
            for i in range(10)
        ],
    }
    return {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "Summarise."},
            {"role": "user", "content": json.dumps(prompt)},
        ],
    }


def dropping_and_reordering(fake: FakeChat) -> None:
    fake.mode = "drop_facts"
    fake.drop_share = 1 / 3
    fake.reorder = True


async def answer(fake: FakeChat, request: dict[str, Any]) -> str:
    async with httpx.AsyncClient(base_url=fake.url) as client:
        response = await client.post("/chat/completions", json=request)
    assert response.status_code == 200, response.text
    content: str = response.json()["choices"][0]["message"]["content"]
    return content


async def test_a_request_gets_the_same_answer_whatever_came_before_it() -> None:
    with serve_fake_chat() as after_others, serve_fake_chat() as first_of_all:
        dropping_and_reordering(after_others)
        dropping_and_reordering(first_of_all)
        for earlier in (100, 200, 300):
            await answer(after_others, fold_request(earlier))

        late = await answer(after_others, fold_request(1))
        alone = await answer(first_of_all, fold_request(1))

    assert late == alone


async def test_different_requests_are_dropped_and_ordered_differently() -> None:
    with serve_fake_chat() as fake:
        dropping_and_reordering(fake)
        kept = [await kept_in_order(fake, first_id) for first_id in (1, 1001)]

    assert kept[0] != kept[1]


async def kept_in_order(fake: FakeChat, first_id: int) -> list[int]:
    """Which of the request's ten messages the answer kept, in its order (0 to 9)."""
    facts = json.loads(await answer(fake, fold_request(first_id)))["key_facts"]
    return [fact["source_message_ids"][0] - first_id for fact in facts]
