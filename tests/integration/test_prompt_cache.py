"""The Anthropic rendering marks cache breakpoints on the prompt's stable prefix, and what an
agent reports its provider's cache served is stored, audited and counted."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from tests.support import audit_rows, create_session, step_body

EPHEMERAL = {"type": "ephemeral"}


async def anthropic_start(client: httpx.AsyncClient, session_id: str, text: str) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns",
        json={"message": {"content": text}, "format": "anthropic"},
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def anthropic_step(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    call_id: str,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body = {**step_body([call_id], [f"result of {call_id}"]), "format": "anthropic"}
    if usage is not None:
        body["usage"] = usage
    response = await client.post(f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def unmarked(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [
        [{k: v for k, v in block.items() if k != "cache_control"} for block in message["content"]]
        for message in messages
    ]


def marked(prompt: dict[str, Any]) -> list[tuple[int, int]]:
    """(message index, block index) of every message block with a breakpoint."""
    return [
        (m, b)
        for m, message in enumerate(prompt["messages"])
        for b, block in enumerate(message["content"])
        if block.get("cache_control") == EPHEMERAL
    ]


async def test_the_system_prompt_and_the_end_of_the_first_prompt_are_breakpoints(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")

    prompt = await anthropic_start(client, session["id"], "Find a hotel in Lisbon.")

    assert prompt["system"][-1]["cache_control"] == EPHEMERAL
    assert prompt["system"][-1]["text"].startswith("You are a careful assistant.")
    assert marked(prompt) == [(0, 0)]
    assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []


async def test_a_step_reads_the_previous_prompt_from_the_cache_and_writes_its_own(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    first = await anthropic_start(client, session["id"], "Find a hotel in Lisbon.")

    second = await anthropic_step(client, session["id"], first["turn_id"], "call_1")
    third = await anthropic_step(client, session["id"], first["turn_id"], "call_2")

    # Read: the last block the previous prompt also had; write: the prompt's last block.
    assert marked(second) == [(0, 0), (2, 0)]
    assert marked(third) == [(2, 0), (4, 0)]
    for prompt in (second, third):
        assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
    # Apart from the breakpoints, the third prompt starts with the whole second one.
    assert unmarked(third["messages"][:3]) == unmarked(second["messages"])


async def test_the_openai_rendering_carries_no_breakpoints(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="gpt-4o")
    response = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "Hello"}}
    )

    assert "cache_control" not in response.text


async def test_cache_reads_an_agent_reports_land_on_the_prompts_they_are_about(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    first = await anthropic_start(client, session["id"], "Find a hotel in Lisbon.")
    anthropic_usage = {
        "prompt_tokens": 900,
        "cache_read_input_tokens": 850,
        "cache_creation_input_tokens": 40,
    }
    await anthropic_step(client, session["id"], first["turn_id"], "call_1", anthropic_usage)
    completed = await client.post(
        f"/v1/sessions/{session['id']}/turns/{first['turn_id']}/complete",
        json={
            "assistant": {"content": "Hotel Lumiere."},
            "usage": {"prompt_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 896}},
        },
    )
    assert completed.status_code == 200, completed.text

    rows = await audit_rows(client, session["id"])
    assert [(row["step"], row["cache_read_tokens"]) for row in rows] == [(0, 850), (1, 896)]
    turn = (await client.get(f"/v1/sessions/{session['id']}/turns/{first['turn_id']}")).json()
    assert turn["usage"]["prompt_tokens_details"] == {"cached_tokens": 896}
    metrics = (await client.get("/metrics")).text
    served = {
        tuple(sample.labels.values()): sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == "context_prompt_cache_read_tokens_total"
    }
    assert served == {("claude-sonnet-4-5",): 850 + 896}


async def test_a_step_whose_usage_says_nothing_of_the_cache_leaves_the_audit_row_alone(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    first = await anthropic_start(client, session["id"], "Find a hotel in Lisbon.")

    await anthropic_step(client, session["id"], first["turn_id"], "call_1", {"prompt_tokens": 50})

    assert [row["cache_read_tokens"] for row in await audit_rows(client, session["id"])] == [
        None,
        None,
    ]
