"""The drop-in endpoints through the unmodified official SDKs (``openai``, ``anthropic``)
pointed at contextd, in front of a fake provider that speaks the real wire protocols and
refuses what the real providers refuse (tests/fake_upstream.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import anthropic
import httpx
import httpx2
import openai
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import RunningApp
from tests.fake_upstream import PROVIDER_KEY, FakeUpstream, prompt_tokens, serve_fake_upstream
from tests.support import words

TOOLS_OPENAI: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]
TOOLS_ANTHROPIC: list[Any] = [
    {
        "name": "search",
        "description": "Search the web.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
]
SYSTEM = "You are a careful research assistant."


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with serve_fake_upstream() as fake:
        yield fake


#: A Claude model with an 8k window, as an operator declares one in the models file.
MODELS_FILE = """
[models."claude-test"]
context_limit = 8192
max_output_tokens = 4096
encoding = "o200k_base"
safety_factor = 1.25
family = "anthropic"
"""


@pytest.fixture
async def proxy(apps: RunningApp, upstream: FakeUpstream, tmp_path: Path) -> FastAPI:
    models_file = tmp_path / "models.toml"
    models_file.write_text(MODELS_FILE, encoding="utf-8")
    app, _ = await apps.start(
        proxy_openai_base_url=f"{upstream.url}/v1",
        proxy_anthropic_base_url=upstream.url,
        proxy_read_timeout_seconds=2.0,
        models_file=models_file,
    )
    return app


@pytest.fixture
async def contextd(proxy: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=proxy), base_url="http://contextd.test"
    ) as client:
        yield client


def _transport_client(app: FastAPI) -> httpx2.AsyncClient:
    """The SDKs' own HTTP client (httpx2 in these releases), calling the app in process."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))


def openai_sdk(app: FastAPI, session: str | None, *, retries: int = 0) -> openai.AsyncOpenAI:
    """The two-line change: contextd's base URL, and the session as a default header."""
    return openai.AsyncOpenAI(
        api_key=PROVIDER_KEY,
        base_url="http://contextd.test/v1",
        default_headers={"X-Contextd-Session": session} if session else None,
        http_client=_transport_client(app),
        max_retries=retries,
    )


def anthropic_sdk(
    app: FastAPI, session: str | None, *, retries: int = 0
) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=PROVIDER_KEY,
        base_url="http://contextd.test",
        default_headers={"X-Contextd-Session": session} if session else None,
        http_client=_transport_client(app),
        max_retries=retries,
    )


async def _openai_turn(
    client: openai.AsyncOpenAI,
    messages: list[dict[str, Any]],
    user: str,
    *,
    stream: bool = False,
) -> int:
    """One user turn of a tool-using agent loop, as agents write it; returns the calls made."""
    messages.append({"role": "user", "content": user})
    calls = 0
    while True:
        if stream:
            message = await _streamed_openai_message(client, messages)
        else:
            completion = await client.chat.completions.create(
                model="gpt-4", messages=cast(Any, messages), tools=TOOLS_OPENAI, max_tokens=512
            )
            message = completion.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        if not message.get("tool_calls"):
            return calls
        for call in message["tool_calls"]:
            calls += 1
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": f"result of {call['id']}"}
            )


