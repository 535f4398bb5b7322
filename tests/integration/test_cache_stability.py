"""Between two policy events a prompt only grows at its end, so the provider's prefix cache
keeps hitting; every audit row says whether the prefix was kept, and if not where and why."""

from __future__ import annotations

import random
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import RunningApp
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    words,
)


async def _run_session(client: httpx.AsyncClient, sid: str, turns: int) -> list[dict[str, Any]]:
    rng = random.Random(5)
    prompts = []
    for number in range(turns):
        prompt = await start_turn(client, sid, f"Step {number}. " + words(rng.randint(20, 120)))
        prompts.append(prompt)
        if rng.random() < 0.5:
            prompt = await post_step(
                client, sid, prompt["turn_id"], [f"c{number}"], [words(rng.randint(50, 400))]
            )
            prompts.append(prompt)
        await complete_turn(client, sid, prompt["turn_id"], words(rng.randint(10, 60)))
    return prompts


async def test_prompts_only_grow_at_the_end_between_policy_events(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    prompts = await _run_session(client, session["id"], 40)
    rows = await audit_rows(client, session["id"])

    assert rows[0]["prefix_kept"] is None
    events = 0
    assert len(rows) == len(prompts)
    for previous, prompt, row in zip(prompts, prompts[1:], rows[1:], strict=False):
        earlier, now = previous["messages"], prompt["messages"]
        if row["prefix_kept"]:
            assert now[: len(earlier)] == earlier
            assert not row["summarised_message_ids"]
            assert not row["pruned_message_ids"]
        else:
            events += 1
            index = row["first_changed_index"]
            assert now[:index] == earlier[:index]
            assert index == len(earlier) or now[index] != earlier[index]
            assert row["change_reason"] == ("summary" if row["summary_id"] is not None else "prune")
    assert 0 < events < len(rows) / 3


async def test_a_session_edit_is_named_as_the_reason_for_a_changed_prefix(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "hello")
    await complete_turn(client, session["id"], turn["turn_id"], "hi")
    await client.patch(f"/v1/sessions/{session['id']}", json={"goal": "Plan a trip to Porto"})

    await start_turn(client, session["id"], "and now?")

    row = (await audit_rows(client, session["id"]))[-1]
    assert row["prefix_kept"] is False
    assert row["first_changed_index"] == 0
    assert row["change_reason"] == "session_edit"


async def test_prefix_metric_counts_what_the_audit_says(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    await _run_session(client, session["id"], 25)
    rows = await audit_rows(client, session["id"])

    families = {
        f.name: f for f in text_string_to_metric_families((await client.get("/metrics")).text)
    }
    by_label = {
        s.labels["prefix"]: s.value
        for s in families["context_prompt_prefix"].samples
        if s.name == "context_prompt_prefix_total"
    }

    assert by_label["kept"] == sum(r["prefix_kept"] is True for r in rows)
    assert by_label["changed"] == sum(r["prefix_kept"] is False for r in rows) > 0
    assert by_label["first"] == 1


async def test_the_eight_turn_summary_can_be_turned_off(apps: RunningApp) -> None:
    _, client = await apps.start(mandatory_summary_turns=0)
    session = await create_session(client)
    for number in range(12):
        prompt = await start_turn(client, session["id"], f"Small question {number}")
        await complete_turn(client, session["id"], prompt["turn_id"], "Small answer.")

    rows = await audit_rows(client, session["id"])
    assert not any(r["summary_triggered"] for r in rows)
    assert all(r["prefix_kept"] for r in rows[1:])
