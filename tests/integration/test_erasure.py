"""Deleting a session erases its content everywhere; its audit rows keep figures only."""

from __future__ import annotations

from sqlalchemy import select

from app.db import create_engine
from app.models import Base
from tests.conftest import RunningApp
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    words,
)

SECRET = "Zanzibar-7731"


async def database_text(database_url: str) -> str:
    """Every row of every table, as text."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = [
                str(row)
                for table in Base.metadata.sorted_tables
                for row in (await connection.execute(select(table))).all()
            ]
    finally:
        await engine.dispose()
    return "\n".join(rows)


async def test_deleting_a_session_erases_its_content_and_keeps_audit_figures(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    session = await create_session(
        client,
        goal=f"Goal {SECRET}",
        memory=f"Memory {SECRET}",
        metadata={"note": SECRET},
        system={"global": f"System {SECRET}"},
    )
    sid = session["id"]
    for number in range(3):
        turn = await start_turn(client, sid, f"Question {number} about {SECRET}.")
        await post_step(client, sid, turn["turn_id"], [f"c{number}"], [f"Result {SECRET}"])
        await client.post(  # a recorded answer (Idempotency-Key) holds content too
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/complete",
            json={"assistant": {"content": f"Answer {SECRET}."}},
            headers={"Idempotency-Key": f"complete-{number}"},
        )
    keyed = await client.post(
        f"/v1/sessions/{sid}/turns",
        json={"message": {"content": f"{SECRET} " + words(7000)}},
        headers={"Idempotency-Key": "rejected"},
    )
    assert keyed.json()["error"]["code"] == "context_budget_exceeded"
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
    assert SECRET in await database_text(apps.database_url)
    rows_before = await audit_rows(client, sid)

    deleted = await client.delete(f"/v1/sessions/{sid}")

    assert deleted.status_code == 204
    assert SECRET not in await database_text(apps.database_url)
    rows_after = await audit_rows(client, sid)
    assert rows_after == rows_before
    assert all(row["input_budget"] > 0 and row["blocks"] for row in rows_after)


async def test_a_retry_after_erasure_replays_nothing(apps: RunningApp) -> None:
    _, client = await apps.start()
    session = await create_session(client)
    url = f"/v1/sessions/{session['id']}/turns"
    body = {"message": {"content": f"Tell me about {SECRET}"}}
    await client.post(url, json=body, headers={"Idempotency-Key": "once"})
    await client.delete(f"/v1/sessions/{session['id']}")

    retried = await client.post(url, json=body, headers={"Idempotency-Key": "once"})

    assert retried.status_code == 404
    assert SECRET not in retried.text


async def test_an_erased_sessions_summary_never_reaches_another_sessions_prompt(
    apps: RunningApp,
) -> None:
    # SQLite may give a deleted row's id to the next row: the next session's summary can have
    # the erased summary's id, and must still be its own.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    erased = await create_session(client)
    for n in range(3):
        turn = await start_turn(client, erased["id"], f"My locker code is {SECRET}-{n}.")
        await complete_turn(client, erased["id"], turn["turn_id"], f"Noted, code {SECRET}-{n}.")
    assert (await client.get(f"/v1/sessions/{erased['id']}/summaries")).json()["summaries"]
    await client.delete(f"/v1/sessions/{erased['id']}")

    other = await create_session(client)
    prompts = []
    for n in range(4):
        turn = await start_turn(client, other["id"], f"Book table 4{n} for Friday at 8 pm.")
        prompts.append(turn["messages"])
        await complete_turn(client, other["id"], turn["turn_id"], f"Table 4{n} booked.")

    assert (await client.get(f"/v1/sessions/{other['id']}/summaries")).json()["summaries"]
    assert all(SECRET not in str(messages) for messages in prompts)
