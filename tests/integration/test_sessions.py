from __future__ import annotations

import httpx

from tests.support import create_session


async def test_create_generates_an_id_and_reports_the_budget(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    assert session["id"]
    assert session["model"] == "gpt-4"
    assert session["system"] == {
        "global": "You are a careful assistant.",
        "mode": None,
        "role": "You book travel.",
    }
    # 8192 - min(2048, 1638) - max(1024, 409)
    assert session["budget"]["input_budget"] == 5530
    assert session["budget"]["estimator"] == "tiktoken:cl100k_base"
    fetched = (await client.get(f"/v1/sessions/{session['id']}")).json()
    assert fetched == session


async def test_unknown_model_gets_an_8192_context(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="acme-frontier-7")

    assert session["budget"]["model_context_limit"] == 8192


async def test_chosen_id_is_kept_and_cannot_be_taken_twice(client: httpx.AsyncClient) -> None:
    await create_session(client, id="support-42")

    again = await client.post("/v1/sessions", json={"id": "support-42", "model": "gpt-4o"})

    assert again.status_code == 409
    assert again.json()["error"]["code"] == "session_exists"


async def test_malformed_body_says_where_it_is_wrong(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "context_limt": 9000})

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert any("context_limt" in e["location"] for e in error["details"]["errors"])


async def test_a_budget_with_no_room_for_input_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "context_limit": 1000})

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_budget"
    assert error["details"]["input_budget"] <= 0


async def test_patch_changes_only_what_is_sent_and_null_clears(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    response = await client.patch(
        f"/v1/sessions/{session['id']}", json={"goal": None, "context_limit": 16384}
    )

    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["goal"] is None
    assert updated["mode"] == "planning"
    assert updated["budget"]["model_context_limit"] == 16384


async def test_patch_refuses_a_budget_with_no_room(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    response = await client.patch(f"/v1/sessions/{session['id']}", json={"context_limit": 500})

    assert response.status_code == 422
    assert (await client.get(f"/v1/sessions/{session['id']}")).json()["context_limit"] is None


async def test_delete_removes_the_session(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    deleted = await client.delete(f"/v1/sessions/{session['id']}")
    fetched = await client.get(f"/v1/sessions/{session['id']}")

    assert deleted.status_code == 204
    assert fetched.status_code == 404
    assert fetched.json()["error"]["code"] == "session_not_found"


async def test_health_and_readiness(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}