async def _streamed_openai_message(
    client: openai.AsyncOpenAI, messages: list[dict[str, Any]]
) -> dict[str, Any]:
    stream = await client.chat.completions.create(
        model="gpt-4",
        messages=cast(Any, messages),
        tools=TOOLS_OPENAI,
        max_tokens=512,
        stream=True,
        stream_options={"include_usage": True},
    )
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                text.append(choice.delta.content)
            for piece in choice.delta.tool_calls or ():
                empty = {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                call = calls.setdefault(piece.index, empty)
                if piece.id:
                    call["id"] = piece.id
                if piece.function and piece.function.name:
                    call["function"]["name"] = piece.function.name
                if piece.function and piece.function.arguments:
                    call["function"]["arguments"] += piece.function.arguments
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


async def _stored(contextd: httpx.AsyncClient, session: str) -> list[dict[str, Any]]:
    response = await contextd.get(f"/v1/sessions/{session}/messages", params={"limit": 1000})
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


async def _audit(contextd: httpx.AsyncClient, session: str) -> list[dict[str, Any]]:
    response = await contextd.get("/v1/audit", params={"session_id": session, "limit": 500})
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["items"]
    return rows


# -- OpenAI ------------------------------------------------------------------------------------


async def test_an_openai_tool_loop_is_stored_as_turns_and_steps(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-1")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]

    await _openai_turn(client, messages, "Find the capital of Portugal.")
    await _openai_turn(client, messages, "And its population?")

    stored = await _stored(contextd, "agent-1")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"] * 2
    assert stored[0]["content"] == "Find the capital of Portugal."
    assert stored[3]["content"] == messages[4]["content"]
    assert upstream.refusals == []
    # Every forwarded request is contextd's prompt: its system layer first.
    assert all(r["messages"][0]["role"] == "system" for r in upstream.requests)
    session = (await contextd.get("/v1/sessions/agent-1")).json()
    assert session["system"]["global"] == SYSTEM
    assert session["model"] == "gpt-4"


async def test_a_streamed_openai_answer_is_relayed_and_recorded(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-stream")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]

    calls = await _openai_turn(client, messages, "Look this up.", stream=True)

    assert calls == 1
    stored = await _stored(contextd, "agent-stream")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[1]["tool_calls"][0]["function"]["arguments"] == json.dumps(
        {"query": "q0", "pad": "x" * 50}
    )
    assert stored[-1]["content"] == messages[-1]["content"]
    assert upstream.refusals == []


async def test_the_response_headers_carry_the_audit_id_and_the_budget(
    proxy: FastAPI, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-headers")

    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
    )

    audit_id = raw.headers["x-contextd-audit-id"]
    row = (await contextd.get(f"/v1/audit/{audit_id}")).json()
    assert row["session_id"] == "agent-headers"
    assert int(raw.headers["x-contextd-input-budget"]) == row["input_budget"]
    assert int(raw.headers["x-contextd-prompt-tokens"]) == row["estimated_input_tokens"]
    assert raw.headers["x-contextd-history"] == "new"
    assert float(raw.headers["x-contextd-overhead-duration-ms"]) > 0
    assert raw.headers["x-request-id"].startswith("req_")  # the provider's own headers too


async def test_a_prompt_that_cannot_fit_is_openais_context_length_error(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-huge")

    with pytest.raises(openai.BadRequestError) as raised:
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": words(9000)}]
        )

    error = raised.value
    assert error.code == "context_length_exceeded"
    assert "maximum context length is 8192 tokens" in error.message
    body = error.body
    assert isinstance(body, dict)
    audit_id = body["contextd"]["audit_id"]
    row = (await contextd.get(f"/v1/audit/{audit_id}")).json()
    assert row["overflow_rejected"] is True
    assert row["block_telemetry"]["drop_in"] == {"history": "new", "imported_messages": 0}
    assert upstream.requests == []  # nothing went to the provider
    assert await _stored(contextd, "agent-huge") == []


async def test_an_upstream_error_passes_through_with_its_status_and_body(
    proxy: FastAPI, upstream: FakeUpstream
) -> None:
    upstream.fault, upstream.fault_count = "overloaded", 1
    client = openai_sdk(proxy, "agent-overloaded")

    with pytest.raises(openai.InternalServerError) as raised:
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
        )

    assert raised.value.status_code == 503
    assert raised.value.body == {
        "message": "The server is overloaded",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert raised.value.response.headers["x-request-id"] == "req_fake"


async def test_a_retry_after_an_upstream_failure_stores_nothing_twice(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "overloaded", 2
    client = openai_sdk(proxy, "agent-retry", retries=3)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]

    await _openai_turn(client, messages, "Find it.")

    stored = await _stored(contextd, "agent-retry")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert len(upstream.requests) == 4  # two refused, then the two calls of the turn
    audit = await _audit(contextd, "agent-retry")
    assert len(audit) == 2  # one assembly per call: the retries replayed the first


async def test_the_provider_key_passes_through_and_contextds_key_stays(
    apps: RunningApp, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    app, _ = await apps.start(
        proxy_openai_base_url=f"{upstream.url}/v1", proxy_anthropic_base_url=upstream.url
    )
    key = await apps.key("tenant-a")
    client = openai.AsyncOpenAI(
        api_key=PROVIDER_KEY,
        base_url="http://contextd.test/v1",
        default_headers={"X-Contextd-Session": "keyed", "X-Contextd-Key": key},
        http_client=_transport_client(app),
        max_retries=0,
    )

    await client.chat.completions.create(
        model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
    )

    sent = upstream.headers[-1]
    assert sent["authorization"] == f"Bearer {PROVIDER_KEY}"
    assert not any(name.startswith("x-contextd") for name in sent)


async def test_without_contextds_key_the_sdk_raises_an_authentication_error(
    apps: RunningApp, upstream: FakeUpstream
) -> None:
    app, _ = await apps.start(proxy_openai_base_url=f"{upstream.url}/v1")
    await apps.key("tenant-a")  # keys exist: the service is no longer open
    client = openai_sdk(app, "nokey")

    with pytest.raises(openai.AuthenticationError) as raised:
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
        )

    assert "X-Contextd-Key" in raised.value.message
    assert upstream.requests == []


# -- Anthropic ---------------------------------------------------------------------------------


async def _anthropic_turn(
    client: anthropic.AsyncAnthropic,
    messages: list[dict[str, Any]],
    user: str,
    *,
    stream: bool,
    thinking: bool = True,
) -> int:
    messages.append({"role": "user", "content": user})
    calls = 0
    extra: dict[str, Any] = (
        {"thinking": {"type": "enabled", "budget_tokens": 1024}} if thinking else {}
    )
    while True:
        message: Any
        if stream:
            async with client.messages.stream(
                model="claude-test",
                system=SYSTEM,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS_ANTHROPIC,
                max_tokens=2048,
                **extra,
            ) as events:
                message = await events.get_final_message()
        else:
            message = await client.messages.create(
                model="claude-test",
                system=SYSTEM,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS_ANTHROPIC,
                max_tokens=2048,
                **extra,
            )
        content = [block.model_dump(exclude_none=True) for block in message.content]
        messages.append({"role": "assistant", "content": content})
        uses = [block for block in content if block["type"] == "tool_use"]
        if not uses:
            return calls
        calls += len(uses)
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use["id"], "content": "found it"}
                    for use in uses
                ],
            }
        )


