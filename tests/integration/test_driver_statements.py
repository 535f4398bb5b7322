"""The turn path's statements on Postgres run on the asyncpg connection itself (see
``app.db.DriverStatement``): what a client sees must be what it saw through SQLAlchemy's
execution, errors included, and a list of ids must not make a new statement per length."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, func, literal_column, select
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import create_async_engine

from app.db import DriverStatement, create_engine, fetch_rows
from tests.conftest import RunningApp
from tests.support import (
    complete_turn,
    create_session,
    post_step,
    start_turn,
    step_body,
    stored_messages,
    words,
)

pytestmark = pytest.mark.postgres


@pytest.fixture
async def postgres_apps(postgres_url: str) -> Any:
    running = RunningApp(postgres_url)
    try:
        yield running
    finally:
        await running.stop_all()


@contextmanager
def statements() -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    def record(*args: Any) -> None:
        seen.append((str(args[2]), args[3]))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


async def test_a_value_postgres_refuses_in_a_step_is_invalid_and_stores_nothing(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Read the header of the file.")
    before = (await client.get(f"/v1/sessions/{session['id']}")).json()
    body = step_body(["call_1"], ["header bytes"])
    # Postgres text holds no NUL character: the batch of writes is refused (SQLSTATE 22021).
    body["assistant"]["reasoning_content"] = "the header starts with PK\u0003\u0004\u0000"

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps", json=body
    )

    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_request"
    after = (await client.get(f"/v1/sessions/{session['id']}")).json()
    assert after["message_count"] == before["message_count"]
    # The connection went back to the pool usable: the next call on the session is served.
    retried = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json=step_body(["call_1"], ["header bytes"]),
    )
    assert retried.status_code == 200, retried.text


async def test_pruning_and_summarising_any_number_of_messages_uses_one_statement_text(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    session = await create_session(client, model="gpt-4o", context_limit=8192)
    base = f"/v1/sessions/{session['id']}/turns"
    with statements() as seen:
        for number in range(8):
            started = await client.post(
                base, json={"message": {"content": words(200 + 150 * number, number)}}
            )
            assert started.status_code == 201, started.text
            done = await client.post(
                f"{base}/{started.json()['turn_id']}/complete",
                json={"assistant": {"content": words(40 * number + 5, number)}},
            )
            assert done.status_code == 200, done.text

    state_changes = [(text, params) for text, params in seen if "UPDATE messages SET state" in text]
    lengths = {
        len(value)
        for _, params in state_changes
        for value in (params.values() if isinstance(params, dict) else params)
        if isinstance(value, list) and value and all(isinstance(i, int) for i in value)
    }
    # Messages did change state, in lists of more than one length.
    assert len(lengths) > 1, lengths
    texts = {text for text, _ in state_changes}
    assert not any(" IN (" in text for text in texts), texts
    assert all("= ANY (" in text for text in texts), texts


async def test_steps_of_any_number_of_calls_store_them_with_one_statement_text(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Look these up.")
    with statements() as seen:
        for calls in (2, 5, 9):
            ids = [f"call_{calls}_{n}" for n in range(calls)]
            await post_step(client, session["id"], turn["turn_id"], ids, [f"r {i}" for i in ids])

    texts = {text for text, _ in seen if "INSERT INTO messages" in text}
    # One text for 3, 6 and 10 messages: prepared once, compiled once.
    assert len(texts) == 1, texts
    stored = await stored_messages(client, session["id"])
    assert [m["role"] for m in stored].count("tool") == 16
    assert stored[-1]["tool_call_id"] == "call_9_8"
    assert stored[-1]["content"] == "r call_9_8"
    assert stored[-10]["tool_calls"][0]["id"] == "call_9_0"


async def _alter(postgres_url: str, statement: str) -> None:
    """A schema change made by another process (a rolling migration)."""
    engine = create_async_engine(postgres_url)
    try:
        async with engine.begin() as connection:
            await connection.exec_driver_sql(statement)
    finally:
        await engine.dispose()


async def test_a_migration_under_the_lock_statement_is_met_by_preparing_it_again(
    postgres_apps: RunningApp, postgres_url: str
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    first_turn = await start_turn(client, session["id"], "First question.")
    await complete_turn(client, session["id"], first_turn["turn_id"], "An answer.")
    # The locked session row's statement reads this column: its prepared plan's result type
    # changes ("cached plan must not change result type").
    await _alter(postgres_url, "ALTER TABLE sessions ALTER COLUMN mode TYPE varchar(300)")

    started = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "Second question."}}
    )

    assert started.status_code == 201, started.text


async def test_a_migration_under_a_later_statement_asks_for_a_retry_that_succeeds(
    postgres_apps: RunningApp, postgres_url: str
) -> None:
    _, client = await postgres_apps.start()
    session = await create_session(client, model="gpt-4o")
    first_turn = await start_turn(client, session["id"], "First question.")
    await complete_turn(client, session["id"], first_turn["turn_id"], "An answer.")
    # Read by the snapshot, after the lock: the transaction has run a statement already.
    await _alter(postgres_url, "ALTER TABLE messages ALTER COLUMN name TYPE text")
    base = f"/v1/sessions/{session['id']}/turns"

    first = await client.post(base, json={"message": {"content": "Second question."}})
    assert first.status_code == 503, first.text
    assert first.json()["error"]["code"] == "database_unavailable"
    assert first.headers["Retry-After"] == "1"
    retried = await client.post(base, json={"message": {"content": "Second question."}})

    assert retried.status_code == 201, retried.text
    turns = (await client.get(f"/v1/sessions/{session['id']}")).json()
    assert turns["message_count"] == 3


async def test_statements_of_two_tasks_on_one_connection_wait_for_each_other(
    postgres_url: str,
) -> None:
    engine = create_engine(postgres_url)
    sleep = DriverStatement(select(func.pg_sleep(0.05), literal_column("1")))
    try:
        async with engine.connect() as connection:
            # Without a lock, asyncpg refuses the second: "another operation is in progress".
            results = await asyncio.gather(
                fetch_rows(connection, sleep, {}), fetch_rows(connection, sleep, {})
            )
            await connection.commit()
    finally:
        await engine.dispose()

    assert [rows[0][1] for rows in results] == [1, 1]
