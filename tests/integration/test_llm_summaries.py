"""LLM summaries through the API: made off the request path by summary jobs, validated, with
the previous summary's facts kept, and every failure answered by deterministic truncation.

The model is a real chat-completions server on 127.0.0.1 (tests/fake_llm.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from app.settings import Settings
from app.summary_jobs.service import SummaryJobWorker
from tests.conftest import RunningApp
from tests.fake_llm import FakeChat, serve_fake_chat
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    start_turn,
    stored_messages,
    words,
)

INPUT_BUDGET = 5530  # gpt-4: 8192 - 1638 - 1024


@pytest.fixture
def fake_chat() -> Iterator[FakeChat]:
    with serve_fake_chat() as fake:
        yield fake


def llm_settings(fake: FakeChat, **overrides: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "summarizer": "llm",
        "summarizer_base_url": fake.url,
        "summarizer_model": "test-model",
        "summarizer_timeout_seconds": 5.0,
        "summarizer_max_attempts": 1,
        "summary_job_poll_seconds": 0.02,
    }
    settings.update(overrides)
    return settings


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait (bounded) for something a background worker does."""
    for _ in range(1000):
        if await check():
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"never happened: {what}")


async def jobs(client: httpx.AsyncClient, sid: str) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/sessions/{sid}/summary-jobs")
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()["jobs"]
    return listed


