"""Retries with an Idempotency-Key: the first answer comes back, nothing is stored twice."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.conftest import RunningApp
from tests.support import (
    audit_rows,
    create_session,
    start_turn,
    step_body,
    stored_messages,
    words,
)


def key(value: str) -> dict[str, str]:
    return {"Idempotency-Key": value}


async def test_a_retried_turn_start_returns_the_first_answer_and_stores_once(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    body = {"message": {"content": "Find a hotel."}}
    url = f"/v1/sessions/{session['id']}/turns"

    first = await client.post(url, json=body, headers=key("turn-1"))
    retry = await client.post(url, json=body, headers=key("turn-1"))

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert [m["content"] for m in await stored_messages(client, session["id"])] == ["Find a hotel."]
    assert len(await audit_rows(client, session["id"])) == 1


async def test_a_retried_step_stores_its_call_and_results_once(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Weather?")
    url = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps"
    body = step_body(["call_1"], ["21C"])

    first = await client.post(url, json=body, headers=key("step-1"))
    retry = await client.post(url, json=body, headers=key("step-1"))

    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()
    roles = [m["role"] for m in await stored_messages(client, session["id"])]
    assert roles == ["user", "assistant", "tool"]


async def test_a_retried_completion_replays_instead_of_refusing_a_closed_turn(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Hi")
    url = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/complete"
    body = {"assistant": {"content": "Hello!"}}

    first = await client.post(url, json=body, headers=key("done-1"))
    retry = await client.post(url, json=body, headers=key("done-1"))
    without_key = await client.post(url, json=body)

    assert first.status_code == retry.status_code == 200
    assert retry.json() == first.json()
    assert without_key.json()["error"]["code"] == "turn_not_open"
    assert len(await stored_messages(client, session["id"])) == 2


async def test_a_retried_session_create_makes_one_session(client: httpx.AsyncClient) -> None:
    body = {"model": "gpt-4o", "goal": "Plan"}

    first = await client.post("/v1/sessions", json=body, headers=key("create-1"))
    retry = await client.post("/v1/sessions", json=body, headers=key("create-1"))

    assert first.status_code == retry.status_code == 201
    assert retry.json()["id"] == first.json()["id"]
    assert retry.json() == first.json()


async def test_the_same_key_with_another_body_is_a_conflict(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    url = f"/v1/sessions/{session['id']}/turns"
    await client.post(url, json={"message": {"content": "one"}}, headers=key("k"))

    reused = await client.post(url, json={"message": {"content": "two"}}, headers=key("k"))

    assert reused.status_code == 409
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert len(await stored_messages(client, session["id"])) == 1


async def test_the_same_key_on_another_endpoint_is_a_conflict(client: httpx.AsyncClient) -> None:
    session = await create_session(client, id="keyed")
    await client.post("/v1/sessions", json={"model": "gpt-4o"}, headers=key("shared"))

    reused = await client.post(
        "/v1/sessions/keyed/turns", json={"message": {"content": "hi"}}, headers=key("shared")
    )

    assert reused.status_code == 409
    assert (await client.get(f"/v1/sessions/{session['id']}")).json()["turn_count"] == 0


async def test_a_rejected_turn_is_replayed_without_a_second_audit_row(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4")
    body = {"message": {"content": words(7000)}}
    url = f"/v1/sessions/{session['id']}/turns"

    first = await client.post(url, json=body, headers=key("too-big"))
    retry = await client.post(url, json=body, headers=key("too-big"))

    assert first.status_code == retry.status_code == 422
    assert first.json()["error"]["code"] == "context_budget_exceeded"
    assert retry.json() == first.json()
    assert len(await audit_rows(client, session["id"])) == 1


async def test_an_error_that_stored_nothing_is_not_replayed(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    open_turn = await start_turn(client, session["id"], "first")
    url = f"/v1/sessions/{session['id']}/turns"
    body = {"message": {"content": "second"}}
    refused = await client.post(url, json=body, headers=key("second"))
    await client.post(
        f"{url}/{open_turn['turn_id']}/complete", json={"assistant": {"content": "ok"}}
    )

    retried = await client.post(url, json=body, headers=key("second"))

    assert refused.json()["error"]["code"] == "turn_in_progress"
    assert retried.status_code == 201


async def test_concurrent_retries_with_one_key_store_once(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Search, please")
    url = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps"
    body = step_body(["call_x"], ["found it"])

    answers = await asyncio.gather(
        *(client.post(url, json=body, headers=key("same-step")) for _ in range(6))
    )

    assert {a.status_code for a in answers} == {200}
    assert len({a.text for a in answers}) == 1
    assert len(await stored_messages(client, session["id"])) == 3


async def test_keys_belong_to_a_tenant(apps: RunningApp) -> None:
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))
    bodies: list[dict[str, Any]] = [{"model": "gpt-4o", "goal": g} for g in ("A", "G")]

    acme_session = await acme.post("/v1/sessions", json=bodies[0], headers=key("create"))
    globex_session = await globex.post("/v1/sessions", json=bodies[1], headers=key("create"))

    assert acme_session.status_code == globex_session.status_code == 201
    assert acme_session.json()["id"] != globex_session.json()["id"]
    assert globex_session.json()["tenant_id"] == "globex"


async def test_a_malformed_key_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions", json={"model": "gpt-4o"}, headers=key("with space")
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
