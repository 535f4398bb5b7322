"""The first fold after a restart reads its new messages, not every item the summary carries:
a worker that did not make a session's summary reads it ahead, off the request path, when a
turn start first loads it (``FoldsAhead.read_ahead``)."""

from __future__ import annotations

from typing import Any

import httpx

from app.summarize.extractive import forget_texts, split_sentences, texts_read
from bench import traffic
from tests.conftest import RunningApp

#: Turns served before the worker restarts (four folds made by then).
RESTART_AFTER = 40


async def _turn(client: httpx.AsyncClient, base: str, turn: Any) -> dict[str, Any]:
    started = await client.post(base, json=turn.start_body())
    assert started.status_code == 201, started.text
    body: dict[str, Any] = started.json()
    for step in turn.steps:
        response = await client.post(f"{base}/{body['turn_id']}/steps", json=step.body())
        assert response.status_code in (200, 422), response.text
    done = await client.post(f"{base}/{body['turn_id']}/complete", json=turn.complete_body())
    assert done.status_code == 200, done.text
    return body


def _user_sentences(turns: Any) -> int:
    return sum(len(split_sentences(turn.start_body()["message"]["content"])) for turn in turns)


async def test_the_first_fold_after_a_restart_reads_its_new_messages_only(
    apps: RunningApp,
) -> None:
    conversation = traffic.generate(402, turns=72).conversation
    _, client = await apps.start()
    created = await client.post(
        "/v1/sessions", json={"model": "gpt-4o", "system": {"global": conversation.system}}
    )
    session_id = created.json()["id"]
    base = f"/v1/sessions/{session_id}/turns"
    for turn in conversation.turns[:RESTART_AFTER]:
        await _turn(client, base, turn)
    listed = await client.get(f"/v1/sessions/{session_id}/summaries", params={"limit": 1})
    latest = listed.json()["summaries"][0]
    carried = sum(
        item["from_user"]
        for field in ("key_facts", "decisions", "open_questions", "action_items")
        for item in latest[field]
    )
    await apps.stop_all()

    # A new process: nothing read off any text is remembered.
    forget_texts()
    app, client = await apps.start()
    first = await _turn(client, base, conversation.turns[RESTART_AFTER])
    assert first["actions"]["summary_reason"] is None
    await app.state.runtime.folds_ahead.settled()
    read_before = texts_read()
    crossing = RESTART_AFTER + 1
    while (await _turn(client, base, conversation.turns[crossing]))["actions"][
        "summary_reason"
    ] != "turn_count":
        crossing += 1
    fresh = texts_read() - read_before

    # What the fold read afresh is bounded by the turns it folds (every message it could
    # fold in counted, the protected window's included), not by what the summary carries.
    could_fold = _user_sentences(conversation.turns[crossing - 13 : crossing + 1])
    assert carried > could_fold
    assert 0 < fresh <= could_fold
