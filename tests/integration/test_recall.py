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


async def test_recall_without_a_ceiling_stays_within_its_share_of_the_budget(
    apps: RunningApp,
) -> None:
    client, sid = await summarised_session(apps, recall={"share": 0.004, "ceiling": 0})

    prompt = await start_turn(client, sid, QUESTION)

    share = 0.004 * prompt["budget"]["input_budget"]
    assert prompt["budget"]["blocks"].get("recall", 0) <= share


async def test_recall_takes_its_share_of_a_total_cap_rather_than_of_the_budget(
    apps: RunningApp,
) -> None:
    client, sid = await summarised_session(apps, recall={"share": 0.5}, block_caps={"total": 60})

    prompt = await start_turn(client, sid, QUESTION)

    assert prompt["budget"]["blocks"].get("recall", 0) <= 30


async def test_a_prompt_far_below_its_budget_gives_the_block_room_up_to_the_ceiling(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    recall = {"share": 0.01, "ceiling": 0.4, "max_hits": 40}
    sid = (await create_session(client, recall=recall))["id"]
    trips = [f"Our trip number {n} to Porto was for the wine fair in week {n}." for n in range(30)]
    await talk(client, sid, *trips, "Unrelated: book the museum for Sunday.")

    prompt = await start_turn(client, sid, "Which Porto trips were for the wine fair?")

    budget = prompt["budget"]
    recalled = budget["blocks"]["recall"]
    assert recalled > 0.01 * budget["input_budget"]
    assert budget["estimated_input_tokens"] <= 0.4 * budget["input_budget"]
    assert sum(trip in recalled_text(prompt) for trip in trips) > 10
    counted = independent_prompt_tokens(prompt["messages"], "gpt-4")
    assert counted <= budget["input_budget"]


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
    assert changed.json()["recall"] == {
        "enabled": True,
        "share": 0.15,
        "ceiling": 0.5,
        "max_hits": 2,
    }
    assert len(recall_messages(await start_turn(client, sid, QUESTION))) == 1
    refused = await client.patch(f"/v1/sessions/{sid}", json={"recall": {"share": 0.9}})
    assert refused.status_code == 422
    cleared = await client.patch(f"/v1/sessions/{sid}", json={"recall": None})
    assert cleared.json()["recall"] is None


# -- ranking that finds the source ------------------------------------------------------------


async def asked_after(
    apps: RunningApp, lines: tuple[str, ...], question: str, **recall: Any
) -> dict[str, Any]:
    """The prompt of a turn asking ``question`` once every line (one turn each, answered
    "Noted.") has left the prompt (a summary every turn, one turn kept)."""
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True, **recall}))["id"]
    await talk(client, sid, *lines, "Unrelated: book the museum for Sunday.")
    return await start_turn(client, sid, question)


def recalled_text(prompt: dict[str, Any]) -> str:
    blocks = recall_messages(prompt)
    return str(blocks[0]["content"]) if blocks else ""


async def test_a_rare_word_outranks_words_many_messages_share(apps: RunningApp) -> None:
    lines = (
        FACT,
        "The Lisbon flat has a lovely view of the river.",
        "Clean the Lisbon flat before we leave.",
        "The Lisbon flat is close to the tram stop.",
        "Pay the rent of the Lisbon flat on the first.",
    )

    prompt = await asked_after(
        apps, lines, "What was the locker code again, Lisbon flat?", max_hits=1
    )

    assert FACT in recalled_text(prompt)


async def test_an_earlier_question_is_not_recalled_as_the_answer(apps: RunningApp) -> None:
    lines = ("What is the locker code for the Lisbon flat, do you know?", FACT)

    prompt = await asked_after(apps, lines, QUESTION, max_hits=1)

    assert FACT in recalled_text(prompt)
    assert "do you know" not in recalled_text(prompt)


async def test_the_message_with_the_detail_beats_one_that_mentions_it(apps: RunningApp) -> None:
    lines = (FACT, "Remember to check the locker code for the Lisbon flat with the landlord.")

    prompt = await asked_after(apps, lines, QUESTION, max_hits=1)

    assert FACT in recalled_text(prompt)


