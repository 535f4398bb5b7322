"""The sync and async clients, from one definition.

Every API call is written once, as a function that builds the request it sends (``_Request``)
and declares the answer's type. ``_Call`` turns it into a method of both clients: read from a
:class:`Contextd` it sends and returns the answer; read from an :class:`AsyncContextd` it is a
coroutine function. The clients themselves only send and wait between attempts."""

from __future__ import annotations

import asyncio
import functools
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, ParamSpec, Self, TypeVar, overload

import httpx

try:
    from opentelemetry import propagate as _propagate
except ImportError:  # the agent does not trace: nothing to propagate
    _propagate = None  # type: ignore[assignment]

from contextd_client.errors import ApiError, ServiceUnreachable, error_class
from contextd_client.models import (
    AssistantContent,
    AuditEntry,
    AuditPage,
    AuditRollup,
    MessagePage,
    ModelInfo,
    ModelList,
    Prompt,
    PromptFormat,
    SearchResult,
    Session,
    SummaryJobList,
    SummaryList,
    TokenCount,
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
    #: The caller's own key for a write it may send again (else a new one per call).
    idempotency_key: str | None = None


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


class _Attempts:
    """The attempts of one call, without I/O: the arguments of each HTTP request, whether an
    outcome is retried and after how long, and the answer. Both clients drive it."""

    def __init__(self, retries: Retries, request: _Request) -> None:
        self._retries = retries
        self._request = request
        self._attempt = 0
        self._outcome: httpx.Response | Exception | None = None
        key = request.idempotency_key
        if key is None and request.idempotent_write:
            key = str(uuid.uuid4())
        #: The same for every attempt: a retried write keeps its Idempotency-Key.
        self.http_args: dict[str, Any] = {
            "method": request.method,
            "url": request.path,
            "json": request.json,
            "params": request.params,
            "headers": _headers(key),
        }

    def wait_after(self, outcome: httpx.Response | Exception) -> float | None:
        """Seconds to wait before the next attempt; None when ``outcome`` is final."""
        self._outcome = outcome
        if self._attempt >= self._retries.attempts - 1:
            return None
        if not _should_retry(outcome, self._request):
            return None
        retry_after = _retry_after(outcome) if isinstance(outcome, httpx.Response) else None
        self._attempt += 1
        return self._retries.delay(self._attempt - 1, retry_after)

    def answer(self) -> Any:
        """The final outcome's answer, or the error it stands for."""
        outcome, request = self._outcome, self._request
        if isinstance(outcome, httpx.Response):
            return _result(outcome)
        raise ServiceUnreachable(f"{request.method} {request.path}: {outcome}") from outcome


def _query(**params: Any) -> dict[str, Any]:
    """Query parameters: the ones given (None leaves one out), times as ISO 8601."""
    return {
        name: value.isoformat() if isinstance(value, datetime) else value
        for name, value in params.items()
        if value is not None
    }


def _turn_write(
    path: str,
    body: dict[str, Any],
    *,
    usage: Usage | Mapping[str, Any] | None = None,
    prompt_format: PromptFormat = "openai",
    idempotency_key: str | None = None,
) -> _Request:
    """A turn's start, step or completion: replayable, so it carries an Idempotency-Key."""
    if usage is not None:
        body["usage"] = dict(usage)
    if prompt_format != "openai":
        body["format"] = prompt_format
    return _Request("POST", path, body, idempotent_write=True, idempotency_key=idempotency_key)


_P = ParamSpec("_P")
_T = TypeVar("_T")


class _Call(Generic[_P, _T]):
    """One API call, defined once: by the function that builds its request (``_call``), or,
    for a call of several requests (pages, say), by an exchange (``_calls``): a generator that
    yields each request and receives its answer (``contextd_client._exchange``). Read from a
    :class:`Contextd` it is a method that returns the answer (``_T``); read from an
    :class:`AsyncContextd`, a coroutine function with the same parameters."""

    def __init__(
        self,
        definition: Callable[_P, Any],
        *,
        build: Callable[_P, _Request] | None = None,
        exchange: Callable[_P, Generator[_Request, Any, _T]] | None = None,
    ) -> None:
        self._definition = definition
        self._build = build
        self._exchange = exchange
        self.__doc__ = definition.__doc__

    def build(self, *args: _P.args, **kwargs: _P.kwargs) -> _Request:
        """The request this call sends, for code that sends it itself (``_exchange``)."""
        if self._build is None:
            raise TypeError(f"{self._definition.__name__} sends several requests")
        return self._build(*args, **kwargs)

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, client: Contextd, owner: type[Any]) -> Callable[_P, _T]: ...
    @overload
    def __get__(self, client: AsyncContextd, owner: type[Any]) -> Callable[_P, Awaitable[_T]]: ...
    def __get__(
        self, client: Contextd | AsyncContextd | None, owner: type[Any]
    ) -> Self | Callable[_P, Any]:
        if client is None:
            return self
        bound: Callable[_P, Any] = (
            functools.partial(self._send_async, client)
            if isinstance(client, AsyncContextd)
            else functools.partial(self._send, client)
        )
        return functools.wraps(self._definition)(bound)

    def _send(self, client: Contextd, *args: _P.args, **kwargs: _P.kwargs) -> Any:
        if self._build is not None:
            return client._send(self._build(*args, **kwargs))
        from contextd_client._exchange import run

        assert self._exchange is not None
        return run(client, self._exchange(*args, **kwargs))

    async def _send_async(self, client: AsyncContextd, *args: _P.args, **kwargs: _P.kwargs) -> Any:
        if self._build is not None:
            return await client._send(self._build(*args, **kwargs))
        from contextd_client._exchange import arun

        assert self._exchange is not None
        return await arun(client, self._exchange(*args, **kwargs))


