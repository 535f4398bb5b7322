"""Deprecated: the client is now its own distribution, ``contextd-client`` (import
``contextd_client``), which needs only httpx and cannot collide with an agent's own ``app``
package. This module keeps working for one release and warns on import.

A small Python client for contextd, sync and async, so agents need not write HTTP calls.

    from app.client import Contextd

    with Contextd("http://127.0.0.1:8080") as ctx:
        session = ctx.create_session(model="gpt-4o", system={"global": "You are terse."})
        prompt = ctx.start_turn(session["id"], "Find a hotel in Lisbon")
        reply = openai.chat.completions.create(model="gpt-4o", messages=prompt["messages"])
        ...
        ctx.complete_turn(session["id"], prompt["turn_id"], reply.choices[0].message.content)

``AsyncContextd`` has the same methods, awaitable. Errors raise :class:`ContextdError`
(:class:`BudgetExceeded` for ``context_budget_exceeded``) with the service's code and details.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import httpx

warnings.warn(
    "app.client is deprecated and goes away in the next release: pip install contextd-client "
    "and import contextd_client (the same Contextd and AsyncContextd, with typed errors and "
    "retries)",
    DeprecationWarning,
    stacklevel=2,
)

JSON = dict[str, Any]


class ContextdError(Exception):
    """An error answer from contextd: ``status``, the stable ``code``, ``message``, ``details``."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class BudgetExceeded(ContextdError):
    """The prompt cannot fit even after summarising and pruning; ``details`` has the figures."""


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)


def _result(response: httpx.Response) -> Any:
    if response.status_code == 204:
        return None
    body = response.json()
    if response.is_success:
        return body
    error = body.get("error", {}) if isinstance(body, dict) else {}
    kind = BudgetExceeded if error.get("code") == "context_budget_exceeded" else ContextdError
    raise kind(
        response.status_code,
        str(error.get("code", "http_error")),
        str(error.get("message", response.text)),
        error.get("details"),
    )


class _Calls:
    """What each method sends; the sync and async clients only differ in how they send it."""

    @staticmethod
    def create_session(fields: Mapping[str, Any]) -> _Call:
        return _Call("POST", "/v1/sessions", dict(fields))

    @staticmethod
    def start_turn(session_id: str, content: Any, name: str | None) -> _Call:
        message: JSON = {"role": "user", "content": content}
        if name:
            message["name"] = name
        return _Call("POST", f"/v1/sessions/{session_id}/turns", {"message": message})

    @staticmethod
    def post_step(
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[Mapping[str, Any]],
        tool_results: Sequence[Mapping[str, Any]],
        content: str | None,
        usage: Mapping[str, Any] | None,
    ) -> _Call:
        body: JSON = {
            "assistant": {"content": content, "tool_calls": list(tool_calls)},
            "tool_results": list(tool_results),
        }
        if usage is not None:
            body["usage"] = dict(usage)
        return _Call("POST", f"/v1/sessions/{session_id}/turns/{turn_id}/steps", body)

    @staticmethod
    def complete_turn(
        session_id: str,
        turn_id: str,
        content: str | None,
        status: str,
        usage: Mapping[str, Any] | None,
    ) -> _Call:
        body: JSON = {"assistant": {"content": content}, "status": status}
        if usage is not None:
            body["usage"] = dict(usage)
        return _Call("POST", f"/v1/sessions/{session_id}/turns/{turn_id}/complete", body)