async def test_a_name_the_speakers_call_each_other_is_no_detail(apps: RunningApp) -> None:
    # A dialogue: "Mel" is in most lines, so it tells none of them apart, and the line that
    # only asks about the memory must not pass for one that holds a detail.
    answer = "My best camping memory is the night by the lake, roasting marshmallows."
    lines = (
        "Wow, that's awesome, Mel! What's your best camping memory?",
        answer,
        "Thanks, Mel! Camping sounds fun, the kids will love it.",
        "Bring the camping chairs next time, Mel.",
    )

    prompt = await asked_after(apps, lines, "What is the best camping memory?", max_hits=1)

    assert answer in recalled_text(prompt)


async def test_a_version_in_the_question_finds_the_stored_version(apps: RunningApp) -> None:
    source = "Production runs Postgres 15.4.2 until the freeze ends."
    lines = (
        source,
        "Staging runs Postgres 14.1 and has 15 replicas.",
        "We had 4 incidents and 2 of them were in week 15.",
    )

    prompt = await asked_after(apps, lines, "Which environment is on 15.4.2?", max_hits=1)

    assert source in recalled_text(prompt)


async def test_an_answer_spread_over_two_messages_comes_back_whole(apps: RunningApp) -> None:
    host = "The bastion host for the ingest cluster is bastion-7.corp.example.net."
    login = "Log in to the ingest bastion as ops-mei with the hardware key."

    prompt = await asked_after(apps, (host, login), "How do I log in to the ingest bastion host?")

    assert host in recalled_text(prompt)
    assert login in recalled_text(prompt)


async def test_an_answer_spread_over_many_messages_comes_back_whole_by_default(
    apps: RunningApp,
) -> None:
    trips = [
        f"Our {month} trip was to {city}, for the {event}."
        for month, city, event in (
            ("March", "Porto", "wine fair"),
            ("April", "Seville", "spring fair"),
            ("May", "Bilbao", "design week"),
            ("June", "Valencia", "bonfires"),
            ("July", "Madrid", "pride march"),
            ("August", "Lisbon", "street parties"),
            ("September", "Faro", "seafood festival"),
        )
    ]

    prompt = await asked_after(apps, tuple(trips), "Where did our trips take us?")

    assert all(trip in recalled_text(prompt) for trip in trips)


async def test_the_reply_to_a_recalled_question_comes_back_with_it(apps: RunningApp) -> None:
    # The answer shares no word with the later question: only the line that asked does.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    asked = await start_turn(client, sid, "What did you all do at the church picnic?")
    answer = "We played charades and ran a scavenger hunt by the lake."
    await complete_turn(client, sid, asked["turn_id"], answer)
    await talk(client, sid, "Unrelated: book the museum for Sunday.", "And a table for two.")

    prompt = await start_turn(client, sid, "What happened at the church picnic?")

    recalled = recalled_text(prompt)
    assert "church picnic?" in recalled
    assert answer in recalled
    assert recalled.index("church picnic?") < recalled.index(answer)


async def test_a_question_nobody_answered_is_not_recalled(apps: RunningApp) -> None:
    # The user asked and the turn closed without an answer; the next turn asks again.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    await talk(client, sid, FACT)
    unanswered = "Did Ana ever tell you the locker code of the Lisbon flat?"
    asked = await start_turn(client, sid, unanswered)
    await complete_turn(client, sid, asked["turn_id"], None)
    await talk(client, sid, "Unrelated: book the museum for Sunday.", "And a table for two.")

    prompt = await start_turn(client, sid, QUESTION)

    assert FACT in recalled_text(prompt)
    assert "Did Ana" not in recalled_text(prompt)


async def test_the_next_question_is_not_taken_for_the_reply(apps: RunningApp) -> None:
    # Two questions in a row, the first never answered: the second is no reply to it.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    first = await start_turn(client, sid, "What did you all do at the church picnic?")
    await complete_turn(client, sid, first["turn_id"], None)
    await talk(client, sid, "Can you book the museum for Sunday?", "And a table for two.")

    prompt = await start_turn(client, sid, "What happened at the church picnic?")

    assert "church picnic?" not in recalled_text(prompt)
    assert "museum" not in recalled_text(prompt)


async def test_a_statement_brings_no_reply_along(apps: RunningApp) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    told = await start_turn(client, sid, "We all went to the church picnic on Sunday.")
    await complete_turn(client, sid, told["turn_id"], "We played charades by the lake.")
    await talk(client, sid, "Unrelated: book the museum for Sunday.", "And a table for two.")

    prompt = await start_turn(client, sid, "Who went to the church picnic?")

    assert "church picnic on Sunday" in recalled_text(prompt)
    assert "charades" not in recalled_text(prompt)


