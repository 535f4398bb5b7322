"""Structured logs: one JSON object per line (or readable text), each carrying the context of
the request it belongs to (request id, tenant, session, turn), and one line per request.

The formatter is ours rather than python-json-logger's: it is thirty lines, and it adds the
request context from a context variable, which that library would need an adapter for.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "X-Request-ID"
# A caller's request id is kept when it is a plain token; anything else (too long, spaces,
# control characters that could forge log lines) is replaced by one of ours.
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
# Scrapes and probes arrive every few seconds: logged at debug, not info.
_QUIET_ROUTES = frozenset({"/metrics", "/healthz", "/readyz"})

#: The current request's fields, added to every log line written while it is served.
_request_context: ContextVar[dict[str, Any] | None] = ContextVar("request_context", default=None)

# Attributes every LogRecord has; anything else on a record came from ``extra=`` (except
# uvicorn's copy of its message with terminal colour codes).
_RECORD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys()
    | {"message", "asctime", "color_message"}
)

request_logger = logging.getLogger("contextd.request")


def bind_request(**fields: Any) -> None:
    """Add fields to the current request's log context (nothing happens outside a request)."""
    context = _request_context.get()
    if context is not None:
        context.update({key: value for key, value in fields.items() if value is not None})


def request_context() -> dict[str, Any]:
    """A copy of the current request's log context (empty outside a request)."""
    return dict(_request_context.get() or {})


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    """The request context, then the record's ``extra`` fields."""
    fields = request_context()
    fields.update(
        (key, value) for key, value in record.__dict__.items() if key not in _RECORD_ATTRIBUTES
    )
    return fields


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, context, extras, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **_fields(record),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time level logger message key=value …`` for people reading a terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        pairs = " ".join(
            f"{key}={json.dumps(value, default=str, ensure_ascii=False)}"
            if not isinstance(value, str) or " " in value
            else f"{key}={value}"
            for key, value in _fields(record).items()
        )
        if not pairs:
            return line
        head, newline, rest = line.partition("\n")
        return f"{head} {pairs}{newline}{rest}"


def configure_logging(*, level: str, log_format: Literal["json", "text"]) -> None:
    """Route every logger (uvicorn's included) through one handler on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    # contextd writes one line per request itself, with more in it.
    logging.getLogger("uvicorn.access").disabled = True
    logging.getLogger("alembic").setLevel(max(logging.WARNING, root.level))


#: Told of every answered request: method, route template, status and seconds taken.
RequestObserver = Callable[[str, str, int, float], None]

_REQUEST_ID_KEY = REQUEST_ID_HEADER.lower().encode()


class RequestLogging:
    """ASGI middleware: give every request an id (the caller's ``X-Request-ID`` if it is a
    plain token), echo it in the response, log one line per request when it is answered, and
    tell ``observe`` (the metrics) about it.

    Plain ASGI rather than ``BaseHTTPMiddleware``, which runs the app in a task of its own
    behind memory streams, at a cost every request paid. One middleware for the line and the
    metrics: both need the same route, status and time."""

    def __init__(self, app: ASGIApp, *, observe: RequestObserver | None = None) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        offered = next(
            (value for name, value in scope["headers"] if name == _REQUEST_ID_KEY), b""
        ).decode("latin-1")
        request_id = offered if _REQUEST_ID.match(offered) else uuid.uuid4().hex
        echoed = (_REQUEST_ID_KEY, request_id.encode())
        token = _request_context.set({"request_id": request_id})
        started = time.perf_counter()
        # What an exception or a cancellation before the answer leaves: a server error.
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers", ())
                # A provider's answer relayed by the drop-in endpoints keeps its own request id
                # (the SDKs read it as the provider's).
                if not any(name.lower() == _REQUEST_ID_KEY for name, _ in headers):
                    message = {**message, "headers": [*headers, echoed]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self._answered(scope, status, time.perf_counter() - started)
            _request_context.reset(token)

    def _answered(self, scope: Scope, status: int, seconds: float) -> None:
        path_params = scope.get("path_params", {})
        bind_request(session=path_params.get("session_id"), turn=path_params.get("turn_id"))
        # The route template, never the raw path: a bounded label, and ids stay out of it.
        route = str(getattr(scope.get("route"), "path", "unmatched"))
        method: str = scope["method"]
        level = logging.DEBUG if route in _QUIET_ROUTES else logging.INFO
        if request_logger.isEnabledFor(level):
            # The record made directly: ``Logger.log`` would first walk the stack for the
            # caller's file and line, which no format of ours shows, on every request.
            record = request_logger.makeRecord(
                request_logger.name,
                level,
                __file__,
                0,
                "%s %s %d",
                (method, route, status),
                None,
                extra={
                    "method": method,
                    "route": route,
                    "status": status,
                    "latency_ms": round(seconds * 1000, 3),
                },
            )
            request_logger.handle(record)
        if self.observe is not None:
            self.observe(method, route, status, seconds)


def install_request_logging(app: FastAPI, *, observe: RequestObserver | None = None) -> None:
    """Log (and, with ``observe``, measure) every request: see :class:`RequestLogging`."""
    app.add_middleware(RequestLogging, observe=observe)
