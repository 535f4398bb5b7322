"""Automatic recall: what left the prompt comes back, in its own block, when the user's
message asks about it."""

from __future__ import annotations

from typing import Any

import httpx

from app.budget.anthropic import anthropic_problems, to_anthropic
from app.budget.assembly import chat_problems
from app.budget.recall import RECALL_HEADING
from tests.conftest import RunningApp
from tests.fake_embeddings import serve_fake_embeddings
from tests.integration.test_embeddings import all_embedded, embedding_settings
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    independent_prompt_tokens,
    post_step,
    start_turn,
)

FACT = "The locker code for the Lisbon flat is 4471 and the key is under the blue mat."
QUESTION = "What was the locker code for the Lisbon flat?"


async def talk(client: httpx.AsyncClient, session_id: str, *lines: str) -> None:
    for line in lines:
        turn = await start_turn(client, session_id, line)
        await complete_turn(client, session_id, turn["turn_id"], "Noted.")


async def summarised_session(apps: RunningApp, **fields: Any) -> tuple[httpx.AsyncClient, str]:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, **fields))["id"]
    await talk(
        client,
        sid,
        FACT,
        "We prefer window seats on every flight.",
        "Book dinner somewhere near the river.",
        "Remind me about the museum tickets.",
    )
    return client, sid


def recall_messages(prompt: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in prompt["messages"] if str(m.get("content")).startswith(RECALL_HEADING)]


async def test_a_summarised_fact_comes_back_before_the_turn_that_asks(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps, recall={"enabled": True, "share": 0.2})

    prompt = await start_turn(client, sid, QUESTION)

    messages = prompt["messages"]
    assert messages[-1]["content"] == QUESTION
    assert messages[-2]["role"] == "user"
    assert messages[-2]["content"].startswith(RECALL_HEADING)
    assert "[message 1, user] " + FACT in messages[-2]["content"]
    assert chat_problems(messages) == []
    assert anthropic_problems(to_anthropic(messages)) == []
    blocks = prompt["budget"]["blocks"]
    assert blocks["recall"] > 0
    counted = independent_prompt_tokens(messages, "gpt-4")
    assert counted <= prompt["budget"]["estimated_input_tokens"]


async def test_the_audit_row_names_the_recalled_messages(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps, recall={"enabled": True})

    prompt = await start_turn(client, sid, QUESTION)

    row = (await audit_rows(client, sid))[-1]
    assert row["id"] == prompt["audit_id"]
    assert row["blocks"]["recall"] == prompt["budget"]["blocks"]["recall"]
    first = (await client.get(f"/v1/sessions/{sid}/messages", params={"limit": 1})).json()
    assert row["block_telemetry"]["recall"]["message_ids"] == [first["messages"][0]["id"]]


async def test_recall_is_off_unless_the_session_turns_it_on(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps)

    prompt = await start_turn(client, sid, QUESTION)

    assert recall_messages(prompt) == []
    assert "recall" not in prompt["budget"]["blocks"]


async def test_recall_stays_within_its_share_of_the_budget(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps, recall={"share": 0.004})

    prompt = await start_turn(client, sid, QUESTION)

    share = 0.004 * prompt["budget"]["input_budget"]
    assert prompt["budget"]["blocks"].get("recall", 0) <= share


async def test_recall_takes_its_share_of_a_total_cap_rather_than_of_the_budget(
    apps: RunningApp,
) -> None:
    client, sid = await summarised_session(apps, recall={"share": 0.5}, block_caps={"total": 60})

    prompt = await start_turn(client, sid, QUESTION)

    assert prompt["budget"]["blocks"].get("recall", 0) <= 30


async def test_a_step_keeps_the_recall_block_of_its_turn(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps, recall={"enabled": True})
    first = await start_turn(client, sid, QUESTION)

    step = await post_step(client, sid, first["turn_id"], ["c1"], ["searched the notes"])

    assert step["messages"][: len(first["messages"])] == first["messages"]
    assert len(recall_messages(step)) == 1
    row = (await audit_rows(client, sid))[-1]
    assert row["prefix_kept"] is True


async def test_a_step_on_another_worker_keeps_the_recall_block_of_its_turn(
    apps: RunningApp,
) -> None:
    # Two workers on one database: one ranks by meaning too, the other by words alone
    # (no embeddings), so the two would choose different messages to recall.
    with serve_fake_embeddings() as fake:
        settings: dict[str, Any] = {"mandatory_summary_turns": 1, "protected_window_turns": 1}
        _, semantic = await apps.start(**settings, **embedding_settings(fake))
        _, words_only = await apps.start(**settings)
        sid = (await create_session(semantic, recall={"enabled": True, "share": 0.2}))["id"]
        await talk(
            semantic,
            sid,
            "We adopted a labrador puppy called Biscuit last spring.",
            FACT,
            "Our budget is 3000 euros for the whole trip.",
            "Book dinner at a vegetarian restaurant near the river.",
        )
        await all_embedded(apps.database_url, sid, 8)
        first = await start_turn(semantic, sid, "Which animal lives with us in the flat?")

        step = await post_step(words_only, sid, first["turn_id"], ["c1"], ["looked it up"])

    assert len(recall_messages(first)) == 1
    assert recall_messages(step) == recall_messages(first)
    assert step["messages"][: len(first["messages"])] == first["messages"]
    start_row, step_row = (await audit_rows(words_only, sid))[-2:]
    assert step_row["block_telemetry"]["recall"] == start_row["block_telemetry"]["recall"]
    assert step_row["prefix_kept"] is True


async def test_the_next_turn_reports_the_recall_block_it_replaced(apps: RunningApp) -> None:
    # A summary every fourth turn: the fifth folds the fact in, the sixth and seventh do not.
    _, client = await apps.start(mandatory_summary_turns=4, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    await talk(client, sid, FACT, "Window seats.", "Dinner by the river.", "Museum.", "Trams.")
    asked = await start_turn(client, sid, QUESTION)
    await complete_turn(client, sid, asked["turn_id"], "It was 4471.")

    await start_turn(client, sid, "And where was the key for the Lisbon flat?")

    previous, row = (await audit_rows(client, sid))[-2:]
    assert previous["blocks"]["recall"] > 0
    assert row["summary_triggered"] is False
    assert row["prefix_kept"] is False
    assert row["change_reason"] == "recall"


async def test_recall_can_be_turned_on_and_off_later(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps)

    changed = await client.patch(f"/v1/sessions/{sid}", json={"recall": {"max_hits": 2}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["recall"] == {"enabled": True, "share": 0.1, "max_hits": 2}
    assert len(recall_messages(await start_turn(client, sid, QUESTION))) == 1
    refused = await client.patch(f"/v1/sessions/{sid}", json={"recall": {"share": 0.9}})
    assert refused.status_code == 422
    cleared = await client.patch(f"/v1/sessions/{sid}", json={"recall": None})
    assert cleared.json()["recall"] is None