class Contextd:
    """The synchronous client."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080",
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )

    def _send(self, call: _Call) -> Any:
        return _result(
            self._http.request(call.method, call.path, json=call.json, params=call.params)
        )

    def create_session(self, **fields: Any) -> JSON:
        """Create a session (``model`` required; ``system``, ``goal``, ``mode``, …)."""
        result: JSON = self._send(_Calls.create_session(fields))
        return result

    def get_session(self, session_id: str) -> JSON:
        result: JSON = self._send(_Call("GET", f"/v1/sessions/{session_id}"))
        return result

    def update_session(self, session_id: str, **fields: Any) -> JSON:
        result: JSON = self._send(_Call("PATCH", f"/v1/sessions/{session_id}", fields))
        return result

    def delete_session(self, session_id: str) -> None:
        self._send(_Call("DELETE", f"/v1/sessions/{session_id}"))

    def start_turn(self, session_id: str, content: Any, *, name: str | None = None) -> JSON:
        """Start a turn with the user's message; returns the prompt for the LLM."""
        result: JSON = self._send(_Calls.start_turn(session_id, content, name))
        return result

    def post_step(
        self,
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[Mapping[str, Any]],
        tool_results: Sequence[Mapping[str, Any]],
        *,
        content: str | None = None,
        usage: Mapping[str, Any] | None = None,
    ) -> JSON:
        """The LLM's tool calls and their results; returns the next prompt."""
        result: JSON = self._send(
            _Calls.post_step(session_id, turn_id, tool_calls, tool_results, content, usage)
        )
        return result

    def complete_turn(
        self,
        session_id: str,
        turn_id: str,
        content: str | None,
        *,
        status: str = "completed",
        usage: Mapping[str, Any] | None = None,
    ) -> JSON:
        result: JSON = self._send(_Calls.complete_turn(session_id, turn_id, content, status, usage))
        return result

    def messages(self, session_id: str, *, after_seq: int = 0, limit: int = 200) -> JSON:
        result: JSON = self._send(
            _Call(
                "GET",
                f"/v1/sessions/{session_id}/messages",
                params={"after_seq": after_seq, "limit": limit},
            )
        )
        return result

    def summaries(self, session_id: str) -> JSON:
        result: JSON = self._send(_Call("GET", f"/v1/sessions/{session_id}/summaries"))
        return result

    def trim(self, model: str, messages: Sequence[Mapping[str, Any]], **options: Any) -> JSON:
        """Stateless trim; pass back ``trimmed_up_to_message_index`` on the next call."""
        result: JSON = self._send(
            _Call(
                "POST", "/v1/context/trim", {"model": model, "messages": list(messages), **options}
            )
        )
        return result

    def truncate(self, messages: Sequence[Mapping[str, Any]], *, keep: int = 10) -> JSON:
        result: JSON = self._send(
            _Call("POST", "/v1/context/truncate", {"messages": list(messages), "keep": keep})
        )
        return result

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
        base_url: str = "http://127.0.0.1:8080",
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )

    async def _send(self, call: _Call) -> Any:
        return _result(
            await self._http.request(call.method, call.path, json=call.json, params=call.params)
        )

    async def create_session(self, **fields: Any) -> JSON:
        result: JSON = await self._send(_Calls.create_session(fields))
        return result

    async def get_session(self, session_id: str) -> JSON:
        result: JSON = await self._send(_Call("GET", f"/v1/sessions/{session_id}"))
        return result

    async def update_session(self, session_id: str, **fields: Any) -> JSON:
        result: JSON = await self._send(_Call("PATCH", f"/v1/sessions/{session_id}", fields))
        return result

    async def delete_session(self, session_id: str) -> None:
        await self._send(_Call("DELETE", f"/v1/sessions/{session_id}"))

    async def start_turn(self, session_id: str, content: Any, *, name: str | None = None) -> JSON:
        result: JSON = await self._send(_Calls.start_turn(session_id, content, name))
        return result

    async def post_step(
        self,
        session_id: str,
        turn_id: str,
        tool_calls: Sequence[Mapping[str, Any]],
        tool_results: Sequence[Mapping[str, Any]],
        *,
        content: str | None = None,
        usage: Mapping[str, Any] | None = None,
    ) -> JSON:
        result: JSON = await self._send(
            _Calls.post_step(session_id, turn_id, tool_calls, tool_results, content, usage)
        )
        return result

    async def complete_turn(
        self,
        session_id: str,
        turn_id: str,
        content: str | None,
        *,
        status: str = "completed",
        usage: Mapping[str, Any] | None = None,
    ) -> JSON:
        result: JSON = await self._send(
            _Calls.complete_turn(session_id, turn_id, content, status, usage)
        )
        return result

    async def messages(self, session_id: str, *, after_seq: int = 0, limit: int = 200) -> JSON:
        result: JSON = await self._send(
            _Call(
                "GET",
                f"/v1/sessions/{session_id}/messages",
                params={"after_seq": after_seq, "limit": limit},
            )
        )
        return result

    async def summaries(self, session_id: str) -> JSON:
        result: JSON = await self._send(_Call("GET", f"/v1/sessions/{session_id}/summaries"))
        return result

    async def trim(self, model: str, messages: Sequence[Mapping[str, Any]], **options: Any) -> JSON:
        result: JSON = await self._send(
            _Call(
                "POST", "/v1/context/trim", {"model": model, "messages": list(messages), **options}
            )
        )
        return result

    async def truncate(self, messages: Sequence[Mapping[str, Any]], *, keep: int = 10) -> JSON:
        result: JSON = await self._send(
            _Call("POST", "/v1/context/truncate", {"messages": list(messages), "keep": keep})
        )
        return result

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
