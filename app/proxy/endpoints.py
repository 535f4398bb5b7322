"""``POST /v1/chat/completions`` and ``POST /v1/messages``: the provider's own request in, the
provider's own answer (or error) out, streamed or not (docs/drop-in.md).

With ``X-Contextd-Session`` the request is a call of that session (created from the request
when the id is new): its history is matched against the stored one, the prompt is assembled by
the turns service, forwarded, and the answer recorded. Without it, the request is fitted to the
model's budget and forwarded; nothing is stored.

contextd's own key travels in ``X-Contextd-Key``: ``Authorization`` and ``x-api-key`` are the
agent's provider credentials and go to the provider untouched.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.dependencies import caller_for_key
from app.auth.service import Caller, Scope
from app.budget.tokens import TokenCounter, count_message, count_tools, reply_priming
from app.budget.trim import normalise, trim_messages
from app.db import get_db
from app.errors import BudgetExceededError, ServiceError
from app.proxy.answer import Answer, StreamRecorder, answer_of_body
from app.proxy.conversation import (
    AssistantUnit,
    Conversation,
    ConversationError,
    Protocol,
    UserUnit,
    read_conversation,
)
from app.proxy.errors import ProxyError, context_length_error
from app.proxy.service import DropInService, Prepared, ReplayedRejection, chat_tools
from app.proxy.upstream import (
    forwarded_request_headers,
    returned_response_headers,
    upstream_client,
    upstream_retry_after,
    upstream_url,
)
from app.runtime import Runtime
from app.sessions.schemas import SESSION_ID_PATTERN
from app.tokens.budgets import resolve_budget

logger = logging.getLogger(__name__)

# Out of contextd's OpenAPI document: each takes and answers its provider's own protocol,
# whose reference is the provider's (docs/drop-in.md links them).
router = APIRouter(tags=["drop-in"], include_in_schema=False)

SESSION_HEADER = "x-contextd-session"
KEY_HEADER = "x-contextd-key"
_SESSION_ID = re.compile(SESSION_ID_PATTERN)
#: Response headers contextd adds (every one also on errors where it has the figure).
AUDIT_ID_HEADER = "x-contextd-audit-id"
OVERHEAD_HEADER = "x-contextd-overhead-duration-ms"

_unit_of_work = asynccontextmanager(get_db)

#: Stores the provider's answer once it is whole (nothing, without a session).
Recorder = Callable[[Answer], Awaitable[None]]


@router.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    """OpenAI Chat Completions, as the agent would send it to OpenAI (docs/drop-in.md)."""
    return await _handle(request, "openai")


@router.post("/v1/messages")
async def messages(request: Request) -> Response:
    """Anthropic Messages, as the agent would send it to Anthropic (docs/drop-in.md)."""
    return await _handle(request, "anthropic")


async def _handle(request: Request, protocol: Protocol) -> Response:
    started = time.perf_counter()
    try:
        body = await _json_body(request)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ProxyError(400, "invalid_request", "model: a model name is required")
        conversation = _conversation(protocol, body)
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is not None and not _SESSION_ID.match(session_id):
            raise ProxyError(
                400,
                "invalid_request",
                f"{SESSION_HEADER}: a session id is 1 to 128 letters, digits and . _ : -",
            )
        if session_id is None:
            return await _stateless(request, protocol, body, conversation, started)
        return await _in_session(request, protocol, body, conversation, session_id, started)
    except ProxyError as error:
        return error.response(protocol, {OVERHEAD_HEADER: _ms_since(started)})


def _conversation(protocol: Protocol, body: Mapping[str, Any]) -> Conversation:
    try:
        return read_conversation(protocol, body)
    except ConversationError as error:
        raise ProxyError(400, "invalid_request", str(error), param="messages") from error


def parse_json(raw: bytes) -> Any:
    """The body as ``json.loads`` reads it, by orjson when it can: several times faster on the
    whole conversation an agent resends with every call, which waits for it before its first
    byte. What orjson refuses (malformed JSON, and what json takes but orjson does not: NaN,
    integers past 64 bits, UTF-16) goes to json, whose answer, or error, stands."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = parse_json(await request.body())
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ProxyError(400, "invalid_request", f"the body is not JSON: {error}") from error
    if not isinstance(body, dict):
        raise ProxyError(400, "invalid_request", "the body must be a JSON object")
    return body


