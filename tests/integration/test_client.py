"""The Python client (contextd_client) against the real service: async in-process, sync over a
socket; typed errors, idempotent retries, the audit, counting and summary-job calls, and the
two clients offering the same calls."""

from __future__ import annotations

import inspect
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.main import create_app
from contextd_client import (
    AsyncContextd,
    BudgetExceeded,
    Contextd,
    DatabaseUnavailable,
    InvalidSearchQuery,
    Retries,
    ServiceUnreachable,
    SessionExists,
    SessionNotFound,
    TurnInProgress,
)
from tests.conftest import RunningApp, make_settings
from tests.fake_llm import serve_fake_chat
from tests.servers import serve_in_thread
from tests.support import words

CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
NO_WAIT = Retries(attempts=3, backoff=0.0)


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
    assert step["budget"]["input_budget"] > step["budget"]["estimated_input_tokens"]
    assert turn["status"] == "completed"
    assert len(stored["messages"]) == 4


async def test_async_client_searches_a_sessions_history(apps: RunningApp) -> None:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="gpt-4o")
        prompt = await ctx.start_turn(session["id"], "The ferry to Madeira leaves at 9.")
        await ctx.complete_turn(session["id"], prompt["turn_id"], "Noted.")
        found = await ctx.search(session["id"], "ferry Madeira", limit=5)
        with pytest.raises(InvalidSearchQuery):
            await ctx.search(session["id"], "?!")

    assert [(hit["seq"], hit["role"], hit["state"]) for hit in found["hits"]] == [
        (1, "user", "active")
    ]


async def test_async_client_sends_thinking_and_reasoning_back_unchanged(apps: RunningApp) -> None:
    thinking = {"type": "thinking", "thinking": "Check first.", "signature": "c2ln/+=="}
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="claude-sonnet-4-5")
        prompt = await ctx.start_turn(session["id"], "Weather in Lisbon?")
        step = await ctx.post_step(
            session["id"], prompt["turn_id"], [CALL], [{"tool_call_id": "c1", "content": "21C"}],
            content=[thinking], prompt_format="anthropic",
        )  # fmt: skip
        await ctx.complete_turn(
            session["id"], prompt["turn_id"], "21C.", reasoning_content="It said 21C."
        )
        stored = await ctx.messages(session["id"])

    assert step["messages"][1]["content"][0] == thinking
    assert stored["messages"][-1]["reasoning_content"] == "It said 21C."


async def test_async_client_posts_what_anthropic_returned_as_it_is(apps: RunningApp) -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Lisbon"}},
    ]
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "21C"}
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="claude-sonnet-4-5")
        prompt = await ctx.start_turn(session["id"], "Weather in Lisbon?")
        step = await ctx.post_step(
            session["id"], prompt["turn_id"], [], [result], content=blocks,
            prompt_format="anthropic",
        )  # fmt: skip

    assistant, results = step["messages"][-2:]
    unmarked = [
        [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]
        for m in (assistant, results)
    ]
    assert unmarked == [blocks, [result]]


async def test_each_error_code_raises_its_own_exception(apps: RunningApp) -> None:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="gpt-4", id="codes")
        with pytest.raises(BudgetExceeded) as exceeded:
            await ctx.start_turn(session["id"], words(7000))
        with pytest.raises(SessionNotFound) as missing:
            await ctx.get_session("nope")
        with pytest.raises(SessionExists):
            await ctx.create_session(model="gpt-4", id="codes")
        await ctx.start_turn("codes", "first")
        with pytest.raises(TurnInProgress):
            await ctx.start_turn("codes", "second")

    assert exceeded.value.status == 422
    assert exceeded.value.details is not None
    assert exceeded.value.details["input_budget"] == 5530
    assert (missing.value.status, missing.value.code) == (404, "session_not_found")


class _LoseFirstAnswers(httpx.AsyncBaseTransport):
    """The app handles every request, but the first ``lost`` answers never reach the client,
    as when a connection drops after the service wrote its result."""

    def __init__(self, app: FastAPI, lost: int) -> None:
        self._inner = httpx.ASGITransport(app=app)
        self.lost = lost
        self.keys: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("Idempotency-Key"))
        response = await self._inner.handle_async_request(request)
        if self.lost > 0:
            self.lost -= 1
            await response.aread()
            raise httpx.ReadError("connection reset", request=request)
        return response


