"""Tool definitions, tool calls, messages and dates in shapes the service cannot use are
refused with 422 where they enter, never stored to fail a later request with a 500."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import create_session, post_step, start_turn

CARELESS_PARAMETERS = [
    {"type": "object", "properties": {"q": "string"}},
    {"type": "object", "properties": {"q": {"type": "string", "enum": 5}}},
    {"type": "object", "properties": [{"name": "q"}]},
]


def tool(parameters: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "search", "parameters": parameters}}


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        value = {"type": "object", "properties": {"inner": value}}
    return value


def assert_invalid(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"


@pytest.mark.parametrize("parameters", CARELESS_PARAMETERS)
async def test_a_session_with_a_malformed_tool_schema_is_refused(
    client: httpx.AsyncClient, parameters: Any
) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4o", "tools": [tool(parameters)]}
    )

    assert_invalid(response)
    assert "parameters" in response.text


async def test_a_session_with_a_well_formed_tool_schema_serves_its_turns(
    client: httpx.AsyncClient,
) -> None:
    parameters = {"type": "object", "properties": {"q": {"type": "string", "enum": ["a"]}}}
    session = await create_session(client, tools=[tool(parameters)])

    await start_turn(client, session["id"], "Find flights.")


async def test_tool_parameters_nested_past_the_limit_are_refused(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4o", "tools": [tool(nested(70))]}
    )

    assert_invalid(response)
    assert "levels deep" in response.text


@pytest.mark.parametrize("parameters", CARELESS_PARAMETERS)
async def test_token_count_refuses_a_malformed_tool_schema(
    client: httpx.AsyncClient, parameters: Any
) -> None:
    response = await client.post(
        "/v1/tokens/count",
        json={
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [tool(parameters)],
        },
    )

    assert_invalid(response)


@pytest.mark.parametrize(
    "extra",
    [
        {"tools": [{"type": "function", "function": "x"}]},
        {"tools": [tool([1])]},
        {"tools": [tool({"type": "object", "properties": {"q": "string"}})]},
        {"tools": [tool(nested(70))]},
    ],
)
async def test_trim_refuses_a_malformed_tool_definition(
    client: httpx.AsyncClient, extra: dict[str, Any]
) -> None:
    response = await client.post(
        "/v1/context/trim",
        json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], **extra},
    )

    assert_invalid(response)


async def test_trim_refuses_a_tool_call_whose_function_is_not_an_object(
    client: httpx.AsyncClient,
) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": "x"}]},
        {"role": "tool", "tool_call_id": "a", "content": "done"},
    ]

    response = await client.post("/v1/context/trim", json={"model": "gpt-4o", "messages": messages})

    assert_invalid(response)


async def test_trim_keeps_well_formed_tool_calls_as_sent(client: httpx.AsyncClient) -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "done"},
    ]

    response = await client.post(
        "/v1/context/trim",
        json={"model": "gpt-4o", "messages": messages, "tools": [tool({"type": "object"})]},
    )

    assert response.status_code == 200, response.text
    assert response.json()["messages"][1]["tool_calls"] == [call]


@pytest.mark.parametrize("since", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+01:00"])
async def test_an_audit_bound_outside_the_calendar_is_refused(
    client: httpx.AsyncClient, since: str
) -> None:
    response = await client.get("/v1/audit", params={"since": since})

    assert_invalid(response)


@pytest.mark.parametrize("content", ["", "   ", [{"type": "text", "text": " "}]])
async def test_an_empty_user_message_is_refused(client: httpx.AsyncClient, content: Any) -> None:
    session = await create_session(client)

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": content}},
    )

    assert_invalid(response)
    assert "empty" in response.text


@pytest.mark.parametrize("field", ["context_limit", "max_output_tokens"])
async def test_a_boolean_is_not_read_as_a_number(client: httpx.AsyncClient, field: str) -> None:
    response = await client.post("/v1/sessions", json={"model": "gpt-4o", field: True})

    assert_invalid(response)


async def test_trim_context_limit_must_be_an_integer(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/context/trim",
        json={"model": "gpt-4o", "messages": [], "context_limit": True},
    )

    assert_invalid(response)


async def test_an_anthropic_prompt_maps_ids_anthropic_would_refuse(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Find flights.")

    prompt = await post_step(client, session["id"], turn["turn_id"], ["call:hFkgDHiQY"], ["ok"])
    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [{"id": "call:2", "function": {"name": "search", "arguments": "{}"}}]
            },
            "tool_results": [{"tool_call_id": "call:2", "content": "ok"}],
            "format": "anthropic",
        },
    )

    assert prompt["messages"][-1]["tool_call_id"] == "call:hFkgDHiQY"  # OpenAI: as sent
    assert response.status_code == 200, response.text
    blocks = [b for m in response.json()["messages"] for b in m["content"]]
    ids = [b.get("id") or b.get("tool_use_id") for b in blocks if b["type"] != "text"]
    assert len(ids) == 4
    assert all(":" not in i for i in ids)