def _as_proxy_error(error: ServiceError, protocol: Protocol) -> ProxyError:
    if isinstance(error, BudgetExceededError):
        return context_length_error(protocol, dict(error.details or {}))
    # Providers answer a malformed request with 400, not 422.
    status = 400 if error.status_code == 422 else error.status_code
    return ProxyError(
        status, error.code, error.message, details=error.details, headers=error.headers
    )


async def _caller(request: Request, db: AsyncSession) -> Caller:
    caller = await caller_for_key(
        request, db, request.headers.get(KEY_HEADER), header="X-Contextd-Key:"
    )
    if Scope.AGENT not in caller.scopes:
        raise ProxyError(403, "forbidden_scope", "this API key lacks the agent scope")
    return caller


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def _client(request: Request) -> httpx.AsyncClient:
    """The process's upstream client, made on first use (closed with the app)."""
    client: httpx.AsyncClient | None = getattr(request.app.state, "upstream_client", None)
    if client is None:
        client = upstream_client(_runtime(request).settings)
        request.app.state.upstream_client = client
    return client


async def close_upstream_client(app: Any) -> None:
    """Close the upstream client when the app stops."""
    client: httpx.AsyncClient | None = getattr(app.state, "upstream_client", None)
    if client is not None:
        await client.aclose()


def _ms_since(started: float) -> str:
    return f"{(time.perf_counter() - started) * 1000:.2f}"


# -- with a session ---------------------------------------------------------------------------


async def _in_session(
    request: Request,
    protocol: Protocol,
    body: dict[str, Any],
    conversation: Conversation,
    session_id: str,
    started: float,
) -> Response:
    runtime = _runtime(request)
    try:
        async with _unit_of_work(request) as db:
            caller = await _caller(request, db)
            service = DropInService(db, tenant_id=caller.tenant_id, runtime=runtime)
            prepared = await service.prepare(
                session_id,
                protocol=protocol,
                path=request.url.path,
                body=body,
                raw_body=await request.body(),
                conversation=conversation,
            )
    except ServiceError as error:
        raise _as_proxy_error(error, protocol) from error
    except ReplayedRejection as error:
        raise context_length_error(protocol, error.details) from error
    except (ConversationError, ValueError) as error:
        raise ProxyError(400, "invalid_request", str(error), param="messages") from error
    runtime.metrics.drop_in_calls.labels(protocol, prepared.history).inc()
    headers = _assembly_headers(session_id, prepared)
    forward = _forward_body(protocol, body, prepared)

    async def record(answer: Answer) -> None:
        async with _unit_of_work(request) as db:
            service = DropInService(db, tenant_id=caller.tenant_id, runtime=runtime)
            await service.record(session_id, prepared.assembly, answer)

    return await _forward(request, protocol, forward, headers, started, record)


def _assembly_headers(session_id: str, prepared: Prepared) -> dict[str, str]:
    assembly, budget = prepared.assembly, prepared.assembly.budget
    return {
        "x-contextd-session": session_id,
        AUDIT_ID_HEADER: str(assembly.audit_id),
        "x-contextd-turn-id": assembly.turn_id,
        "x-contextd-step": str(assembly.step),
        "x-contextd-input-budget": str(budget.input_budget),
        "x-contextd-prompt-tokens": str(budget.estimated_input_tokens),
        "x-contextd-context-limit": str(budget.model_context_limit),
        "x-contextd-history": prepared.history,
        "x-contextd-summarised": str(assembly.actions.summary_triggered).lower(),
        "x-contextd-pruned": str(assembly.actions.prune_triggered).lower(),
    }


