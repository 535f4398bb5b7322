"""What the user says survives real phrasing, seen through the app on an 8k model: a fact
inside a question or a request, a statement in another language or script, and a correction
that does not repeat the old value (which is then never presented as current)."""

from __future__ import annotations

from typing import Any

import httpx

from bench.quality import text_of
from tests.support import complete_turn, create_session, post_step, start_turn, words

ROUTINE = (
    "grep the logs for trace 9f3c2a77e1",
    "rerun job ingest-{n}",
    "thanks!",
    "tail worker-{n}.log",
    "why did test_cache_retry fail?",
)


async def _session(client: httpx.AsyncClient, said: dict[int, str], turns: int) -> dict[str, Any]:
    """A session whose user says ``said[n]`` at turn n and routine things otherwise, each turn
    with a tool result of about 900 tokens; the prompt of one more turn after the last."""
    sid = str((await create_session(client))["id"])
    for n in range(turns):
        prompt = await start_turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)))
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done in {n}s, exit code 0.")
    return await start_turn(client, sid, "what's next?")


def _summary_lines(prompt: dict[str, Any]) -> list[str]:
    return text_of(prompt["messages"][:1]).splitlines()


async def test_facts_inside_questions_requests_and_other_languages_are_kept(
    client: httpx.AsyncClient,
) -> None:
    # The block is more than half full of statements before these are said: a request or a
    # question of the work in hand would give way now, a statement does not.
    filler = {
        n: f"Person {n} is {name}, who works from {city} and owns the {thing}."
        for n, (name, city, thing) in enumerate(
            [
                (name, city, thing)
                for name in ("Marguerite", "Theodoric", "Priyanka", "Oluwaseun")
                for city in ("Kraków", "Malmö", "Reykjavík")
                for thing in ("billing service", "status page")
            ],
            start=1,
        )
    }
    said = {
        25: "what time is it in Bratislava right now? they're expecting my call",
        26: "is the Dunedin region big enough for the pilot? that's where the customer is",
        27: "open a ticket for Cuthbert's team about the flaky export, they maintain it",
        30: "うちのインフラチームは札幌にいるので、朝早くの連絡は避けてください。",
        31: "这个项目的负责人是李娜，有问题直接找她。",  # noqa: RUF001
    }
    prompt = await _session(client, {**filler, **said}, turns=40)
    summary = "\n".join(_summary_lines(prompt))
    for statement in said.values():
        # Kept in the summary, in the user's words: a question with the clause after it
        # that refers back to it, as one.
        assert statement in summary, statement


async def test_a_correction_that_does_not_repeat_the_old_value_replaces_it(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the retro is on Tuesday this sprint",
        2: "make that Thursday instead",
        5: "the offsite is in Lyon this year",
        12: "forget what I said about the offsite, it's going to be in Porto",
        14: "standup is at half past nine every day",
        18: "scratch what I said earlier, standup is at ten fifteen",
    }
    prompt = await _session(client, said, turns=28)
    lines = text_of(prompt["messages"]).splitlines()
    text = "\n".join(lines)
    assert said[12] in text
    assert said[18] in text
    # The bare correction says what it revises, as history beside the new value.
    assert "- make that Thursday instead (was: the retro is on Tuesday this sprint)" in lines
    # No old value is presented as current: it is only ever on a line with the new one.
    for old, new in (("Tuesday", "Thursday"), ("Lyon", "Porto"), ("half past nine", "ten fifteen")):
        assert new in text
        assert all(new in line for line in lines if old in line), old
    assert "the offsite is in Lyon this year" not in text


async def test_a_revision_said_long_after_unmarked_or_in_part_leaves_no_old_value_current(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "our landlord is Ingrid Halvorsen, she lives upstairs",
        2: "I'm on flight LX 1614, leaving the twelfth of April.",
        4: "the storage quota is forty terabytes",
        6: "For the record, our notary is Odile Marchand, cc her on the lease.",
        # An unmarked restatement, many turns later.
        16: "the landlord is Wojciech Zieliński",
        # The mark in a sentence of its own.
        18: "wait, I got that wrong before. the storage quota is twenty-five terabytes. sorry",
        # A partial one: the flight's number is not said again.
        19: "same flight, but the airline moved it to the fifteenth of April",
        # One that names the old value only in the sentence that takes it back.
        21: "Hmm, I was wrong about Odile Marchand. Our notary is Jens Ulrich.",
    }
    prompt = await _session(client, said, turns=30)
    lines = text_of(prompt["messages"]).splitlines()
    text = "\n".join(lines)
    for old, new in (
        ("Ingrid Halvorsen", "Wojciech Zieliński"),
        ("forty terabytes", "twenty-five terabytes"),
        ("twelfth of April", "fifteenth of April"),
        ("Odile Marchand", "Jens Ulrich"),
    ):
        assert new in text, new
        # The old value is only ever history, on the line of the new one.
        assert all(new in line for line in lines if old in line), old
    # What the partial correction did not say is kept, beside it.
    assert "LX 1614" in text
