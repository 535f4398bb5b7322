"""The summarise-then-prune policy as an agent and an operator see it through the API."""

from __future__ import annotations

import json
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.budget.assembly import chat_problems
from app.budget.summary import SummaryContent
from app.summarize import SummaryRequest
from app.tokens.registry import TokenizerRegistry
from tests.conftest import RunningApp
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    independent_prompt_tokens,
    post_step,
    start_turn,
    stored_messages,
    words,
)

INPUT_BUDGET = 5530  # gpt-4: 8192 - 1638 - 1024


async def test_summary_triggers_when_usage_reaches_70_percent(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    sid = session["id"]
    facts = [f"My passport number is P{1000 + i} and I land at {10 + i}:30." for i in range(8)]
    summarised_prompt = None
    for i, fact in enumerate(facts):
        prompt = await start_turn(client, sid, fact + " " + words(500, i))
        if prompt["actions"]["summary_triggered"]:
            summarised_prompt = prompt
            break
        await complete_turn(client, sid, prompt["turn_id"], "Noted. " + words(250, i))

    assert summarised_prompt is not None
    rows = await audit_rows(client, sid)
    assert rows[-1]["summary_reason"] == "threshold"
    assert rows[-1]["estimated_input_tokens_before"] >= 0.70 * INPUT_BUDGET
    # Earlier rows crossed 70% only while all history sat in the protected window (the last
    # 4 turns, the current one included): nothing was eligible to summarise yet.
    assert all(
        r["estimated_input_tokens_before"] < 0.70 * INPUT_BUDGET or r["turn_seq"] <= 4
        for r in rows[:-1]
    )
    assert rows[-1]["turn_seq"] > 4
    assert (
        rows[-1]["estimated_input_tokens_after_summary"] < rows[-1]["estimated_input_tokens_before"]
    )
    # The summarised messages left the prompt; the summary block took their place.
    messages = summarised_prompt["messages"]
    assert "## Summary of earlier conversation" in messages[0]["content"]
    assert "P1000" in messages[0]["content"]
    assert chat_problems(messages) == []
    stored = {m["id"]: m for m in await stored_messages(client, sid)}
    summarised = summarised_prompt["actions"]["summarised_message_ids"]
    assert summarised
    assert all(stored[i]["state"] == "summarised" for i in summarised)
    summaries = (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"]
    assert len(summaries) == 1
    assert summaries[0]["from_message_id"] == min(summarised)
    assert summaries[0]["to_message_id"] == max(summarised)
    passport = next(f for f in summaries[0]["key_facts"] if "P1000" in f["text"])
    assert stored[passport["source_message_ids"][0]]["content"].startswith(facts[0])


async def test_summary_triggers_after_eight_turns_without_one(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    sid = session["id"]
    reasons = []
    for i in range(10):
        prompt = await start_turn(client, sid, f"Question {i}: is gate B{i} open?")
        reasons.append(prompt["actions"]["summary_reason"])
        await complete_turn(client, sid, prompt["turn_id"], f"Gate B{i} is open.")

    # Turn 9 is the first with 8 turns behind it; the next summary is 8 turns later.
    assert reasons == [None] * 8 + ["turn_count", None]
    rows = await audit_rows(client, sid)
    assert rows[8]["summary_triggered"]
    assert rows[8]["summary_id"] is not None
    assert rows[8]["estimated_input_tokens_before"] < 0.70 * INPUT_BUDGET


async def test_prune_triggers_at_90_percent_and_takes_whole_tool_exchanges(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    sid = session["id"]
    for i in range(3):
        turn = await start_turn(client, sid, f"Search {i}")
        await post_step(client, sid, turn["turn_id"], [f"t{i}"], [words(1400, i)])
        await complete_turn(client, sid, turn["turn_id"], f"Done {i}")
    turn = await start_turn(client, sid, "Search 3")

    prompt = await post_step(client, sid, turn["turn_id"], ["t3"], [words(1400, 3)])

    assert prompt["actions"]["prune_triggered"]
    pruned = prompt["actions"]["pruned_message_ids"]
    stored = {m["id"]: m for m in await stored_messages(client, sid)}
    # Whole tool exchanges went, call and result together, oldest first, down to the
    # low-water mark (50%); the current turn's exchange and every user message stayed.
    assert [stored[i]["role"] for i in pruned] == ["assistant", "tool"] * 3
    assert [stored[i]["tool_call_id"] for i in pruned[1::2]] == ["t0", "t1", "t2"]
    assert all(stored[i]["state"] == "pruned" for i in pruned)
    messages = prompt["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == [
        f"Search {i}" for i in range(4)
    ]
    assert chat_problems(messages) == []
    assert prompt["budget"]["estimated_input_tokens"] <= INPUT_BUDGET
    assert independent_prompt_tokens(messages, "gpt-4") <= INPUT_BUDGET
    row = (await audit_rows(client, sid))[-1]
    assert row["prune_triggered"]
    assert row["pruned_message_ids"] == pruned
    assert row["estimated_input_tokens_after_summary"] >= 0.90 * INPUT_BUDGET
    assert row["estimated_input_tokens_after_prune"] < 0.50 * INPUT_BUDGET


async def test_turn_that_cannot_fit_is_rejected_and_nothing_is_stored(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    sid = session["id"]

    response = await client.post(
        f"/v1/sessions/{sid}/turns", json={"message": {"content": words(6000)}}
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "context_budget_exceeded"
    assert "shorten" in error["message"] + error["details"]["guidance"].lower()
    details = error["details"]
    assert details["input_budget"] == INPUT_BUDGET
    assert details["estimated_input_tokens"] > INPUT_BUDGET
    assert details["blocks"]["current"] > 6000
    after = (await client.get(f"/v1/sessions/{sid}")).json()
    assert (after["turn_count"], after["message_count"], after["open_turn_id"]) == (0, 0, None)
    assert await stored_messages(client, sid) == []
    row = (await client.get(f"/v1/audit/{details['audit_id']}")).json()
    assert row["overflow_rejected"]
    assert row["turn_id"] is None
    assert row["rejection"]["estimated_input_tokens"] == details["estimated_input_tokens"]
    # The session is still usable with a shorter message.
    assert (await start_turn(client, sid, "Shorter, then."))["step"] == 0


async def test_step_that_cannot_fit_is_rejected_and_the_turn_stays_usable(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    sid = session["id"]
    turn = await start_turn(client, sid, "Fetch the logs.")

    # Results share one cap, but a call's own arguments are never cut: a file the model
    # writes in one call can be over the budget alone.
    arguments = json.dumps({"path": "logs.txt", "content": words(7000)})
    response = await client.post(
        f"/v1/sessions/{sid}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [
                    {"id": "write", "function": {"name": "write_file", "arguments": arguments}}
                ]
            },
            "tool_results": [{"tool_call_id": "write", "content": "written"}],
        },
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "context_budget_exceeded"
    assert len(await stored_messages(client, sid)) == 1
    retry = await post_step(client, sid, turn["turn_id"], ["small"], ["the last 20 lines"])
    assert retry["step"] == 1
    assert chat_problems(retry["messages"]) == []


async def test_every_assembly_writes_one_audit_row(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    sid = session["id"]
    turn = await start_turn(client, sid, "one")
    await post_step(client, sid, turn["turn_id"], ["a"], ["x"])
    await post_step(client, sid, turn["turn_id"], ["b"], ["y"])
    await complete_turn(client, sid, turn["turn_id"], "done")
    await client.post(f"/v1/sessions/{sid}/turns", json={"message": {"content": words(6000)}})
    second = await start_turn(client, sid, "two")

    rows = await audit_rows(client, sid)

    assert [(r["turn_seq"], r["step"], r["overflow_rejected"]) for r in rows] == [
        (1, 0, False),
        (1, 1, False),
        (1, 2, False),
        (2, 0, True),
        (2, 0, False),
    ]
    last = rows[-1]
    assert last["id"] == second["audit_id"]
    assert last["turn_id"] == second["turn_id"]
    assert last["model_alias"] == "gpt-4"
    assert (last["model_context_limit"], last["input_budget"]) == (8192, INPUT_BUDGET)
    assert last["estimated_input_tokens_after_prune"] == second["budget"]["estimated_input_tokens"]
    assert last["blocks"] == second["budget"]["blocks"]
    assert last["estimator"] == "tiktoken:cl100k_base"
    assert len(last["kept_message_ids"]) == 7  # user, 2 calls, 2 results, answer, user
    assert last["latency_ms"] > 0
    filtered = (await client.get("/v1/audit", params={"overflow_rejected": "true"})).json()
    assert [r["turn_seq"] for r in filtered["items"]] == [2]
    assert (await client.get("/v1/audit/999999")).status_code == 404


class FailingSummarizer:
    """An LLM summariser whose provider is down."""

    name = "failing"

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        raise RuntimeError("upstream said: Service Unavailable (ref ERR-7F3A)")


async def test_summariser_failure_truncates_without_losing_history(apps: RunningApp) -> None:
    _, client = await apps.start(summarizer=FailingSummarizer())
    session = await create_session(client)
    sid = session["id"]
    prompts = []
    for i in range(7):
        turn = await start_turn(client, sid, f"Task {i}: check order #{500 + i}.")
        prompts.append(await post_step(client, sid, turn["turn_id"], [f"c{i}"], [words(700, i)]))
        await complete_turn(client, sid, turn["turn_id"], f"Order {500 + i} checked.")

    fallbacks = [p for p in prompts if p["actions"]["summary_fallback"]]
    assert fallbacks, "usage crossed 70%, so the summariser was called and failed"
    assert all(p["budget"]["estimated_input_tokens"] <= INPUT_BUDGET for p in prompts)
    assert all(chat_problems(p["messages"]) == [] for p in prompts)
    # Truncation took tool chatter only; every user message is still in the prompt.
    last = prompts[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "user"] == [
        f"Task {i}: check order #{500 + i}." for i in range(7)
    ]
    assert (await client.get(f"/v1/sessions/{sid}/summaries")).json()["summaries"] == []
    stored = await stored_messages(client, sid)
    assert len(stored) == 7 * 4
    assert not any("ERR-7F3A" in str(m["content"]) for m in stored)
    assert any(m["state"] == "pruned" for m in stored)
    rows = await audit_rows(client, sid)
    assert sum(r["summary_fallback"] for r in rows) == len(fallbacks)
    metrics = (await client.get("/metrics")).text
    assert f"context_summarizer_fallback_count_total {float(len(fallbacks))}" in metrics


async def test_metrics_agree_with_the_audit_table(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    sid = session["id"]
    for i in range(10):
        turn = await start_turn(client, sid, f"Search {i}")
        await post_step(client, sid, turn["turn_id"], [f"t{i}"], [words(1300, i)])
        await complete_turn(client, sid, turn["turn_id"], f"Done {i}")
    await client.post(f"/v1/sessions/{sid}/turns", json={"message": {"content": words(6000)}})

    families = {
        f.name: f for f in text_string_to_metric_families((await client.get("/metrics")).text)
    }
    rows = await audit_rows(client, sid)

    def total(name: str) -> float:
        return sum(s.value for s in families[name].samples if s.name == name + "_total")

    assert total("context_summary_count") == sum(r["summary_id"] is not None for r in rows) > 0
    assert total("context_prune_count") == sum(bool(r["pruned_message_ids"]) for r in rows) > 0
    assert total("context_overflow_reject_count") == sum(r["overflow_rejected"] for r in rows) == 1
    tokens = families["context_prompt_tokens"]
    count = next(s.value for s in tokens.samples if s.name == "context_prompt_tokens_count")
    assert count == sum(not r["overflow_rejected"] for r in rows)


def _offline_loader(name: str) -> Any:
    raise OSError(f"cannot download {name}: no network")


async def test_missing_tokenizer_falls_back_to_the_safe_estimate(apps: RunningApp) -> None:
    _, client = await apps.start(tokenizers=TokenizerRegistry(_offline_loader))
    session = await create_session(client, system={"global": "Be brief."}, goal=None, mode=None)

    first = await start_turn(client, session["id"], "x" * 400)
    second = await start_turn(client, (await create_session(client))["id"], "hello")

    assert first["budget"]["estimator"] == "fallback:chars/4*1.25"
    # user message: 3 + ceil(4/4*1.25) + ceil(400/4*1.25); system: 3 + 2 + ceil(9/4*1.25)
    assert first["budget"]["estimated_input_tokens"] == 3 + (3 + 2 + 125) + (3 + 2 + 3)
    row = (await audit_rows(client, session["id"]))[0]
    assert row["estimator_fallback"]
    assert row["estimator"] == "fallback:chars/4*1.25"
    assert second["budget"]["estimator"] == "fallback:chars/4*1.25"
    metrics = (await client.get("/metrics")).text
    assert "context_estimator_fallback_count_total 2.0" in metrics
