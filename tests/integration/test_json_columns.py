"""JSON columns keep what the caller sent, on both stores: the values the engine's JSON
codec (orjson, with ``json`` where the two differ) must not change on the way in or out."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support import create_session, step_body


async def _session_with_raw_metadata(client: httpx.AsyncClient, metadata: bytes) -> Any:
    body = b'{"model": "gpt-4o", "metadata": ' + metadata + b"}"
    return await client.post(
        "/v1/sessions", content=body, headers={"content-type": "application/json"}
    )


async def test_integers_past_64_bits_and_any_script_read_back_unchanged(
    client: httpx.AsyncClient,
) -> None:
    metadata = {
        "order": 123456789012345678901234567890,
        "limits": [-9223372036854775808, 18446744073709551615, 0.1, 1e300],
        "note": "café 😀 — 東京",
        "empty": None,
        "nested": {"a": [True, False, None, {"b": "c"}]},
    }
    created = await client.post("/v1/sessions", json={"model": "gpt-4o", "metadata": metadata})
    assert created.status_code == 201, created.text

    read = await client.get(f"/v1/sessions/{created.json()['id']}")

    assert read.status_code == 200, read.text
    assert read.json()["metadata"] == metadata
    assert type(read.json()["metadata"]["order"]) is int


async def test_a_tool_calls_arguments_and_results_read_back_unchanged(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    base = f"/v1/sessions/{session['id']}/turns"
    started = await client.post(base, json={"message": {"content": "Book the 07:10 to Lisbon."}})
    assert started.status_code == 201, started.text
    result = 'Booked: {"seat": "12A", "price": 148.5, "ref": 98765432109876543210} ✈️'
    step = step_body(["call_1"], [result])
    stepped = await client.post(f"{base}/{started.json()['turn_id']}/steps", json=step)
    assert stepped.status_code == 200, stepped.text

    history = await client.get(f"/v1/sessions/{session['id']}/messages")

    assert history.status_code == 200, history.text
    stored = [m for m in history.json()["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in stored] == [result]
    sent = [m for m in stepped.json()["messages"] if m.get("role") == "tool"]
    assert sent[-1]["content"] == result


async def test_nan_in_free_form_json_is_refused_or_kept_as_before(
    client: httpx.AsyncClient, database_url: str
) -> None:
    created = await _session_with_raw_metadata(client, b'{"ratio": NaN}')

    if database_url.startswith("postgresql"):
        # Postgres's JSON has no NaN: the value is refused, not stored as something else.
        assert created.status_code == 422, created.text
        assert created.json()["error"]["code"] == "invalid_request"
    else:
        assert created.status_code == 201, created.text
        read = await client.get(f"/v1/sessions/{created.json()['id']}")
        assert read.status_code == 200, read.text
        # Stored as NaN; a JSON answer can only say null.
        assert read.json()["metadata"] == {"ratio": None}
