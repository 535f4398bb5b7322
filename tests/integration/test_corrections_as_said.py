"""Corrections said as people say them replace the old value, seen through the app on an 8k
model: a fact said twice and then corrected, a correction opened with courtesy ("sorry, I
meant …"), second thoughts, a change of plan in another language; and look-alike facts that
are not corrections (a flight back beside the flight out, two people's addresses, an "also",
a conditional) revise nothing."""

from __future__ import annotations

from typing import Any

import httpx

from app.budget.recall import RECALL_HEADING
from bench.quality import text_of
from tests.support import create_session, run_turns, start_turn


async def _last_prompt(
    client: httpx.AsyncClient, said: dict[int, str], question: str = "what's next?"
) -> dict[str, Any]:
    """The prompt for ``question`` after a session (recall on) whose user says ``said[n]``
    at turn n and routine things otherwise, each turn with a tool result of about 900 tokens,
    so that the early turns are summarised long before the end."""
    sid = str((await create_session(client, recall={"enabled": True}))["id"])
    await run_turns(client, sid, said, range(28))
    return await start_turn(client, sid, question)


def _lines(prompt: dict[str, Any]) -> list[str]:
    return text_of(prompt["messages"]).splitlines()


def _stale(lines: list[str], old: str, new: str) -> list[str]:
    """The lines that present ``old`` as current: they hold it without ``new``."""
    return [line for line in lines if old in line and new not in line]


async def test_a_fact_said_twice_then_corrected_is_current_in_neither_copy(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the plumber is Ruth Okonkwo",
        5: "as I said, the plumber is Ruth Okonkwo",
        9: "scratch that, the plumber is Bram de Vries",
    }
    lines = _lines(await _last_prompt(client, said))
    assert any("Bram de Vries" in line for line in lines)
    assert _stale(lines, "Ruth Okonkwo", "Bram de Vries") == []


async def test_asked_again_recall_brings_back_neither_copy_of_a_fact_said_twice(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the team lunch is at Cobble Yard",
        5: "remember, team lunch at Cobble Yard",
        9: "the team lunch is at the Old Forge now",
    }
    prompt = await _last_prompt(client, said, "where is the team lunch again?")
    lines = _lines(prompt)
    recalled = "\n".join(
        str(m["content"])
        for m in prompt["messages"]
        if str(m.get("content") or "").startswith(RECALL_HEADING)
    )
    assert any("the Old Forge" in line for line in lines)
    assert "Cobble Yard" not in recalled
    assert _stale(lines, "Cobble Yard", "the Old Forge") == []


async def test_a_correction_opened_with_sorry_keeps_its_new_value(
    client: httpx.AsyncClient,
) -> None:
    said = {1: "the retro is in room D17", 6: "sorry, I meant room C04 for the retro"}
    lines = _lines(await _last_prompt(client, said))
    assert any("C04" in line for line in lines)
    assert _stale(lines, "D17", "C04") == []


async def test_on_second_thought_replaces_what_it_revises(client: httpx.AsyncClient) -> None:
    said = {
        1: "the parking permit costs 85 pounds",
        7: "on second thought, the parking permit is 110 pounds",
    }
    lines = _lines(await _last_prompt(client, said))
    assert any("110 pounds" in line for line in lines)
    assert _stale(lines, "85 pounds", "110 pounds") == []


async def test_a_change_of_plan_in_spanish_replaces_what_it_revises(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "La cena de empresa es en Sevilla.",
        7: "Cambio de planes: la cena de empresa es en Granada.",
    }
    lines = _lines(await _last_prompt(client, said))
    assert any("Granada" in line for line in lines)
    assert _stale(lines, "Sevilla", "Granada") == []


async def test_the_flight_back_from_a_city_leaves_the_flight_to_it(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "my flight to Oslo leaves at 6.10am",
        7: "my flight back from Oslo leaves at 7.25am",
    }
    text = text_of((await _last_prompt(client, said))["messages"])
    assert said[1] in text
    assert said[7] in text


