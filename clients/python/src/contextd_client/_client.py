"""The sync and async clients. What each method sends is built once (``_Request``); the two
clients differ only in how they send it and how they wait between attempts."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Self, cast

import httpx

try:
    from opentelemetry import propagate as _propagate
except ImportError:  # the agent does not trace: nothing to propagate
    _propagate = None  # type: ignore[assignment]

from contextd_client.errors import ApiError, ServiceUnreachable, error_class
from contextd_client.models import (
    AssistantContent,
    MessagePage,
    Prompt,
    PromptFormat,
    SearchResult,
    Session,
    SummaryList,
    ToolCall,
    ToolResult,
    TrimResult,
    TruncateResult,
    Turn,
    TurnStatus,
    Usage,
)

DEFAULT_URL = "http://127.0.0.1:8080"
_RETRIED_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class Retries:
    """How often and how long to retry a call that got no answer or a 502/503/504.

    Every write carries an ``Idempotency-Key`` that stays the same across its attempts, so a
    retried write whose first attempt did reach the service is answered from the first result
    and stores nothing twice. The wait doubles from ``backoff`` up to ``max_backoff``, with
    jitter, unless the service said how long (``Retry-After``)."""

    attempts: int = 4
    backoff: float = 0.25
    max_backoff: float = 8.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff)
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        return random.uniform(ceiling / 2, ceiling)


NO_RETRIES = Retries(attempts=1)


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Writes the service can replay: they get an Idempotency-Key, so they can be retried.
    idempotent_write: bool = False
    #: Calls that change nothing (the stateless toolkit), retried like reads.
    pure: bool = False


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {}
    code = str(error.get("code", "http_error"))
    details = error.get("details")
    return error_class(response.status_code, code)(
        response.status_code,
        code,
        str(error.get("message", response.text or response.reason_phrase)),
        details if isinstance(details, dict) else None,
        retry_after=_retry_after(response),
    )


def _result(response: httpx.Response) -> Any:
    if not response.is_success:
        raise _error(response)
    return None if response.status_code == 204 else response.json()


def _headers(idempotency_key: str | None) -> dict[str, str]:
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    if _propagate is not None:
        # An agent that traces with OpenTelemetry sees contextd's spans inside its own trace
        # (traceparent); without an active span this adds nothing.
        _propagate.inject(headers)
    return headers


def _should_retry(outcome: httpx.Response | Exception, request: _Request) -> bool:
    # PUT sets a value (the same twice is the same); PATCH and DELETE are not retried.
    retryable = request.method in {"GET", "PUT"} or request.idempotent_write or request.pure
    if not retryable:
        return False
    if isinstance(outcome, httpx.Response):
        return outcome.status_code in _RETRIED_STATUSES
    # A connect error never reached the service; a read timeout may have, which the
    # idempotency key makes safe.
    return isinstance(outcome, httpx.TransportError)


def _assistant(content: AssistantContent, reasoning_content: str | None) -> dict[str, Any]:
    """The assistant message of a step or completion: text or parts (thinking blocks go
    back as the model produced them), and an OpenAI-shaped model's reasoning."""
    assistant: dict[str, Any] = {
        "content": content if content is None or isinstance(content, str) else
        [dict(part) for part in content]
    }  # fmt: skip
    if reasoning_content is not None:
        assistant["reasoning_content"] = reasoning_content
    return assistant


