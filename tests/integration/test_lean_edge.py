"""The turn routes' lean handler (app/edge.py): the same contract as FastAPI's handler, the
OpenAPI document first."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import fastapi.dependencies.utils
import httpx
import pytest
from pydantic import BaseModel, Field, field_serializer

from app import edge
from app.routes import api_routes
from app.turns.schemas import AssemblyOut, TurnOut
from tests.conftest import RunningApp
from tests.support import create_session

#: The document of the lean routes as FastAPI's own handler had them (written once, from
#: the code before the lean handler; it must not change).
SNAPSHOT = Path(__file__).with_name("openapi_turn_routes.json")
LEAN_ROUTES = (
    ("/v1/sessions/{session_id}/turns", "post"),
    ("/v1/sessions/{session_id}/turns/{turn_id}/steps", "post"),
    ("/v1/sessions/{session_id}/turns/{turn_id}/complete", "post"),
)


def routes_document(document: dict[str, Any]) -> dict[str, Any]:
    """The lean routes' operations and every schema they reach."""
    operations = {
        f"{method} {path}": document["paths"][path][method] for path, method in LEAN_ROUTES
    }
    schemas = document["components"]["schemas"]
    reached: dict[str, Any] = {}
    pending = [operations]
    while pending:
        text = json.dumps(pending.pop())
        for name in schemas:
            if f'"#/components/schemas/{name}"' in text and name not in reached:
                reached[name] = schemas[name]
                pending.append(schemas[name])
    return {"operations": operations, "schemas": dict(sorted(reached.items()))}


async def test_the_openapi_document_of_the_turn_routes_is_unchanged(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()

    assert routes_document(document) == json.loads(SNAPSHOT.read_text())


async def open_turn(client: httpx.AsyncClient) -> tuple[str, str]:
    session = await create_session(client)
    started = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "Find a flight."}}
    )
    assert started.status_code == 201
    return session["id"], started.json()["turn_id"]


def step_body(calls: int) -> dict[str, Any]:
    ids = [f"call_{i}" for i in range(calls)]
    return {
        "assistant": {
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "search", "arguments": "{}"}}
                for i in ids
            ]
        },
        "tool_results": [{"tool_call_id": i, "content": "nothing found"} for i in ids],
    }


async def test_a_turn_answers_with_its_declared_status_and_json(
    client: httpx.AsyncClient,
) -> None:
    session_id, turn_id = await open_turn(client)

    step = await client.post(f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json=step_body(1))
    completed = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
        json={"assistant": {"content": "Nothing to book."}},
    )

    assert step.status_code == 200
    assert step.headers["content-type"] == "application/json"
    assert step.json()["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_0",
        "content": "nothing found",
    }
    assert completed.status_code == 200
    assert completed.json()["status"] == "completed"
    assert completed.json()["assistant_output"] == "Nothing to book."


async def test_a_prompt_is_written_as_pydantic_writes_its_model(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    text = 'Zürich → Lisboa, «quoted» "twice", a tab\there, \u2028 and 😀 <script>\\'

    started = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": text}}
    )
    completed = await client.post(
        f"/v1/sessions/{session['id']}/turns/{started.json()['turn_id']}/complete",
        json={"assistant": {"content": text}},
    )

    assert started.status_code == 201
    assert started.json()["messages"][-1]["content"] == text
    assert (
        started.content
        == AssemblyOut.model_validate_json(started.content).model_dump_json(by_alias=True).encode()
    )
    assert (
        completed.content
        == TurnOut.model_validate_json(completed.content).model_dump_json(by_alias=True).encode()
    )


def test_an_answer_orjson_refuses_is_written_by_pydantic() -> None:
    class Answer(BaseModel):
        value: dict[str, Any]

    answer = Answer(value={"big": 2**70, "small": 1.5})

    assert edge._dumped(answer) == answer.model_dump_json(by_alias=True).encode()


