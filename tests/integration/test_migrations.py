"""Upgrading a database that already holds conversations keeps every one of them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db import alembic_config, create_engine, migrate
from tests.conftest import RunningApp
from tests.support import complete_turn, post_step, start_turn, stored_messages


def _upgrade_to_initial_schema_with_a_conversation(connection: Connection) -> None:
    command.upgrade(alembic_config(connection), "0001")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    connection.execute(
        text(
            "INSERT INTO sessions (id, tenant_id, model, metadata, turn_count, message_count, "
            "created_at, updated_at) VALUES ('old', 'default', 'gpt-4o', '{}', 1, 2, :now, :now)"
        ),
        {"now": now},
    )
    connection.execute(
        text(
            "INSERT INTO turns (id, session_id, seq, status, steps, started_at) "
            "VALUES ('t1', 'old', 1, 'completed', 0, :now)"
        ),
        {"now": now},
    )
    for seq, role, content in ((1, "user", '"Hello"'), (2, "assistant", '"Hi there"')):
        connection.execute(
            text(
                "INSERT INTO messages (session_id, turn_id, seq, turn_seq, step, role, content, "
                "token_count, token_encoding, state, created_at) VALUES ('old', 't1', :seq, 1, "
                "0, :role, :content, 8, 'tiktoken:o200k_base', 'active', :now)"
            ),
            {"seq": seq, "role": role, "content": content, "now": now},
        )


async def test_upgrading_keeps_existing_conversations_as_the_default_tenants(
    empty_database_url: str,
) -> None:
    engine = create_engine(empty_database_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_upgrade_to_initial_schema_with_a_conversation)
        await migrate(engine)
    finally:
        await engine.dispose()
    running = RunningApp(empty_database_url)
    try:
        _, client = await running.start()

        session = (await client.get("/v1/sessions/old")).json()
        turn = await start_turn(client, "old", "Still there?")

        assert session["tenant_id"] == "default"
        assert [m["content"] for m in turn["messages"][-3:]] == [
            "Hello",
            "Hi there",
            "Still there?",
        ]
        assert len(await stored_messages(client, "old")) == 3
    finally:
        await running.stop_all()


@pytest.mark.postgres
async def test_the_parts_of_a_url_are_searchable_after_upgrading_and_not_before(
    postgres_url: str,
) -> None:
    running = RunningApp(postgres_url)
    _, client = await running.start()
    sid = (await client.post("/v1/sessions", json={"model": "gpt-4o"})).json()["id"]
    await start_turn(client, sid, "Dashboards live at https://grafana.acme.io/d/1/billing")
    await running.stop_all()
    engine = create_engine(postgres_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync: command.downgrade(alembic_config(sync), "0012_message_text_serial")
            )
        async with engine.connect() as connection:
            before = await search_count(connection, sid, "billing")
        await migrate(engine)
        async with engine.connect() as connection:
            after = await search_count(connection, sid, "billing")
    finally:
        await engine.dispose()

    assert (before, after) == (0, 1)


async def search_count(connection: AsyncConnection, session_id: str, word: str) -> int:
    found = await connection.execute(
        text(
            "SELECT count(*) FROM messages WHERE session_id = :sid "
            "AND search_vector @@ plainto_tsquery('english', :word)"
        ),
        {"sid": session_id, "word": word},
    )
    return int(found.scalar_one())


@pytest.mark.postgres
async def test_parsing_each_text_once_keeps_the_words_every_message_is_found_by(
    postgres_url: str,
) -> None:
    running = RunningApp(postgres_url)
    _, client = await running.start()
    sid = (await client.post("/v1/sessions", json={"model": "gpt-4o"})).json()["id"]
    for line in (
        "Dashboards live at https://grafana.acme.io/d/1/billing-latency, see ops-mei@acme.io.",
        "Limits sit in /srv/ingest/limits.yaml and ~/.pgpass; scrape /metrics at -5 minutes.",
        "Postgres 15.4.2 runs app.search.repository with key=value (and x/y).",
        "A plain sentence without any punctuation inside its words",
    ):
        turn = await start_turn(client, sid, line)
        await complete_turn(client, sid, turn["turn_id"], "Noted.")
    await running.stop_all()
    engine = create_engine(postgres_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync: command.downgrade(alembic_config(sync), "0013_search_parts")
            )
        async with engine.connect() as connection:
            twice = await stored_vectors(connection, sid)
        await migrate(engine)
        async with engine.connect() as connection:
            once = await stored_vectors(connection, sid)
    finally:
        await engine.dispose()

    assert [words for words, _ in once] == [words for words, _ in twice]
    # Every stored vector is the function's as it now is: the column was computed again.
    assert all(current for _, current in once + twice)
    assert len(once) == 4


async def stored_vectors(
    connection: AsyncConnection, session_id: str
) -> list[tuple[list[str], bool]]:
    """Each message's lexemes, and whether its stored vector is what the function makes."""
    rows = await connection.execute(
        text(
            "SELECT tsvector_to_array(search_vector), "
            "search_vector = contextd_search_vector(content) FROM messages "
            "WHERE session_id = :sid AND role = 'user' ORDER BY seq"
        ),
        {"sid": session_id},
    )
    return [(list(words), bool(current)) for words, current in rows]


