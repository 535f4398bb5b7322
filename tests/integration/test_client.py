"""The bundled Python client against the real service: async in-process, sync over a socket."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from app.client import AsyncContextd, BudgetExceeded, Contextd, ContextdError
from app.main import create_app
from tests.conftest import RunningApp, make_settings
from tests.support import words

CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


async def test_async_client_runs_a_tool_using_turn(apps: RunningApp) -> None:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="gpt-4o", system={"global": "Be terse."})
        prompt = await ctx.start_turn(session["id"], "Weather in Lisbon?")
        step = await ctx.post_step(
            session["id"], prompt["turn_id"], [CALL], [{"tool_call_id": "c1", "content": "21C"}]
        )
        turn = await ctx.complete_turn(session["id"], prompt["turn_id"], "21C and sunny.")
        stored = await ctx.messages(session["id"])

    assert [m["role"] for m in step["messages"]] == ["system", "user", "assistant", "tool"]
    assert turn["status"] == "completed"
    assert len(stored["messages"]) == 4


async def test_async_client_raises_the_service_error_codes(apps: RunningApp) -> None:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="gpt-4")
        with pytest.raises(BudgetExceeded) as exceeded:
            await ctx.start_turn(session["id"], words(7000))
        with pytest.raises(ContextdError) as missing:
            await ctx.get_session("nope")

    assert exceeded.value.status == 422
    assert exceeded.value.details["input_budget"] == 5530
    assert (missing.value.status, missing.value.code) == (404, "session_not_found")


@pytest.fixture
def served(database_url: str) -> Iterator[str]:
    """The service on a real socket, in a thread."""
    server = uvicorn.Server(
        uvicorn.Config(create_app(make_settings(database_url)), port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


def test_sync_client_over_a_socket(served: str) -> None:
    with Contextd(served) as ctx:
        session = ctx.create_session(model="gpt-4o", id="sync-1")
        prompt = ctx.start_turn("sync-1", "hello")
        ctx.complete_turn("sync-1", prompt["turn_id"], "hi")
        trimmed = ctx.trim("gpt-4o", prompt["messages"])
        ctx.delete_session("sync-1")
        with pytest.raises(ContextdError) as gone:
            ctx.get_session("sync-1")

    assert session["id"] == "sync-1"
    assert trimmed["messages"] == prompt["messages"]
    assert gone.value.code == "session_not_found"