@pytest.mark.parametrize("stream", [False, True])
async def test_a_claude_agent_with_thinking_and_tools_sends_only_valid_requests(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient, stream: bool
) -> None:
    upstream.parallel_calls = 2
    client = anthropic_sdk(proxy, f"claude-{stream}")
    messages: list[dict[str, Any]] = []

    for question in ("What is the weather?", "And tomorrow?", "Thanks; and next week?"):
        await _anthropic_turn(client, messages, question, stream=stream)

    assert upstream.refusals == []
    stored = await _stored(contextd, f"claude-{stream}")
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "tool", "assistant"] * 3
    # The thinking blocks the provider signed went back to it byte-exact (it checks).
    thinking = [p for p in stored[1]["content"] if p["type"] == "thinking"]
    assert thinking == [b for b in messages[1]["content"] if b["type"] == "thinking"]
    last = upstream.requests[-1]
    assert last["system"][0]["text"].startswith(SYSTEM)


async def test_a_prompt_that_cannot_fit_is_anthropics_prompt_too_long(
    proxy: FastAPI, upstream: FakeUpstream
) -> None:
    client = anthropic_sdk(proxy, "claude-huge")

    with pytest.raises(anthropic.BadRequestError) as raised:
        await client.messages.create(
            model="claude-test",
            max_tokens=1024,
            messages=[{"role": "user", "content": words(9000)}],
        )

    assert raised.value.status_code == 400
    assert "prompt is too long" in raised.value.message
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["error"]["type"] == "invalid_request_error"
    assert body["contextd"]["audit_id"] > 0
    assert upstream.requests == []


# -- an upstream that fails ----------------------------------------------------------------------


async def test_a_stream_reset_midway_raises_in_the_sdk_and_its_retry_completes_the_turn(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "reset", 1
    upstream.tool_rounds = 0  # the model answers at once
    client = openai_sdk(proxy, "agent-reset")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Tell me."}]

    with pytest.raises(openai.APIError):
        await _streamed_openai_message(client, messages)
    # The agent retries the very same request: the assembly is replayed, not stored again.
    answer = await _streamed_openai_message(client, messages)

    stored = await _stored(contextd, "agent-reset")
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[1]["content"] == answer["content"]
    turn = (await contextd.get(f"/v1/sessions/agent-reset/turns/{stored[0]['turn_id']}")).json()
    assert turn["status"] == "completed"


async def test_an_upstream_that_hangs_is_a_502_with_retry_after(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "hang", 1
    client = openai_sdk(proxy, "agent-hang")

    with pytest.raises(openai.APIStatusError) as raised:
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
        )

    assert raised.value.status_code == 502
    assert raised.value.response.headers["retry-after"] == "2"
    assert raised.value.code == "upstream_failed"
    stored = await _stored(contextd, "agent-hang")
    assert [m["role"] for m in stored] == ["user"]  # the turn waits for its answer


async def test_a_502_tells_the_wait_the_upstream_asked_for(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "garbage_retry_after", 1
    client = openai_sdk(proxy, "agent-wait")

    with pytest.raises(openai.APIStatusError) as raised:
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "Hello"}]
        )

    assert raised.value.status_code == 502
    assert raised.value.code == "upstream_failed"
    assert raised.value.response.headers["retry-after"] == "17"


