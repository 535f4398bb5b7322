"""The request body size limit, enforced before anything reads the body."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import error_body


class BodySizeLimit:
    """413 ``payload_too_large`` for a body over ``max_bytes``: at once when Content-Length
    says so, otherwise as soon as the streamed body passes the limit (chunked uploads)."""

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

        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # Raised inside the app's read of the body: its error handler renders it.
                    raise HTTPException(413, self._too_large)
            return message

        await self.app(scope, limited_receive, send)

    @property
    def _too_large(self) -> str:
        return f"the request body is over {self.max_bytes} bytes"

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(error_body("payload_too_large", self._too_large)).encode()
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
