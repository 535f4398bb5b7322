"""Errors that name what is wrong and where, every code listed where users read them, and
rows stored before today's checks that still serve."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import create_async_engine

from app.errors import ERROR_CODES
from app.models.tables import SessionRecord
from tests.support import create_session, start_turn

ROOT = Path(__file__).resolve().parents[2]


async def test_bytes_that_are_not_utf8_are_named(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions",
        content=b'{"model": "gpt-4o\xff"}',
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "not valid UTF-8" in error["message"]
    assert "0xff at offset 17" in error["message"]


async def test_a_body_nested_past_the_parser_is_named(client: httpx.AsyncClient) -> None:
    body = '{"a":' * 5000 + "1" + "}" * 5000

    response = await client.post(
        "/v1/sessions", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 422
    assert response.json()["error"]["message"] == "the request body is nested too deeply to parse"


async def test_json_that_does_not_parse_says_where(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/sessions", content='{"model": ', headers={"content-type": "application/json"}
    )

    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert "not valid JSON" in message
    assert "at character 10" in message


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
async def test_json_sent_as_another_media_type_is_415(
    client: httpx.AsyncClient, content_type: str
) -> None:
    response = await client.post(
        "/v1/sessions", content='{"model": "gpt-4o"}', headers={"content-type": content_type}
    )

    assert response.status_code == 415
    error = response.json()["error"]
    assert error["code"] == "unsupported_media_type"
    assert content_type in error["message"]
    assert "application/json" in error["message"]


async def test_a_wrong_field_is_named_in_the_message(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "context_limit": "x"})

    assert response.status_code == 422
    assert response.json()["error"]["message"].startswith(
        "the request is malformed: body.context_limit:"
    )


async def test_unknown_paths_and_rows_have_their_codes(client: httpx.AsyncClient) -> None:
    codes = [
        (await client.get("/v1/nothing-here")).json()["error"]["code"],
        (await client.get("/v1/sessions/nope")).json()["error"]["code"],
        (await client.get("/v1/audit/987654")).json()["error"]["code"],
    ]

    assert codes == ["not_found", "session_not_found", "audit_not_found"]


def test_every_error_code_the_code_answers_with_is_listed() -> None:
    """Codes raised anywhere in app/ are in ERROR_CODES (the documentation's error codes page
    is written from it: tests/unit/test_docs_site.py)."""
    source = "\n".join(path.read_text() for path in (ROOT / "app").rglob("*.py"))
    raised = set(
        re.findall(r'(?:NotFoundError|ConflictError|error_body)\(\s*"([a-z_]+)"', source)
    ) | set(re.findall(r'^\s+code = "([a-z_]+)"', source, flags=re.MULTILINE))
    # The drop-in endpoints' errors (in the provider's shape, contextd's code inside).
    raised |= set(re.findall(r'ProxyError\(\s*\d+,\s*"([a-z_]+)"', source))
    listed = {error.code for error in ERROR_CODES}

    assert raised - {"bad_request", "conflict"} <= listed


async def test_the_openapi_document_lists_every_error_code(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    text = str(document["components"]["schemas"]["ErrorInfo"]) + str(document["paths"])

    assert [error.code for error in ERROR_CODES if f"`{error.code}`" not in text] == []


async def test_a_session_stored_with_an_unreadable_tool_schema_still_serves(
    client: httpx.AsyncClient, database_url: str
) -> None:
    # Rows written before tool definitions were checked at entry.
    careless: list[Any] = [
        {"type": "function", "function": {"name": "a", "parameters": {"properties": {"q": "s"}}}},
        {"type": "function", "function": {"name": "b", "parameters": [1]}},
        {"type": "function", "function": "c"},
        {"type": "function", "function": {"name": "d", "parameters": {"properties": []}}},
        {"name": "e", "parameters": {"properties": {"q": {"type": "string", "enum": 5}}}},
    ]
    session = await create_session(client)
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                update(SessionRecord)
                .where(SessionRecord.id == session["id"])
                .values(tools=careless)
            )
    finally:
        await engine.dispose()

    turn = await start_turn(client, session["id"], "Find flights.")

    assert turn["budget"]["blocks"]["tools"] > 0
