"""Recall never presents what the user replaced as current, seen through the app on an 8k
model with recall on: a user message every statement of which a later one replaced (as the
summary's own fold decided, recorded with the summary) stays out of the recall block when a
question asks about its subject again, and whatever no correction replaced (another fact
sharing its words, another statement of the same message) still comes back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from sqlalchemy import text

from app.budget.recall import RECALL_HEADING
from bench.quality import text_of
from tests.conftest import RunningApp
from tests.support import create_session, run_turns, start_turn


async def _asked(
    client: httpx.AsyncClient,
    said: dict[int, str],
    question: str,
    *,
    replies: dict[int, str] | None = None,
    after_turn: tuple[int, Callable[[str], Awaitable[httpx.AsyncClient]]] | None = None,
) -> dict[str, Any]:
    """The prompt for ``question``, asked after a session whose user says ``said[n]`` at
    turn n and routine things otherwise, each turn with a tool result of about 900 tokens
    (so that the early turns are summarised, and searched by recall, long before the end),
    and the assistant ends turn n with ``replies[n]`` or a routine line. ``after_turn``:
    (n, what to do to the session once turn n ended, giving the client to go on with)."""
    sid = str((await create_session(client, recall={"enabled": True}))["id"])
    if after_turn is None:
        await run_turns(client, sid, said, range(28), replies=replies)
    else:
        last, then = after_turn
        await run_turns(client, sid, said, range(last + 1), replies=replies)
        client = await then(sid)
        await run_turns(client, sid, said, range(last + 1, 28), replies=replies)
    return await start_turn(client, sid, question)


def _recalled(prompt: dict[str, Any]) -> str:
    return "\n".join(
        str(m["content"])
        for m in prompt["messages"]
        if str(m.get("content") or "").startswith(RECALL_HEADING)
    )


async def test_asked_about_a_corrected_subject_recall_does_not_bring_the_old_value_back(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the launch is the Corn Exchange",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "where was the venue for the launch again?")
    lines = text_of(prompt["messages"]).splitlines()
    assert any("Harbour Hall" in line for line in lines)
    assert "Corn Exchange" not in _recalled(prompt)
    assert not any("Corn Exchange" in line and "Harbour Hall" not in line for line in lines)


async def test_a_value_corrected_twice_comes_back_as_neither_old_value(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the launch is the Corn Exchange",
        5: "actually, the launch venue is Harbour Hall",
        9: "correction: the launch venue is the Old Mill",
    }
    prompt = await _asked(client, said, "where was the venue for the launch again?")
    recalled = _recalled(prompt)
    assert "Corn Exchange" not in recalled
    assert "Harbour Hall" not in recalled
    assert "Old Mill" in text_of(prompt["messages"])


async def test_a_message_that_also_said_another_fact_comes_back_for_it(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "The venue for the launch is the Corn Exchange. My manager is Oyelaran Bassey.",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "remind me, who is my manager?")
    assert "Oyelaran Bassey" in _recalled(prompt)


async def test_a_run_on_message_only_part_of_which_was_corrected_still_comes_back(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the launch is the Corn Exchange and my manager is Oyelaran Bassey",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "the venue for the launch and my manager, remind me?")
    assert "Oyelaran Bassey" in _recalled(prompt)


async def test_recall_still_brings_back_a_fact_that_shares_the_corrected_ones_words(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the launch press contact is Wen Jiahui",
        3: "the venue for the launch is the Corn Exchange",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "who is the press contact for the launch?")
    assert "Wen Jiahui" in _recalled(prompt)


PASTED = (
    "the api timeout is 30 seconds\n"
    "```python\ndef retry_backoff(attempt): return min(2 ** attempt, 64)\n```"
)


async def test_code_pasted_beside_a_corrected_statement_still_comes_back(
    client: httpx.AsyncClient,
) -> None:
    said = {1: PASTED, 6: "actually the api timeout is 45 seconds"}
    prompt = await _asked(client, said, "show me the retry_backoff function I pasted")
    assert "def retry_backoff(attempt)" in text_of(prompt["messages"])


async def test_a_conditional_restatement_leaves_the_value_it_would_change_in_the_prompt(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the deadline for the Q3 report is March 3",
        6: "if the client pushes back, the deadline for the Q3 report is March 10",
    }
    prompt = await _asked(client, said, "when is the deadline for the Q3 report?")
    assert "March 3" in text_of(prompt["messages"])


async def test_a_yes_after_another_exchange_leaves_the_old_value_recallable(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the offsite is the Marriott",
        4: "what time is check-in at the offsite hotel?",
        5: "yes, the Hilton",
    }
    replies = {
        3: "You said the venue for the offsite is the Marriott, but the booking shows the "
        "Hilton: should I update it?",
        4: "Check-in is at 3 pm.",
    }
    prompt = await _asked(
        client, said, "what did I say the venue for the offsite was?", replies=replies
    )
    # The summary says the venue changed (it reads the "yes" as confirming), but the user's
    # own words stay recallable: the "yes" may answer the question asked in between.
    assert "user] the venue for the offsite is the Marriott" in _recalled(prompt)


async def test_after_a_summary_stored_before_the_record_a_message_it_held_in_part_comes_back(
    apps: RunningApp,
) -> None:
    # The summaries made before the record existed read back as NULL: whether they held
    # message 1 only in part (its statement, not its code) is not known.
    app, client = await apps.start()

    async def stored_before_the_record(session_id: str) -> httpx.AsyncClient:
        async with app.state.engine.begin() as connection:
            held = await connection.execute(
                text("UPDATE session_summaries SET revisions = NULL WHERE session_id = :sid"),
                {"sid": session_id},
            )
        assert held.rowcount > 0
        _, restarted = await apps.start()  # nothing of it cached
        return restarted

    said = {1: PASTED, 9: "actually the api timeout is 45 seconds"}
    prompt = await _asked(
        client,
        said,
        "show me the retry_backoff function I pasted",
        after_turn=(5, stored_before_the_record),
    )
    assert "def retry_backoff(attempt)" in text_of(prompt["messages"])
