"""Code that talks to contextd written once for sync and async callers.

An exchange is a generator: it yields each request (built by the clients' own call
definitions, ``_Api.<call>.build``) and receives its answer, or has the call's error thrown in.
:func:`run` drives it from synchronous code and :func:`arun` from a coroutine, each with
whichever client the caller was given: a :class:`Contextd` runs in a worker thread under
``arun``; an :class:`AsyncContextd` under ``run`` sends through a synchronous twin with the
same address, headers, timeout and retries (its own connections, never the event loop's).
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Generator
from typing import Any, Generic, ParamSpec, TypeVar, cast

import httpx

from contextd_client._client import AsyncContextd, Contextd, _Api, _Call, _Request
from contextd_client.errors import ContextdError, TurnNotFound, TurnNotOpen

_P = ParamSpec("_P")
_T = TypeVar("_T")

#: Yields requests, receives answers, returns the exchange's result.
Exchange = Generator[_Request, Any, _T]


def call(api_call: _Call[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> Exchange[_T]:
    """One call inside an exchange: ``answer = yield from call(_Api.get_session, "s1")``."""
    answer = yield api_call.build(*args, **kwargs)
    return cast(_T, answer)


def fail_turn(session_id: str, turn_id: str, content: str | None = None) -> Exchange[None]:
    """Close a turn that will get no answer as failed; one already closed stays as it is."""
    with contextlib.suppress(TurnNotOpen, TurnNotFound):
        yield from call(_Api.complete_turn, session_id, turn_id, content, status="failed")


class _Driver(Generic[_T]):
    """Steps an exchange: its next request, then the answer (or error) that request got."""

    def __init__(self, exchange: Exchange[_T]) -> None:
        self._exchange = exchange
        self._answer: Any = None
        self._error: ContextdError | None = None
        self.result: _T

    def next_request(self) -> _Request | None:
        """The next request to send; None when the exchange is over (``result`` is set)."""
        try:
            if self._error is not None:
                return self._exchange.throw(self._error)
            return self._exchange.send(self._answer)
        except StopIteration as done:
            self.result = cast(_T, done.value)
            return None

    def take(self, answer: Any, error: ContextdError | None) -> None:
        self._answer, self._error = answer, error


def run(client: Contextd | AsyncContextd, exchange: Exchange[_T]) -> _T:
    """Drive ``exchange`` to its end from synchronous code."""
    send = (client if isinstance(client, Contextd) else _sync_twin(client))._send
    driver = _Driver(exchange)
    while (request := driver.next_request()) is not None:
        driver.take(*_outcome(send, request))
    return driver.result


async def arun(client: Contextd | AsyncContextd, exchange: Exchange[_T]) -> _T:
    """Drive ``exchange`` to its end from a coroutine."""
    driver = _Driver(exchange)
    while (request := driver.next_request()) is not None:
        if isinstance(client, AsyncContextd):
            driver.take(*await _async_outcome(client, request))
        else:
            driver.take(*await asyncio.to_thread(_outcome, client._send, request))
    return driver.result


def _outcome(send: Callable[[_Request], Any], request: _Request) -> tuple[Any, Any]:
    try:
        return send(request), None
    except ContextdError as failure:
        return None, failure


async def _async_outcome(client: AsyncContextd, request: _Request) -> tuple[Any, Any]:
    try:
        return await client._send(request), None
    except ContextdError as failure:
        return None, failure


_twins: weakref.WeakKeyDictionary[AsyncContextd, Contextd] = weakref.WeakKeyDictionary()


def _sync_twin(client: AsyncContextd) -> Contextd:
    """A synchronous client to the same service as ``client``, made once per client."""
    twin = _twins.get(client)
    if twin is None:
        source = client._http
        http = httpx.Client(
            base_url=source.base_url, headers=source.headers, timeout=source.timeout
        )
        twin = Contextd(http_client=http, retries=client.retries)
        _twins[client] = twin
        weakref.finalize(client, http.close)
    return twin