async def test_two_peoples_addresses_an_also_and_a_conditional_revise_nothing(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "Anna's address is 4 Mill Lane",
        2: "we're inviting Tomasz Reyes to the launch",
        3: "the picnic is at Hyde Park",
        8: "Ben's address is 17 Kiln Row",
        9: "we're also inviting Dana Whitfield to the launch",
        10: "if it rains, the picnic is at the Boat Shed",
    }
    text = text_of((await _last_prompt(client, said))["messages"])
    for value in ("4 Mill Lane", "Tomasz Reyes", "Hyde Park"):
        assert value in text, value
    assert "(was:" not in text


async def test_pushing_a_date_to_another_replaces_it(client: httpx.AsyncClient) -> None:
    said = {1: "the demo is on the 23rd", 7: "push the demo to the 14th"}
    lines = _lines(await _last_prompt(client, said))
    assert any("the 14th" in line for line in lines)
    assert _stale(lines, "the 23rd", "the 14th") == []


async def test_a_number_restated_for_the_same_thing_replaces_it(
    client: httpx.AsyncClient,
) -> None:
    said = {1: "my gym locker is number 118", 7: "my gym locker is number 307"}
    lines = _lines(await _last_prompt(client, said))
    assert any("number 307" in line for line in lines)
    assert _stale(lines, "number 118", "number 307") == []


async def test_a_numbered_thing_beside_another_of_its_kind_revises_nothing(
    client: httpx.AsyncClient,
) -> None:
    said = {1: "seat 1C is the window seat", 7: "seat 4C is the aisle seat"}
    text = text_of((await _last_prompt(client, said))["messages"])
    assert said[1] in text
    assert said[7] in text


async def test_correcting_one_of_two_things_at_the_same_hour_leaves_the_other(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the dentist is at 3pm",
        2: "the school pickup is at 3pm",
        3: "make that 4pm",
    }
    text = text_of((await _last_prompt(client, said))["messages"])
    assert said[1] in text


async def test_correcting_one_of_two_meetings_in_the_same_room_leaves_the_other(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the retro is in room D17",
        5: "the interview is in room D17",
        9: "sorry, I meant room C04",
    }
    text = text_of((await _last_prompt(client, said))["messages"])
    assert said[1] in text


async def test_correcting_the_flight_out_leaves_the_flight_back_at_the_same_hour(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "my flight to Oslo leaves at 6.10am",
        5: "my flight back from Oslo leaves at 6.10am",
        9: "scratch that, my flight to Oslo leaves at 8am",
    }
    lines = _lines(await _last_prompt(client, said))
    assert any("8am" in line for line in lines)
    assert any(said[5] in line for line in lines)


async def test_a_push_that_may_happen_or_was_refused_revises_nothing(
    client: httpx.AsyncClient,
) -> None:
    for maybe in (
        "maybe we push the demo to the 14th, let me check with Sam",
        "the client wants to push the demo to the 14th but I said no",
    ):
        said = {1: "the demo is on the 23rd", 7: maybe}
        text = text_of((await _last_prompt(client, said))["messages"])
        assert "the demo is on the 23rd" in text, maybe
        assert "(was:" not in text, maybe


async def test_a_push_we_could_make_or_must_not_make_revises_nothing(
    client: httpx.AsyncClient,
) -> None:
    for maybe in (
        "we could push the demo to the 14th",
        "don't push the demo to the 14th",
    ):
        said = {1: "the demo is on the 23rd", 7: maybe}
        text = text_of((await _last_prompt(client, said))["messages"])
        assert "the demo is on the 23rd" in text, maybe
        assert "(was:" not in text, maybe


async def test_a_change_of_plan_in_the_singular_replaces_what_it_revises(
    client: httpx.AsyncClient,
) -> None:
    for before, after, old, new in (
        (
            "Spotkanie zarządu odbywa się w Poznaniu.",
            "Zmiana planu: spotkanie zarządu odbywa się w Toruniu.",
            "Poznaniu",
            "Toruniu",
        ),
        (
            "Das Sommerfest findet in Kassel statt.",
            "Planwechsel: das Sommerfest findet in Erfurt statt.",
            "Kassel",
            "Erfurt",
        ),
    ):
        lines = _lines(await _last_prompt(client, {1: before, 7: after}))
        assert any(new in line for line in lines), after
        assert _stale(lines, old, new) == [], after
