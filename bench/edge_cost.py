"""What the HTTP edge costs a turn call: routing, dependency solving, request validation and
response serialisation, each timed on its own, in-process, for turn start, step and completion.

The payloads are real: a session on a throwaway SQLite database is fed the synthetic
conversation (bench/synth.py) through the app, and the last turn's bodies and answers are
kept, for a short session (10 messages) and a long one (``--long`` messages, whose prompt is
as large as the policy lets it grow). Each layer is then timed alone, the framework's way and
the lean way side by side:

- request body: FastAPI's (``json.loads``, then the declared body field's validation of the
  Python objects) against the lean handler's (``orjson.loads``, then the same validation), and
  ``Model.model_validate_json`` on the bytes;
- response: FastAPI's (validate the returned model against ``response_model``, then dump it)
  against ``model_dump_json`` on the model the service returned;
- dependencies: FastAPI's ``solve_dependencies`` on the route as it is declared (the caller, the
  database session, the Idempotency-Key header, the path parameters), the dependency functions'
  own work included;
- routing: finding the route among the app's (Starlette tries each in turn).

The drop-in endpoints' body, a whole conversation, parsed by ``json.loads`` and by the
proxy's parser.

A refused over-long step (10,000 tool calls and results, over the limit of 128) is timed
through the app too: the whole request, from bytes to the 422.

    python -m bench edge-cost [--long 1000] [--repeat 300]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from fastapi import FastAPI
from fastapi.dependencies.utils import request_params_to_args, solve_dependencies
from fastapi.routing import APIRoute, serialize_response
from pydantic import BaseModel
from starlette.requests import Request
from starlette.routing import Match

from app.auth.dependencies import _bearer as bearer
from app.db import get_db
from app.proxy.endpoints import parse_json
from app.turns.endpoints import get_turn_call
from app.turns.endpoints import router as turns_router
from app.turns.schemas import (
    AssemblyOut,
    CompleteRequest,
    StepRequest,
    TurnOut,
    TurnStart,
)
from bench import synth
from bench.common import machine, running_app
from bench.latency import feed, new_session


@dataclass
class Call:
    """One turn call as it went over the wire: its route, path, body and answer."""

    name: str
    route: APIRoute
    path: str
    body: bytes
    request_model: type[BaseModel]
    answer: BaseModel


def microseconds(work: Callable[[], Any], repeat: int) -> float:
    """The median of ``repeat`` timed runs of ``work``, in µs."""
    work()
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        runs.append((time.perf_counter() - started) * 1e6)
    return statistics.median(runs)


async def async_microseconds(work: Callable[[], Awaitable[Any]], repeat: int) -> float:
    await work()
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        await work()
        runs.append((time.perf_counter() - started) * 1e6)
    return statistics.median(runs)


def route_for(method: str, name: str) -> APIRoute:
    """The route as declared (the app serves it from an inclusion of its router)."""
    for route in turns_router.routes:
        if isinstance(route, APIRoute) and route.name == name and method in (route.methods or ()):
            return route
    raise LookupError(name)


async def record_calls(client: httpx.AsyncClient, app: FastAPI, messages: int) -> list[Call]:
    """A session holding ``messages`` messages of the synthetic conversation, and one more
    turn (start, a step, complete) whose bodies and answers are kept."""
    conversation = synth.with_messages(messages + 8, seed=1)
    *history, last = conversation.turns
    connection = _ClientConnection(client)
    session = await new_session(connection)  # type: ignore[arg-type]
    await feed(connection, session["id"], tuple(history))  # type: ignore[arg-type]
    base = f"/v1/sessions/{session['id']}/turns"
    calls = []
    body = json.dumps(last.start_body()).encode()
    started = await client.post(base, content=body, headers=_JSON)
    assert started.status_code == 201, started.text
    turn_id = started.json()["turn_id"]
    calls.append(
        Call(
            "turn start",
            route_for("POST", "start_turn"),
            base,
            body,
            TurnStart,
            AssemblyOut.model_validate_json(started.content),
        )
    )
    step = last.steps[0] if last.steps else None
    if step is not None:
        body = json.dumps(step.body()).encode()
        path = f"{base}/{turn_id}/steps"
        answer = await client.post(path, content=body, headers=_JSON)
        assert answer.status_code == 200, answer.text
        calls.append(
            Call(
                "step",
                route_for("POST", "post_step"),
                path,
                body,
                StepRequest,
                AssemblyOut.model_validate_json(answer.content),
            )
        )
    body = json.dumps(last.complete_body()).encode()
    path = f"{base}/{turn_id}/complete"
    completed = await client.post(path, content=body, headers=_JSON)
    assert completed.status_code == 200, completed.text
    calls.append(
        Call(
            "completion",
            route_for("POST", "complete_turn"),
            path,
            body,
            CompleteRequest,
            TurnOut.model_validate_json(completed.content),
        )
    )
    return calls


_JSON = {"content-type": "application/json"}


class _ClientConnection:
    """bench.latency's connection interface over the in-process client."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def request(self, method: str, path: str, body: Any) -> Any:
        response = await self.client.request(method, path, json=body)
        return _Answer(response)


