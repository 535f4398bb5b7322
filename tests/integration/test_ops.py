"""What the people who run contextd rely on: the unit of work, metrics, logs, the command
line and retention."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import RunningApp

POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@POSTGRES_ONLY
async def test_a_response_is_sent_only_after_its_writes_are_committed(apps: RunningApp) -> None:
    app, _ = await apps.start()
    body = json.dumps({"id": "committed-first", "model": "gpt-4"}).encode()
    seen_when_answered: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            # Another connection: it sees only what has been committed.
            async with app.state.engine.connect() as connection:
                found = await connection.scalar(
                    text("SELECT count(*) FROM sessions WHERE id = 'committed-first'")
                )
            seen_when_answered.append(found)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/sessions",
        "raw_path": b"/v1/sessions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"contextd.test")],
        "client": ("127.0.0.1", 1),
        "server": ("contextd.test", 80),
        "state": {},
    }
    await app(scope, receive, send)

    assert seen_when_answered == [1]