async def test_a_message_summarised_in_this_very_turn_can_come_back(apps: RunningApp) -> None:
    # A summary every fourth turn: the fifth, the question, folds the fact in.
    _, client = await apps.start(mandatory_summary_turns=4, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    await talk(client, sid, FACT, "Window seats.", "Dinner by the river.", "Museum.")
    first = (await client.get(f"/v1/sessions/{sid}/messages", params={"limit": 1})).json()

    prompt = await start_turn(client, sid, QUESTION)

    assert prompt["actions"]["summary_triggered"] is True
    assert first["messages"][0]["id"] in prompt["actions"]["summarised_message_ids"]
    assert "[message 1, user] " + FACT in recalled_text(prompt)
    assert prompt["budget"]["estimated_input_tokens"] <= prompt["budget"]["input_budget"]
    row = (await audit_rows(client, sid))[-1]
    assert row["block_telemetry"]["recall"]["message_ids"] == [first["messages"][0]["id"]]


async def test_a_prompt_near_its_budget_gets_a_block_only_within_what_is_left(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (
        await create_session(
            client, model="gpt-4", recall={"enabled": True, "share": 0.5, "max_hits": 5}
        )
    )["id"]
    await talk(client, sid, FACT, "Window seats please.", "Dinner by the river.")
    long_question = QUESTION + " " + " ".join(f"context{n}" for n in range(1500))

    prompt = await start_turn(client, sid, long_question)

    budget = prompt["budget"]
    assert budget["estimated_input_tokens"] <= budget["input_budget"]
    counted = independent_prompt_tokens(prompt["messages"], "gpt-4")
    assert counted <= budget["input_budget"]


async def test_with_embeddings_the_words_best_hit_is_not_lost(apps: RunningApp) -> None:
    # The fake's vectors encode topics: every line about money is as near to the question
    # as the one that holds the answer, and newer.
    with serve_fake_embeddings() as fake:
        settings: dict[str, Any] = {"mandatory_summary_turns": 1, "protected_window_turns": 1}
        _, client = await apps.start(**settings, **embedding_settings(fake))
        sid = (await create_session(client, recall={"enabled": True, "max_hits": 3}))["id"]
        source = "Our budget for the Lisbon offsite is 4600 euros in total."
        lines = (
            source,
            *(
                f"The cost report {n} says we spend too much money on cheap stuff."
                for n in range(6)
            ),
            "Unrelated: book the museum for Sunday.",
        )
        await talk(client, sid, *lines)
        await all_embedded(apps.database_url, sid, 2 * len(lines))

        prompt = await start_turn(client, sid, "How big was the budget for the Lisbon offsite?")

    assert source in recalled_text(prompt)


async def test_with_embeddings_lines_sharing_only_the_speakers_name_yield_to_meaning(
    apps: RunningApp,
) -> None:
    # A two-person dialogue: every line says the speaker's name, so a question naming her
    # shares that word with all of them and a rare word with none. Only meaning finds the
    # line that answers; the name-only matches must not take the block's places first.
    source = "Melanie: I cook a vegetarian lunch for the kids most days."
    chatter = [f"Melanie: Thanks, see you soon, take care number {n}!" for n in range(8)]
    lines = (*chatter[:6], source, *chatter[6:])
    question = "What does Melanie eat?"
    settings: dict[str, Any] = {"mandatory_summary_turns": 1, "protected_window_turns": 1}
    recalled = {}
    with serve_fake_embeddings() as fake:
        for name, extra in (("words", {}), ("both", embedding_settings(fake))):
            _, client = await apps.start(**settings, **extra)
            sid = (await create_session(client, recall={"enabled": True, "max_hits": 2}))["id"]
            for line in lines:
                turn = await start_turn(client, sid, line)
                await complete_turn(client, sid, turn["turn_id"], "Sure thing, Melanie.")
            if extra:
                await all_embedded(apps.database_url, sid, 2 * len(lines))
            recalled[name] = recalled_text(await start_turn(client, sid, question))

    assert source not in recalled["words"]
    assert source in recalled["both"]


async def test_words_inside_a_url_or_a_path_match(apps: RunningApp) -> None:
    url = "https://grafana.acme.io/d/123x/billing-latency"
    path = "/srv/ingest/conf/limits.yaml"
    lines = (f"We watch {url} during deploys.", f"Throttling is set in {path} only.")

    by_url = await asked_after(apps, lines, "Which grafana board shows billing latency?")
    by_path = await asked_after(apps, lines, "Where are the ingest limits configured?")

    assert url in recalled_text(by_url)
    assert path in recalled_text(by_path)


# -- what tools returned ------------------------------------------------------------------


def service_listing(port: int) -> str:
    """A tool result of the kind agents get back: a long listing, the detail in its middle."""
    rows = [
        f"service worker-{n} status running uptime {n * 7}h region eu-west-{n % 3}"
        for n in range(40)
    ]
    rows.insert(21, f"service ledger-db status running listens on port {port} replica lag 0.2s")
    return "\n".join(rows)


async def tool_session(apps: RunningApp, **recall: Any) -> tuple[httpx.AsyncClient, str]:
    """A session whose first turn called a tool that returned ``service_listing(6543)``, then
    moved on until that result left the prompt."""
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True, **recall}))["id"]
    turn = await start_turn(client, sid, "List what runs on the cluster, please.")
    await post_step(client, sid, turn["turn_id"], ["call_ls"], [service_listing(6543)])
    await complete_turn(client, sid, turn["turn_id"], "Forty-one services are running.")
    await talk(client, sid, "Book dinner somewhere near the river.", "Remind me about tickets.")
    return client, sid