async def test_an_upstream_answering_garbage_is_a_502_and_stores_no_answer(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "garbage", 1
    client = anthropic_sdk(proxy, "claude-garbage")

    with pytest.raises(anthropic.APIStatusError) as raised:
        await client.messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "Hi"}]
        )

    assert raised.value.status_code == 502
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["error"]["type"] == "api_error"
    assert [m["role"] for m in await _stored(contextd, "claude-garbage")] == ["user"]


async def test_an_agent_that_moves_on_after_a_failure_closes_the_failed_turn(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.fault, upstream.fault_count = "overloaded", 1
    client = openai_sdk(proxy, "agent-moves-on")
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "First try"}]
        )

    await client.chat.completions.create(
        model="gpt-4", messages=[{"role": "user", "content": "Something else"}]
    )

    stored = await _stored(contextd, "agent-moves-on")
    assert [m["content"] for m in stored if m["role"] == "user"] == ["First try", "Something else"]
    first = stored[0]["turn_id"]
    turn = (await contextd.get(f"/v1/sessions/agent-moves-on/turns/{first}")).json()
    assert turn["status"] == "failed"


# -- history matching ------------------------------------------------------------------------------


async def test_a_new_session_takes_in_the_history_the_agent_already_has(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-import")
    history: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "My name is Ana."},
        {"role": "assistant", "content": "Hello Ana."},
        {"role": "user", "content": "Find flights."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "search", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "3 flights"},
        {"role": "assistant", "content": "I found 3 flights."},
        {"role": "user", "content": "Book the first."},
    ]  # fmt: skip

    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=cast(Any, history)
    )

    assert raw.headers["x-contextd-history"] == "imported"
    stored = await _stored(contextd, "agent-import")
    assert [m["role"] for m in stored] == [
        "user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert upstream.refusals == []
    row = (await contextd.get(f"/v1/audit/{raw.headers['x-contextd-audit-id']}")).json()
    assert row["block_telemetry"]["drop_in"] == {"history": "imported", "imported_messages": 6}


async def test_an_agent_that_trimmed_its_own_history_still_extends_the_session(
    proxy: FastAPI, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-trims")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    await _openai_turn(client, messages, "One")
    await _openai_turn(client, messages, "Two")

    kept = [messages[0], *messages[-2:], {"role": "user", "content": "Three"}]
    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=cast(Any, kept)
    )

    assert raw.headers["x-contextd-history"] == "extends"
    stored = await _stored(contextd, "agent-trims")
    assert [m["content"] for m in stored if m["role"] == "user"] == ["One", "Two", "Three"]
    # contextd's prompt still has the turns the agent dropped.
    prompt = (await contextd.get(f"/v1/audit/{raw.headers['x-contextd-audit-id']}")).json()
    assert len(prompt["kept_message_ids"]) == len(stored) - 1


async def test_an_edited_history_is_marked_diverged_and_nothing_stored_is_lost(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-edits")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    await _openai_turn(client, messages, "My budget is 500 euros.")
    before = await _stored(contextd, "agent-edits")

    edited = [
        messages[0],
        {"role": "user", "content": "My budget is 900 euros."},
        {"role": "assistant", "content": "Noted: 900 euros."},
        {"role": "user", "content": "What is my budget?"},
    ]
    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=cast(Any, edited)
    )

    assert raw.headers["x-contextd-history"] == "diverged"
    stored = await _stored(contextd, "agent-edits")
    assert stored[: len(before)] == before  # what was stored stays, as it was
    assert [m["content"] for m in stored[len(before) :] if m["role"] == "user"] == [
        "What is my budget?"
    ]
    row = (await contextd.get(f"/v1/audit/{raw.headers['x-contextd-audit-id']}")).json()
    assert row["block_telemetry"]["drop_in"] == {
        "history": "diverged",
        "sent_messages": 2,
        "unmatched_messages": 2,
    }
    assert upstream.refusals == []


async def test_metrics_count_drop_in_calls_by_how_the_history_matched(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "metered")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    await _openai_turn(client, messages, "My budget is 500 euros.")  # new, then extends
    await _openai_turn(client, messages, "And the hotel?")  # extends
    edited = [  # the agent rewrote its history: nothing stored is lost, the call diverged
        messages[0],
        {"role": "user", "content": "My budget is 900 euros."},
        {"role": "assistant", "content": "Noted: 900 euros."},
        {"role": "user", "content": "What is my budget?"},
    ]
    await client.chat.completions.create(model="gpt-4", messages=cast(Any, edited))
    await openai_sdk(proxy, None).chat.completions.create(
        model="gpt-4", messages=[{"role": "user", "content": "No session here."}]
    )

    families = {
        family.name: family
        for family in text_string_to_metric_families((await contextd.get("/metrics")).text)
    }
    calls = {
        sample.labels["history"]: sample.value
        for sample in families["context_drop_in_calls"].samples
        if sample.labels["protocol"] == "openai"
    }
    # One call per model request the agent made: the fake model answers each user turn
    # after one round of tool calls or none, so count the requests it saw.
    assert sum(calls.values()) == len(upstream.requests)
    assert calls["new"] == 1, calls
    assert calls["diverged"] == 1
    assert calls["stateless"] == 1
    assert calls["extends"] == len(upstream.requests) - 3
    overhead = {s.name: s.value for s in families["context_drop_in_overhead_seconds"].samples}
    assert overhead["context_drop_in_overhead_seconds_count"] == len(upstream.requests)


# -- stateless ---------------------------------------------------------------------------------


async def test_without_a_session_the_request_is_trimmed_to_fit_and_nothing_is_stored(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, None)
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(12):
        history += [
            {"role": "user", "content": f"Question {turn}"},
            {"role": "assistant", "content": words(600, seed=turn)},
        ]
    history.append({"role": "user", "content": "Last question"})

    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=cast(Any, history)
    )

    assert raw.headers["x-contextd-mode"] == "stateless"
    sent = upstream.requests[-1]["messages"]
    assert len(sent) == len(history)  # trimmed in place: every message still there
    assert any(m["content"] == "[trimmed]" for m in sent)
    assert int(raw.headers["x-contextd-prompt-tokens"]) <= int(
        raw.headers["x-contextd-input-budget"]
    )
    assert upstream.refusals == []
    assert (await contextd.get("/v1/audit")).json()["items"] == []  # no assembly, no audit


