"""Half of a UTF-16 surrogate pair in a JSON string (``"\\ud800"``) is refused with a 422
before anything is stored: Python's ``json`` reads it into a ``str`` that no UTF-8 text can
hold, so a free-form field (an Anthropic server tool's ``input``, session metadata) stored it
and then failed every answer that showed it (a 500 on SQLite). A whole pair is an emoji."""

from __future__ import annotations

import httpx
import pytest

from tests.support import create_session, start_turn

JSON = {"content-type": "application/json"}


def _server_tool_step(value: str) -> str:
    """A step's body whose server tool input holds ``value`` as written in the JSON text."""
    return (
        '{"assistant": {"content": [{"type": "text", "text": "Searching."}, {"type": '
        '"server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "'
        + value
        + '"}}], "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": '
        '"lookup", "arguments": "{}"}}]}, "tool_results": [{"tool_call_id": "call_1", '
        '"content": "found it"}]}'
    )


@pytest.mark.parametrize("half", ["\\ud800", "\\uDC00", "caf\\u00e9 \\ud83d"])
async def test_a_step_with_half_a_surrogate_pair_is_refused_and_nothing_is_stored(
    client: httpx.AsyncClient, half: str
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "look up the Lisbon flights")
    steps = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps"
    before = (await client.get(f"/v1/sessions/{session['id']}/messages")).json()["messages"]

    refused = await client.post(steps, content=_server_tool_step(half), headers=JSON)

    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_request"
    assert "surrogate" in refused.json()["error"]["message"]
    after = (await client.get(f"/v1/sessions/{session['id']}/messages")).json()["messages"]
    assert after == before
    # The turn goes on: the same step with the pair whole is taken, the emoji kept.
    taken = await client.post(
        steps, content=_server_tool_step("\\ud83d\\ude00 \\\\ud800"), headers=JSON
    )
    assert taken.status_code == 200, taken.text
    stored = (await client.get(f"/v1/sessions/{session['id']}/messages")).json()["messages"]
    inputs = [
        block.get("input")
        for message in stored
        if isinstance(message["content"], list)
        for block in message["content"]
    ]
    assert {"query": "\U0001f600 \\ud800"} in inputs, inputs


@pytest.mark.parametrize(
    "customer",
    [
        "Jos\\udce9",
        # What looks like the other half but is text, or an escaped backslash before it.
        "d800\\udce9",
        "\\\\ud800\\udce9",
    ],
)
@pytest.mark.parametrize("before", ["", '"n": NaN, '], ids=["plain", "after-nan"])
async def test_session_metadata_with_half_a_surrogate_pair_is_refused(
    client: httpx.AsyncClient, customer: str, before: str
) -> None:
    # A NaN ahead of it (which Python's json takes) must not hide the half pair.
    body = '{"model": "gpt-4o-mini", "metadata": {' + before + '"customer": "' + customer + '"}}'

    refused = await client.post("/v1/sessions", content=body, headers=JSON)

    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "invalid_request"
    assert "surrogate" in refused.json()["error"]["message"]
    whole = await client.post(
        "/v1/sessions",
        content='{"model": "gpt-4o-mini", "metadata": {"customer": "Jos\\u00e9"}}',
        headers=JSON,
    )
    assert whole.status_code == 201, whole.text
    assert whole.json()["metadata"] == {"customer": "Jos\u00e9"}
