"""Corrections replace what they correct, and only that, seen through the app on an 8k model:
a typo fixed in the next message, a retraction, a number negated, somebody else's thing;
and sentences that look like corrections but are not (a reminder, a state, an aside, a star
inside a sentence, a negated duration, two words that only begin alike) revise nothing."""

from __future__ import annotations

import httpx

from bench.quality import text_of
from tests.support import create_session, run_turns, start_turn, stored_messages


async def _last_prompt(
    client: httpx.AsyncClient,
    said: dict[int, str],
    turns: int = 28,
    replies: dict[int, str] | None = None,
) -> tuple[str, list[str]]:
    """The session's id and the prompt's lines one turn after a session whose user says
    ``said[n]`` at turn n and routine things otherwise, each turn with a tool result of about
    900 tokens (so that the early turns are summarised long before the end), and the
    assistant's answer ``replies[n]`` (a routine one otherwise)."""
    sid = str((await create_session(client))["id"])
    await run_turns(client, sid, said, range(turns), replies=replies)
    prompt = await start_turn(client, sid, "what's next?")
    return sid, text_of(prompt["messages"]).splitlines()


def _only_beside(lines: list[str], old: str, new: str) -> bool:
    """Whether ``old`` is never presented as current: every line holding it holds ``new``."""
    return all(new in line for line in lines if old in line)


async def test_a_typo_fixed_in_the_next_message_is_put_right_in_place(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the locksmith we hired is Bogdan Wiśniewsky",
        2: "*Wiśniewski",
        5: "the security deposit is 63 pounds",
        6: "sorry, 36 not 63",
    }
    _, lines = await _last_prompt(client, said)
    assert "- the locksmith we hired is Bogdan Wiśniewski (was: Wiśniewsky)" in lines
    assert "- the security deposit is 36 pounds (was: 63)" in lines
    assert _only_beside(lines, "Wiśniewsky", "Wiśniewski")
    assert _only_beside(lines, "63 pounds", "36 pounds")


async def test_a_star_inside_a_sentence_fixes_nothing(client: httpx.AsyncClient) -> None:
    said = {1: "Karl approves the travel expenses", 2: "Karla* handles payroll"}
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert "Karl approves the travel expenses" in text
    assert "Karla* handles payroll" in text
    assert "(was:" not in text


async def test_a_retraction_drops_the_statement_it_names_and_history_keeps_it(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the florist for the gala is Petal and Stem",
        3: "the gala is in Harrogate",
        12: "forget the florist, we're not having flowers at the gala",
    }
    sid, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert said[12] in text
    assert _only_beside(lines, "Petal and Stem", "forget the florist")
    # What shares a word with the retraction, and is not what it names, stays.
    assert "the gala is in Harrogate" in text
    # The retracted statement is still stored, readable as history.
    assert said[1] in [m["content"] for m in await stored_messages(client, sid)]