async def test_a_detail_a_tool_returned_comes_back_quoted_in_the_block(apps: RunningApp) -> None:
    client, sid = await tool_session(apps)

    prompt = await start_turn(client, sid, "Which port does the ledger database listen on?")

    recalled = recalled_text(prompt)
    assert "service ledger-db status running listens on port 6543" in recalled
    assert "tool result]" in recalled
    # Only its words around the detail, not the whole listing.
    assert "worker-0 " not in recalled
    assert "worker-39 " not in recalled
    # Quoted inside the block: no tool message without its call, for either provider.
    assert [m for m in prompt["messages"] if m["role"] == "tool"] == []
    assert chat_problems(prompt["messages"]) == []
    assert anthropic_problems(to_anthropic(prompt["messages"])) == []


async def test_a_step_shows_the_recalled_tool_result_as_its_turn_start_did(
    apps: RunningApp,
) -> None:
    client, sid = await tool_session(apps)
    first = await start_turn(client, sid, "Which port does the ledger database listen on?")

    step = await post_step(client, sid, first["turn_id"], ["call_2"], ["checked the runbook"])

    assert "port 6543" in recalled_text(first)
    assert recall_messages(step) == recall_messages(first)
    assert (await audit_rows(client, sid))[-1]["prefix_kept"] is True


