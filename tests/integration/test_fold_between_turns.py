"""The turn-count fold made between turns (app.summarize.ahead): the summary an agent sees,
and the turn it appears on, are those of a fold made on the turn start; only where the work
is done moves, and the audit row says which."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import RunningApp
from tests.integration.test_round_trips import AppsWithSteadyCaches, RoundTrips
from tests.support import audit_rows, complete_turn, create_session, start_turn, stored_messages


async def _talk(
    client: httpx.AsyncClient, turns: int, *, session_id: str | None = None, first: int = 0
) -> str:
    """``turns`` turns of a session (a new one unless told), each started and completed."""
    sid = session_id or (await create_session(client, model="gpt-4o"))["id"]
    for number in range(first, first + turns):
        prompt = await start_turn(
            client, sid, f"Question {number}: my seat is {number}C, is gate B{number} open?"
        )
        await complete_turn(client, sid, prompt["turn_id"], f"Gate B{number} is open.")
    return sid


def _summary_says(summary: dict[str, Any]) -> dict[str, Any]:
    """What a summary says, without the ids of its row and of the messages it points to."""
    return {
        "summary_text": summary["summary_text"],
        "rendered": summary["rendered"],
        "token_count": summary["token_count"],
        **{
            name: [
                (item["text"], item["from_user"], len(item["source_message_ids"]))
                for item in summary[name]
            ]
            for name in ("key_facts", "decisions", "open_questions", "action_items")
        },
    }


async def test_the_ninth_turn_shows_the_summary_folded_after_the_eighth_turn(
    apps: RunningApp,
) -> None:
    _, ahead = await apps.start()
    _, inline = await apps.start(fold_between_turns=False)
    folded_ahead = await _talk(ahead, 10)
    folded_inline = await _talk(inline, 10)

    summaries = {}
    runs = ((ahead, folded_ahead, "between_turns"), (inline, folded_inline, "in_turn"))
    for client, sid, where in runs:
        rows = await audit_rows(client, sid)
        assert [r["summary_reason"] for r in rows] == [None] * 8 + ["turn_count", None]
        made = rows[8]["block_telemetry"]["summary_made"]
        assert made["when"] == where
        assert all("summary_made" not in r["block_telemetry"] for r in rows[:8] + rows[9:])
        listed = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
        assert [s["id"] for s in listed] == [rows[8]["summary_id"]]
        # The messages it folds in point to it.
        stored = {m["id"]: m for m in await stored_messages(client, sid)}
        assert rows[8]["summarised_message_ids"]
        assert all(stored[i]["state"] == "summarised" for i in rows[8]["summarised_message_ids"])
        summaries[where] = listed[0]
    assert _summary_says(summaries["between_turns"]) == _summary_says(summaries["in_turn"])
    assert "seat is 0C" in summaries["between_turns"]["rendered"]


async def test_the_fold_made_between_turns_is_what_the_turn_start_would_have_shown(
    apps: RunningApp,
) -> None:
    _, ahead = await apps.start()
    _, inline = await apps.start(fold_between_turns=False)
    prompts = []
    for client in (ahead, inline):
        sid = await _talk(client, 8)
        prompts.append(await start_turn(client, sid, "And which gate for the connection?"))
    assert prompts[0]["actions"]["summary_reason"] == "turn_count"
    assert prompts[0]["messages"] == prompts[1]["messages"]
    assert prompts[0]["budget"] == prompts[1]["budget"]


async def test_a_turn_start_on_another_worker_folds_itself(apps: RunningApp) -> None:
    _, first = await apps.start()
    _, second = await apps.start()
    # The eighth turn completes on the first worker, which makes the fold; the ninth turn
    # starts on the second, which has none: it folds on the turn start, as without it.
    sid = await _talk(first, 8)
    prompt = await start_turn(second, sid, "Question 8: is gate B8 open?")
    assert prompt["actions"]["summary_reason"] == "turn_count"
    rows = await audit_rows(second, sid)
    assert rows[8]["block_telemetry"]["summary_made"]["when"] == "in_turn"
    await complete_turn(second, sid, prompt["turn_id"], "Gate B8 is open.")
    # The first worker's fold is of no use any more: the next turn there shows the summary
    # the second made, and a later count folds on top of it.
    await _talk(first, 9, session_id=sid, first=9)
    rows = await audit_rows(first, sid)
    assert [r["summary_reason"] for r in rows[9:]] == [None] * 8 + ["turn_count"]
    assert rows[17]["block_telemetry"]["summary_made"]["when"] == "between_turns"
    listed = (await first.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
    assert [s["id"] for s in listed] == [rows[17]["summary_id"], rows[8]["summary_id"]]
    assert "seat is 13C" in listed[0]["rendered"]


@pytest.fixture
async def postgres_apps(postgres_url: str) -> Any:
    running = AppsWithSteadyCaches(postgres_url)
    try:
        yield running
    finally:
        await running.stop_all()


@pytest.mark.postgres
async def test_a_turn_start_that_takes_a_fold_made_between_turns_costs_five_round_trips(
    postgres_apps: RunningApp,
) -> None:
    _, client = await postgres_apps.start()
    sid = await _talk(client, 8)
    trips = RoundTrips()
    with trips.counting():
        prompt = await start_turn(client, sid, "Question 8: is gate B8 open?")
    assert prompt["actions"]["summary_reason"] == "turn_count"
    # BEGIN, lock the session, the snapshot read, the batch of writes (the summary among
    # them), COMMIT: as any turn start.
    assert trips.count == 5, trips.statements
    row = (await audit_rows(client, sid))[-1]
    assert row["block_telemetry"]["summary_made"]["when"] == "between_turns"
    listed = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
    assert [s["id"] for s in listed] == [row["summary_id"]]


async def test_two_tenants_sessions_of_the_same_id_each_take_their_own_fold(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start()
    tenants = [apps.client(app, await apps.key(name, "agent", "ops")) for name in ("acme", "bolt")]
    for client in tenants:
        await create_session(client, id="support-chat", model="gpt-4o")
    # Both complete the turn before the count, one after the other: each prepares a fold.
    for index, client in enumerate(tenants):
        await _talk(client, 8, session_id="support-chat", first=index * 100)

    for index, client in enumerate(tenants):
        prompt = await start_turn(client, "support-chat", "And which gate for the connection?")
        assert prompt["actions"]["summary_reason"] == "turn_count"
        row = (await audit_rows(client, "support-chat"))[-1]
        assert row["block_telemetry"]["summary_made"]["when"] == "between_turns"
        listed = (await client.get("/v1/sessions/support-chat/summaries")).json()["summaries"]
        assert f"seat is {index * 100}C" in listed[0]["rendered"]


async def test_deleting_a_session_drops_the_fold_made_for_it(apps: RunningApp) -> None:
    app, client = await apps.start()
    folds = app.state.runtime.folds_ahead
    sid = await _talk(client, 8)
    assert folds.holds("default", sid)
    assert folds.chars_held > 0

    assert (await client.delete(f"/v1/sessions/{sid}")).status_code == 204

    assert not folds.holds("default", sid)
    assert folds.chars_held == 0
    # A session made again under the id starts from nothing: its ninth turn folds its own.
    await create_session(client, id=sid, model="gpt-4o")
    await _talk(client, 8, session_id=sid, first=50)
    await start_turn(client, sid, "And which gate for the connection?")
    listed = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
    assert "seat is 50C" in listed[0]["rendered"]
    assert "seat is 0C" not in listed[0]["rendered"]


async def test_a_rejected_turn_start_records_no_summary_made(apps: RunningApp) -> None:
    _, client = await apps.start()
    sid = (await create_session(client, model="gpt-4o", context_limit=8192))["id"]
    await _talk(client, 8, session_id=sid)
    # The fold is due on this turn start, but its message alone is over the budget.
    words = " ".join(f"w{n}" for n in range(8000))

    refused = await start_turn(client, sid, words, expect=422)

    assert refused["error"]["code"] == "context_budget_exceeded"
    row = (await audit_rows(client, sid))[-1]
    assert row["overflow_rejected"]
    assert row["summary_id"] is None
    assert "summary_made" not in row["block_telemetry"]
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"] == []
    # Nothing is lost: the next turn start folds, and says where.
    await start_turn(client, sid, "And which gate for the connection?")
    row = (await audit_rows(client, sid))[-1]
    assert row["summary_reason"] == "turn_count"
    assert row["block_telemetry"]["summary_made"]["when"] == "in_turn"
