"""Facts the user states in more shapes, seen through the app on an 8k model: a question
that puts a value forward (a proposal, a doubt, a check with a tag), a row of a pasted
table, a list marked with letters or arrows, a prohibition said with a request, a line of
items separated by semicolons; and a proposal with nothing in it, which gives way."""

from __future__ import annotations

import httpx
import pytest

from tests.integration.test_answers_and_lists import STATED, _session, _summary_lines


@pytest.mark.parametrize(
    "asked",
    [
        "can we move the site visit to the 14th?",
        "what if we hold the launch in Ghent instead?",
        "isn't the deposit 1,940 though?",
        "the invoice goes to Wendelin, right?",
        "¿y si hacemos la cena en Chamberí?",
    ],
)
async def test_a_question_that_puts_a_value_forward_is_kept(
    client: httpx.AsyncClient, asked: str
) -> None:
    prompt = await _session(client, {**STATED, 25: asked}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith(asked) for line in lines), lines


async def test_a_proposal_without_a_value_gives_way(client: httpx.AsyncClient) -> None:
    said = {**STATED, 25: "can we rerun the export?", 26: "can we get the logs for INC-4411?"}
    prompt = await _session(client, said, turns=40)
    lines = _summary_lines(prompt)
    assert not any("rerun the export" in line for line in lines), lines
    assert not any("INC-4411" in line for line in lines), lines


async def test_the_rows_of_a_pasted_table_are_kept(client: httpx.AsyncClient) -> None:
    table = "\n".join(
        [
            "for the retreat:",
            "| what | detail |",
            "|---|---|",
            "| headcount | 57 people |",
            "| booking ref | BK-72291 |",
        ]
    )
    prompt = await _session(client, {**STATED, 25: table}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith("| headcount | 57 people |") for line in lines), lines
    assert any(line.endswith("| booking ref | BK-72291 |") for line in lines), lines
    # The rule under the header says nothing.
    assert not any(line.endswith("|---|---|") for line in lines), lines


async def test_lines_marked_with_letters_and_arrows_are_kept(client: httpx.AsyncClient) -> None:
    listed = "summary of the call\na) check-in from half past three\nb) 64 people\n→ 57 chairs"
    prompt = await _session(client, {**STATED, 25: listed}, turns=40)
    lines = _summary_lines(prompt)
    # "check-in" is a noun here, not the verb "check" asking for work.
    assert any(line.endswith("a) check-in from half past three") for line in lines), lines
    assert any(line.endswith("b) 64 people") for line in lines), lines
    assert any(line.endswith("→ 57 chairs") for line in lines), lines


async def test_a_prohibition_said_with_a_request_is_kept(client: httpx.AsyncClient) -> None:
    said = "go ahead and clean up the temp tables, but nothing gets deleted before the audit closes"
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    assert any("nothing gets deleted before the audit closes" in line for line in lines), lines


async def test_a_name_before_does_stays_with_its_line(client: httpx.AsyncClient) -> None:
    said = "booking ref BK-40417; budget 5,480 euros; Zdeněk does the badges; send the agenda"
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    # One line: cut before "does", the name would stand alone and the badges lose their owner.
    assert any("Zdeněk does the badges" in line for line in lines), lines