async def job_finished(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    async def finished() -> bool:
        return any(j["status"] in ("done", "failed") for j in await jobs(client, sid))

    await eventually(finished, "a summary job finished")
    return (await jobs(client, sid))[0]


async def job_finished_after(client: httpx.AsyncClient, sid: str, turn_id: str) -> None:
    async def finished() -> bool:
        return all(
            j["status"] in ("done", "failed")
            for j in await jobs(client, sid)
            if j["turn_id"] == turn_id
        )

    await eventually(finished, "the turn's summary job finished")


FACT = "My passport number is P{n} and I land at {h}:30."


async def cross_70_percent(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    """Turns of ~750 tokens, each with a fact, until one crosses 70% with history eligible;
    that turn's prompt is returned (still open)."""
    for i in range(12):
        prompt = await start_turn(client, sid, FACT.format(n=1000 + i, h=10 + i) + words(500, i))
        if prompt["actions"]["summary_triggered"]:
            return prompt
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(250, i))
    pytest.fail("usage never crossed 70%")


def metric(app: FastAPI, name: str, labels: dict[str, str] | None = None) -> float:
    rendered = app.state.runtime.metrics.render().decode()
    for family in text_string_to_metric_families(rendered):
        for sample in family.samples:
            if sample.name == name and (labels is None or sample.labels == labels):
                return float(sample.value)
    return 0.0


async def test_the_turn_crossing_70_percent_returns_while_the_llm_is_still_thinking(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    fake_chat.gate.clear()  # the model "thinks" until the test says otherwise

    crossing = await cross_70_percent(client, sid)

    assert crossing["actions"]["summary_queued"] is True
    assert crossing["actions"]["summarised_message_ids"] == []
    assert crossing["actions"]["summary_fallback"] is False
    assert crossing["budget"]["estimated_input_tokens"] <= INPUT_BUDGET

    async def model_asked() -> bool:
        return len(fake_chat.requests) > 0

    await eventually(model_asked, "the worker asked the model")
    assert (await jobs(client, sid))[0]["status"] == "running"
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"] == []
    fake_chat.gate.set()
    assert (await job_finished(client, sid))["status"] == "done"


async def test_the_next_turn_picks_up_the_finished_summary(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    crossing = await cross_70_percent(client, sid)
    await complete_turn(client, sid, crossing["turn_id"], "Noted.")
    job = await job_finished(client, sid)

    nxt = await start_turn(client, sid, "And the hotel?")

    summarised = nxt["actions"]["summarised_message_ids"]
    assert summarised
    assert "P1000" in nxt["messages"][0]["content"]
    stored = {m["id"]: m for m in await stored_messages(client, sid)}
    assert all(stored[i]["state"] == "summarised" for i in summarised)
    assert max(stored[i]["seq"] for i in summarised) == job["to_seq"]
    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    assert summary["summarizer"] == "llm:test-model"
    passport = next(f for f in summary["key_facts"] if "P1000" in f["text"])
    assert stored[passport["source_message_ids"][0]]["content"].startswith("My passport")
    assert (await audit_rows(client, sid))[-1]["summary_id"] == summary["id"]


async def test_facts_the_llm_drops_are_merged_back_from_the_previous_summary(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    _, client = await apps.start(overrides=llm_settings(fake_chat, mandatory_summary_turns=0))
    sid = (await create_session(client))["id"]
    for i in range(12):
        prompt = await start_turn(client, sid, FACT.format(n=1000 + i, h=10 + i) + words(500, i))
        await complete_turn(client, sid, prompt["turn_id"], f"Seat {i}A is held. " + words(250))
        if prompt["actions"]["summary_queued"]:
            break
    await job_finished(client, sid)
    fake_chat.mode = "drop_facts"

    # Keep talking until a second summary is made, by the model that drops every old fact.
    summaries: list[dict[str, Any]] = []
    for i in range(20):
        prompt = await start_turn(client, sid, f"Fact {i}: gate B{i}. " + words(500, i))
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(250, i))
        if prompt["actions"]["summary_queued"]:
            await job_finished_after(client, sid, prompt["turn_id"])
        summaries = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
        if len(summaries) == 2:
            break
    else:
        pytest.fail("no second summary")

    first, second = summaries[1], summaries[0]
    model_facts = [f for f in first["key_facts"] if not f.get("from_user")]
    assert any(f["text"].startswith("Seat ") for f in model_facts)
    for fact in model_facts:
        assert fact in second["key_facts"]  # text and source_message_ids


async def summarised_until(
    client: httpx.AsyncClient, sid: str, said: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The user says each of ``said`` in turn, then talks on (short turns, so that no summary
    leaves enough to prune) until a summary covers the last of them; returns the next turn's
    prompt and the summaries, newest first."""
    stored: list[dict[str, Any]] = []
    for i in range(80):
        text = said[i] if i < len(said) else f"Turn {i}: more about the itinerary."
        prompt = await start_turn(client, sid, text + " " + words(150, i))
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(80, i))
        if prompt["actions"]["summary_queued"]:
            await job_finished_after(client, sid, prompt["turn_id"])
        stored = stored if i >= len(said) else await stored_messages(client, sid)
        last = max(m["id"] for m in stored if m["role"] == "user")
        made = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
        if i >= len(said) and made and made[0]["to_message_id"] >= last:
            assert all(m["state"] != "pruned" for m in await stored_messages(client, sid))
            return await start_turn(client, sid, "What's next?"), made
    pytest.fail("no summary covered what the user said")


def summary_in(prompt: dict[str, Any]) -> str:
    return next(
        str(m["content"])
        for m in prompt["messages"]
        if "Summary of earlier conversation" in str(m["content"])
    )


async def test_a_user_statement_the_model_drops_is_still_in_the_next_prompt(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    # A scripted model that keeps none of what the user says, and reorders what is left.
    fake_chat.mode = "drop_facts"
    fake_chat.reorder = True
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    statement = "My daughter Zoë is allergic to peanuts, so no airline meals for her."

    prompt, summaries = await summarised_until(client, sid, [statement])

    assert statement in summary_in(prompt)
    told = [json.loads(r["messages"][1]["content"]) for r in fake_chat.requests]
    assert any(statement in s["text"] for r in told for s in r["user_statements"])
    stored = await stored_messages(client, sid)
    source = next(m["id"] for m in stored if str(m["content"]).startswith(statement))
    item = next(f for f in summaries[0]["key_facts"] if f["text"] == statement)
    assert item["source_message_ids"] == [source]
    assert item["from_user"] is True


async def test_a_corrected_value_the_model_repeats_is_not_presented_as_current(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    old = "The team offsite is in Lyon."
    new = "Scratch that, the team offsite is in Porto now."
    # The model repeats the old value as the user's, and in its own words.
    fake_chat.stale_facts = [
        {"text": old, "source_message_ids": [], "from_user": True},
        {"text": "Offsite venue: Lyon", "source_message_ids": []},
    ]

    prompt, _ = await summarised_until(client, sid, [old, "I fly from Ljubljana.", new])

    lines = summary_in(prompt).splitlines()
    assert any("Porto" in line for line in lines)
    assert [line for line in lines if "Lyon" in line and "Porto" not in line] == []


async def test_user_statements_that_leave_the_block_are_listed_and_audited(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    fake_chat.mode = "drop_facts"
    fake_chat.reorder = True
    # No worker: the turn at 90% makes the summary itself, and its audit row tells of it. A
    # small target: the block holds a few statements, the others leave it.
    _, client = await apps.start(
        overrides=llm_settings(fake_chat, summary_target_ratio=0.03, summary_workers=0)
    )
    sid = (await create_session(client))["id"]
    said = [f"My cousin Anneliese{i} lives in Tromsø and owns the boat Ørn{i}." for i in range(9)]
    for i in range(40):
        text = said[i] if i < len(said) else "And the ferry times?"
        prompt = await start_turn(client, sid, f"{text} {words(200, i)}")
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(100, i))
        if prompt["actions"]["summarised_message_ids"]:
            break
    else:
        pytest.fail("no summary was made in a turn")

    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    stored = await stored_messages(client, sid)
    covered = {m["id"]: str(m["content"]) for m in stored if m["id"] <= summary["to_message_id"]}
    folded = [s for s in said if any(text.startswith(s) for text in covered.values())]
    kept = [s for s in folded if s in summary["rendered"]]
    assert 0 < len(kept) < len(folded)
    left = [s for s in folded if s not in kept]
    gone = {i for i, text in covered.items() for s in left if text.startswith(s)}
    audited = (await audit_rows(client, sid))[-1]["block_telemetry"]["summary_left_out"]
    assert gone <= set(audited["message_ids"])
    assert "user statement(s) left out for room (messages #" in summary["rendered"]
    assert all(f"#{i}" in summary["rendered"] for i in sorted(gone)[:3])


async def test_a_user_who_opens_with_an_apology_still_gets_a_summary(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    app, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    for i in range(12):
        text = f"Sorry, I can't fly before noon on Fridays. My passport number is P{1000 + i}. "
        prompt = await start_turn(client, sid, text + words(500, i))
        if prompt["actions"]["summary_triggered"]:
            break
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(250, i))
    else:
        pytest.fail("usage never crossed 70%")

    job = await job_finished(client, sid)

    assert job["status"] == "done"
    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    assert "Sorry, I can't fly before noon on Fridays." in summary["rendered"]
    assert metric(app, "context_summarizer_fallback_count_total") == 0


@pytest.mark.parametrize("mode", ["invalid_json", "error_text", "fail_5xx", "hang"])
async def test_a_failed_llm_summary_falls_back_to_truncation_and_stores_nothing(
    apps: RunningApp, fake_chat: FakeChat, mode: str
) -> None:
    fake_chat.mode = mode  # type: ignore[assignment]
    app, client = await apps.start(
        overrides=llm_settings(fake_chat, summarizer_timeout_seconds=0.3)
    )
    sid = (await create_session(client))["id"]
    crossing = await cross_70_percent(client, sid)
    await complete_turn(client, sid, crossing["turn_id"], "Noted.")
    job = await job_finished(client, sid)
    before = await stored_messages(client, sid)

    nxt = await start_turn(client, sid, "And the hotel?")

    assert job["status"] == "failed"
    assert nxt["actions"]["summary_fallback"] is True
    assert (await audit_rows(client, sid))[-1]["summary_fallback"] is True
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"] == []
    after = {m["id"]: m for m in await stored_messages(client, sid)}
    assert all(m["id"] in after and m["content"] == after[m["id"]]["content"] for m in before)
    # The user's messages (the facts) stay in the prompt; only assistant chatter went.
    prompt_text = " ".join(str(m["content"]) for m in nxt["messages"])
    assert all(f"P{1000 + i}" in prompt_text for i in range(3))
    assert metric(app, "context_summarizer_fallback_count_total") == 1
    outcome = "timeout" if mode == "hang" else "fallback"
    assert metric(app, "context_summarizer_outcomes_total", {"outcome": outcome}) >= 1


async def test_an_invalid_answer_is_repaired_once(apps: RunningApp, fake_chat: FakeChat) -> None:
    fake_chat.mode = "repair_once"
    app, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    await cross_70_percent(client, sid)

    job = await job_finished(client, sid)

    assert job["status"] == "done"
    assert metric(app, "context_summarizer_outcomes_total", {"outcome": "repaired"}) == 1
    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    assert "oops" not in summary["rendered"]


async def test_a_turn_at_90_percent_waits_for_the_summary_then_falls_back_at_the_deadline(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    fake_chat.mode = "hang"
    app, client = await apps.start(
        overrides=llm_settings(fake_chat, summary_workers=0, summary_wait_seconds=0.2)
    )
    sid = (await create_session(client))["id"]
    crossing = await cross_70_percent(client, sid)
    await complete_turn(client, sid, crossing["turn_id"], "Noted. " + words(250))

    prompt = await start_turn(client, sid, "Big question. " + words(1200))

    rows = await audit_rows(client, sid)
    assert rows[-1]["estimated_input_tokens_before"] >= 0.90 * INPUT_BUDGET
    assert prompt["actions"]["summary_fallback"] is True
    assert prompt["budget"]["estimated_input_tokens"] <= INPUT_BUDGET
    assert metric(app, "context_summarizer_outcomes_total", {"outcome": "timeout"}) == 1


async def test_what_a_turn_pruned_while_the_model_was_thinking_still_reaches_the_summary(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    """A turn at 90% cannot wait for the queued summary: it prunes the oldest messages, the
    user's among them. The job that runs later summarises them all the same."""
    fake_chat.mode = "hang"
    _, client = await apps.start(
        overrides=llm_settings(fake_chat, summary_workers=0, summary_wait_seconds=0.2)
    )
    sid = (await create_session(client))["id"]
    crossing = await cross_70_percent(client, sid)
    await complete_turn(client, sid, crossing["turn_id"], "Noted. " + words(250))
    big = await start_turn(client, sid, "Big question. " + words(2500))
    await complete_turn(client, sid, big["turn_id"], "Noted.")
    stored = {m["id"]: m for m in await stored_messages(client, sid)}
    queued = (await jobs(client, sid))[0]
    pruned = [
        m
        for i in big["actions"]["pruned_message_ids"]
        if (m := stored[i])["role"] == "user" and m["seq"] <= queued["to_seq"]
    ]
    assert pruned, "the turn at 90% pruned no user message the queued job covers"

    fake_chat.mode = "good"
    await apps.start(overrides=llm_settings(fake_chat, summary_workers=1))
    job = await job_finished(client, sid)

    assert (job["status"], job["failure"]) == ("done", None)
    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    for message in pruned:
        said = str(message["content"]).split(".")[0]  # "My passport number is P1000 and …"
        assert said in summary["rendered"]
    nxt = await start_turn(client, sid, "And the hotel?")
    prompt = " ".join(str(m["content"]) for m in nxt["messages"])
    assert all(str(m["content"]).split(".")[0] in prompt for m in pruned)


async def test_a_job_whose_worker_died_is_finished_by_another_worker(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    first_app, client = await apps.start(overrides=llm_settings(fake_chat, summary_workers=0))
    sid = (await create_session(client))["id"]
    await cross_70_percent(client, sid)
    # A worker claims the job with a short lease and dies without finishing or renewing it.
    dead = SummaryJobWorker(
        sessionmaker=first_app.state.sessionmaker, runtime=first_app.state.runtime
    )
    claimed = await dead.claim(token=uuid.uuid4().hex, lease_seconds=0.05)
    assert claimed is not None
    assert (await jobs(client, sid))[0]["status"] == "running"

    await apps.start(overrides=llm_settings(fake_chat, summary_workers=1))
    job = await job_finished(client, sid)

    assert job["status"] == "done"
    assert job["attempts"] == 2
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]


async def test_a_summary_over_its_target_is_asked_again_shorter(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    fake_chat.mode = "long_once"
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    await cross_70_percent(client, sid)

    job = await job_finished(client, sid)

    assert job["status"] == "done"
    assert "shorter" in fake_chat.requests[-1]["messages"][-1]["content"]
    summary = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"][0]
    assert summary["token_count"] <= Settings(_env_file=None).summary_target_ratio * INPUT_BUDGET
    assert not any(f["text"].startswith("Detail") for f in summary["key_facts"])


async def test_two_workers_never_claim_the_same_job(apps: RunningApp, fake_chat: FakeChat) -> None:
    app, client = await apps.start(overrides=llm_settings(fake_chat, summary_workers=0))
    for _ in range(2):
        await cross_70_percent(client, (await create_session(client))["id"])
    workers = [
        SummaryJobWorker(sessionmaker=app.state.sessionmaker, runtime=app.state.runtime)
        for _ in range(3)
    ]

    claimed = await asyncio.gather(
        *(w.claim(token=uuid.uuid4().hex, lease_seconds=60) for w in workers)
    )

    ids = [job.id for job in claimed if job is not None]
    assert len(ids) == 2
    assert len(set(ids)) == 2


async def test_a_job_interrupted_by_shutdown_is_taken_up_by_the_next_process(
    apps: RunningApp, fake_chat: FakeChat
) -> None:
    fake_chat.gate.clear()
    _, client = await apps.start(overrides=llm_settings(fake_chat))
    sid = (await create_session(client))["id"]
    await cross_70_percent(client, sid)

    async def model_asked() -> bool:
        return len(fake_chat.requests) > 0

    await eventually(model_asked, "the worker asked the model")
    await apps.stop_all()  # the lease (120 s) has not expired: the job must be handed back
    fake_chat.gate.set()
    _, client = await apps.start(overrides=llm_settings(fake_chat))

    job = await job_finished(client, sid)

    assert job["status"] == "done"
    assert job["attempts"] == 2
