"""A model provider on 127.0.0.1 that speaks both wire protocols, OpenAI Chat Completions
(``POST /v1/chat/completions``) and Anthropic Messages (``POST /v1/messages``), streamed and
not, and refuses what the real providers refuse:

* a prompt over the model's context window: OpenAI's 400 ``context_length_exceeded``,
  Anthropic's 400 ``invalid_request_error`` "prompt is too long: N tokens > M maximum";
* OpenAI: a ``tool`` message that answers no ``tool_calls`` of the assistant message before
  it, an assistant's tool call without its ``tool`` message;
* Anthropic: roles that do not alternate or start with ``user``, a ``tool_result`` without its
  ``tool_use`` in the previous message, a ``tool_use`` without its ``tool_result`` in the next,
  and with thinking on: an assistant turn with tool use that does not start with its thinking
  block, or a thinking block whose signature is not the one this provider gave (byte-exact);
* a missing or wrong provider key (401).

The "model" is scripted by the prompt alone: after the user speaks with tools offered it calls
``tool_rounds`` rounds of ``parallel_calls`` tools, then answers. Faults can be switched on
(``fault``): ``hang``, ``reset`` mid-stream, ``garbage`` 200 bodies, an ``overloaded`` status.

``python -m tests.fake_upstream --port 8091`` serves it until interrupted (benchmarks).
Event shapes follow openai-python's ``ChatCompletionChunk`` and anthropic-sdk-python's
``RawMessageStreamEvent`` types.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import tiktoken
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.servers import serve_in_thread

PROVIDER_KEY = "sk-fake-provider"
_ENCODING = tiktoken.get_encoding("cl100k_base")


def signature_of(thinking: str) -> str:
    """The signature this provider gives a thinking block (checked byte-exact)."""
    return "sig-" + hashlib.sha256(thinking.encode()).hexdigest()[:32]


def _strings(value: Any) -> Iterator[str]:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            pending.extend(
                v for k, v in item.items() if k not in ("signature", "type", "id", "tool_use_id")
            )
        elif isinstance(item, list):
            pending.extend(item)


def prompt_tokens(body: dict[str, Any]) -> int:
    """The prompt's size: its text in cl100k tokens, plus 4 per message."""
    text = list(_strings([body.get("system"), body.get("messages"), body.get("tools")]))
    return sum(len(_ENCODING.encode(t, disallowed_special=())) for t in text) + 4 * len(
        body.get("messages") or ()
    )


