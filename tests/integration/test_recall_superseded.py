"""Recall never presents what the user replaced as current, seen through the app on an 8k
model with recall on: a statement a later one revised stays out of the recall block when a
question asks about its subject again, and whatever a revision does not touch (another fact
sharing its words, another statement in the same message) still comes back."""

from __future__ import annotations

from typing import Any

import httpx

from app.budget.recall import RECALL_HEADING
from bench.quality import text_of
from tests.support import complete_turn, create_session, post_step, start_turn, words

ROUTINE = (
    "grep the logs for trace 4be19c02d7",
    "rerun job nightly-{n}",
    "thanks!",
    "tail api-{n}.log",
    "why did test_invoice_totals fail?",
)


async def _asked(client: httpx.AsyncClient, said: dict[int, str], question: str) -> dict[str, Any]:
    """The prompt for ``question``, asked after a session whose user says ``said[n]`` at
    turn n and routine things otherwise, each turn with a tool result of about 900 tokens
    (so that the early turns are summarised, and searched by recall, long before the end)."""
    sid = str((await create_session(client, recall={"enabled": True}))["id"])
    for n in range(28):
        prompt = await start_turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)))
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done in {n}s, exit code 0.")
    return await start_turn(client, sid, question)


def _recalled(prompt: dict[str, Any]) -> str:
    blocks = [
        str(m["content"])
        for m in prompt["messages"]
        if str(m.get("content") or "").startswith(RECALL_HEADING)
    ]
    return "\n".join(blocks)


async def test_recall_leaves_out_a_statement_the_prompt_holds_a_revision_of(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the launch is the Corn Exchange",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "where was the venue for the launch again?")
    lines = text_of(prompt["messages"]).splitlines()
    assert any("Harbour Hall" in line for line in lines)
    assert not any("Corn Exchange" in line and "Harbour Hall" not in line for line in lines)
    assert "Corn Exchange" not in _recalled(prompt)


async def test_recall_still_brings_back_a_fact_that_shares_the_revised_ones_words(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the launch press contact is Wen Jiahui",
        3: "the venue for the launch is the Corn Exchange",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "who is the press contact for the launch?")
    assert "Wen Jiahui" in _recalled(prompt)


async def test_recall_keeps_a_message_that_also_says_what_no_revision_touches(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the venue for the launch is the Corn Exchange and my manager is Oyelaran Bassey",
        6: "actually, the launch venue is Harbour Hall",
    }
    prompt = await _asked(client, said, "the venue for the launch and my manager, remind me?")
    assert "Oyelaran Bassey" in _recalled(prompt)