class _Requests:
    """What each call sends."""

    @staticmethod
    def create_session(fields: Mapping[str, Any]) -> _Request:
        return _Request("POST", "/v1/sessions", dict(fields), idempotent_write=True)

    @staticmethod
    def start_turn(
        session_id: str, content: Any, name: str | None, prompt_format: PromptFormat
    ) -> _Request:
        message: dict[str, Any] = {"role": "user", "content": content}
        if name:
            message["name"] = name
        body: dict[str, Any] = {"message": message}
        if prompt_format != "openai":
            body["format"] = prompt_format
        return _Request("POST", f"/v1/sessions/{session_id}/turns", body, idempotent_write=True)

    @staticmethod
    def post_step(
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[ToolCall | Mapping[str, Any]],
        tool_results: Sequence[ToolResult | Mapping[str, Any]],
        content: AssistantContent,
        usage: Usage | Mapping[str, Any] | None,
        prompt_format: PromptFormat,
        reasoning_content: str | None = None,
    ) -> _Request:
        assistant = _assistant(content, reasoning_content)
        assistant["tool_calls"] = [dict(c) for c in tool_calls]
        body: dict[str, Any] = {
            "assistant": assistant,
            "tool_results": [dict(r) for r in tool_results],
        }
        if usage is not None:
            body["usage"] = dict(usage)
        if prompt_format != "openai":
            body["format"] = prompt_format
        return _Request(
            "POST",
            f"/v1/sessions/{session_id}/turns/{turn_id}/steps",
            body,
            idempotent_write=True,
        )

    @staticmethod
    def complete_turn(
        session_id: str,
        turn_id: str,
        content: AssistantContent,
        status: TurnStatus,
        usage: Usage | Mapping[str, Any] | None,
        reasoning_content: str | None = None,
    ) -> _Request:
        body: dict[str, Any] = {
            "assistant": _assistant(content, reasoning_content),
            "status": status,
        }
        if usage is not None:
            body["usage"] = dict(usage)
        return _Request(
            "POST",
            f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
            body,
            idempotent_write=True,
        )

    @staticmethod
    def messages(session_id: str, after_seq: int, limit: int, state: str | None) -> _Request:
        params: dict[str, Any] = {"after_seq": after_seq, "limit": limit}
        if state is not None:
            params["state"] = state
        return _Request("GET", f"/v1/sessions/{session_id}/messages", params=params)

    @staticmethod
    def search(session_id: str, query: str, limit: int) -> _Request:
        params = {"q": query, "limit": limit}
        return _Request("GET", f"/v1/sessions/{session_id}/search", params=params)

    @staticmethod
    def trim(model: str, messages: Sequence[Mapping[str, Any]], options: Any) -> _Request:
        body = {"model": model, "messages": [dict(m) for m in messages], **options}
        return _Request("POST", "/v1/context/trim", body, pure=True)

    @staticmethod
    def truncate(messages: Sequence[Mapping[str, Any]], keep: int) -> _Request:
        body = {"messages": [dict(m) for m in messages], "keep": keep}
        return _Request("POST", "/v1/context/truncate", body, pure=True)


