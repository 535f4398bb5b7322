"""The summary's user block, seen through the app on an 8k model: the user's own words come
first, a correction replaces what it revises, routine requests and small talk give way, and
a statement that leaves the block leaves visibly (in the summary's text and the audit row)
while its message stays in the history."""

from __future__ import annotations

from typing import Any

import httpx

from bench.quality import text_of
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    stored_messages,
    words,
)

ROUTINE = (
    "grep the logs for trace 9f3c2a77e1",
    "rerun job ingest-{n}",
    "thanks!",
    "tail worker-{n}.log",
    "ok",
    "why did test_cache_retry fail?",
)


async def _turn(client: httpx.AsyncClient, sid: str, said: str, n: int) -> dict[str, Any]:
    """One tool-using turn: the user's message, a tool result of about 900 tokens, the
    answer. Returns the prompt of the turn's start."""
    prompt = await start_turn(client, sid, said)
    await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
    await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done in {n}s, exit code 0.")
    return prompt


async def _session(client: httpx.AsyncClient, said: dict[int, str], turns: int) -> dict[str, Any]:
    """A session whose user says ``said[n]`` at turn n and routine things otherwise; the
    prompt of one more turn after the last."""
    sid = str((await create_session(client))["id"])
    for n in range(turns):
        await _turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)), n)
    last = await start_turn(client, sid, "what's next?")
    return {"id": sid, **last}


def _summary_text(prompt: dict[str, Any]) -> str:
    return text_of(prompt["messages"][:1])


async def test_a_correction_replaces_what_it_revises(client: httpx.AsyncClient) -> None:
    prompt = await _session(
        client,
        {
            1: "the offsite is in Lyon this year",
            9: "actually, not Lyon — the offsite moved to Porto",
        },
        turns=24,
    )
    text = text_of(prompt["messages"])
    assert "the offsite moved to Porto" in text
    # Lyon is only ever named beside Porto, as history.
    assert all("Porto" in line for line in text.splitlines() if "Lyon" in line)
    assert "the offsite is in Lyon this year" not in text


async def test_a_short_standing_rule_late_in_a_session_survives(
    client: httpx.AsyncClient,
) -> None:
    rule = "no deploys on Fridays"
    early = {
        n: f"{name} owns the {thing}."
        for n, (name, thing) in enumerate(
            [("Marguerite", "billing service"), ("Theodoric", "status page")], start=1
        )
    }
    prompt = await _session(client, {**early, 20: rule}, turns=40)
    text = _summary_text(prompt)
    assert rule in text
    assert "Marguerite owns the billing service." in text
    # Small talk and the routine requests of the early turns gave way.
    assert "thanks!" not in text


async def test_names_in_any_script_and_a_fact_inside_a_request_survive(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the contractor helping us is Дмитрий",
        2: "our designer is 王芳, send mockups there",
        3: "can you remind the team that Bogdana is out until the twentieth?",
        4: "Zoë signs off on every release",
        5: "we have twelve engineers on the pager rotation",
    }
    prompt = await _session(client, said, turns=30)
    text = _summary_text(prompt)
    for statement in said.values():
        assert statement in text, statement


async def test_a_statement_that_leaves_the_block_is_counted_audited_and_kept(
    client: httpx.AsyncClient,
) -> None:
    # More statements than the block holds: each names a person, a place and a deadline.
    said = {
        n: f"Person {n} is {name}, who works from {city} and owns the {thing} until March."
        for n, (name, city, thing) in enumerate(
            [
                (name, city, thing)
                for name in ("Marguerite", "Theodoric", "Priyanka", "Oluwaseun", "Bogdana")
                for city in ("Kraków", "Malmö", "Reykjavík", "Tromsø", "Hobart", "Windhoek")
                for thing in ("billing service", "status page")
            ][:54],
            start=1,
        )
    }
    prompt = await _session(client, said, turns=56)
    rows = await audit_rows(client, prompt["id"])
    leaving = [
        r["block_telemetry"]["summary_left_out"]
        for r in rows
        if "summary_left_out" in (r["block_telemetry"] or {})
    ]
    assert leaving, "no statement left the block"
    left_ids = {i for entry in leaving for i in entry["message_ids"]}
    assert all(entry["statements"] >= 1 for entry in leaving)
    # The summary that left them says so, with their ids.
    summaries = (
        await client.get(f"/v1/sessions/{prompt['id']}/summaries", params={"limit": 500})
    ).json()["summaries"]
    notices = " ".join(s["summary_text"] for s in summaries)
    assert "user statement(s) left out for room" in notices
    assert any(f"#{i}" in notices for i in left_ids)
    # The newest statements are in the last prompt (summary or raw); the messages that left
    # are still stored, whole.
    text = text_of(prompt["messages"])
    assert all(said[n] in text for n in range(max(said) - 8, max(said) + 1))
    stored = {m["id"]: m for m in await stored_messages(client, prompt["id"])}
    assert left_ids <= set(stored)
    assert all(stored[i]["role"] == "user" for i in left_ids)
    assert any(stored[i]["content"] in said.values() for i in left_ids)