async def test_a_step_answer_is_written_as_pydantic_writes_its_model(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turns = f"/v1/sessions/{session['id']}/turns"
    started = await client.post(turns, json={"message": {"content": "Find «it» 😀"}})
    calls = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": "grep", "arguments": json.dumps({"q": "é\u2028", "n": 1.5})},
        }
        for index in range(3)
    ]
    step = await client.post(
        f"{turns}/{started.json()['turn_id']}/steps",
        json={
            "assistant": {"content": "Looking.", "tool_calls": calls},
            "tool_results": [
                {"tool_call_id": f"call_{index}", "content": f'line {index}: "x"\t<b>'}
                for index in range(3)
            ],
        },
    )

    assert step.status_code == 200
    assert step.json()["messages"][-4]["tool_calls"] == calls
    assert (
        step.content
        == AssemblyOut.model_validate_json(step.content).model_dump_json(by_alias=True).encode()
    )


@pytest.mark.parametrize(
    "value",
    [datetime(2026, 1, 2, tzinfo=UTC), 2**70, {1: "a key that is not a string"}],
    ids=["date", "big-integer", "integer-key"],
)
def test_messages_json_has_no_word_for_are_written_by_pydantic(value: Any) -> None:
    class Answer(BaseModel):
        turn_id: str
        messages: list[dict[str, Any]]
        audit_id: int

    answer = Answer(turn_id="t", messages=[{"role": "tool", "content": value}], audit_id=3)

    assert edge._dumped(answer) == answer.model_dump_json(by_alias=True).encode()


def test_messages_a_model_excludes_or_serializes_itself_are_written_by_pydantic() -> None:
    class Excluded(BaseModel):
        turn_id: str
        messages: list[dict[str, Any]] = Field(exclude_if=lambda messages: not messages)

    class Serialized(BaseModel):
        turn_id: str
        messages: list[dict[str, Any]]

        @field_serializer("messages")
        def _redacted(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{"redacted": True} for _ in messages]

    for answer in (
        Excluded(turn_id="t", messages=[]),
        Serialized(turn_id="t", messages=[{"role": "user", "content": "hi"}]),
    ):
        assert edge._dumped(answer) == answer.model_dump_json(by_alias=True).encode()


async def test_a_body_sent_as_application_vnd_json_is_read_as_json(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        content=json.dumps({"message": {"content": "hi"}}),
        headers={"content-type": "application/vnd.api+json"},
    )

    assert response.status_code == 201


async def test_a_bad_idempotency_key_with_a_valid_body_is_invalid_request(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"content": "hi"}},
        headers={"Idempotency-Key": "a key with spaces"},
    )

    assert response.status_code == 422
    assert response.json()["error"]["details"]["errors"][0]["location"] == (
        "header.Idempotency-Key"
    )


async def test_a_bad_key_and_a_bad_body_are_both_reported(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"content": 5}},
        headers={"Idempotency-Key": "a key with spaces"},
    )

    locations = [e["location"] for e in response.json()["error"]["details"]["errors"]]
    assert response.status_code == 422
    assert locations[0] == "header.Idempotency-Key"
    assert any(location.startswith("body.message.content") for location in locations)


async def test_a_valid_body_without_a_key_is_unauthenticated_when_keys_exist(
    apps: RunningApp,
) -> None:
    key = await apps.key("acme", "agent")
    app, client = await apps.start()
    session = await create_session(apps.client(app, key))

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "hi"}}
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_a_step_of_ten_thousand_calls_is_refused_with_the_list_limit(
    client: httpx.AsyncClient,
) -> None:
    session_id, turn_id = await open_turn(client)

    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json=step_body(10_000)
    )

    error = response.json()["error"]
    assert response.status_code == 422
    assert error["code"] == "invalid_request"
    assert error["details"]["errors"] == [
        {
            "location": "body.assistant.tool_calls",
            "problem": "List should have at most 128 items after validation, not 10000",
        },
        {
            "location": "body.tool_results",
            "problem": "List should have at most 128 items after validation, not 10000",
        },
    ]