def _forward_body(
    protocol: Protocol, body: Mapping[str, Any], prepared: Prepared
) -> dict[str, Any]:
    """The agent's request with contextd's prompt in place of its messages (and system)."""
    forward = {**body, "messages": prepared.assembly.messages}
    if protocol == "anthropic":
        forward.pop("system", None)
        if prepared.assembly.system:
            forward["system"] = prepared.assembly.system
    return forward


# -- without a session ------------------------------------------------------------------------


async def _stateless(
    request: Request,
    protocol: Protocol,
    body: dict[str, Any],
    conversation: Conversation,
    started: float,
) -> Response:
    """Fit the request like ``/v1/context/trim`` (OpenAI) or check that it fits (Anthropic),
    and forward it; nothing is stored."""
    runtime = _runtime(request)
    try:
        async with _unit_of_work(request) as db:
            await _caller(request, db)
    except ServiceError as error:
        raise _as_proxy_error(error, protocol) from error
    try:
        resolved = resolve_budget(
            model=str(body["model"]),
            context_limit=None,
            max_output_tokens=None,
            settings=runtime.settings,
            tokenizers=runtime.tokenizers,
        )
    except ServiceError as error:
        raise _as_proxy_error(error, protocol) from error
    budget, counter = resolved.budget, resolved.counter
    tools = chat_tools(protocol, body.get("tools"))
    fixed = reply_priming(counter) + (count_tools(counter, tools) if tools else 0)
    forward = dict(body)
    headers = {"x-contextd-mode": "stateless", "x-contextd-input-budget": str(budget.input_budget)}
    if protocol == "openai":
        result = trim_messages(
            normalise([dict(m) for m in body["messages"]]),
            count_message=lambda message: count_message(counter, message),
            fixed_tokens=fixed,
            threshold_tokens=int(runtime.settings.prune_trigger_ratio * budget.input_budget),
            previous_index=0,
            keep_last_n_assistant=10,
        )
        forward["messages"] = result.messages
        tokens = result.tokens_after
    else:
        tokens = fixed + _anthropic_tokens(conversation, counter)
    headers["x-contextd-prompt-tokens"] = str(tokens)
    if tokens > budget.input_budget:
        raise context_length_error(
            protocol,
            {
                "estimated_input_tokens": tokens,
                "input_budget": budget.input_budget,
                "model_context_limit": budget.model_context_limit,
                "audit_id": None,
            },
        )

    runtime.metrics.drop_in_calls.labels(protocol, "stateless").inc()

    async def record(_: Answer) -> None:
        return None

    return await _forward(request, protocol, forward, headers, started, record)


def _anthropic_tokens(conversation: Conversation, counter: TokenCounter) -> int:
    """An estimate of an Anthropic request in chat terms: every unit's text, as messages."""
    total = count_message(counter, {"role": "system", "content": conversation.system or ""})
    for unit in conversation.units:
        if isinstance(unit, UserUnit):
            total += count_message(counter, {"role": "user", "content": unit.content})
        elif isinstance(unit, AssistantUnit):
            text = json.dumps(unit.message.get("content"), ensure_ascii=False)
            total += count_message(counter, {"role": "assistant", "content": text})
        else:
            text = json.dumps(list(unit.results), ensure_ascii=False)
            total += count_message(counter, {"role": "user", "content": text})
    return total


# -- forwarding -------------------------------------------------------------------------------


