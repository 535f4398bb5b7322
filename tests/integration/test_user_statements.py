"""What a user says about themselves early in a long session, with no number in it (the
name they go by, their city, a family member, a preference, an allergy, a decision), is still
in the prompt after many summaries of tool-heavy turns at an 8k model."""

from __future__ import annotations

from typing import Any

import httpx

from bench import synth
from bench.quality import text_of

TURNS = 100


async def test_user_facts_without_numbers_outlast_many_summaries(
    client: httpx.AsyncClient,
) -> None:
    conversation = synth.generate(TURNS, seed=11, user_facts_per_kind=1)
    assert {fact.kind for fact in conversation.user_facts} == set(synth.USER_FACT_KINDS)
    session = (
        await client.post(
            "/v1/sessions", json={"model": "gpt-4", "system": {"global": conversation.system}}
        )
    ).json()
    base = f"/v1/sessions/{session['id']}/turns"
    prompt: dict[str, Any] = {}
    for turn in conversation.turns:
        response = await client.post(base, json=turn.start_body())
        assert response.status_code == 201, response.text
        prompt = response.json()
        for step in turn.steps:
            response = await client.post(f"{base}/{prompt['turn_id']}/steps", json=step.body())
            if response.status_code == 422:
                # Now and then one tool result alone is too large for the model: refused.
                assert response.json()["error"]["code"] == "context_budget_exceeded"
                continue
            assert response.status_code == 200, response.text
            prompt = response.json()
        done = await client.post(f"{base}/{prompt['turn_id']}/complete", json=turn.complete_body())
        assert done.status_code == 200, done.text

    summaries = (
        await client.get(f"/v1/sessions/{session['id']}/summaries", params={"limit": 500})
    ).json()["summaries"]
    assert len(summaries) >= 10
    # The turns that stated them left the prompt long ago: the summary carries them.
    stated_in = {conversation.turns[fact.turn].user["content"] for fact in conversation.user_facts}
    assert not stated_in & {m.get("content") for m in prompt["messages"]}
    last_prompt = text_of(prompt["messages"])
    newest = max(summaries, key=lambda s: s["id"])
    theirs = [
        item["text"]
        for section in ("key_facts", "decisions", "open_questions", "action_items")
        for item in newest[section]
        if item["from_user"]
    ]
    for fact in conversation.user_facts:
        assert fact.probe in last_prompt, f"the prompt lost {fact.kind}: {fact.text!r}"
        assert fact.text in theirs, f"the summary holds {fact.text!r} not as the user's words"
    # Tool output naming other people and places never passes for what the user said.
    assert not any(text.startswith("Tool output") for text in theirs)
