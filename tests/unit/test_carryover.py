"""Fact carry-over: what a new summary dropped of the previous one comes back, with its anchors."""

from __future__ import annotations

import tiktoken

from app.budget.carryover import carry_over, dropped_items
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TiktokenCounter

O200K = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))

PREVIOUS = SummaryContent(
    summary_text="The user plans a trip to Lisbon.",
    key_facts=(
        SummaryItem("Passport number is P1234.", (3,)),
        SummaryItem("Lands at 10:30 on 4 May.", (5,)),
    ),
    decisions=(SummaryItem("Going with the TAP flight.", (7,)),),
    open_questions=(SummaryItem("Is the hotel near the river?", (9,)),),
    action_items=(SummaryItem("Book the airport transfer.", (9,)),),
)


def test_dropped_facts_decisions_and_questions_come_back_with_their_sources() -> None:
    new = SummaryContent(
        summary_text="Trip to Lisbon, hotel chosen.",
        key_facts=(SummaryItem("Hotel is Casa do Rio.", (12,)),),
    )

    merged = carry_over(PREVIOUS, new, target_tokens=1000, counter=O200K)

    assert merged.key_facts == (*PREVIOUS.key_facts, SummaryItem("Hotel is Casa do Rio.", (12,)))
    assert merged.decisions == PREVIOUS.decisions
    assert merged.open_questions == PREVIOUS.open_questions
    assert merged.anchor_message_ids() >= PREVIOUS.anchor_message_ids()


def test_a_restated_item_is_not_duplicated_and_keeps_its_earlier_sources() -> None:
    new = SummaryContent(
        summary_text="Trip.",
        key_facts=(SummaryItem("passport number is P1234", ()),),
        decisions=PREVIOUS.decisions,
        open_questions=PREVIOUS.open_questions,
    )

    merged = carry_over(PREVIOUS, new, target_tokens=1000, counter=O200K)

    passport = [i for i in merged.key_facts if "P1234" in i.text]
    assert passport == [SummaryItem("passport number is P1234", (3,))]
    assert dropped_items(PREVIOUS, merged) == {
        "key_facts": [],
        "decisions": [],
        "open_questions": [],
    }


def test_over_target_the_new_items_give_way_before_carried_ones() -> None:
    new = SummaryContent(
        summary_text="A long narrative " * 40,
        key_facts=tuple(
            SummaryItem(f"New detail number {i} of the trip.", (20 + i,)) for i in range(20)
        ),
    )
    carried_only = carry_over(
        PREVIOUS, SummaryContent(summary_text=""), target_tokens=1000, counter=O200K
    )
    target = O200K.count_text(render_summary(carried_only)) + 20

    merged = carry_over(PREVIOUS, new, target_tokens=target, counter=O200K)

    assert O200K.count_text(render_summary(merged)) <= target
    assert set(PREVIOUS.key_facts) <= set(merged.key_facts)
    assert merged.decisions == PREVIOUS.decisions
    assert merged.open_questions == PREVIOUS.open_questions


def test_without_a_previous_summary_the_new_one_is_unchanged() -> None:
    new = SummaryContent(summary_text="Fresh.", key_facts=(SummaryItem("A fact 42.", (1,)),))

    assert carry_over(None, new, target_tokens=5, counter=O200K) == new


def test_the_users_statements_come_back_in_any_section_marked_as_theirs() -> None:
    previous = SummaryContent(
        summary_text="Trip.",
        key_facts=(SummaryItem("I'm allergic to peanuts.", (2,), from_user=True),),
        action_items=(SummaryItem("Remember to never book red-eye flights.", (4,), True),),
    )
    # A model that restates one without its mark and drops the other.
    new = SummaryContent(
        summary_text="Trip.", key_facts=(SummaryItem("I'm allergic to peanuts", ()),)
    )

    merged = carry_over(previous, new, target_tokens=1000, counter=O200K)

    assert merged.key_facts == (SummaryItem("I'm allergic to peanuts", (2,), from_user=True),)
    assert merged.action_items == previous.action_items