def _call(answer: type[_T]) -> Callable[[Callable[_P, _Request]], _Call[_P, _T]]:
    """Declares a request builder as a method of both clients, answering ``answer``."""

    def declare(build: Callable[_P, _Request]) -> _Call[_P, _T]:
        return _Call(build, build=build)

    return declare


def _calls(exchange: Callable[_P, Generator[_Request, Any, _T]]) -> _Call[_P, _T]:
    """Declares an exchange (a call of several requests) as a method of both clients."""
    return _Call(exchange, exchange=exchange)


class _Api:
    """Every call of the API, as both clients have it. Each function builds the request its
    call sends (no ``self``: ``_Call`` binds it to the client it is read from)."""

    # Sessions.

    @_call(Session)
    def create_session(**fields: Any) -> _Request:
        """Create a session: ``model`` is required; ``id``, ``system`` (a dict with the layers
        "global", "mode", "role"), ``goal``, ``mode``, ``metadata``, ``memory``, ``tools``,
        ``max_output_tokens``, ``context_limit``, ``block_caps``, ``recall`` are optional."""
        return _Request("POST", "/v1/sessions", dict(fields), idempotent_write=True)

    @_call(Session)
    def get_session(session_id: str) -> _Request:
        """A session: its settings, its budget, its turn count and open turn."""
        return _Request("GET", f"/v1/sessions/{session_id}")

    @_call(Session)
    def update_session(session_id: str, **fields: Any) -> _Request:
        """Change a session's fields; ``None`` clears one."""
        return _Request("PATCH", f"/v1/sessions/{session_id}", fields)

    @_call(type(None))
    def delete_session(session_id: str) -> _Request:
        """Delete a session with everything stored for it."""
        return _Request("DELETE", f"/v1/sessions/{session_id}")

    @_call(Session)
    def set_memory(session_id: str, memory: str | None) -> _Request:
        """Pin memory: shown after the goal, before the summary, in every prompt."""
        return _Request("PUT", f"/v1/sessions/{session_id}/memory", {"memory": memory})

    # Turns.

    @_call(Prompt)
    def start_turn(
        session_id: str,
        content: Any,
        *,
        name: str | None = None,
        prompt_format: PromptFormat = "openai",
        idempotency_key: str | None = None,
    ) -> _Request:
        """Start a turn with the user's message; returns the prompt for the LLM call.

        Every write carries an ``Idempotency-Key`` (a new one per call unless
        ``idempotency_key`` gives one): the same key sent again within the service's window
        gets the first answer back and stores nothing twice, which lets a caller that lost
        track of a call (a crash, a retried graph node) repeat it safely."""
        message: dict[str, Any] = {"role": "user", "content": content}
        if name:
            message["name"] = name
        return _turn_write(
            f"/v1/sessions/{session_id}/turns",
            {"message": message},
            prompt_format=prompt_format,
            idempotency_key=idempotency_key,
        )

    @_call(Prompt)
    def post_step(
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[ToolCall | Mapping[str, Any]],
        tool_results: Sequence[ToolResult | Mapping[str, Any]],
        *,
        content: AssistantContent = None,
        reasoning_content: str | None = None,
        usage: Usage | Mapping[str, Any] | None = None,
        prompt_format: PromptFormat = "openai",
        idempotency_key: str | None = None,
    ) -> _Request:
        """The LLM's tool calls and every call's result; returns the next prompt.
        ``content`` may be a list of parts with the model's thinking blocks, sent back
        unchanged; ``reasoning_content`` is an OpenAI-shaped model's reasoning. A Claude
        agent may pass the response's content blocks as ``content`` (its ``tool_use`` blocks
        are the calls: ``tool_calls`` is then empty) and ``tool_result`` blocks as results."""
        assistant = _assistant(content, reasoning_content)
        assistant["tool_calls"] = [dict(call) for call in tool_calls]
        return _turn_write(
            f"/v1/sessions/{session_id}/turns/{turn_id}/steps",
            {"assistant": assistant, "tool_results": [dict(result) for result in tool_results]},
            usage=usage,
            prompt_format=prompt_format,
            idempotency_key=idempotency_key,
        )

    @_call(Turn)
    def complete_turn(
        session_id: str,
        turn_id: str,
        content: AssistantContent,
        *,
        status: TurnStatus = "completed",
        usage: Usage | Mapping[str, Any] | None = None,
        reasoning_content: str | None = None,
        idempotency_key: str | None = None,
    ) -> _Request:
        """The LLM's answer closes the turn (``status="failed"`` when the call failed)."""
        return _turn_write(
            f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
            {"assistant": _assistant(content, reasoning_content), "status": status},
            usage=usage,
            idempotency_key=idempotency_key,
        )

    @_call(Turn)
    def get_turn(session_id: str, turn_id: str) -> _Request:
        """A turn: its status, its steps, the answer and the usage reported for it."""
        return _Request("GET", f"/v1/sessions/{session_id}/turns/{turn_id}")

    # What a session stored.

    @_call(MessagePage)
    def messages(
        session_id: str, *, after_seq: int = 0, limit: int = 200, state: str | None = None
    ) -> _Request:
        """Stored messages with their state (active, summarised, pruned), a page at a time."""
        params = _query(after_seq=after_seq, limit=limit, state=state)
        return _Request("GET", f"/v1/sessions/{session_id}/messages", params=params)

    @_call(SummaryList)
    def summaries(session_id: str) -> _Request:
        """The session's summaries, newest first."""
        return _Request("GET", f"/v1/sessions/{session_id}/summaries")

    @_call(SummaryJobList)
    def summary_jobs(session_id: str, *, limit: int = 50) -> _Request:
        """The session's summary jobs (LLM summaries made off the request path), newest
        first: status, attempts, the failure if one failed."""
        params = _query(limit=limit)
        return _Request("GET", f"/v1/sessions/{session_id}/summary-jobs", params=params)

    @_call(SearchResult)
    def search(session_id: str, query: str, *, limit: int = 10) -> _Request:
        """Messages of the session that say every word of ``query``, best first, whatever
        their state: what was summarised or pruned away is found too. Give it to the model as
        a tool to look up something said earlier."""
        params = _query(q=query, limit=limit)
        return _Request("GET", f"/v1/sessions/{session_id}/search", params=params)

    # The audit (a key with the ops scope).

    @_call(AuditPage)
    def list_audit(
        *,
        session_id: str | None = None,
        turn_id: str | None = None,
        model: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        summary_triggered: bool | None = None,
        prune_triggered: bool | None = None,
        overflow_rejected: bool | None = None,
        summary_fallback: bool | None = None,
        estimator_fallback: bool | None = None,
        before_id: int | None = None,
        limit: int = 50,
    ) -> _Request:
        """Audit rows (one per assembly: a turn's start and each step), newest first; every
        filter given applies. ``turn_id`` gives one turn's assemblies. Page on with
        ``before_id=page["next_before_id"]``."""
        params = _query(
            session_id=session_id,
            turn_id=turn_id,
            model=model,
            since=since,
            until=until,
            summary_triggered=summary_triggered,
            prune_triggered=prune_triggered,
            overflow_rejected=overflow_rejected,
            summary_fallback=summary_fallback,
            estimator_fallback=estimator_fallback,
            before_id=before_id,
            limit=limit,
        )
        return _Request("GET", "/v1/audit", params=params)

    @_call(AuditEntry)
    def get_audit(audit_id: int) -> _Request:
        """One assembly (``prompt["audit_id"]``): its figures, its blocks, what it kept,
        summarised or pruned, and why it was rejected if it was."""
        return _Request("GET", f"/v1/audit/{audit_id}")

    @_calls
    def turn_audit(session_id: str, turn_id: str) -> Generator[_Request, Any, list[AuditEntry]]:
        """One turn's audit: every assembly of the turn (its start and each step, a rejected
        one included), oldest first, read page by page."""
        entries: list[AuditEntry] = []
        before_id: int | None = None
        while True:
            page: AuditPage = yield _Api.list_audit.build(
                session_id=session_id, turn_id=turn_id, before_id=before_id, limit=500
            )
            entries.extend(page["items"])
            before_id = page["next_before_id"]
            if before_id is None:
                return entries[::-1]

    @_call(AuditRollup)
    def audit_rollup(session_id: str) -> _Request:
        """One session's assemblies summed up: turns, tokens, policy events, latency."""
        return _Request("GET", "/v1/audit/rollup", params={"session_id": session_id})

    # Counting and the model table.

    @_call(TokenCount)
    def count_tokens(
        model: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> _Request:
        """A chat request's input tokens (messages and tool definitions) for ``model``,
        counted as a turn counts its prompt, with the calibration in force."""
        body = {
            "model": model,
            "messages": [dict(message) for message in messages],
            "tools": [dict(tool) for tool in tools],
        }
        return _Request("POST", "/v1/tokens/count", body, pure=True)

    @_call(ModelList)
    def models() -> _Request:
        """The model table: limits, how each model is counted, its calibration."""
        return _Request("GET", "/v1/models")

    @_call(ModelInfo)
    def model(name: str) -> _Request:
        """What a model name resolves to (an unknown name gets the defaults)."""
        return _Request("GET", f"/v1/models/{name}")

    # Stateless toolkit.

    @_call(TrimResult)
    def trim(model: str, messages: Sequence[Mapping[str, Any]], **options: Any) -> _Request:
        """Stateless trim; pass back ``trimmed_up_to_message_index`` on the next call."""
        body = {"model": model, "messages": [dict(message) for message in messages], **options}
        return _Request("POST", "/v1/context/trim", body, pure=True)

    @_call(TruncateResult)
    def truncate(messages: Sequence[Mapping[str, Any]], *, keep: int = 10) -> _Request:
        """The last ``keep`` messages, tool calls kept with their results."""
        body = {"messages": [dict(message) for message in messages], "keep": keep}
        return _Request("POST", "/v1/context/truncate", body, pure=True)


_HttpClient = TypeVar("_HttpClient", httpx.Client, httpx.AsyncClient)
_Transport = TypeVar("_Transport", httpx.BaseTransport, httpx.AsyncBaseTransport)


class _Client(_Api, Generic[_HttpClient, _Transport]):
    """What both clients are made with: where the service is, the key, the timeout, the
    retries, and httpx's transport or a whole httpx client of the matching kind."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: Retries = Retries(),
        transport: _Transport | None = None,
        http_client: _HttpClient | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http: _HttpClient = http_client or self._http_client(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )
        self.retries = retries

    @staticmethod
    def _http_client(**options: Any) -> _HttpClient:
        raise NotImplementedError


class Contextd(_Client[httpx.Client, httpx.BaseTransport]):
    """The synchronous client.

    ``transport`` is httpx's: ``httpx.MockTransport`` or ``httpx.WSGITransport`` in tests;
    ``http_client`` replaces the whole httpx client (proxies, certificates, event hooks)."""

    @staticmethod
    def _http_client(**options: Any) -> httpx.Client:
        return httpx.Client(**options)

    def _send(self, request: _Request) -> Any:
        attempts = _Attempts(self.retries, request)
        while True:
            wait = attempts.wait_after(self._attempt(attempts.http_args))
            if wait is None:
                return attempts.answer()
            time.sleep(wait)

    def _attempt(self, http_args: dict[str, Any]) -> httpx.Response | Exception:
        try:
            return self._http.request(**http_args)
        except httpx.TransportError as error:
            return error

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncContextd(_Client[httpx.AsyncClient, httpx.AsyncBaseTransport]):
    """The asynchronous client: the same calls as :class:`Contextd`, awaitable."""

    @staticmethod
    def _http_client(**options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(**options)

    async def _send(self, request: _Request) -> Any:
        attempts = _Attempts(self.retries, request)
        while True:
            wait = attempts.wait_after(await self._attempt(attempts.http_args))
            if wait is None:
                return attempts.answer()
            await asyncio.sleep(wait)

    async def _attempt(self, http_args: dict[str, Any]) -> httpx.Response | Exception:
        try:
            return await self._http.request(**http_args)
        except httpx.TransportError as error:
            return error

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