async def test_a_reminder_a_state_or_an_aside_retracts_nothing(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the caterer for the launch is Brindle and Rye",
        2: "the heating engineer is Tomasz Wójcik",
        3: "the office wifi network is Kestrel-5G",
        10: "Don't forget the caterer",
        11: "The heating is off",
        12: "Ignore the wifi",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    for fact in (said[1], said[2], said[3]):
        assert fact in text, fact
    assert "(was:" not in text


async def test_a_negated_duration_does_not_revise_a_budget(client: httpx.AsyncClient) -> None:
    said = {1: "The offsite budget is 3,000 euros", 9: "The offsite is not 3 days"}
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert said[1] in text
    assert "(was:" not in text


async def test_words_that_only_begin_alike_are_two_subjects(client: httpx.AsyncClient) -> None:
    said = {
        1: "the internet provider at the studio is Fibrelink",
        9: "actually, the interview is with Gosia Nowak",
        11: "forget the interview, it's been called off",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert said[1] in text
    # The retraction takes the interview, which it names, and nothing of the internet.
    assert "(was: actually, the interview is with Gosia Nowak)" in text
    assert "(was: the internet" not in text


async def test_a_correction_of_one_thing_keeps_the_things_that_share_its_words(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the backup notary is Ilse Verhoeven",
        2: "our notary is Joost Peeters",
        3: "the retreat is in Durbuy",
        4: "Dmitri's manager is Halvard Moe",
        5: "Dmitri is staying at the Linden Lodge",
        13: "Marta Quist is our notary",
        14: "the caterer for the retreat is Oak and Ember",
        15: "Dmitri is at the Weir House now, not the Linden Lodge",
        16: "my manager is Oona Kerr",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    # Corrected: the notary, and where Dmitri stays.
    assert _only_beside(lines, "Joost Peeters", "Marta Quist")
    assert _only_beside(lines, "Linden Lodge", "Weir House")
    # Kept: another notary, where the retreat is, whose manager is who.
    for fact in (said[1], said[3], said[4], said[16], said[14]):
        assert fact in text, fact


async def test_a_negated_time_revises_only_its_own_value(client: httpx.AsyncClient) -> None:
    said = {
        1: "the site visit is with Amara Obi at 2.30pm",
        2: "my dentist appointment is at 11.15am",
        10: "site visit: still Amara Obi, but 4.15pm now, not 2.30pm",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert said[10] in text
    assert _only_beside(lines, "2.30pm", "4.15pm")
    assert said[2] in text


async def test_an_errand_a_state_or_a_condition_retracts_nothing(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "My kids are Emma and Leo, they go to Hillside Primary.",
        2: "Remind me to buy milk, and drop the kids at school by 8:30.",
        3: "The oven is a Bosch HBA5570, bought in 2021.",
        4: "Don't worry, the oven is off.",
        5: "My phone is a Pixel 7 and the number is 07700 900555.",
        6: "my phone is off, email me instead",
        7: "Our heating oil supplier is Boyles, account 7781.",
        8: "it's cold, the heating is off.",
        9: "The caterer for the gala is Bella's Kitchen, 4,800 euros.",
        10: "If the rain comes, cancel the caterer.",
        11: "The gate code is 4471.",
        12: "I always forget the gate code, so keep it handy.",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    for fact in (said[1], said[3], said[5], said[7], said[9], said[11]):
        assert f"- {fact}" in lines, fact
    assert "(was:" not in text


async def test_a_star_fixes_only_a_near_spelling_in_the_message_just_before(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "The deposit is 54 pounds.",
        2: "The key box code is 1234.",
        3: "*45",
        5: "The hotel costs 180 per night, the Marriott.",
        6: "4.5*",
        8: "Our WiFi is Hearth-5G and the router is on the 2nd floor.",
        9: "*5GHz",
    }
    _, lines = await _last_prompt(client, said, replies={5: "What star rating do you want?"})
    text = "\n".join(lines)
    for fact in (said[1], said[2], said[5], said[8]):
        assert f"- {fact}" in lines, fact
    assert "(was:" not in text


async def test_a_choice_between_what_the_assistant_named_revises_nothing(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "I drink coffee in the morning and the standup is at 9.",
        2: "tea, not coffee",
        4: "Send the contract to Dana, she signs for us.",
        5: "sorry, Lee not Dana",
    }
    replies = {1: "Tea or coffee for the guests?", 4: "Should Dana or Lee sign the NDA?"}
    _, lines = await _last_prompt(client, said, replies=replies)
    text = "\n".join(lines)
    for fact in (said[1], said[4]):
        assert f"- {fact}" in lines, fact
    assert "(was:" not in text


async def test_emphasis_and_asides_with_a_star_are_no_statements(
    client: httpx.AsyncClient,
) -> None:
    asides = ("**Note**", "*important", "lol*", "price*", "*ptr", "*sigh*", "2025*")
    said = {1: "The venue for the launch is the Harbour Hall."}
    said.update({2 + n: aside for n, aside in enumerate(asides)})
    said[10] = "Die Besprechung ist am Dienstag um 10 Uhr."
    said[11] = "*Mittwoch"
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert f"- {said[1]}" in lines
    assert f"- {said[10]}" in lines
    assert "(was:" not in text
    for aside in ("*important", "lol*", "price*", "*ptr", "*Mittwoch"):
        assert f"- {aside}" not in lines, aside


async def test_a_day_of_the_month_revises_no_amount(client: httpx.AsyncClient) -> None:
    said = {
        1: "My landlord is Mr Okafor and the rent is 1,450.",
        3: "don't forget the rent is due on the 5th",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    assert f"- {said[1]}" in lines
    assert "1,450" in text
    assert "5th" in text
    assert "(was:" not in text


async def test_a_star_fix_said_with_sorry_or_oops_and_a_swapped_day_are_put_right(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the photographer we booked is Tomasz Nowicky",
        2: "*Nowicki, sorry",
        5: "the safe code is 8264",
        6: "oops, 8246*",
        8: "the rehearsal is on the 31st",
        9: "typo: meant the 13th",
        11: "Karol signs the invoices and the office is on floor 7",
        12: "Karla* handles payroll, sorry",
    }
    _, lines = await _last_prompt(client, said)
    assert "- the photographer we booked is Tomasz Nowicki (was: Nowicky)" in lines
    assert "- the safe code is 8246 (was: 8264)" in lines
    assert "- the rehearsal is on the 13th (was: 31st)" in lines
    assert _only_beside(lines, "Nowicky", "Nowicki")
    assert _only_beside(lines, "31st", "13th")
    # A star inside a sentence fixes nothing, whatever words follow it.
    assert f"- {said[11]}" in lines


async def test_a_retraction_finds_its_statement_by_what_it_names_and_only_that(
    client: httpx.AsyncClient,
) -> None:
    said = {
        1: "the printer for the flyers is Printing Partners",
        2: "the spending cap for the hotel is 900 euros",
        3: "the venue for the team lunch is the Quince Room",
        10: "forget the printer, we're not doing flyers anymore",
        11: "forget the cap on the hotel, there's no limit anymore",
        12: "forget the venue for the gala, it's online now",
    }
    _, lines = await _last_prompt(client, said)
    text = "\n".join(lines)
    # A value sharing the subject's stem ("Printing") does not hide what it is about.
    assert _only_beside(lines, "Printing Partners", "forget the printer")
    # "the cap on the hotel" is the spending cap for the hotel.
    assert _only_beside(lines, "900 euros", "forget the cap")
    # "the venue for the gala" is not the venue for the team lunch.
    assert f"- {said[3]}" in lines
    assert said[12] in text
