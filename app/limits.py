"""What a request may bring (body size, enforced before anything reads the body; the depth
of free-form JSON), and what a client leaving early may not do (cut a request's work short)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_body

logger = logging.getLogger(__name__)

#: Free-form JSON (session metadata, provider usage) nested deeper than this is refused.
MAX_JSON_DEPTH = 16


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

        body_sent = False

        async def replay() -> Message:
            nonlocal body_sent
            if body_sent:
                return await receive()
            body_sent = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        message = f"the request body is over {self.max_bytes} bytes"
        body = json.dumps(error_body("payload_too_large", message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
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
