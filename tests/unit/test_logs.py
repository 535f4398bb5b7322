"""Structured logs: the request id, one line per request, the JSON and text formats."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.logs import JsonFormatter, TextFormatter, bind_request, install_request_logging

NAMED_LOGGER = "contextd.test"


def _app() -> FastAPI:
    app = FastAPI()
    install_request_logging(app)

    @app.get("/v1/sessions/{session_id}")
    async def read(session_id: str) -> dict[str, str]:
        bind_request(tenant="acme")
        logging.getLogger(NAMED_LOGGER).warning("looked at %s", session_id, extra={"hits": 3})
        return {"id": session_id}

    @app.get("/broken")
    async def broken() -> None:
        try:
            raise ValueError("no such thing")
        except ValueError:
            logging.getLogger(NAMED_LOGGER).exception("could not read")

    return app


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What contextd's loggers write, formatted as JSON lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    loggers = [logging.getLogger(name) for name in ("contextd.request", NAMED_LOGGER)]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
            logger.setLevel(logging.NOTSET)


def _entries(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def _get(path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://contextd.test") as client:
        return await client.get(path, headers=headers)


async def test_a_request_id_is_made_and_echoed_when_the_caller_sends_none() -> None:
    first = await _get("/v1/sessions/s1")
    second = await _get("/v1/sessions/s1")

    assert len(first.headers["x-request-id"]) == 32
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


async def test_the_callers_request_id_is_echoed_back() -> None:
    response = await _get("/v1/sessions/s1", {"X-Request-ID": "agent-7:call-42"})

    assert response.headers["x-request-id"] == "agent-7:call-42"


@pytest.mark.parametrize("offered", ["two words", "x" * 129, "forged\tline", ""])
async def test_a_request_id_that_is_not_a_plain_token_is_replaced(offered: str) -> None:
    response = await _get("/v1/sessions/s1", {"X-Request-ID": offered})

    assert response.headers["x-request-id"] != offered
    assert len(response.headers["x-request-id"]) == 32


async def test_each_request_is_one_json_line_with_route_status_latency_and_context(
    json_lines: io.StringIO,
) -> None:
    response = await _get("/v1/sessions/trip-42", {"X-Request-ID": "req-1"})

    request_line = _entries(json_lines)[-1]
    assert request_line["logger"] == "contextd.request"
    assert request_line["level"] == "info"
    assert request_line["message"] == "GET /v1/sessions/{session_id} 200"
    assert request_line["request_id"] == response.headers["x-request-id"] == "req-1"
    assert request_line["route"] == "/v1/sessions/{session_id}"
    assert (request_line["method"], request_line["status"]) == ("GET", 200)
    assert request_line["session"] == "trip-42"
    assert request_line["tenant"] == "acme"
    assert request_line["latency_ms"] >= 0
    assert request_line["time"].endswith("+00:00")


async def test_lines_logged_while_serving_a_request_carry_its_context(
    json_lines: io.StringIO,
) -> None:
    await _get("/v1/sessions/trip-42", {"X-Request-ID": "req-2"})

    line = next(e for e in _entries(json_lines) if e["logger"] == NAMED_LOGGER)
    assert line["message"] == "looked at trip-42"
    assert line["level"] == "warning"
    assert (line["request_id"], line["tenant"], line["hits"]) == ("req-2", "acme", 3)


async def test_an_exception_is_kept_in_its_json_line(json_lines: io.StringIO) -> None:
    await _get("/broken")

    line = next(e for e in _entries(json_lines) if e["logger"] == NAMED_LOGGER)
    assert line["message"] == "could not read"
    assert "ValueError: no such thing" in line["exception"]


def test_lines_outside_a_request_have_no_request_fields() -> None:
    record = logging.LogRecord(NAMED_LOGGER, logging.INFO, __file__, 1, "started", (), None)

    entry = json.loads(JsonFormatter().format(record))

    assert set(entry) == {"time", "level", "logger", "message"}


def test_the_text_format_is_one_readable_line_with_its_fields() -> None:
    record = logging.LogRecord(NAMED_LOGGER, logging.INFO, __file__, 1, "GET / %d", (200,), None)
    record.route = "/v1/audit"
    record.blocks = {"system": 12}
    record.note = "two words"

    line = TextFormatter().format(record)

    assert line.endswith(
        'INFO contextd.test GET / 200 route=/v1/audit blocks={"system": 12} note="two words"'
    )
    assert "\n" not in line