async def test_requests_that_name_new_places_every_turn_give_way_to_what_the_user_said(
    client: httpx.AsyncClient,
) -> None:
    # A travel agent's traffic: every request names a city, a month or a hotel, some in
    # another language. Taken for statements they would fill the block and push out what
    # the user said about themselves in the first turns.
    said = {
        1: "My home airport is Kraków Balice, everything should start and end there.",
        2: "Could you add Ngozi Adichie as the second driver on the rental?",
        3: "does the lounge take kids? asking for my son, he's six",
        4: "Mi hermana vive en Rosario, a veces viajo con ella.",
        5: "never book me anything before nine in the morning",
        6: "frequent flyer: SK 88123",
    }
    cities = ("Reykjavík", "Tromsø", "Córdoba", "Valparaíso", "Montréal", "Zürich", "Bergen")
    months = ("March", "April", "June", "September", "October")
    requests = {
        n: (
            f"find me flights from {cities[n % 7]} to {cities[(n + 3) % 7]} in {months[n % 5]}",
            f"¿hay hoteles baratos en {cities[n % 7]} para el {n} de {months[n % 5]}?",
            f"can u check if Hotel Number {n} in {cities[(n + 1) % 7]} has free cancellation",
        )[n % 3]
        for n in range(7, 64)
    }
    prompt = await _session(client, {**requests, **said}, turns=64)
    summary = _summary_text(prompt)
    for statement in said.values():
        assert statement in summary, statement
    # The requests gave way: none of the oldest is in the summary.
    assert not any(requests[n] in summary for n in range(7, 20))


async def test_a_report_made_again_and_again_gives_way_to_facts_said_once(
    client: httpx.AsyncClient,
) -> None:
    # A clinic's traffic: every few turns the same report of another patient, each with a
    # name, a time and a clause of its own. Taken for statements they fill the block
    # newest first and push out what the user said once, early on.
    said = {
        1: "Our accountant is Rui Vasconcelos, invoices go to him at the end of the month.",
        2: "A no-show gets charged thirty-five euros, it's on the sign at reception.",
        3: "Mein Limit für das ganze Projekt ist zweiunddreißigtausend Euro.",
        4: "my emial is bia.m.santos@proton.example if teh system needs one",
    }
    patients = [
        f"{first} {last}"
        for first in ("Tereza", "Bruno", "Wanjiru", "Rahim", "Céline", "Yuki", "Priyanka")
        for last in ("Horáková", "Tavares", "Kamau", "Chowdhury", "Marchand", "Tanabe", "Sen")
    ]
    reports = {
        n: f"cancel {patients[n]}'s {7 + n % 11}:{15 + n % 40}, she's sick" for n in range(6, 48)
    }
    prompt = await _session(client, {**reports, **said}, turns=48)
    summary = _summary_text(prompt)
    for statement in said.values():
        assert statement in summary, statement
    # The oldest reports gave way, and none of them is counted as a statement left out.
    assert not any(reports[n] in summary for n in range(6, 20))
    assert "user statement(s) left out" not in summary


async def test_a_correction_marked_by_now_in_another_language_replaces_what_it_revises(
    client: httpx.AsyncClient,
) -> None:
    prompt = await _session(
        client,
        {
            1: "Nomor WhatsApp kantor kami 0857 2261 9034, jangan pakai yang lama ya.",
            2: "Der Steuerberater ist in Lörrach, Post geht dahin.",
            3: "my emial is tunde@zoho.example if teh system needs one",
            11: "nomor kantor sekarang 0813 9948 1207",
            12: "der Steuerberater ist jetzt in Wolfenbüttel.",
            13: "scratch tunde@zoho.example. bia.m.santos@proton.example",
        },
        turns=30,
    )
    lines = text_of(prompt["messages"]).splitlines()
    for old, new in (
        ("0857 2261 9034", "0813 9948 1207"),
        ("Lörrach", "Wolfenbüttel"),
        ("tunde@zoho.example", "bia.m.santos@proton.example"),
    ):
        assert any(new in line for line in lines), new
        # The old value is only ever named beside the new one, as history.
        assert all(new in line for line in lines if old in line), old