class Refused(Exception):
    def __init__(self, status: int, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass
class FakeUpstream:
    context_limit: int = 8192
    tool_rounds: int = 1
    parallel_calls: int = 1
    #: Characters of each tool call's argument padding (makes histories grow).
    answer_chars: int = 200
    #: None, "hang", "reset", "garbage", "overloaded": applied to the next ``fault_count`` calls.
    fault: str | None = None
    fault_count: int = 0
    #: Seconds between two streamed events.
    event_gap: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    url: str = ""
    _ids: Iterator[int] = field(default_factory=itertools.count)

    # -- the model -----------------------------------------------------------------------------

    def _rounds_since_user(self, messages: list[dict[str, Any]], anthropic: bool) -> int:
        rounds = 0
        for message in reversed(messages):
            if anthropic:
                content = message.get("content")
                is_result = (
                    message["role"] == "user"
                    and isinstance(content, list)
                    and any(b.get("type") == "tool_result" for b in content)
                )
                if message["role"] == "user" and not is_result:
                    break
                rounds += is_result
            else:
                if message["role"] == "user":
                    break
                rounds += message["role"] == "assistant" and bool(message.get("tool_calls"))
        return rounds

    def _plan(self, body: dict[str, Any], anthropic: bool) -> list[dict[str, Any]] | None:
        """The tool calls to make, or None to answer."""
        tools = body.get("tools") or []
        if not tools or self._rounds_since_user(body["messages"], anthropic) >= self.tool_rounds:
            return None
        calls = []
        for _ in range(self.parallel_calls):
            tool = tools[0]
            name = tool["name"] if anthropic else tool["function"]["name"]
            number = next(self._ids)
            calls.append(
                {
                    "id": f"{'toolu' if anthropic else 'call'}_{number:06d}",
                    "name": name,
                    "input": {"query": f"q{number}", "pad": "x" * (self.answer_chars // 4)},
                }
            )
        return calls

    def _text(self) -> str:
        return ("All done. " * (self.answer_chars // 9 + 1))[: self.answer_chars]

    # -- checks --------------------------------------------------------------------------------

    def _check_openai(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        if headers.get("authorization") != f"Bearer {PROVIDER_KEY}":
            raise Refused(401, "Incorrect API key provided.", code="invalid_api_key")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Refused(400, "Invalid 'messages': empty array.")
        expected: set[str] = set()
        for index, message in enumerate(messages):
            role = message.get("role")
            if role == "tool":
                if message.get("tool_call_id") not in expected:
                    raise Refused(
                        400,
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                    )
                expected.discard(message["tool_call_id"])
                continue
            if expected:
                raise Refused(
                    400,
                    "An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                    f"response messages: {', '.join(sorted(expected))} (messages[{index}])",
                )
            if role == "assistant" and message.get("tool_calls"):
                expected = {call["id"] for call in message["tool_calls"]}
            elif role not in ("system", "developer", "user", "assistant"):
                raise Refused(400, f"Invalid value: '{role}'.")
        if expected:
            raise Refused(400, f"tool_call_ids without response messages: {sorted(expected)}")
        tokens = prompt_tokens(body)
        if tokens > self.context_limit:
            raise Refused(
                400,
                f"This model's maximum context length is {self.context_limit} tokens. However, "
                f"your messages resulted in {tokens} tokens. Please reduce the length of the "
                "messages.",
                code="context_length_exceeded",
            )

    def _check_anthropic(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        # anthropic-sdk-python sends the key as a bearer token (``_client.py`` auth_headers);
        # the API also takes it as x-api-key.
        keys = {headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")}
        if PROVIDER_KEY not in keys:
            raise Refused(401, "invalid x-api-key")
        if not headers.get("anthropic-version"):
            raise Refused(400, "anthropic-version: header is required")
        if not isinstance(body.get("max_tokens"), int):
            raise Refused(400, "max_tokens: Field required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Refused(400, "messages: at least one message is required")
        if messages[0].get("role") != "user":
            raise Refused(400, 'messages: first message must use the "user" role')
        thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
        previous_calls: set[str] = set()
        for index, message in enumerate(messages):
            role = message.get("role")
            if index and messages[index - 1].get("role") == role:
                raise Refused(
                    400,
                    f'messages: roles must alternate between "user" and "assistant", but found '
                    f'multiple "{role}" roles in a row',
                )
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            if isinstance(content, list) and not content:
                raise Refused(400, f"messages.{index}: all messages must have non-empty content")
            results = {b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"}
            if role == "user":
                unexpected = results - previous_calls
                if unexpected:
                    raise Refused(
                        400,
                        f"messages.{index}.content.0: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {', '.join(sorted(unexpected))}. Each "
                        "`tool_result` block must have a corresponding `tool_use` block in the "
                        "previous message.",
                    )
                missing = previous_calls - results
                if missing:
                    raise Refused(
                        400,
                        f"messages.{index - 1}: `tool_use` ids were found without `tool_result` "
                        f"blocks immediately after: {', '.join(sorted(missing))}. Each `tool_use` "
                        "block must have a corresponding `tool_result` block in the next message.",
                    )
                previous_calls = set()
                for block in blocks:
                    if block.get("type") == "text" and not block.get("text"):
                        raise Refused(
                            400, f"messages.{index}: text content blocks must be non-empty"
                        )
                continue
            calls = [b for b in blocks if b.get("type") == "tool_use"]
            previous_calls = {b["id"] for b in calls}
            for block in blocks:
                if block.get("type") == "thinking" and block.get("signature") != signature_of(
                    block.get("thinking", "")
                ):
                    raise Refused(
                        400,
                        f"messages.{index}.content: Invalid `signature` in `thinking` block",
                    )
            if thinking_on and calls and index == _last_assistant(messages):
                first = blocks[0].get("type")
                if first not in ("thinking", "redacted_thinking"):
                    raise Refused(
                        400,
                        f"messages.{index}.content.0.type: Expected `thinking` or "
                        f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, "
                        "a final `assistant` message must start with a thinking block.",
                    )
        if previous_calls:
            raise Refused(400, "the last assistant message's tool_use blocks have no results")
        tokens = prompt_tokens(body)
        if tokens > self.context_limit:
            raise Refused(
                400, f"prompt is too long: {tokens} tokens > {self.context_limit} maximum"
            )

    # -- the endpoints -------------------------------------------------------------------------

    def _take_fault(self) -> str | None:
        if self.fault is None or self.fault_count <= 0:
            return None
        self.fault_count -= 1
        return self.fault

    async def _fault_response(self, fault: str | None, anthropic: bool) -> Response | None:
        if fault == "hang":
            await asyncio.sleep(3600)
        if fault == "garbage":
            return Response(b"<html>502 Bad Gateway</html>", media_type="application/json")
        if fault == "garbage_retry_after":
            # A gateway in front of the provider, asking for a wait in its own page.
            return Response(
                b"<html>Down for maintenance</html>",
                media_type="application/json",
                headers={"retry-after": "17"},
            )
        if fault == "overloaded":
            if anthropic:
                body = {
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": "Overloaded"},
                }
                return JSONResponse(body, status_code=529, headers={"request-id": "req_fake"})
            body = {
                "error": {
                    "message": "The server is overloaded",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
            return JSONResponse(body, status_code=503, headers={"x-request-id": "req_fake"})
        return None

    async def openai(self, request: Request) -> Response:
        body = await request.json()
        headers = dict(request.headers)
        self.requests.append(body)
        self.headers.append(headers)
        fault = self._take_fault()
        early = await self._fault_response(fault, anthropic=False)
        if early is not None:
            return early
        try:
            self._check_openai(body, headers)
        except Refused as refused:
            self.refusals.append(refused.message)
            error = {
                "message": refused.message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": refused.code,
            }
            return JSONResponse({"error": error}, status_code=refused.status)
        calls = self._plan(body, anthropic=False)
        tokens = prompt_tokens(body)
        usage = {
            "prompt_tokens": tokens,
            "completion_tokens": 20,
            "total_tokens": tokens + 20,
            "prompt_tokens_details": {"cached_tokens": 0},
        }
        created = int(time.time())
        ident = f"chatcmpl-{len(self.requests)}"
        tool_calls = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["input"])},
            }
            for c in calls or ()
        ]
        text = None if calls else self._text()
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
            if tool_calls:
                message["tool_calls"] = tool_calls
            return JSONResponse(
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "logprobs": None,
                            "finish_reason": "tool_calls" if calls else "stop",
                        }
                    ],
                    "usage": usage,
                },
                headers={"x-request-id": f"req_{ident}"},
            )

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body["model"],
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        if text is not None:
            events += [chunk({"content": text[i : i + 16]}) for i in range(0, len(text), 16)]
        for index, call in enumerate(tool_calls):
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            arguments = call["function"]["arguments"]
            for i in range(0, len(arguments), 24):
                events.append(
                    chunk(
                        {
                            "tool_calls": [
                                {"index": index, "function": {"arguments": arguments[i : i + 24]}}
                            ]
                        }
                    )
                )
        events.append(chunk({}, "tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**chunk({}), "choices": [], "usage": usage})
        lines = [f"data: {json.dumps(event)}\n\n".encode() for event in events]
        lines.append(b"data: [DONE]\n\n")
        return self._stream(lines, fault, {"x-request-id": f"req_{ident}"})

    async def anthropic(self, request: Request) -> Response:
        body = await request.json()
        headers = dict(request.headers)
        self.requests.append(body)
        self.headers.append(headers)
        fault = self._take_fault()
        early = await self._fault_response(fault, anthropic=True)
        if early is not None:
            return early
        try:
            self._check_anthropic(body, headers)
        except Refused as refused:
            self.refusals.append(refused.message)
            kind = "authentication_error" if refused.status == 401 else "invalid_request_error"
            return JSONResponse(
                {"type": "error", "error": {"type": kind, "message": refused.message}},
                status_code=refused.status,
                headers={"request-id": "req_refused"},
            )
        calls = self._plan(body, anthropic=True)
        ident = f"msg_{len(self.requests):06d}"
        thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
        content: list[dict[str, Any]] = []
        if thinking_on:
            thought = f"Thinking about step {ident} carefully."
            content.append(
                {"type": "thinking", "thinking": thought, "signature": signature_of(thought)}
            )
        if calls:
            content += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["input"]}
                for c in calls
            ]
        else:
            content.append({"type": "text", "text": self._text()})
        tokens = prompt_tokens(body)
        cached = min(tokens, 1024) if body.get("system") else 0
        usage = {
            "input_tokens": tokens - cached,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached,
            "output_tokens": 20,
        }
        stop = "tool_use" if calls else "end_turn"
        message = {
            "id": ident,
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return JSONResponse(message, headers={"request-id": f"req_{ident}"})
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(content):
            events += _block_events(index, block)
        message_delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
        events.append(("message_delta", message_delta))
        events.append(("message_stop", {"type": "message_stop"}))
        lines = [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]
        return self._stream(lines, fault, {"request-id": f"req_{ident}"})

    def _stream(self, lines: list[bytes], fault: str | None, headers: dict[str, str]) -> Response:
        gap = self.event_gap

        async def events() -> AsyncIterator[bytes]:
            for number, line in enumerate(lines):
                if fault == "reset" and number == len(lines) // 2:
                    raise ConnectionResetError("the fake upstream resets the stream")
                if gap:
                    await asyncio.sleep(gap)
                yield line

        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One content block as Anthropic streams it: start, deltas, stop."""
    kind = block["type"]
    if kind == "text":
        empty: dict[str, Any] = {"type": "text", "text": ""}
        text = block["text"]
        deltas = [{"type": "text_delta", "text": text[i : i + 16]} for i in range(0, len(text), 16)]
    elif kind == "thinking":
        empty = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]},
        ]
    else:
        empty = {**block, "input": {}}
        text = json.dumps(block["input"])
        deltas = [
            {"type": "input_json_delta", "partial_json": text[i : i + 24]}
            for i in range(0, len(text), 24)
        ]
    events = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        ),
    ]
    events += [
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        for delta in deltas
    ]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _last_assistant(messages: list[dict[str, Any]]) -> int:
    return max(i for i, m in enumerate(messages) if m.get("role") == "assistant")


def _app(upstream: FakeUpstream) -> Starlette:
    return Starlette(
        routes=[
            Route("/v1/chat/completions", upstream.openai, methods=["POST"]),
            Route("/v1/messages", upstream.anthropic, methods=["POST"]),
        ]
    )


@contextmanager
def serve_fake_upstream(**settings: Any) -> Iterator[FakeUpstream]:
    """A FakeUpstream on a free port of 127.0.0.1, in a thread of its own; ``url`` is its
    root (OpenAI's base URL is ``url + "/v1"``, Anthropic's ``url``)."""
    upstream = FakeUpstream(**settings)
    with serve_in_thread(_app(upstream), log_level="critical", force_exit=True) as url:
        upstream.url = url
        yield upstream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8091)
    arguments = parser.parse_args()
    uvicorn.run(_app(FakeUpstream()), host="127.0.0.1", port=arguments.port, log_level="warning")


if __name__ == "__main__":
    main()