async def test_keys_by_session_downgrade_and_upgrade_keep_conversations_and_erasure(
    empty_database_url: str,
) -> None:
    engine = create_engine(empty_database_url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()
    running = RunningApp(empty_database_url)
    _, client = await running.start()
    kept = (await client.post("/v1/sessions", json={"model": "gpt-4o"})).json()["id"]
    erased = (await client.post("/v1/sessions", json={"model": "gpt-4o"})).json()["id"]
    for sid in (kept, erased):
        turn = await start_turn(client, sid, "The vendor is ACME, invoice 4821.")
        await post_step(client, sid, turn["turn_id"], ["call_1"], ["paid on the 3rd"])
        await complete_turn(client, sid, turn["turn_id"], "Paid on the 3rd.")
    await running.stop_all()
    engine = create_engine(empty_database_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(
                lambda sync: command.downgrade(alembic_config(sync), "0014_search_vector_once")
            )
        async with engine.connect() as connection:
            keys_before = await message_keys(connection)
        await migrate(engine)
        async with engine.connect() as connection:
            keys_after = await message_keys(connection)
    finally:
        await engine.dispose()
    running = RunningApp(empty_database_url)
    try:
        _, client = await running.start()
        deleted = await client.delete(f"/v1/sessions/{erased}")
        next_turn = await start_turn(client, kept, "Which vendor was it?")
        contents = [m["content"] for m in await stored_messages(client, kept)]
        left = await count_messages(running.database_url, erased)
    finally:
        await running.stop_all()

    assert deleted.status_code == 204, deleted.text
    assert left == 0
    assert contents[0] == "The vendor is ACME, invoice 4821."
    assert contents[-1] == "Which vendor was it?"
    assert next_turn["messages"][-1]["content"] == "Which vendor was it?"
    if empty_database_url.startswith("postgresql"):
        # 0014: a message checked against its turn by id and against its session; 0015: one
        # key, to its turn, naming the session.
        assert keys_before == [
            ("sessions", ["tenant_id", "session_id"]),
            ("turns", ["turn_id"]),
        ]
        assert keys_after == [("turns", ["turn_id", "tenant_id", "session_id"])]


async def message_keys(connection: AsyncConnection) -> list[tuple[str, list[str]]]:
    """The foreign keys of ``messages`` on Postgres: the table each names, and its columns."""
    if connection.dialect.name != "postgresql":
        return []
    rows = await connection.execute(
        text(
            "SELECT confrelid::regclass::text, array_agg(a.attname ORDER BY k.ord) "
            "FROM pg_constraint c, unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord), "
            "pg_attribute a WHERE c.conrelid = 'messages'::regclass AND c.contype = 'f' "
            "AND a.attrelid = c.conrelid AND a.attnum = k.attnum "
            "AND c.confrelid <> 'session_summaries'::regclass "
            "GROUP BY c.oid, confrelid ORDER BY 1"
        )
    )
    return [(table, list(columns)) for table, columns in rows]


async def count_messages(database_url: str, session_id: str) -> int:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            found = await connection.execute(
                text("SELECT count(*) FROM messages WHERE session_id = :sid"),
                {"sid": session_id},
            )
            return int(found.scalar_one())
    finally:
        await engine.dispose()