async def test_a_write_whose_answer_was_lost_is_retried_and_stored_once(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start()
    transport = _LoseFirstAnswers(app, lost=0)
    async with AsyncContextd("http://t", transport=transport, retries=NO_WAIT) as ctx:
        session = await ctx.create_session(model="gpt-4o")
        transport.lost = 1
        prompt = await ctx.start_turn(session["id"], "hello")
        stored = await ctx.messages(session["id"])

    start_keys = transport.keys[1:3]
    assert start_keys[0] is not None
    assert start_keys[0] == start_keys[1]
    assert [m["content"] for m in stored["messages"]] == ["hello"]
    assert prompt["messages"][-1]["content"] == "hello"


async def test_a_change_whose_answer_was_lost_is_not_retried(apps: RunningApp) -> None:
    app, _ = await apps.start()
    transport = _LoseFirstAnswers(app, lost=0)
    async with AsyncContextd("http://t", transport=transport, retries=NO_WAIT) as ctx:
        session = await ctx.create_session(model="gpt-4o")
        transport.lost = 1
        with pytest.raises(ServiceUnreachable):
            await ctx.update_session(session["id"], goal="Lisbon")
        changed = await ctx.get_session(session["id"])

    assert len(transport.keys) == 3
    assert changed["goal"] == "Lisbon"


class _Unavailable(httpx.AsyncBaseTransport):
    """503 database_unavailable with Retry-After for the first ``failures`` requests, then
    the real app."""

    def __init__(self, app: FastAPI, failures: int) -> None:
        self._inner = httpx.ASGITransport(app=app)
        self.failures = failures
        self.attempts = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.attempts += 1
        if self.attempts <= self.failures:
            body = {"error": {"code": "database_unavailable", "message": "try again"}}
            return httpx.Response(503, json=body, headers={"Retry-After": "0"})
        return await self._inner.handle_async_request(request)


async def test_503_is_retried_after_the_wait_the_service_asks_for(apps: RunningApp) -> None:
    app, _ = await apps.start()
    transport = _Unavailable(app, failures=2)
    async with AsyncContextd("http://t", transport=transport, retries=NO_WAIT) as ctx:
        session = await ctx.create_session(model="gpt-4o", id="after-503")

    assert session["id"] == "after-503"
    assert transport.attempts == 3


async def test_503_after_the_last_attempt_raises_database_unavailable(apps: RunningApp) -> None:
    app, _ = await apps.start()
    transport = _Unavailable(app, failures=5)
    async with AsyncContextd("http://t", transport=transport, retries=NO_WAIT) as ctx:
        with pytest.raises(DatabaseUnavailable) as unavailable:
            await ctx.create_session(model="gpt-4o")

    assert unavailable.value.retry_after == 0
    assert transport.attempts == 3


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_no_service_listening_raises_service_unreachable() -> None:
    with (
        Contextd(f"http://127.0.0.1:{_closed_port()}", retries=NO_WAIT) as ctx,
        pytest.raises(ServiceUnreachable),
    ):
        ctx.get_session("anything")


@contextmanager
def serving(database_url: str) -> Iterator[str]:
    """The service on a real socket of 127.0.0.1, in a thread; yields its URL."""
    with serve_in_thread(create_app(make_settings(database_url)), lifespan="auto") as url:
        yield url


@pytest.fixture
def served(database_url: str) -> Iterator[str]:
    with serving(database_url) as url:
        yield url


def test_sync_client_over_a_socket(served: str) -> None:
    with Contextd(served) as ctx:
        session = ctx.create_session(model="gpt-4o", id="sync-1")
        prompt = ctx.start_turn("sync-1", "hello")
        ctx.complete_turn("sync-1", prompt["turn_id"], "hi")
        trimmed = ctx.trim("gpt-4o", prompt["messages"])
        found = ctx.search("sync-1", "hello")
        ctx.delete_session("sync-1")
        with pytest.raises(SessionNotFound):
            ctx.get_session("sync-1")

    assert session["id"] == "sync-1"
    assert trimmed["messages"] == prompt["messages"]
    assert [hit["seq"] for hit in found["hits"]] == [1]


def test_sync_client_reads_the_audit_and_counts_over_a_socket(served: str) -> None:
    with Contextd(served) as ctx:
        ctx.create_session(model="gpt-4o", id="sync-audit")
        prompt = ctx.start_turn("sync-audit", "hello")
        rows = ctx.list_audit(session_id="sync-audit")
        turn = ctx.turn_audit("sync-audit", prompt["turn_id"])
        counted = ctx.count_tokens("gpt-4o", prompt["messages"])

    assert [row["id"] for row in rows["items"]] == [prompt["audit_id"]]
    assert turn == rows["items"]
    assert counted["input_tokens"] == prompt["budget"]["estimated_input_tokens"]


def _public_calls(client: object) -> dict[str, Any]:
    return {
        name: getattr(client, name)
        for name in dir(client)
        if not name.startswith("_") and callable(getattr(client, name))
    }


async def test_both_clients_offer_the_same_calls_with_the_same_parameters() -> None:
    with Contextd() as sync_client:
        sync_calls = _public_calls(sync_client)
    async with AsyncContextd() as async_client:
        async_calls = _public_calls(async_client)
    only_one = {"close", "aclose"}

    assert {
        name: inspect.signature(call) for name, call in sync_calls.items() if name not in only_one
    } == {
        name: inspect.signature(call) for name, call in async_calls.items() if name not in only_one
    }
    assert {"audit_rollup", "list_audit", "turn_audit", "count_tokens", "summary_jobs"} <= set(
        sync_calls
    )
    assert all(inspect.iscoroutinefunction(call) for call in async_calls.values())
    assert not any(inspect.iscoroutinefunction(call) for call in sync_calls.values())
    assert sync_calls["start_turn"].__doc__ == async_calls["start_turn"].__doc__


async def test_async_client_reads_one_turns_audit_and_the_sessions_rollup(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        session = await ctx.create_session(model="gpt-4", id="audited")
        first = await ctx.start_turn("audited", "Weather in Lisbon?")
        step = await ctx.post_step(
            "audited", first["turn_id"], [CALL], [{"tool_call_id": "c1", "content": "21C"}]
        )
        await ctx.complete_turn("audited", first["turn_id"], "21C.")
        with pytest.raises(BudgetExceeded):
            await ctx.start_turn("audited", words(7000))
        turn_rows = await ctx.list_audit(session_id="audited", turn_id=first["turn_id"])
        whole_turn = await ctx.turn_audit("audited", first["turn_id"])
        rejected = await ctx.list_audit(session_id="audited", overflow_rejected=True)
        one = await ctx.get_audit(step["audit_id"])
        page = await ctx.list_audit(session_id="audited", limit=1)
        older = await ctx.list_audit(session_id="audited", before_id=page["next_before_id"])
        rollup = await ctx.audit_rollup("audited")

    assert session["id"] == "audited"
    assert [(row["id"], row["step"]) for row in turn_rows["items"]] == [
        (step["audit_id"], 1),
        (first["audit_id"], 0),
    ]
    assert whole_turn == turn_rows["items"][::-1]
    assert [row["overflow_rejected"] for row in rejected["items"]] == [True]
    assert rejected["items"][0]["rejection"] is not None
    assert (one["id"], one["input_budget"]) == (step["audit_id"], 5530)
    assert one["estimated_input_tokens"] == step["budget"]["estimated_input_tokens"]
    assert len(page["items"]) + len(older["items"]) == 3
    assert (rollup["assemblies"], rollup["rejections"], rollup["turns"]) == (3, 1, 2)
    assert rollup["last_rejection_id"] == rejected["items"][0]["id"]


async def test_async_client_counts_tokens_as_a_turn_does_and_reads_the_model_table(
    apps: RunningApp,
) -> None:
    tool = {"type": "function", "function": {"name": "weather", "parameters": {}}}
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        await ctx.create_session(model="gpt-4o", id="counted")
        prompt = await ctx.start_turn("counted", "How many tokens is this?")
        counted = await ctx.count_tokens("gpt-4o", prompt["messages"])
        with_tools = await ctx.count_tokens("gpt-4o", prompt["messages"], tools=[tool])
        table = await ctx.models()
        dated = await ctx.model("gpt-4o-2024-08-06")

    assert counted["input_tokens"] == prompt["budget"]["estimated_input_tokens"]
    assert with_tools["breakdown"]["tools"] > 0
    assert with_tools["input_tokens"] > counted["input_tokens"]
    assert "gpt-4o" in {model["name"] for model in table["models"]}
    assert (dated["context_limit"], dated["source"]) == (128_000, "builtin")


async def test_async_client_lists_a_sessions_summary_jobs(apps: RunningApp) -> None:
    with serve_fake_chat() as chat:
        settings = {
            "summarizer": "llm",
            "summarizer_base_url": chat.url,
            "summarizer_model": "test-model",
            "summary_job_poll_seconds": 0.02,
        }
        app, _ = await apps.start(overrides=settings)
        async with AsyncContextd(
            "http://contextd.test", transport=httpx.ASGITransport(app=app)
        ) as ctx:
            await ctx.create_session(model="gpt-4", id="jobs")
            queued = None
            for number in range(12):
                prompt = await ctx.start_turn("jobs", f"Fact {number}. " + words(500, number))
                if prompt["actions"]["summary_queued"]:
                    queued = prompt
                    break
                await ctx.complete_turn("jobs", prompt["turn_id"], "Noted. " + words(250))
            listed = await ctx.summary_jobs("jobs")
            with pytest.raises(SessionNotFound):
                await ctx.summary_jobs("no-such-session")

    assert queued is not None
    assert [job["turn_id"] for job in listed["jobs"]] == [queued["turn_id"]]
    assert listed["jobs"][0]["reason"]