async def test_malformed_messages_are_the_providers_400_with_what_is_wrong(
    proxy: FastAPI, upstream: FakeUpstream
) -> None:
    client = anthropic_sdk(proxy, "claude-bad")

    with pytest.raises(anthropic.BadRequestError) as raised:
        await client.messages.create(
            model="claude-test",
            max_tokens=100,
            messages=cast(Any, [{"role": "user", "content": [{"type": "video", "url": "x"}]}]),
        )

    assert "messages[0].content[0] (video)" in raised.value.message
    assert upstream.requests == []


# -- images ----------------------------------------------------------------------------------------

#: A 1x1 PNG.
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def test_an_image_from_an_openai_agent_reaches_the_model_and_is_stored(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-image")
    url = f"data:image/png;base64,{PIXEL}"
    content = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": url}},
    ]

    await client.chat.completions.create(
        model="gpt-4", messages=[{"role": "user", "content": cast(Any, content)}]
    )

    sent = upstream.requests[-1]["messages"][-1]
    assert sent == {"role": "user", "content": content}
    assert (await _stored(contextd, "agent-image"))[0]["content"] == content


async def test_an_image_from_a_claude_agent_reaches_the_model_as_an_image_block(
    proxy: FastAPI, upstream: FakeUpstream
) -> None:
    client = anthropic_sdk(proxy, "claude-image")
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PIXEL},
    }

    await client.messages.create(
        model="claude-test",
        max_tokens=100,
        messages=cast(
            Any, [{"role": "user", "content": [{"type": "text", "text": "What?"}, image]}]
        ),
    )

    blocks = upstream.requests[-1]["messages"][-1]["content"]
    assert {"type": "text", "text": "What?"} in [
        {k: v for k, v in b.items() if k != "cache_control"} for b in blocks
    ]
    assert image in [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]
    assert upstream.refusals == []


