"""Stored text at its edges: a NUL character in a message (Postgres cannot hold it as text),
words after a line break in a text part, erased words in SQLite's search index, a capped tool
result after a usage report, and an answer that was reasoning alone once its reasoning is
cleared."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from alembic import command
from sqlalchemy import Connection, text

from app.db import alembic_config, create_engine, migrate, sqlite_foreign_keys
from tests.conftest import RunningApp
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    step_body,
    words,
)

SECRET_WORD = "Zanzibar"


# -- a NUL character in a message, on Postgres ---------------------------------------------------


async def test_a_tool_result_holding_a_nul_character_is_stored_on_every_backend(
    client: httpx.AsyncClient,
) -> None:
    # JSON allows "\u0000"; a tool that reads a binary file returns it. Stored before the
    # search index existed, on both backends; the index's generated column now refuses it.
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Read the header of the file.")

    step = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json=step_body(["call_1"], ["PK\u0003\u0004\u0000\u0000 header bytes"]),
    )

    assert step.status_code == 200, step.text


def _downgrade_to_0008_with_a_nul_message(connection: Connection) -> None:
    command.downgrade(alembic_config(connection), "0008_reasoning")
    connection.execute(
        text("UPDATE messages SET content = CAST(:content AS JSON) WHERE seq = 1")
        if connection.dialect.name == "postgresql"
        else text("UPDATE messages SET content = :content WHERE seq = 1"),
        {"content": '"PK\\u0003\\u0004\\u0000\\u0000 header bytes"'},
    )


async def test_upgrading_to_the_search_index_keeps_a_message_holding_a_nul_character(
    empty_database_url: str,
) -> None:
    engine = create_engine(empty_database_url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()
    running = RunningApp(empty_database_url)
    try:
        _, client = await running.start()
        session = await create_session(client, id="old")
        await start_turn(client, "old", "placeholder")
        assert session["id"] == "old"
    finally:
        await running.stop_all()
    engine = create_engine(empty_database_url)
    try:
        # A database at 0008 whose stored message holds "\u0000" (accepted before 0009).
        async with engine.connect() as connection:
            if engine.dialect.name == "sqlite":
                await connection.run_sync(sqlite_foreign_keys, False)
            async with connection.begin():
                await connection.run_sync(_downgrade_to_0008_with_a_nul_message)

        await migrate(engine)  # the upgrade a user runs with `contextd migrate`
    finally:
        await engine.dispose()


# -- erasure and the SQLite full-text index ------------------------------------------------------


def _rows_saying(path: str, word: str) -> list[str]:
    """The tables of an SQLite file with a row whose text or bytes hold ``word``."""
    db = sqlite3.connect(path)
    try:
        tables = [
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        found = []
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                data = b"".join(v if isinstance(v, bytes) else str(v).encode() for v in row)
                if word.lower().encode() in data.lower():
                    found.append(table)
        return found
    finally:
        db.close()


async def test_erasing_a_session_leaves_none_of_its_words_in_the_sqlite_search_index(
    sqlite_template: Path, tmp_path: Path
) -> None:
    # README: "Erasing a session erases its index entries". FTS5 takes a 'delete' of an
    # external-content row as a tombstone: the words stay in message_search_data.
    path = tmp_path / "contextd.db"
    shutil.copyfile(sqlite_template, path)
    running = RunningApp(f"sqlite+aiosqlite:///{path}")
    try:
        _, client = await running.start()
        session = await create_session(client)
        turn = await start_turn(client, session["id"], f"My locker code is {SECRET_WORD}-7731.")
        await complete_turn(client, session["id"], turn["turn_id"], "Noted.")
        assert "message_search_data" in _rows_saying(str(path), SECRET_WORD)

        deleted = await client.delete(f"/v1/sessions/{session['id']}")

        assert deleted.status_code == 204
        assert _rows_saying(str(path), SECRET_WORD) == []
    finally:
        await running.stop_all()


# -- tool results capped at entry, and calibration -----------------------------------------------


def _step_with_usage(call_id: str, result: str, prompt_tokens: int) -> dict[str, Any]:
    return {**step_body([call_id], [result]), "usage": {"prompt_tokens": prompt_tokens}}


async def test_a_capped_tool_result_reads_the_same_after_a_usage_report(
    client: httpx.AsyncClient,
) -> None:
    # An agent posts the provider's usage with each step, as the README asks. A provider that
    # counts a little more than contextd moves the calibration ratio, and with it the input
    # budget, the tool-result cap, and so the cut of a result already shown: the earlier step
    # of the same open turn reads differently, while the audit says the prefix was kept.
    session = await create_session(client, model="gpt-4")
    turn = await start_turn(client, session["id"], "Read the log.")
    first = await post_step(client, session["id"], turn["turn_id"], ["call_1"], [words(5000)])
    billed = int(first["budget"]["estimated_input_tokens"] * 1.3)

    second = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json=_step_with_usage("call_2", "done", billed),
    )

    assert second.status_code == 200, second.text
    row = (await audit_rows(client, session["id"]))[-1]
    shown_before = first["messages"]
    shown_now = second.json()["messages"][: len(shown_before)]
    assert row["prefix_kept"] is (shown_now == shown_before)
    assert shown_now == shown_before


async def test_a_new_session_under_an_erased_ones_id_shows_its_own_capped_result(
    client: httpx.AsyncClient,
) -> None:
    # A capped result is cut once and remembered. An erased session's id may be taken
    # again, with a result of the same size at the same seq: it must show its own text.
    async def capped_step(result: str) -> str:
        session = await create_session(client, id="reused", model="gpt-4")
        turn = await start_turn(client, session["id"], "Read the log.")
        step = await post_step(client, session["id"], turn["turn_id"], ["call_1"], [result])
        shown: str = next(m for m in step["messages"] if m["role"] == "tool")["content"]
        assert "left out" in shown, shown
        return shown

    first = await capped_step(words(5000, 1))
    assert (await client.delete("/v1/sessions/reused")).status_code == 204
    second = await capped_step(words(5000, 2))

    assert first.split()[:3] == words(3, 1).split()
    assert second.split()[:3] == words(3, 2).split()


# -- reasoning cleared from a completed turn -----------------------------------------------------

SIGNATURE = "EqQBCkYIBxgCKkBl3+kR/0a9Zq==" + "Zm9vYmFy/+" * 8


async def test_an_answer_that_was_only_reasoning_leaves_no_empty_assistant_message(
    client: httpx.AsyncClient,
) -> None:
    # A completion whose content is only thinking (or only reasoning_content) is stored.
    # Once the prompt passes the summary trigger its reasoning is cleared, and the OpenAI
    # rendering shows {"role": "assistant", "content": null} without tool calls: OpenAI's
    # chat API requires content on an assistant message unless it carries tool calls.
    session = await create_session(client, model="gpt-4")
    thinking = {"type": "thinking", "thinking": words(4000), "signature": SIGNATURE}
    first = await start_turn(client, session["id"], "Weather in Lisbon?")
    completed = await client.post(
        f"/v1/sessions/{session['id']}/turns/{first['turn_id']}/complete",
        json={"assistant": {"content": [thinking]}},
    )
    assert completed.status_code == 200, completed.text

    second = await start_turn(client, session["id"], "And in Porto?")

    assert (await audit_rows(client, session["id"]))[-1]["block_telemetry"]["reasoning"][
        "parts_cleared"
    ] == 1
    empty = [
        message
        for message in second["messages"]
        if message["role"] == "assistant"
        and not message.get("tool_calls")
        and message.get("content") is None
        and "reasoning_content" not in message
    ]
    assert empty == []


# -- search over a message sent as text parts ----------------------------------------------------


async def test_a_word_after_a_line_break_in_a_text_part_is_found(
    client: httpx.AsyncClient,
) -> None:
    # Postgres indexes a part list as the JSON text of its texts ('["…\\nhat …"]'): a word
    # after a line break is read as "nhat", and the snippet shows the JSON escapes.
    session = await create_session(client)
    text_part = {"type": "text", "text": "Packing list:\nsunscreen\nhat"}
    started = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": [text_part]}}
    )
    assert started.status_code == 201, started.text

    found = await client.get(f"/v1/sessions/{session['id']}/search", params={"q": "hat"})

    assert found.status_code == 200, found.text
    hits = found.json()["hits"]
    assert [hit["seq"] for hit in hits] == [1]
    assert "\\n" not in hits[0]["snippet"]


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
async def test_a_parallel_query_over_the_message_text_runs(
    database_url: str, apps: RunningApp
) -> None:
    # An operator's report over many messages may get a parallel plan; the text function
    # catches what Postgres cannot hold in a subtransaction, which a parallel query refuses.
    _, client = await apps.start()
    session = await create_session(client)
    await start_turn(client, session["id"], "Which hotels are near the river?")
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SET force_parallel_mode = on"))
            texts = await connection.scalars(
                text("SELECT contextd_message_text(content) FROM messages")
            )
            assert list(texts) == ["Which hotels are near the river?"]
    finally:
        await engine.dispose()