async def test_a_step_at_the_list_limit_is_served(client: httpx.AsyncClient) -> None:
    session_id, turn_id = await open_turn(client)

    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json=step_body(128)
    )

    assert response.status_code == 200


async def _through_both_handlers(
    apps: RunningApp, method_path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[tuple[int, Any], tuple[int, Any]]:
    """The answer of the lean handler, then FastAPI's (an app with a dependency override
    takes FastAPI's handler), to the same request."""
    app, client = await apps.start()
    session = await create_session(client)
    path = method_path.format(session=session["id"])
    lean = await client.post(path, json=body, headers=headers)
    app.dependency_overrides[_never_called] = _never_called
    try:
        framework = await client.post(path, json=body, headers=headers)
    finally:
        app.dependency_overrides.clear()
    return (lean.status_code, lean.json()), (framework.status_code, framework.json())


def _never_called() -> None:
    raise AssertionError("an override only to take FastAPI's handler")


async def test_bad_path_and_header_parameters_are_refused_as_fastapi_refuses_them(
    apps: RunningApp,
) -> None:
    long_turn = "t" * 65
    cases = [
        ("/v1/sessions/{session}/turns", {"Idempotency-Key": "a key with spaces"}),
        ("/v1/sessions/{session}/turns", {"Idempotency-Key": "k" * 300}),
        (f"/v1/sessions/{{session}}/turns/{long_turn}/steps", {}),
        (f"/v1/sessions/{{session}}/turns/{long_turn}/complete", {"Idempotency-Key": "a b"}),
        ("/v1/sessions/bad%20id/turns", {}),
    ]
    body = {"message": {"content": "hi"}, "assistant": {"content": "ok"}}
    for path, headers in cases:
        lean, framework = await _through_both_handlers(apps, path, body, headers)
        assert lean[0] == 422, (path, lean)
        for answer in (lean, framework):
            answer[1]["error"].pop("request_id", None)
        assert lean == framework, path


@pytest.fixture
def fastapi_without_a_private_helper() -> Iterator[None]:
    """app.edge imported against a FastAPI that has renamed one of the private helpers the
    lean plan calls (as a release may: pyproject sets no upper bound), then restored."""
    renamed = ModuleType(fastapi.dependencies.utils.__name__)
    renamed.__dict__.update(vars(fastapi.dependencies.utils))
    del renamed._solve_generator
    with pytest.MonkeyPatch.context() as patch:
        # Only imports made from now on see the module without it: FastAPI's own code keeps
        # the functions it imported.
        patch.setitem(sys.modules, renamed.__name__, renamed)
        importlib.reload(edge)
        patch.setattr(edge, "_lean_handler", _lean_handler_never_built)
        # The process's routes are built once (app/routes.py): this test's app needs its own,
        # built against the module without the helper, and later apps need them rebuilt.
        api_routes.cache_clear()
        yield
    importlib.reload(edge)
    api_routes.cache_clear()


def _lean_handler_never_built(*_: object) -> NoReturn:
    raise AssertionError("the lean handler was built without the helpers it calls")


@pytest.mark.usefixtures("fastapi_without_a_private_helper")
async def test_without_fastapis_private_helpers_the_turn_routes_answer_through_fastapi(
    apps: RunningApp,
) -> None:
    _, client = await apps.start()
    session = await create_session(client)

    started = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "Find a flight."}}
    )
    step = await client.post(
        f"/v1/sessions/{session['id']}/turns/{started.json()['turn_id']}/steps",
        json=step_body(1),
    )
    refused = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"content": 5}},
        headers={"Idempotency-Key": "a key with spaces"},
    )

    assert edge.LEAN_HANDLER_AVAILABLE is False
    assert started.status_code == 201
    assert step.status_code == 200
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_request"
    locations = [e["location"] for e in refused.json()["error"]["details"]["errors"]]
    assert locations[0] == "header.Idempotency-Key"