def _client_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class Contextd:
    """The synchronous client.

    ``transport`` is httpx's: ``httpx.MockTransport`` or ``httpx.WSGITransport`` in tests;
    ``http_client`` replaces the whole httpx client (proxies, certificates, event hooks)."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: Retries = Retries(),
        transport: httpx.BaseTransport | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._http = http_client or httpx.Client(
            base_url=base_url,
            headers=_client_headers(api_key),
            timeout=timeout,
            transport=transport,
        )
        self.retries = retries

    def _send(self, request: _Request) -> Any:
        key = str(uuid.uuid4()) if request.idempotent_write else None
        for attempt in range(self.retries.attempts):
            last = attempt == self.retries.attempts - 1
            try:
                response = self._http.request(
                    request.method,
                    request.path,
                    json=request.json,
                    params=request.params,
                    headers=_headers(key),
                )
            except httpx.TransportError as error:
                if last or not _should_retry(error, request):
                    raise ServiceUnreachable(f"{request.method} {request.path}: {error}") from error
                time.sleep(self.retries.delay(attempt, None))
                continue
            if last or not _should_retry(response, request):
                return _result(response)
            time.sleep(self.retries.delay(attempt, _retry_after(response)))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def create_session(self, **fields: Any) -> Session:
        """Create a session: ``model`` is required; ``id``, ``system`` (a dict with the layers
        "global", "mode", "role"), ``goal``, ``mode``, ``metadata``, ``memory``, ``tools``,
        ``max_output_tokens``, ``context_limit``, ``block_caps`` are optional."""
        return cast(Session, self._send(_Requests.create_session(fields)))

    def get_session(self, session_id: str) -> Session:
        return cast(Session, self._send(_Request("GET", f"/v1/sessions/{session_id}")))

    def update_session(self, session_id: str, **fields: Any) -> Session:
        """Change a session's fields; ``None`` clears one."""
        request = _Request("PATCH", f"/v1/sessions/{session_id}", fields)
        return cast(Session, self._send(request))

    def delete_session(self, session_id: str) -> None:
        self._send(_Request("DELETE", f"/v1/sessions/{session_id}"))

    def set_memory(self, session_id: str, memory: str | None) -> Session:
        """Pin memory: shown after the goal, before the summary, in every prompt."""
        request = _Request("PUT", f"/v1/sessions/{session_id}/memory", {"memory": memory})
        return cast(Session, self._send(request))

    def start_turn(
        self,
        session_id: str,
        content: Any,
        *,
        name: str | None = None,
        prompt_format: PromptFormat = "openai",
    ) -> Prompt:
        """Start a turn with the user's message; returns the prompt for the LLM call."""
        request = _Requests.start_turn(session_id, content, name, prompt_format)
        return cast(Prompt, self._send(request))

    def post_step(
        self,
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[ToolCall | Mapping[str, Any]],
        tool_results: Sequence[ToolResult | Mapping[str, Any]],
        *,
        content: AssistantContent = None,
        reasoning_content: str | None = None,
        usage: Usage | Mapping[str, Any] | None = None,
        prompt_format: PromptFormat = "openai",
    ) -> Prompt:
        """The LLM's tool calls and every call's result; returns the next prompt.
        ``content`` may be a list of parts with the model's thinking blocks, sent back
        unchanged; ``reasoning_content`` is an OpenAI-shaped model's reasoning. A Claude
        agent may pass the response's content blocks as ``content`` (its ``tool_use`` blocks
        are the calls: ``tool_calls`` is then empty) and ``tool_result`` blocks as results."""
        request = _Requests.post_step(
            session_id, turn_id, tool_calls, tool_results, content, usage, prompt_format,
            reasoning_content,
        )  # fmt: skip
        return cast(Prompt, self._send(request))

    def complete_turn(
        self,
        session_id: str,
        turn_id: str,
        content: AssistantContent,
        *,
        status: TurnStatus = "completed",
        usage: Usage | Mapping[str, Any] | None = None,
        reasoning_content: str | None = None,
    ) -> Turn:
        """The LLM's answer closes the turn (``status="failed"`` when the call failed)."""
        request = _Requests.complete_turn(
            session_id, turn_id, content, status, usage, reasoning_content
        )
        return cast(Turn, self._send(request))

    def get_turn(self, session_id: str, turn_id: str) -> Turn:
        return cast(Turn, self._send(_Request("GET", f"/v1/sessions/{session_id}/turns/{turn_id}")))

    def messages(
        self, session_id: str, *, after_seq: int = 0, limit: int = 200, state: str | None = None
    ) -> MessagePage:
        """Stored messages with their state (active, summarised, pruned), a page at a time."""
        request = _Requests.messages(session_id, after_seq, limit, state)
        return cast(MessagePage, self._send(request))

    def summaries(self, session_id: str) -> SummaryList:
        request = _Request("GET", f"/v1/sessions/{session_id}/summaries")
        return cast(SummaryList, self._send(request))

    def search(self, session_id: str, query: str, *, limit: int = 10) -> SearchResult:
        """Messages of the session that say every word of ``query``, best first, whatever
        their state: what was summarised or pruned away is found too. Give it to the model as
        a tool to look up something said earlier (README: Search and recall)."""
        return cast(SearchResult, self._send(_Requests.search(session_id, query, limit)))

    def trim(self, model: str, messages: Sequence[Mapping[str, Any]], **options: Any) -> TrimResult:
        """Stateless trim; pass back ``trimmed_up_to_message_index`` on the next call."""
        return cast(TrimResult, self._send(_Requests.trim(model, messages, options)))

    def truncate(self, messages: Sequence[Mapping[str, Any]], *, keep: int = 10) -> TruncateResult:
        return cast(TruncateResult, self._send(_Requests.truncate(messages, keep)))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class AsyncContextd:
    """The asynchronous client: the same methods as :class:`Contextd`, awaitable."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: Retries = Retries(),
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._http = http_client or httpx.AsyncClient(
            base_url=base_url,
            headers=_client_headers(api_key),
            timeout=timeout,
            transport=transport,
        )
        self.retries = retries

    async def _send(self, request: _Request) -> Any:
        key = str(uuid.uuid4()) if request.idempotent_write else None
        for attempt in range(self.retries.attempts):
            last = attempt == self.retries.attempts - 1
            try:
                response = await self._http.request(
                    request.method,
                    request.path,
                    json=request.json,
                    params=request.params,
                    headers=_headers(key),
                )
            except httpx.TransportError as error:
                if last or not _should_retry(error, request):
                    raise ServiceUnreachable(f"{request.method} {request.path}: {error}") from error
                await asyncio.sleep(self.retries.delay(attempt, None))
                continue
            if last or not _should_retry(response, request):
                return _result(response)
            await asyncio.sleep(self.retries.delay(attempt, _retry_after(response)))
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def create_session(self, **fields: Any) -> Session:
        """Create a session (see :meth:`Contextd.create_session`)."""
        return cast(Session, await self._send(_Requests.create_session(fields)))

    async def get_session(self, session_id: str) -> Session:
        return cast(Session, await self._send(_Request("GET", f"/v1/sessions/{session_id}")))

    async def update_session(self, session_id: str, **fields: Any) -> Session:
        request = _Request("PATCH", f"/v1/sessions/{session_id}", fields)
        return cast(Session, await self._send(request))

    async def delete_session(self, session_id: str) -> None:
        await self._send(_Request("DELETE", f"/v1/sessions/{session_id}"))

    async def set_memory(self, session_id: str, memory: str | None) -> Session:
        request = _Request("PUT", f"/v1/sessions/{session_id}/memory", {"memory": memory})
        return cast(Session, await self._send(request))

    async def start_turn(
        self,
        session_id: str,
        content: Any,
        *,
        name: str | None = None,
        prompt_format: PromptFormat = "openai",
    ) -> Prompt:
        """Start a turn with the user's message; returns the prompt for the LLM call."""
        request = _Requests.start_turn(session_id, content, name, prompt_format)
        return cast(Prompt, await self._send(request))

    async def post_step(
        self,
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[ToolCall | Mapping[str, Any]],
        tool_results: Sequence[ToolResult | Mapping[str, Any]],
        *,
        content: AssistantContent = None,
        reasoning_content: str | None = None,
        usage: Usage | Mapping[str, Any] | None = None,
        prompt_format: PromptFormat = "openai",
    ) -> Prompt:
        """The LLM's tool calls and every call's result; returns the next prompt.
        ``content`` may be a list of parts with the model's thinking blocks, sent back
        unchanged; ``reasoning_content`` is an OpenAI-shaped model's reasoning. A Claude
        agent may pass the response's content blocks as ``content`` (its ``tool_use`` blocks
        are the calls: ``tool_calls`` is then empty) and ``tool_result`` blocks as results."""
        request = _Requests.post_step(
            session_id, turn_id, tool_calls, tool_results, content, usage, prompt_format,
            reasoning_content,
        )  # fmt: skip
        return cast(Prompt, await self._send(request))

    async def complete_turn(
        self,
        session_id: str,
        turn_id: str,
        content: AssistantContent,
        *,
        status: TurnStatus = "completed",
        usage: Usage | Mapping[str, Any] | None = None,
        reasoning_content: str | None = None,
    ) -> Turn:
        """The LLM's answer closes the turn."""
        request = _Requests.complete_turn(
            session_id, turn_id, content, status, usage, reasoning_content
        )
        return cast(Turn, await self._send(request))

    async def get_turn(self, session_id: str, turn_id: str) -> Turn:
        request = _Request("GET", f"/v1/sessions/{session_id}/turns/{turn_id}")
        return cast(Turn, await self._send(request))

    async def messages(
        self, session_id: str, *, after_seq: int = 0, limit: int = 200, state: str | None = None
    ) -> MessagePage:
        request = _Requests.messages(session_id, after_seq, limit, state)
        return cast(MessagePage, await self._send(request))

    async def summaries(self, session_id: str) -> SummaryList:
        request = _Request("GET", f"/v1/sessions/{session_id}/summaries")
        return cast(SummaryList, await self._send(request))

    async def search(self, session_id: str, query: str, *, limit: int = 10) -> SearchResult:
        request = _Requests.search(session_id, query, limit)
        return cast(SearchResult, await self._send(request))

    async def trim(
        self, model: str, messages: Sequence[Mapping[str, Any]], **options: Any
    ) -> TrimResult:
        return cast(TrimResult, await self._send(_Requests.trim(model, messages, options)))

    async def truncate(
        self, messages: Sequence[Mapping[str, Any]], *, keep: int = 10
    ) -> TruncateResult:
        return cast(TruncateResult, await self._send(_Requests.truncate(messages, keep)))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()