def test_over_target_the_users_new_statements_outlast_other_new_items() -> None:
    new = SummaryContent(
        summary_text="",
        key_facts=(
            SummaryItem("Please call me Wren from now on.", (30,), from_user=True),
            *(SummaryItem(f"Tool row {i}: H-{i} costs {i} EUR.", (40 + i,)) for i in range(20)),
        ),
    )
    carried_only = carry_over(
        PREVIOUS, SummaryContent(summary_text=""), target_tokens=1000, counter=O200K
    )
    target = O200K.count_text(render_summary(carried_only)) + 30

    merged = carry_over(PREVIOUS, new, target_tokens=target, counter=O200K)

    assert O200K.count_text(render_summary(merged)) <= target
    assert "Please call me Wren from now on." in [i.text for i in merged.key_facts]
    assert set(PREVIOUS.key_facts) <= set(merged.key_facts)


def test_a_statement_a_new_correction_revises_is_not_carried_back() -> None:
    """The model dropped the old value on purpose: carry-over does not bring it back."""
    previous = SummaryContent(
        summary_text="",
        key_facts=(
            SummaryItem("the offsite is in Lyon this year", (3,), from_user=True),
            SummaryItem("I prefer answers as bullet points", (4,), from_user=True),
        ),
    )
    new = SummaryContent(
        summary_text="",
        key_facts=(
            SummaryItem("actually, not Lyon — the offsite moved to Porto", (20,), from_user=True),
        ),
    )
    merged = carry_over(previous, new, target_tokens=1000, counter=O200K)
    texts = [item.text for item in merged.key_facts]
    assert texts == ["I prefer answers as bullet points", new.key_facts[0].text]


def test_a_revised_statement_kept_beside_its_correction_is_left_out() -> None:
    """The model kept both, reordered: only the correction stays current."""
    new = SummaryContent(
        summary_text="",
        key_facts=(
            SummaryItem("correction: Sunniva owns the payments dashboard now", (30,), True),
            SummaryItem("Gustavo owns the payments dashboard", (8,), from_user=True),
            SummaryItem("Octavian owns the status page", (9,), from_user=True),
        ),
    )
    merged = carry_over(None, new, target_tokens=1000, counter=O200K)
    assert [item.text for item in merged.key_facts] == [
        "correction: Sunniva owns the payments dashboard now",
        "Octavian owns the status page",
    ]


def test_an_unmarked_restatement_with_a_new_value_is_not_carried_back() -> None:
    """No "actually": the user simply states the new value, and the old one stays behind."""
    previous = SummaryContent(
        summary_text="",
        key_facts=(
            SummaryItem("the rent is 1,040 pounds a month", (3,), from_user=True),
            SummaryItem("I prefer answers as bullet points", (4,), from_user=True),
        ),
    )
    new = SummaryContent(
        summary_text="",
        key_facts=(SummaryItem("the rent is 1,200 pounds a month", (40,), from_user=True),),
    )
    merged = carry_over(previous, new, target_tokens=1000, counter=O200K)
    texts = [item.text for item in merged.key_facts]
    assert texts == ["I prefer answers as bullet points", "the rent is 1,200 pounds a month"]


def test_a_second_statement_that_adds_is_carried_back_beside_it() -> None:
    """ "too" adds a value: both hold."""
    previous = SummaryContent(
        summary_text="",
        key_facts=(SummaryItem("Gustavo owns the payments dashboard", (8,), from_user=True),),
    )
    new = SummaryContent(
        summary_text="",
        key_facts=(SummaryItem("Sunniva owns the payments dashboard too", (30,), from_user=True),),
    )
    merged = carry_over(previous, new, target_tokens=1000, counter=O200K)
    assert [item.text for item in merged.key_facts] == [
        "Gustavo owns the payments dashboard",
        "Sunniva owns the payments dashboard too",
    ]