async def test_a_detail_of_a_tool_result_of_megabytes_comes_back_within_the_budget(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    turn = await start_turn(client, sid, "List what runs on the cluster, please.")
    rows = [f"service batch-{n} status idle queue depth {n % 50}" for n in range(42_000)]
    huge = service_listing(6543) + "\n" + "\n".join(rows)  # 1.9 MB: about the most one takes
    await post_step(client, sid, turn["turn_id"], ["call_ls"], [huge])
    await complete_turn(client, sid, turn["turn_id"], "Forty-two thousand services are listed.")
    await talk(client, sid, "Book dinner somewhere near the river.", "Remind me about tickets.")

    prompt = await start_turn(client, sid, "Which port does the ledger database listen on?")

    assert "service ledger-db status running listens on port 6543" in recalled_text(prompt)
    budget = prompt["budget"]
    assert budget["estimated_input_tokens"] <= budget["input_budget"]
    assert independent_prompt_tokens(prompt["messages"], "gpt-4") <= budget["input_budget"]
    step = await post_step(client, sid, prompt["turn_id"], ["call_2"], ["checked the runbook"])
    assert recall_messages(step) == recall_messages(prompt)


async def test_a_log_line_deep_in_a_large_tool_result_comes_back_and_stays_at_the_next_step(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    turn = await start_turn(client, sid, "Pull the deployer's log for this week.")
    # 200 kB of other services' deploys, the one asked about at about 150 kB.
    lines = [
        f"2026-11-27T10:{n % 60:02}:00Z ERROR deployer {('billing', 'search', 'catalog')[n % 3]} "
        f"deploy failed: error_code=ERR-{1000 + n % 900} rollout aborted"
        for n in range(2_400)
    ]
    lines.insert(
        1_800,
        "2026-11-27T14:02:07Z ERROR deployer payments deploy failed: "
        "error_code=PAY-4821 rollout aborted at step 3",
    )
    await post_step(client, sid, turn["turn_id"], ["call_log"], ["\n".join(lines)])
    await complete_turn(client, sid, turn["turn_id"], "The log shows several failed deploys.")
    await talk(client, sid, "Book dinner somewhere near the river.", "Remind me about tickets.")

    prompt = await start_turn(client, sid, "What was the error code on the payments deploy?")

    assert "payments deploy failed: error_code=PAY-4821" in recalled_text(prompt)
    assert (
        independent_prompt_tokens(prompt["messages"], "gpt-4") <= prompt["budget"]["input_budget"]
    )
    step = await post_step(client, sid, prompt["turn_id"], ["call_2"], ["checked the runbook"])
    assert recall_messages(step) == recall_messages(prompt)


async def test_embeddings_that_tell_no_message_apart_change_nothing_words_found(
    apps: RunningApp,
) -> None:
    # No line names a topic of the fake, so every vector is the same: a ranking by meaning
    # that knows nothing must not reorder what the words found (here, toward newer lines).
    lines = (
        "The locker code for the Lisbon flat is 4471, key under the mat.",
        "The Lisbon flat locker is in the hall.",
        "The Lisbon flat has a view of the river.",
        "The Lisbon flat rent is paid.",
        "The flat rent was paid again.",
        "The Lisbon tram stop is close.",
        "Unrelated: book the museum for Sunday.",
    )
    question = "What is the locker code of the Lisbon flat?"
    settings: dict[str, Any] = {"mandatory_summary_turns": 1, "protected_window_turns": 1}
    recalled = {}
    with serve_fake_embeddings() as fake:
        for name, extra in (("words", {}), ("both", embedding_settings(fake))):
            _, client = await apps.start(**settings, **extra)
            sid = (await create_session(client, recall={"enabled": True, "max_hits": 4}))["id"]
            await talk(client, sid, *lines)
            if extra:
                await all_embedded(apps.database_url, sid, 2 * len(lines))
            recalled[name] = recalled_text(await start_turn(client, sid, question))

    assert "The Lisbon flat has a view of the river." in recalled["words"]
    assert recalled["both"] == recalled["words"]


async def test_a_message_with_no_word_to_look_for_searches_nothing(apps: RunningApp) -> None:
    client, sid = await summarised_session(apps, recall={"enabled": True})

    prompt = await start_turn(client, sid, "And what was it?")

    assert recall_messages(prompt) == []
    row = (await audit_rows(client, sid))[-1]
    assert "recall" not in (row["block_telemetry"] or {})


async def test_a_question_that_states_a_code_of_its_own_is_recalled(apps: RunningApp) -> None:
    # Unanswered, but it states the booking it asks about: it is an item in its own right.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    asked = await start_turn(
        client, sid, "My booking QX7P2L is on flight LH1234, can you check in?"
    )
    await complete_turn(client, sid, asked["turn_id"], None)
    await talk(client, sid, "Unrelated: book the museum for Sunday.", "And a table for two.")

    prompt = await start_turn(client, sid, "Which flight is booking QX7P2L on?")

    assert "LH1234" in recalled_text(prompt)


async def test_what_the_assistant_said_comes_back_for_another_form_of_its_words(
    apps: RunningApp,
) -> None:
    # "quarantine" asks for what the assistant said as "quarantined": Postgres' english
    # configuration matches the two by their stem, and SQLite's index does too.
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    turn = await start_turn(client, sid, "Look at the flaky checkout suite, please.")
    said = "The flaky one is `test_cart_totals_rounding`; I've quarantined it for now."
    await complete_turn(client, sid, turn["turn_id"], said)
    await talk(client, sid, "Book dinner somewhere near the river.", "Remind me about tickets.")

    prompt = await start_turn(client, sid, "What did you quarantine?")

    assert f"assistant] {said}" in recalled_text(prompt)


async def test_what_a_tool_returned_comes_back_for_another_form_of_its_words(
    apps: RunningApp,
) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client, recall={"enabled": True}))["id"]
    turn = await start_turn(client, sid, "Get me an interpreter for Tuesday.")
    result = '{"interpreter_booking": "INT-9082", "language": "Tagalog", "status": "confirmed"}'
    await post_step(client, sid, turn["turn_id"], ["call_book"], [result])
    await complete_turn(client, sid, turn["turn_id"], "Done.")
    await talk(client, sid, "Book dinner somewhere near the river.", "Remind me about tickets.")

    prompt = await start_turn(client, sid, "Which bookings did they confirm?")

    assert "INT-9082" in recalled_text(prompt)
    assert "tool result]" in recalled_text(prompt)