async def _forward(
    request: Request,
    protocol: Protocol,
    forward: dict[str, Any],
    headers: dict[str, str],
    started: float,
    record: Recorder,
) -> Response:
    settings = _runtime(request).settings
    url = upstream_url(settings, protocol, str(forward["model"]))
    client = _client(request)
    upstream_request = client.build_request(
        "POST",
        url,
        content=json.dumps(forward, ensure_ascii=False).encode(),
        headers={
            **forwarded_request_headers(dict(request.headers)),
            "content-type": "application/json",
        },
    )
    overhead = time.perf_counter() - started
    _runtime(request).metrics.drop_in_overhead.labels(protocol).observe(overhead)
    sent = time.perf_counter()
    try:
        response = await client.send(upstream_request, stream=True)
    except httpx.TimeoutException as error:
        raise _upstream_failed(f"the upstream did not answer in time ({error!r})") from error
    except httpx.HTTPError as error:
        raise ProxyError(
            503, "upstream_unavailable", f"the upstream cannot be reached: {error!r}"
        ) from error
    returned = returned_response_headers(response.headers)
    streamed = response.headers.get("content-type", "").startswith("text/event-stream")
    wait = upstream_retry_after(response.headers)
    if response.status_code >= 400 or not streamed:
        try:
            content = await response.aread()
        except httpx.HTTPError as error:
            raise _upstream_failed(f"the upstream's answer broke off: {error!r}", wait) from error
        finally:
            await response.aclose()
        upstream_seconds = time.perf_counter() - sent
        if response.status_code < 400:
            await _record_safely(record, _whole_answer(protocol, content, wait))
        overhead_ms = (time.perf_counter() - started - upstream_seconds) * 1000
        # An upstream error passes through as it came, status and body.
        return Response(
            content,
            status_code=response.status_code,
            headers={**returned, **headers, OVERHEAD_HEADER: f"{overhead_ms:.2f}"},
        )
    headers[OVERHEAD_HEADER] = f"{overhead * 1000:.2f}"
    return StreamingResponse(
        _relay(protocol, response, record),
        status_code=response.status_code,
        headers={**returned, **headers},
    )


def _upstream_failed(message: str, retry_after: str | None = None) -> ProxyError:
    """A 502 ``upstream_failed``: told to wait what the upstream said, when it said it."""
    headers = {"Retry-After": retry_after} if retry_after is not None else None
    return ProxyError(502, "upstream_failed", message, headers=headers)


def _whole_answer(protocol: Protocol, content: bytes, retry_after: str | None) -> Answer:
    try:
        answer = answer_of_body(protocol, json.loads(content))
    except ValueError:
        answer = None
    if answer is None:
        raise _upstream_failed(
            f"the upstream answered something that is not a {protocol} response", retry_after
        )
    return answer


async def _relay(
    protocol: Protocol, response: httpx.Response, record: Recorder
) -> AsyncIterator[bytes]:
    """The upstream's events as they come, each read by the recorder on its way; the answer
    recorded once the stream ended as the provider ends one."""
    recorder = StreamRecorder(protocol)
    try:
        async for chunk in response.aiter_bytes():
            recorder.feed(chunk)
            yield chunk
    except httpx.HTTPError as error:
        # The status line is sent: the failure goes to the SDK as the provider's own error
        # event, which it raises.
        logger.warning("upstream stream broke off: %r", error)
        recorder.broken = True
        yield _error_event(protocol, f"the upstream's stream broke off: {error!r}")
        return
    finally:
        await response.aclose()
    answer = recorder.answer()
    if answer is None:
        if not recorder.finished:
            yield _error_event(protocol, "the upstream's stream ended before its end")
        return
    await _record_safely(record, answer)


async def _record_safely(record: Recorder, answer: Answer) -> None:
    """Record an answer the agent gets either way: when it cannot be stored now (the database
    is away), the agent's next request brings it back and it is imported then."""
    try:
        await record(answer)
    except Exception:
        logger.exception("the provider's answer could not be recorded; it is imported later")


def _error_event(protocol: Protocol, message: str) -> bytes:
    error = ProxyError(502, "upstream_failed", message).body(protocol)
    if protocol == "anthropic":
        return f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    return f"data: {json.dumps(error)}\n\n".encode()