async def test_a_fact_said_word_for_word_again_and_again_stays_in_the_summary(
    client: httpx.AsyncClient,
) -> None:
    # An agent that sends the user's standing facts anew every few turns: the same words
    # three times are one fact, not a routine to give way to the facts said once around it
    # (which fill more than half of the block, and less than all of it).
    allergy = "I am allergic to penicillin."
    names = (
        "Joana Piotr Aiko Bruno Chen Dara Emil Fatma Goran Hana Ivo Jude Kofi Lena "
        "Mateo Nadia Omar Pilar Quinn Rosa Sven Tomas Uma Vera Wim Xena Yusuf Zoe"
    )
    colleagues = [
        f"My colleague {name} handles the {account} account from our {city} office."
        for name, (account, city) in zip(
            names.split(),
            [
                (account, city)
                for account in ("Acme", "Globex", "Initech", "Umbrella")
                for city in ("Lisbon", "Gdansk", "Osaka", "Porto", "Taipei", "Cork", "Aarhus")
            ],
            strict=True,
        )
    ]
    said = {1: allergy, 5: allergy, 9: allergy}
    turns = iter(n for n in range(1, 40) if n not in said)
    said.update({next(turns): colleague for colleague in colleagues})
    prompt = await _session(client, said, turns=max(said) + 6)
    text = _summary_text(prompt)
    assert allergy in text
    assert all(colleague in text for colleague in colleagues)
    rows = await audit_rows(client, prompt["id"])
    assert not any("summary_left_out" in (r["block_telemetry"] or {}) for r in rows)


async def test_a_routine_that_leaves_the_block_is_audited_with_its_message_ids(
    client: httpx.AsyncClient,
) -> None:
    # The clinic's report, each naming another patient: judged alone each would be a
    # statement; said again and again it is routine, leaves the block uncounted in the
    # summary's notice, and the audit row still lists the messages that left.
    patients = [
        f"{first} {last}"
        for first in ("Tereza", "Bruno", "Wanjiru", "Rahim", "Céline", "Yuki", "Priyanka")
        for last in ("Horáková", "Tavares", "Kamau", "Chowdhury", "Marchand", "Tanabe", "Sen")
    ]
    reports = {
        n: f"cancel {patients[n]}'s {7 + n % 11}:{15 + n % 40}, she's sick" for n in range(2, 48)
    }
    said = {1: "Our accountant is Rui Vasconcelos, invoices go to him at the end of the month."}
    prompt = await _session(client, {**reports, **said}, turns=48)
    summary = _summary_text(prompt)
    assert said[1] in summary
    assert "user statement(s) left out" not in summary
    rows = await audit_rows(client, prompt["id"])
    routine = [
        r["block_telemetry"]["summary_routine_left_out"]
        for r in rows
        if "summary_routine_left_out" in (r["block_telemetry"] or {})
    ]
    assert routine, "no routine line was audited as leaving"
    assert all(entry["lines"] >= 1 and entry["message_ids"] for entry in routine)
    left_ids = {i for entry in routine for i in entry["message_ids"]}
    stored = {m["id"]: m for m in await stored_messages(client, prompt["id"])}
    assert left_ids <= set(stored)
    assert all(stored[i]["role"] == "user" for i in left_ids)
    assert not any(stored[i]["content"] == said[1] for i in left_ids)
    # Every report the last prompt no longer holds is one an audit row listed as leaving.
    text = text_of(prompt["messages"])
    gone = {i for i, m in stored.items() if m["content"] in reports.values()} - {
        i for i, m in stored.items() if m["role"] == "user" and m["content"] in text
    }
    assert gone, "every report is still in the prompt"
    assert gone <= left_ids


async def test_scratch_and_the_names_of_a_paper_or_a_cafe_mark_no_correction(
    client: httpx.AsyncClient,
) -> None:
    # Ordinary English: none of the later sentences revises the earlier one beside it.
    said = {
        1: "My kitchen table is oak.",
        2: "Our London office opens at 8.",
        3: "We meet at the Lighthouse cafe on Mondays.",
        4: "The Lisbon office has 40 desks.",
        11: "My kitchen table has a scratch.",
        12: "Our Berlin office subscribes to the NYT.",
        13: "We meet at the Agora cafe on Fridays.",
        14: "The Porto office has 25 desks, and the NYT wrote about it.",
        15: "I bake bread from scratch every Sunday.",
    }
    prompt = await _session(client, said, turns=30)
    text = _summary_text(prompt)
    for statement in said.values():
        assert statement in text, statement


async def test_scratch_the_slot_and_agora_in_portuguese_still_correct(
    client: httpx.AsyncClient,
) -> None:
    prompt = await _session(
        client,
        {
            1: "the dentist is on Thursday at 3pm",
            2: "O contabilista é o Rui Lopes, em Braga.",
            11: "scratch the 3pm, the dentist is on Thursday at 5pm",
            12: "o contabilista agora é a Inês Faria",
        },
        turns=30,
    )
    lines = text_of(prompt["messages"]).splitlines()
    for old, new in (("3pm", "5pm"), ("Rui Lopes", "Inês Faria")):
        assert any(new in line for line in lines), new
        # The old value is only ever named beside the new one, as history.
        assert all(new in line for line in lines if old in line), old
