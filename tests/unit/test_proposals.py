"""What an assistant's message puts forward, and what the user's reply does with it."""

from __future__ import annotations

import pytest

from app.budget.proposals import asked_in_full, declines, proposal, respond

TRAINS = "I can book the 09:38 or the 13:17 — which one?"
QUOTES = "Two quotes came back: 340 euros or 415 euros. Which should I accept?"
LISTED = (
    "Which hotel should I reserve?\n- Hotel Adler, 120 € per night\n- Hotel Post, 95 € per night"
)
BUDGET = "Should I set the budget to 4,200 euros?"
VENUE = (
    "You said the venue is the Marriott Riverside, but the booking shows the Hilton Quayside "
    "— should I update it to the Hilton Quayside?"
)


@pytest.mark.parametrize(
    ("offered", "reply", "chosen"),
    [
        (TRAINS, "the later one", "13:17"),
        (TRAINS, "13:17 works", "13:17"),
        (TRAINS, "option 1", "09:38"),
        (TRAINS, "go with the second", "13:17"),
        (TRAINS, "ja, die zweite", "13:17"),
        (QUOTES, "the cheaper one, please", "340 euros"),
        (QUOTES, "#2", "415 euros"),
        (LISTED, "the Adler", "Hotel Adler, 120 € per night"),
        (LISTED, "the cheaper one", "Hotel Post, 95 € per night"),
        (BUDGET, "sounds good", "4,200 euros"),
        (BUDGET, "oui, vas-y", "4,200 euros"),
        (VENUE, "right, my mistake", "Hilton Quayside"),
        ("Ich kann um 18:40 oder um 20:25 reservieren. Welche Zeit?", "die spätere", "20:25"),
        ("Shall I put the headcount at 38 people?", "yes please", "38 people"),
    ],
)
def test_a_reply_picks_or_confirms_what_was_put_forward(
    offered: str, reply: str, chosen: str
) -> None:
    put_forward = proposal(offered)
    assert put_forward is not None
    response = respond(put_forward, reply)
    assert response is not None
    assert response.chosen == chosen


@pytest.mark.parametrize(
    ("offered", "reply"),
    [
        (TRAINS, "what's the difference between them?"),
        (TRAINS, "let me check with Dave"),
        (TRAINS, "yes"),  # yes to "which one?" says not which
        (TRAINS, "logs for edge-proxy last 30 min, errors only"),  # "last" picks nothing here
        (TRAINS, "cancel the last one"),
        (BUDGET, "no, not yet"),
        (BUDGET, "let's hold off"),
        (VENUE, "no, it's the Marriott Riverside, the booking is wrong"),
    ],
)
def test_a_reply_that_declines_asks_back_or_does_not_say_chooses_nothing(
    offered: str, reply: str
) -> None:
    put_forward = proposal(offered)
    assert put_forward is not None
    assert respond(put_forward, reply) is None


def test_a_value_given_instead_is_the_users_own() -> None:
    put_forward = proposal(BUDGET)
    assert put_forward is not None
    response = respond(put_forward, "ok but make it 4,600 euros")
    assert response is not None
    assert response.chosen == ""


def test_a_declined_proposal_is_told_from_a_choice() -> None:
    put_forward = proposal(BUDGET)
    assert put_forward is not None
    assert declines(put_forward, "hmm, not now")
    assert not declines(put_forward, "yes")


def test_a_proposed_correction_names_what_it_replaces() -> None:
    put_forward = proposal(VENUE)
    assert put_forward is not None
    assert put_forward.options == ("Hilton Quayside",)
    assert put_forward.replaces == ("Marriott Riverside",)


@pytest.mark.parametrize(
    "text",
    [
        "Done, the report is sent. Anything else?",
        "Should I run the tests now?",
        "I found 3 failing tests in checkout-api. Should I rerun them?",
        "Should I rerun the job on build-4411?",
        "The morning list is full.\n1) Two patients share that slot, so one has to move.\n"
        "2) Telehealth slots are shorter, twenty minutes each.\nOK to proceed?",
    ],
)
def test_a_question_that_puts_nothing_forward_is_no_proposal(text: str) -> None:
    assert proposal(text) is None


def test_a_question_kept_alone_carries_its_options() -> None:
    put_forward = proposal(LISTED)
    assert put_forward is not None
    kept = asked_in_full(put_forward)
    assert kept == (
        "Which hotel should I reserve: Hotel Adler, 120 € per night or Hotel Post, 95 € per night?"
    )
    again = proposal(kept)
    assert again is not None
    assert len(again.options) == 2


def test_a_long_reply_and_a_long_proposal_are_read_only_in_part() -> None:
    # What keeps a licence key of thousands of capitals cheap to read: a reply longer than a
    # choice is never read for one, and of the assistant's message only its end is read.
    key = "QWERTYUIOPASDFGHJKLZXCVBNM" * 300
    asked = f"I found this key: {key}. Should I register the licence for Acme GmbH?"
    put_forward = proposal(asked)
    assert put_forward == proposal(asked[-2000:])
    if put_forward is not None:
        assert respond(put_forward, "yes, key: " + key) is None
        assert not declines(put_forward, "no, key: " + key)