class _Answer:
    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.body = response.content
        self._response = response

    def json(self) -> Any:
        return self._response.json()


def scope_for(app: FastAPI, call: Call) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": call.path,
        "raw_path": call.path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"host", b"bench")],
        "server": ("bench", 80),
        "client": ("127.0.0.1", 1),
        "app": app,
    }


async def layer_costs(app: FastAPI, call: Call, repeat: int) -> dict[str, float]:
    """µs of each layer of ``call``, the framework's way and the lean way."""
    route = call.route
    body_field = route.body_field
    assert body_field is not None
    response_field = route.response_field
    assert response_field is not None
    scope = scope_for(app, call)

    def framework_body() -> Any:
        value, errors = body_field.validate(json.loads(call.body), {}, loc=("body",))
        assert not errors
        return value

    def lean_body() -> Any:
        value, errors = body_field.validate(orjson.loads(call.body), {}, loc=("body",))
        assert not errors
        return value

    def json_mode_body() -> Any:
        return call.request_model.model_validate_json(call.body)

    async def framework_response() -> Any:
        return await serialize_response(
            field=response_field, response_content=call.answer, dump_json=True
        )

    async def lean_response() -> Any:
        return call.answer.model_dump_json()

    def routing() -> Any:
        for candidate in app.router.routes:
            match, _ = candidate.matches(scope)
            if match is Match.FULL:
                return candidate
        raise LookupError(call.path)

    async def dependencies() -> Any:
        request_scope = {**scope, "path_params": route.matches(scope)[1]["path_params"]}
        async with AsyncExitStack() as inner, AsyncExitStack() as function:
            request_scope["fastapi_inner_astack"] = inner
            request_scope["fastapi_function_astack"] = function
            request_scope["fastapi_astack"] = inner
            solved = await solve_dependencies(
                request=Request(request_scope),
                dependant=route.dependant,
                body=json.loads(call.body),
                async_exit_stack=inner,
                embed_body_fields=False,
            )
            assert not solved.errors, solved.errors
            return solved

    turn_call = route.dependant.dependencies[0]
    assert turn_call.call is get_turn_call
    caller_call = next(d.call for d in turn_call.dependencies if d.call is not get_db)
    assert caller_call is not None

    async def dependencies_by_hand() -> Any:
        request = Request({**scope, "path_params": route.matches(scope)[1]["path_params"]})
        async with asynccontextmanager(get_db)(request) as db:
            credentials = await bearer(request)
            caller = await caller_call(request, db, credentials)
            call = await get_turn_call(request, db, caller)
            _, path_errors = request_params_to_args(
                route.dependant.path_params, request.path_params
            )
            _, header_errors = request_params_to_args(
                route.dependant.header_params, request.headers
            )
            assert not path_errors
            assert not header_errors
            return call

    return {
        "routing": microseconds(routing, repeat),
        "dependencies, by hand": await async_microseconds(dependencies_by_hand, repeat),
        "body, framework": microseconds(framework_body, repeat),
        "body, lean": microseconds(lean_body, repeat),
        "body, model_validate_json": microseconds(json_mode_body, repeat),
        "dependencies, framework": await async_microseconds(dependencies, repeat),
        "response, framework": await async_microseconds(framework_response, repeat),
        "response, lean": await async_microseconds(lean_response, repeat),
        "body bytes": len(call.body),
        "answer bytes": len(call.answer.model_dump_json()),
    }