async def test_the_providers_usage_reaches_each_assemblys_audit_row(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = anthropic_sdk(proxy, "claude-usage")
    messages: list[dict[str, Any]] = []

    await _anthropic_turn(client, messages, "Look it up.", stream=True)

    rows = sorted(await _audit(contextd, "claude-usage"), key=lambda row: row["step"])
    assert [row["step"] for row in rows] == [0, 1]
    # The fake serves up to 1024 prompt tokens from its cache when there is a system prompt:
    # the tool-calling answer's figure lands on step 0, the final answer's on step 1.
    served = [min(prompt_tokens(request), 1024) for request in upstream.requests]
    assert [row["cache_read_tokens"] for row in rows] == served


async def test_a_rejected_request_sent_again_is_rejected_again_without_a_second_audit_row(
    proxy: FastAPI, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-huge-again")
    request: dict[str, Any] = {
        "model": "gpt-4",
        "messages": [{"role": "user", "content": words(9000)}],
    }

    with pytest.raises(openai.BadRequestError) as first:
        await client.chat.completions.create(**request)
    with pytest.raises(openai.BadRequestError) as second:
        await client.chat.completions.create(**request)

    assert second.value.code == "context_length_exceeded"
    assert second.value.body == first.value.body
    assert len(await _audit(contextd, "agent-huge-again")) == 1


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"[1, 2]", b"[" * 100_000 + b"]" * 100_000, b'{"messages": []}'],
    ids=["not-json", "not-an-object", "too-deep", "no-model"],
)
async def test_a_body_that_is_no_request_is_a_400_in_the_providers_shape(
    contextd: httpx.AsyncClient, upstream: FakeUpstream, body: bytes
) -> None:
    response = await contextd.post(
        "/v1/chat/completions",
        content=body,
        headers={"content-type": "application/json", "X-Contextd-Session": "s"},
    )

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert upstream.requests == []


async def test_tool_results_on_a_turn_already_answered_start_that_turn_again(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.tool_rounds = 0  # the model answers without tools
    client = openai_sdk(proxy, "agent-rewinds")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    await _openai_turn(client, messages, "Check the weather.")
    # The agent replaces the answer by a tool call of its own, and sends its result.
    call = {"id": "call_own", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    rewound = [
        *messages[:-1],
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_own", "content": "sunny"},
    ]

    raw = await client.chat.completions.with_raw_response.create(
        model="gpt-4", messages=cast(Any, rewound)
    )

    assert raw.headers["x-contextd-history"] == "diverged"
    stored = await _stored(contextd, "agent-rewinds")
    assert [(m["role"], m["turn_seq"]) for m in stored] == [
        ("user", 1), ("assistant", 1), ("user", 2), ("assistant", 2), ("tool", 2), ("assistant", 2),
    ]  # fmt: skip
    assert stored[2]["content"] == "Check the weather."
    assert upstream.refusals == []


async def test_a_stateless_anthropic_request_goes_as_sent_when_it_fits(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = anthropic_sdk(proxy, None)
    messages: list[Any] = [{"role": "user", "content": "Hello"}]

    await client.messages.create(
        model="claude-test", max_tokens=100, system=SYSTEM, messages=messages
    )
    with pytest.raises(anthropic.BadRequestError) as raised:
        await client.messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": words(9000)}]
        )

    assert upstream.requests[0]["messages"] == messages
    assert upstream.requests[0]["system"] == SYSTEM
    assert len(upstream.requests) == 1
    assert "prompt is too long" in raised.value.message
    assert (await contextd.get("/v1/audit")).json()["items"] == []


async def test_two_first_calls_at_once_make_one_session_and_both_are_answered(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    client = openai_sdk(proxy, "agent-racing")

    answers = await asyncio.gather(
        *(
            client.chat.completions.create(
                model="gpt-4", messages=[{"role": "user", "content": f"Hello {number}"}]
            )
            for number in range(2)
        )
    )

    assert all(answer.choices[0].message.content for answer in answers)
    stored = await _stored(contextd, "agent-racing")
    assert sorted(m["content"] for m in stored if m["role"] == "user") == ["Hello 0", "Hello 1"]
    assert upstream.refusals == []
