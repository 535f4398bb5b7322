"""The ceiling of the stack contextd stands on: FastAPI + asyncpg under uvicorn, doing a turn's
job in as many database round trips as contextd does, and nothing else.

Its endpoints have contextd's paths (POST /v1/sessions, .../turns, .../turns/{t}/steps,
.../turns/{t}/complete), so the same load generator drives both. Each request runs one
transaction on tables of its own. A turn start: BEGIN, lock the session row (SELECT … FOR
UPDATE), read the session's newest messages with their cached counts, one statement that
inserts the turn, the message and an audit row and updates the session (data-modifying
CTEs), COMMIT: five round trips. A tool step: the same five, its write storing the
assistant's call and the tool's result, an audit row, the turn's step count and the
session's message count. A completion: BEGIN, lock, one write (the answer, the turn's
status, the session), COMMIT: four. Round trips that contextd makes beyond these are spent
reading the newest messages again. The counts come from the environment (measured from
contextd at run time, bench/throughput.py):

    BARE_DATABASE_URL=postgresql://… BARE_START_ROUND_TRIPS=5 BARE_STEP_ROUND_TRIPS=5 \\
        BARE_COMPLETE_ROUND_TRIPS=5 \\
        uvicorn bench.bare_stack:create_app --factory --workers 2 --port 8090
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

SCHEMA = """
CREATE TABLE IF NOT EXISTS bare_sessions (
    id text PRIMARY KEY, model text NOT NULL, turn_count integer NOT NULL DEFAULT 0,
    message_count integer NOT NULL DEFAULT 0, open_turn text
);
CREATE TABLE IF NOT EXISTS bare_turns (
    id text PRIMARY KEY, session_id text NOT NULL REFERENCES bare_sessions (id),
    seq integer NOT NULL, status text NOT NULL, steps integer NOT NULL DEFAULT 0,
    started_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bare_messages (
    id bigserial PRIMARY KEY, session_id text NOT NULL REFERENCES bare_sessions (id),
    turn_id text NOT NULL, seq integer NOT NULL, role text NOT NULL, content text,
    token_count integer NOT NULL
);
CREATE INDEX IF NOT EXISTS bare_messages_session_seq ON bare_messages (session_id, seq);
CREATE TABLE IF NOT EXISTS bare_audit (
    id bigserial PRIMARY KEY, session_id text NOT NULL, turn_id text NOT NULL,
    input_tokens integer NOT NULL, kept integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
"""
#: The read every turn start makes (and extra round trips repeat): the newest messages.
READ_HISTORY = (
    "SELECT id, role, content, token_count FROM bare_messages WHERE session_id = $1 "
    "ORDER BY seq DESC LIMIT 40"
)
START_WRITES = """
WITH turn AS (
    INSERT INTO bare_turns (id, session_id, seq, status) VALUES ($2, $1, $3, 'open')
), message AS (
    INSERT INTO bare_messages (session_id, turn_id, seq, role, content, token_count)
    VALUES ($1, $2, $4, 'user', $5, $6)
), audit AS (
    INSERT INTO bare_audit (session_id, turn_id, input_tokens, kept) VALUES ($1, $2, $7, $8)
)
UPDATE bare_sessions SET turn_count = turn_count + 1, message_count = $4, open_turn = $2
WHERE id = $1
"""
STEP_WRITES = """
WITH messages AS (
    INSERT INTO bare_messages (session_id, turn_id, seq, role, content, token_count)
    VALUES ($1, $2, $3, 'assistant', $4, $5), ($1, $2, $3 + 1, 'tool', $6, $7)
), audit AS (
    INSERT INTO bare_audit (session_id, turn_id, input_tokens, kept) VALUES ($1, $2, $8, $9)
), turn AS (
    UPDATE bare_turns SET steps = steps + 1 WHERE id = $2
)
UPDATE bare_sessions SET message_count = $3 + 1 WHERE id = $1
"""
COMPLETE_WRITES = """
WITH message AS (
    INSERT INTO bare_messages (session_id, turn_id, seq, role, content, token_count)
    VALUES ($1, $2, $3, 'assistant', $4, $5)
), turn AS (
    UPDATE bare_turns SET status = 'completed' WHERE id = $2
)
UPDATE bare_sessions SET message_count = $3, open_turn = NULL WHERE id = $1
"""
#: BEGIN, lock, read the history, the writes, COMMIT; a completion reads no history.
START_MINIMUM = 5
STEP_MINIMUM = 5
COMPLETE_MINIMUM = 4


def round_trips(name: str, minimum: int) -> int:
    return max(minimum, int(os.environ.get(name, str(minimum))))


def create_app() -> FastAPI:
    dsn = os.environ["BARE_DATABASE_URL"].replace("postgresql+asyncpg://", "postgresql://")
    start_trips = round_trips("BARE_START_ROUND_TRIPS", START_MINIMUM)
    step_trips = round_trips("BARE_STEP_ROUND_TRIPS", STEP_MINIMUM)
    complete_trips = round_trips("BARE_COMPLETE_ROUND_TRIPS", COMPLETE_MINIMUM)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # SQLAlchemy's default pool: 5 connections plus 10 overflow.
        app.state.pool = await asyncpg.create_pool(dsn, min_size=5, max_size=15)
        async with app.state.pool.acquire() as connection:
            await connection.execute("SELECT pg_advisory_lock(4242)")
            try:
                await connection.execute(SCHEMA)
            finally:
                await connection.execute("SELECT pg_advisory_unlock(4242)")
        yield
        await app.state.pool.close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/readyz")
    async def ready(request: Request) -> dict[str, str]:
        async with request.app.state.pool.acquire() as connection:
            await connection.fetchval("SELECT 1")
        return {"status": "ok"}

    @app.post("/v1/sessions", status_code=201)
    async def create_session(request: Request) -> dict[str, Any]:
        body = await request.json()
        session_id = str(uuid.uuid4())
        async with request.app.state.pool.acquire() as connection:
            await connection.execute(
                "INSERT INTO bare_sessions (id, model) VALUES ($1, $2)", session_id, body["model"]
            )
        return {"id": session_id, "budget": {"input_budget": 0}}

    @app.post("/v1/sessions/{session_id}/turns", status_code=201, response_model=None)
    async def start_turn(session_id: str, request: Request) -> dict[str, Any] | JSONResponse:
        body = await request.json()
        content = body["message"]["content"]
        turn_id = str(uuid.uuid4())
        async with request.app.state.pool.acquire() as connection, connection.transaction():
            session = await connection.fetchrow(
                "SELECT turn_count, message_count, open_turn FROM bare_sessions "
                "WHERE id = $1 FOR UPDATE",
                session_id,
            )
            if session is None or session["open_turn"] is not None:
                return JSONResponse({"code": "conflict"}, status_code=409)
            seq = session["message_count"] + 1
            history: list[Any] = []
            for _ in range(start_trips - START_MINIMUM + 1):
                history = await connection.fetch(READ_HISTORY, session_id)
            tokens = len(content) // 4
            await connection.execute(
                START_WRITES,
                session_id,
                turn_id,
                session["turn_count"] + 1,
                seq,
                content,
                tokens,
                tokens + sum(row["token_count"] for row in history),
                len(history) + 1,
            )
        messages = [{"role": row["role"], "content": row["content"]} for row in reversed(history)]
        return {"turn_id": turn_id, "messages": messages}

    @app.post("/v1/sessions/{session_id}/turns/{turn_id}/steps", response_model=None)
    async def post_step(
        session_id: str, turn_id: str, request: Request
    ) -> dict[str, Any] | JSONResponse:
        body = await request.json()
        call = str(body["assistant"]["tool_calls"])
        result = body["tool_results"][0]["content"]
        async with request.app.state.pool.acquire() as connection, connection.transaction():
            session = await connection.fetchrow(
                "SELECT message_count, open_turn FROM bare_sessions WHERE id = $1 FOR UPDATE",
                session_id,
            )
            if session is None or session["open_turn"] != turn_id:
                return JSONResponse({"code": "turn_not_open"}, status_code=409)
            seq = session["message_count"] + 1
            history: list[Any] = []
            for _ in range(step_trips - STEP_MINIMUM + 1):
                history = await connection.fetch(READ_HISTORY, session_id)
            call_tokens, result_tokens = len(call) // 4, len(result) // 4
            await connection.execute(
                STEP_WRITES,
                session_id,
                turn_id,
                seq,
                call,
                call_tokens,
                result,
                result_tokens,
                call_tokens + result_tokens + sum(row["token_count"] for row in history),
                len(history) + 2,
            )
        messages = [{"role": row["role"], "content": row["content"]} for row in reversed(history)]
        return {"turn_id": turn_id, "messages": messages}

    @app.post("/v1/sessions/{session_id}/turns/{turn_id}/complete", response_model=None)
    async def complete_turn(
        session_id: str, turn_id: str, request: Request
    ) -> dict[str, Any] | JSONResponse:
        body = await request.json()
        content = body["assistant"]["content"]
        async with request.app.state.pool.acquire() as connection, connection.transaction():
            session = await connection.fetchrow(
                "SELECT message_count, open_turn FROM bare_sessions WHERE id = $1 FOR UPDATE",
                session_id,
            )
            if session is None or session["open_turn"] != turn_id:
                return JSONResponse({"code": "turn_not_open"}, status_code=409)
            seq = session["message_count"] + 1
            for _ in range(complete_trips - COMPLETE_MINIMUM):
                await connection.fetch(READ_HISTORY, session_id)
            await connection.execute(
                COMPLETE_WRITES, session_id, turn_id, seq, content, len(content or "") // 4
            )
        return {"id": turn_id, "status": "completed"}

    return app
