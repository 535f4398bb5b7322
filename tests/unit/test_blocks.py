"""Seed 000: per-block caps and de-duplication of the summary against memory."""

from __future__ import annotations

from app.budget.blocks import (
    cap_summary,
    cap_text,
    dedupe_summary,
    history_over_cap,
    normalise_line,
)
from app.budget.policy import HistoryMessage
from app.budget.summary import SummaryContent, SummaryItem, has_lines, render_summary
from app.budget.tokens import FallbackCounter

COUNTER = FallbackCounter()


def test_normalisation_follows_seed_000() -> None:
    assert normalise_line("  - Likes   WINDOW seats ") == "likes window seats"
    assert normalise_line("• * likes window seats") == "likes window seats"
    assert normalise_line("likes window seats.") != "likes window seats"


def test_summary_lines_that_repeat_memory_are_dropped() -> None:
    summary = SummaryContent(
        "Earlier conversation.",
        key_facts=(SummaryItem("Passport expires 2031", (4,)), SummaryItem("Gate B12", (5,))),
    )

    deduped, removed = dedupe_summary(summary, "- passport   expires 2031\nprefers aisle")

    assert removed == 1
    assert deduped.key_facts == (SummaryItem("Gate B12", (5,)),)


def test_a_summary_emptied_by_memory_has_no_lines_left() -> None:
    summary = SummaryContent("Seen before", key_facts=(SummaryItem("Gate B12"),))

    deduped, removed = dedupe_summary(summary, "seen before\n- gate b12")

    assert removed == 2
    assert not has_lines(deduped)


def test_summary_cap_drops_action_items_before_decisions() -> None:
    summary = SummaryContent(
        "s",
        decisions=(SummaryItem("We chose the 9am flight."),),
        action_items=tuple(SummaryItem(f"Book item {i} " * 5) for i in range(5)),
    )

    capped, removed = cap_summary(summary, 30, COUNTER)

    assert COUNTER.count_text(render_summary(capped)) <= 30
    assert capped.decisions == summary.decisions
    assert removed == len(summary.action_items) - len(capped.action_items)


def test_text_cap_keeps_whole_lines_from_the_top() -> None:
    text = "\n".join(f"line {i} " + "x" * 20 for i in range(10))

    capped, removed = cap_text(text, 40, COUNTER)

    assert capped is not None
    assert text.startswith(capped)
    assert COUNTER.count_text(capped) <= 40
    assert removed == 10 - len(capped.splitlines())


def test_history_cap_removes_oldest_units_whole_and_keeps_the_newest() -> None:
    history = [
        HistoryMessage(1, 1, "user", 50, message_id=1),
        HistoryMessage(2, 1, "assistant", 10, calls_tools=True, message_id=2),
        HistoryMessage(3, 1, "tool", 200, answers_seq=2, message_id=3),
        HistoryMessage(4, 1, "assistant", 50, message_id=4),
        HistoryMessage(5, 2, "user", 50, message_id=5),
        HistoryMessage(6, 2, "assistant", 50, message_id=6),
        HistoryMessage(7, 3, "user", 500, message_id=7),
    ]

    left_out = history_over_cap(history, current_turn_seq=3, limit=150, min_recent_messages=2)

    assert left_out == (1, 2, 3)  # 410 tokens, minus 50 and the 210 of the tool exchange


def test_history_cap_never_goes_below_the_recent_floor() -> None:
    history = [
        HistoryMessage(1, 1, "user", 500, message_id=1),
        HistoryMessage(2, 1, "assistant", 500, message_id=2),
        HistoryMessage(3, 2, "user", 10, message_id=3),
    ]

    assert history_over_cap(history, current_turn_seq=2, limit=0, min_recent_messages=2) == ()
