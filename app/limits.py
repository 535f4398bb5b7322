"""What a request may bring (body size, enforced before anything reads the body; the depth
of free-form JSON), and what a client leaving early may not do (cut a request's work short)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_body

logger = logging.getLogger(__name__)

#: Free-form JSON (session metadata, provider usage) nested deeper than this is refused.
MAX_JSON_DEPTH = 16


def lone_surrogate(body: bytes) -> bool:
    """Whether a JSON ``body`` holds a string with half of a UTF-16 surrogate pair
    (``"\\ud800"``): Python's ``json`` reads it into a ``str`` that no UTF-8 text can hold, so
    it could be stored and then fail every answer that shows it. A pair (an emoji written
    ``"\\ud83d\\ude00"``, as ``json.dumps`` escapes by default) is fine.

    Only a body with a surrogate's escape in it at all is read: by orjson (about a millisecond
    a megabyte), which refuses every lone half and nothing else of the kind; where orjson
    refuses the body for another reason first (``NaN``, an integer past 64 bits, which the
    app's own parser takes), by ``json`` as the app reads it, and every string written back
    as UTF-8."""
    if b"\\ud" not in body and b"\\uD" not in body:
        return False
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as error:
        if "surrogate" in str(error):
            return True
    else:
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return False  # not JSON: the route says why, in its words
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    return False


def json_depth(value: Any) -> int:
    """How deeply a parsed JSON value nests (a scalar is 0, ``[]`` is 1)."""
    depth, level = 0, [(value, 0)]
    while level:
        item, at = level.pop()
        if isinstance(item, dict | list):
            depth = max(depth, at + 1)
            level.extend(
                (child, at + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return depth


def shallow_json(value: Any) -> Any:
    """A pydantic validator: refuse free-form JSON nested past ``MAX_JSON_DEPTH``."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return value


class BodySizeLimit:
    """413 ``payload_too_large`` for a body over ``max_bytes``: at once when Content-Length
    says so, otherwise as soon as the streamed body passes the limit (chunked uploads).

    The body is read here, up to the limit, before the app runs (the app would read it all
    anyway): a refusal then needs no cooperation from whatever reads it later."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(send)
            return

        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before sending its body: nobody to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break

        whole = b"".join(chunks)
        if lone_surrogate(whole):
            await self._refuse_surrogate(send)
            return
        body_sent = False

        async def replay() -> Message:
            nonlocal body_sent
            if body_sent:
                return await receive()
            body_sent = True
            return {"type": "http.request", "body": whole, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes"
        await _answer(send, 413, error_body("payload_too_large", message), close=True)

    async def _refuse_surrogate(self, send: Send) -> None:
        message = (
            "the request is malformed: a string holds half of a UTF-16 surrogate pair (an "
            "escape from \\ud800 to \\udfff without its other half), which no UTF-8 text can hold"
        )
        await _answer(send, 422, error_body("invalid_request", message), close=False)


async def _answer(send: Send, status: int, content: dict[str, Any], *, close: bool) -> None:
    body = json.dumps(content).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class FinishDespiteHangUp:
    """Runs each request to its end even when whatever runs the app cancels it (a server or a
    client transport when the client hangs up, a middleware that cancels on disconnect): a
    cancelled database call can leave a connection, and on SQLite the database's write lock,
    in an unknown state. The request's unit of work therefore always commits or rolls back as
    a whole; only its answer goes unheard.

    The cost is a task per request (some 15 µs): shielding work from its caller's
    cancellation needs the work to run in a task of its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._unheard: set[asyncio.Task[None]] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = asyncio.ensure_future(self.app(scope, receive, send))
        try:
            await asyncio.shield(request)
        except asyncio.CancelledError:
            self._unheard.add(request)
            request.add_done_callback(self._finished_unheard)
            raise

    def _finished_unheard(self, request: asyncio.Task[None]) -> None:
        self._unheard.discard(request)
        if not request.cancelled() and request.exception() is not None:
            logger.info("a request finished after its client left: %r", request.exception())
