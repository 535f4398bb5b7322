"""Facts the user states in a shape other than a sentence of their own, seen through the app
on an 8k model: a line of a list, a terse answer to the assistant's question (kept with the
question's subject), a fact inside a question; and a request after a question, which is no
answer."""

from __future__ import annotations

from typing import Any

import httpx

from app.budget.statements import ANSWER_ARROW
from bench.quality import text_of
from tests.support import complete_turn, create_session, post_step, start_turn, words

ROUTINE = (
    "grep the logs for trace 9f3c2a77e1",
    "rerun job ingest-{n}",
    "thanks!",
    "tail worker-{n}.log",
    "why did test_cache_retry fail?",
)
#: Statements said before the ones under test: the block is more than half full of them, so
#: a line read as routine gives way, and one read as a statement stays.
STATED = {
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


async def _session(
    client: httpx.AsyncClient,
    said: dict[int, str],
    turns: int,
    answers: dict[int, str] | None = None,
) -> dict[str, Any]:
    """A session whose user says ``said[n]`` at turn n (routine things otherwise) and whose
    assistant ends turn n with ``answers[n]``, each turn with a tool result of about 900
    tokens; the prompt of one more turn after the last."""
    answers = answers or {}
    sid = str((await create_session(client))["id"])
    for n in range(turns):
        prompt = await start_turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)))
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        answer = answers.get(n, f"Job {n} done in {n}s, exit code 0.")
        await complete_turn(client, sid, prompt["turn_id"], answer)
    return await start_turn(client, sid, "what's next?")


def _summary_lines(prompt: dict[str, Any]) -> list[str]:
    return text_of(prompt["messages"][:1]).splitlines()


async def test_facts_in_a_bulleted_list_are_kept_and_its_tasks_give_way(
    client: httpx.AsyncClient,
) -> None:
    listed = "ok a few things for the offsite:\n- 62 people\n- budget 4,200 euros\n- book the train"
    prompt = await _session(client, {**STATED, 25: listed}, turns=40)
    lines = _summary_lines(prompt)
    # Each fact of the list is a line of the summary, in the user's words.
    assert any(line.endswith("- 62 people") for line in lines), lines
    assert any(line.endswith("- budget 4,200 euros") for line in lines), lines
    # The task asked for work: it gives way before statements, as any routine request does.
    assert not any("book the train" in line for line in lines)


async def test_a_terse_answer_is_kept_with_the_subject_of_the_question(
    client: httpx.AsyncClient,
) -> None:
    said = {**STATED, 25: "schedule the delivery to the Leeds depot", 26: "Thursday"}
    asked = {25: "Sure. Which day works for the delivery?"}
    prompt = await _session(client, said, turns=40, answers=asked)
    lines = _summary_lines(prompt)
    # The user's word, verbatim, beside the words of the question that say what it answers.
    assert any(line.endswith(f"day delivery?{ANSWER_ARROW}Thursday") for line in lines), lines


async def test_a_request_after_the_assistant_asked_is_not_taken_as_an_answer(
    client: httpx.AsyncClient,
) -> None:
    said = {**STATED, 25: "deploy the hotfix", 26: "can you check the ingest logs first"}
    asked = {25: "Ready when you are. Should I roll it out to the Frankfurt cluster?"}
    prompt = await _session(client, said, turns=40, answers=asked)
    lines = _summary_lines(prompt)
    assert not any("check the ingest logs" in line for line in lines), lines
    assert not any(ANSWER_ARROW in line for line in lines), lines


async def test_a_fact_inside_a_question_is_kept(client: httpx.AsyncClient) -> None:
    asked = "do I need to let Marco know the venue moved to Tondela?"
    prompt = await _session(client, {**STATED, 25: asked}, turns=40)
    assert any(line.endswith(asked) for line in _summary_lines(prompt))