def over_long_step(calls: int) -> bytes:
    """A step with ``calls`` tool calls and as many results: over the limit of 128."""
    return json.dumps(
        {
            "assistant": {
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
                    }
                    for i in range(calls)
                ],
            },
            "tool_results": [
                {"tool_call_id": f"call_{i}", "content": "a result"} for i in range(calls)
            ],
        }
    ).encode()


async def refusal_ms(client: httpx.AsyncClient, path: str, body: bytes, repeat: int) -> float:
    """Median ms of a refused over-long step, through the app (the client's own cost in)."""

    async def refuse() -> None:
        response = await client.post(path, content=body, headers=_JSON)
        assert response.status_code == 422, response.text

    return await async_microseconds(refuse, repeat) / 1000


async def run(long: int, repeat: int, refused_calls: int) -> None:
    async with running_app() as client:
        transport = client._transport
        assert isinstance(transport, httpx.ASGITransport)
        app = transport.app
        assert isinstance(app, FastAPI)
        print(f"{machine()}; medians of {repeat} runs, µs")  # noqa: T201
        print(  # noqa: T201
            "| call | stored | body B | answer B | routing | deps FastAPI / by hand "
            "| body FastAPI / lean / JSON mode | response FastAPI / lean |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")  # noqa: T201
        for messages in (10, long):
            for call in await record_calls(client, app, messages):
                cost = await layer_costs(app, call, repeat)
                print(  # noqa: T201
                    f"| {call.name} | {messages:,} | {cost['body bytes']:,.0f} | "
                    f"{cost['answer bytes']:,.0f} | {cost['routing']:.1f} | "
                    f"{cost['dependencies, framework']:.1f} / "
                    f"{cost['dependencies, by hand']:.1f} | "
                    f"{cost['body, framework']:.1f} / {cost['body, lean']:.1f} / "
                    f"{cost['body, model_validate_json']:.1f} | "
                    f"{cost['response, framework']:.1f} / {cost['response, lean']:.1f} |"
                )
        for messages in (10, long):
            chat = synth.with_messages(messages, seed=1).chat()
            body = json.dumps({"model": "gpt-4o", "messages": chat}).encode()
            print(  # noqa: T201
                f"drop-in body of {messages:,} messages ({len(body):,} B): json.loads "
                f"{microseconds(functools.partial(json.loads, body), repeat):.1f} µs, the "
                f"proxy's {microseconds(functools.partial(parse_json, body), repeat):.1f} µs"
            )
        session = await client.post("/v1/sessions", json={"model": "gpt-4o"})
        session_id = session.json()["id"]
        turn = await client.post(
            f"/v1/sessions/{session_id}/turns", json={"message": {"content": "hi"}}
        )
        path = f"/v1/sessions/{session_id}/turns/{turn.json()['turn_id']}/steps"
        body = over_long_step(refused_calls)
        refused = await refusal_ms(client, path, body, max(5, repeat // 30))
        print(  # noqa: T201
            f"refusing a {refused_calls:,}-call step ({len(body):,} B, limit 128): "
            f"{refused:.1f} ms through the app"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--long", type=int, default=1000, help="messages of the long session")
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--refused-calls", type=int, default=10_000)
    args = parser.parse_args()
    asyncio.run(run(args.long, args.repeat, args.refused_calls))


if __name__ == "__main__":
    main()
