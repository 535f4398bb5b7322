"""Bad input: every malformed request is a 4xx with a stable code, and nothing oversized or
pathological gets in."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx

from tests.conftest import RunningApp
from tests.support import create_session


def nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"down": value}
    return value


async def test_a_body_declared_over_the_limit_is_refused_unread(apps: RunningApp) -> None:
    _, client = await apps.start(max_body_bytes=2000)

    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "goal": "x" * 3000})

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_a_streamed_body_over_the_limit_is_refused(apps: RunningApp) -> None:
    _, client = await apps.start(max_body_bytes=2000)

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: sent chunked
        yield b'{"model": "gpt-4o", "goal": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    response = await client.post(
        "/v1/sessions", content=chunks(), headers={"content-type": "application/json"}
    )

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_a_body_under_the_limit_is_served(apps: RunningApp) -> None:
    _, client = await apps.start(max_body_bytes=2000)

    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "goal": "x" * 1000})

    assert response.status_code == 201


async def test_json_that_does_not_parse_is_invalid_request(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions", content=b'{"model": "gpt-4o",', headers={"content-type": "application/json"}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_json_nested_past_the_parser_is_invalid_request(client: httpx.AsyncClient) -> None:
    body = b'{"model": "gpt-4o", "metadata": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001

    response = await client.post(
        "/v1/sessions", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_metadata_nested_too_deeply_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4o", "metadata": {"deep": nested(40)}}
    )

    assert response.status_code == 422
    assert "nested more than" in json.dumps(response.json()["error"]["details"])


async def test_provider_usage_nested_too_deeply_is_refused(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "hi"}}
    )

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn.json()['turn_id']}/complete",
        json={"assistant": {"content": "ok"}, "usage": {"vendor": nested(40)}},
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_a_message_with_too_many_parts_is_refused(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="gpt-4o")
    parts = [{"type": "text", "text": "hi"}] * 300

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": parts}},
    )

    assert response.status_code == 422
    assert (await client.get(f"/v1/sessions/{session['id']}")).json()["message_count"] == 0


async def test_a_step_with_too_many_tool_calls_is_refused(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "hi"}}
    )
    ids = [f"c{i}" for i in range(200)]

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn.json()['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [{"id": i, "function": {"name": "f", "arguments": "{}"}} for i in ids]
            },
            "tool_results": [{"tool_call_id": i, "content": "r"} for i in ids],
        },
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


async def test_a_body_that_is_not_json_is_refused_with_its_media_type(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post(
        "/v1/sessions", content=b"model=gpt-4o", headers={"content-type": "text/plain"}
    )

    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
