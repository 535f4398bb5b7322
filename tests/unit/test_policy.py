"""The summarise-then-prune policy of seed 003 §5 and §8 (PRODUCT.md policy 2-5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from app.budget.policy import (
    Budget,
    BudgetSettings,
    HistoryMessage,
    PrunePlan,
    compute_budget,
    history_tokens,
    plan_fallback_truncation,
    plan_prune,
    plan_summary,
)

DEFAULTS = BudgetSettings()


def flat_budget(input_budget: int) -> Budget:
    """A budget with round thresholds: 70 % and 90 % of a round number."""
    return Budget(
        model_context_limit=input_budget,
        output_reserve=0,
        overhead_reserve=0,
        input_budget=input_budget,
    )


# 70 % = 7000, 90 % = 9000.
BUDGET = flat_budget(10_000)


def mid(seq: int) -> int:
    """The message id of the message with this seq (ids differ from seqs on purpose)."""
    return 1000 + seq


@dataclass
class SessionBuilder:
    messages: list[HistoryMessage] = field(default_factory=list)

    def _add(
        self,
        turn: int,
        role: str,
        tokens: int,
        *,
        calls_tools: bool = False,
        answers_seq: int | None = None,
    ) -> int:
        seq = len(self.messages)
        assert role in ("user", "assistant", "tool")
        self.messages.append(
            HistoryMessage(
                seq=seq,
                turn_seq=turn,
                role=role,  # type: ignore[arg-type]
                tokens=tokens,
                calls_tools=calls_tools,
                answers_seq=answers_seq,
                message_id=mid(seq),
            )
        )
        return seq

    def turn(
        self,
        turn: int,
        *,
        user: int = 100,
        steps: Sequence[tuple[int, Sequence[int]]] = (),
        answer: int | None = 100,
    ) -> None:
        """A user message, tool steps (call tokens, result tokens...), an optional answer."""
        self._add(turn, "user", user)
        for call_tokens, results in steps:
            call = self._add(turn, "assistant", call_tokens, calls_tools=True)
            for result in results:
                self._add(turn, "tool", result, answers_seq=call)
        if answer is not None:
            self._add(turn, "assistant", answer)


def build_session() -> list[HistoryMessage]:
    """Six turns, the sixth open; with the default window of 4, turns 1-2 are old.

    seq  turn  message                    unit
    0    1     user 500                   {0}        old user
    1    1     assistant call 1250        {1, 2}     old tool chatter (2500)
    2    1     tool 1250
    3    1     assistant answer 500       {3}        old assistant
    4    2     user 500                   {4}        old user
    5    2     assistant call 500         {5, 6, 7}  old tool chatter (2500)
    6    2     tool 1000
    7    2     tool 1000
    8    2     assistant answer 500       {8}        old assistant
    9    3     user 100                              window
    10   3     assistant call 50          {10, 11}   window tool chatter (100)
    11   3     tool 50
    12   3     assistant answer 100
    13   4     user 100
    14   4     assistant answer 100
    15   5     user 100
    16   5     assistant call 50          {16, 17}   window tool chatter (100)
    17   5     tool 50
    18   5     assistant answer 100
    19   6     user 100                              current turn
    20   6     assistant call 50
    21   6     tool 50
    """
    builder = SessionBuilder()
    builder.turn(1, user=500, steps=[(1250, [1250])], answer=500)
    builder.turn(2, user=500, steps=[(500, [1000, 1000])], answer=500)
    builder.turn(3, steps=[(50, [50])])
    builder.turn(4)
    builder.turn(5, steps=[(50, [50])])
    builder.turn(6, steps=[(50, [50])], answer=None)
    return builder.messages


HISTORY = build_session()
HISTORY_TOKENS = history_tokens(HISTORY)
CURRENT_TURN = 6
CURRENT_SEQS = {19, 20, 21}
OLD_SEQS = tuple(range(9))
UNITS = [{1, 2}, {3}, {5, 6, 7}, {8}, {10, 11}, {16, 17}]
PRUNABLE_TOKENS = 7000 + 200  # all of turns 1-2 plus the window's tool chatter


def test_session_fixture_is_what_the_docstring_says() -> None:
    assert len(HISTORY) == 22
    assert HISTORY_TOKENS == 7000 + 1000
    assert {m.seq for m in HISTORY if m.turn_seq == CURRENT_TURN} == CURRENT_SEQS
    assert history_tokens(m for m in HISTORY if m.seq in OLD_SEQS) == 7000


def fixed_for_usage(usage: int, history: Sequence[HistoryMessage] = HISTORY) -> int:
    fixed = usage - history_tokens(history)
    assert fixed >= 0, "a test scenario needs a usage the history alone does not exceed"
    return fixed


def assert_units_whole(pruned: Sequence[int]) -> None:
    chosen = set(pruned)
    for unit in UNITS:
        assert unit <= chosen or not unit & chosen, f"unit {unit} split by {sorted(chosen)}"


# --------------------------------------------------------------------------- plan_summary

# 70 % = 14_000: above what the history alone costs, so thresholds can be approached from below.
SUMMARY_BUDGET = flat_budget(20_000)


def summary_plan(
    *,
    usage: int,
    turns_since_summary: int = 0,
    settings: BudgetSettings = DEFAULTS,
    history: Sequence[HistoryMessage] = HISTORY,
    current_turn: int = CURRENT_TURN,
    budget: Budget = SUMMARY_BUDGET,
) -> tuple[bool, str | None, tuple[int, ...], int]:
    plan = plan_summary(
        budget=budget,
        settings=settings,
        fixed_tokens=fixed_for_usage(usage, history),
        history=history,
        current_turn_seq=current_turn,
        turns_since_summary=turns_since_summary,
    )
    return plan.triggered, plan.reason, plan.eligible, plan.usage_before


def test_summary_triggers_at_exactly_70_percent() -> None:
    triggered, reason, eligible, usage = summary_plan(usage=14_000)
    assert triggered
    assert reason == "threshold"
    assert eligible == OLD_SEQS
    assert usage == 14_000


def test_summary_does_not_trigger_one_token_below_70_percent() -> None:
    assert summary_plan(usage=13_999) == (False, None, (), 13_999)


def test_summary_threshold_with_the_real_8192_budget() -> None:
    budget = compute_budget(model_context_limit=8192, max_output_tokens=2048, settings=DEFAULTS)
    assert budget.input_budget == 5530
    builder = SessionBuilder()
    for turn in range(1, 6):
        builder.turn(turn)
    builder.turn(6, answer=None)
    every_turn = BudgetSettings(summary_min_batch_ratio=0)
    # 0.70 * 5530 = 3871 exactly.
    assert summary_plan(usage=3871, budget=budget, history=builder.messages, settings=every_turn)[
        :2
    ] == (True, "threshold")
    assert summary_plan(usage=3870, budget=budget, history=builder.messages, settings=every_turn)[
        :2
    ] == (False, None)


def test_summary_threshold_ratio_comes_from_settings() -> None:
    settings = BudgetSettings(summary_trigger_ratio=0.5)
    assert summary_plan(usage=10_000, settings=settings)[:2] == (True, "threshold")
    assert summary_plan(usage=9_999, settings=settings)[:2] == (False, None)


def test_summary_triggers_after_mandatory_turn_count() -> None:
    triggered, reason, eligible, _ = summary_plan(usage=8500, turns_since_summary=8)
    assert triggered
    assert reason == "turn_count"
    assert eligible == OLD_SEQS


def test_summary_does_not_trigger_one_turn_before_mandatory_count() -> None:
    assert summary_plan(usage=8500, turns_since_summary=7)[:2] == (False, None)


def test_mandatory_turn_count_comes_from_settings_and_zero_disables_it() -> None:
    three = BudgetSettings(mandatory_summary_turns=3)
    assert summary_plan(usage=8500, turns_since_summary=3, settings=three)[:2] == (
        True,
        "turn_count",
    )
    off = BudgetSettings(mandatory_summary_turns=0)
    assert summary_plan(usage=8500, turns_since_summary=500, settings=off)[:2] == (False, None)


def test_threshold_reason_wins_when_both_triggers_hold() -> None:
    assert summary_plan(usage=19_000, turns_since_summary=20)[:2] == (True, "threshold")


def test_summary_not_triggered_when_all_history_is_inside_the_protected_window() -> None:
    builder = SessionBuilder()
    for turn in (1, 2, 3):
        builder.turn(turn, steps=[(50, [50])])
    builder.turn(4, answer=None)
    # Turns 1-4 with the current turn 4 are exactly the 4-turn window.
    assert summary_plan(
        usage=19_999, turns_since_summary=9, history=builder.messages, current_turn=4
    ) == (False, None, (), 19_999)


def test_window_counts_the_current_turn() -> None:
    builder = SessionBuilder()
    for turn in (1, 2, 3, 4):
        builder.turn(turn)
    builder.turn(5, answer=None)
    # Current turn 5, window 4 -> turns 2..5 protected, only turn 1 (seqs 0, 1) eligible.
    plan = summary_plan(
        usage=15_000,
        history=builder.messages,
        current_turn=5,
        settings=BudgetSettings(summary_min_batch_ratio=0),
    )
    assert plan[:3] == (True, "threshold", (0, 1))


def test_below_the_prune_trigger_a_summary_waits_for_a_batch_worth_its_cache_break() -> None:
    budget = compute_budget(model_context_limit=8192, max_output_tokens=2048, settings=DEFAULTS)
    builder = SessionBuilder()
    for turn in range(1, 6):
        builder.turn(turn)
    builder.turn(6, answer=None)
    eligible_tokens = sum(m.tokens for m in builder.messages if m.turn_seq < 2)
    assert eligible_tokens < DEFAULTS.summary_min_batch_ratio * budget.input_budget

    # Over 70 % with one small turn eligible: the prompt fits, the summary waits.
    assert summary_plan(usage=4000, budget=budget, history=builder.messages)[:2] == (False, None)
    # Over 90 %: room is needed now, whatever the batch.
    assert summary_plan(usage=5000, budget=budget, history=builder.messages)[:2] == (
        True,
        "threshold",
    )
    # A batch worth it (a share of 0 here) goes at 70 %.
    assert summary_plan(
        usage=4000,
        budget=budget,
        history=builder.messages,
        settings=BudgetSettings(summary_min_batch_ratio=0.0),
    )[:2] == (True, "threshold")


def test_eligible_range_follows_the_window_setting() -> None:
    two = BudgetSettings(protected_window_turns=2)
    # Current turn 6, window 2 -> turns 5, 6 protected; turns 1-4 (seqs 0-14) eligible.
    assert summary_plan(usage=15_000, settings=two)[2] == tuple(range(15))
    one = BudgetSettings(protected_window_turns=1)
    assert summary_plan(usage=15_000, settings=one)[2] == tuple(range(19))


def test_eligible_messages_are_whole_turns_so_tool_units_stay_together() -> None:
    eligible = set(summary_plan(usage=15_000, settings=BudgetSettings(protected_window_turns=3))[2])
    assert eligible == set(range(13))  # turns 1-3
    for message in HISTORY:
        if message.answers_seq is not None:
            assert (message.seq in eligible) == (message.answers_seq in eligible)


# --------------------------------------------------------------------------- plan_prune


def prune(
    usage: int,
    *,
    anchors: frozenset[int] = frozenset(),
    settings: BudgetSettings = DEFAULTS,
    budget: Budget = BUDGET,
    summarised: bool = False,
) -> PrunePlan:
    plan = plan_prune(
        budget=budget,
        settings=settings,
        fixed_tokens=fixed_for_usage(usage),
        history=HISTORY,
        current_turn_seq=CURRENT_TURN,
        anchor_message_ids=anchors,
        summarised=summarised,
    )
    assert plan.usage_after_summary == usage
    return plan


def test_low_water_mark_is_half_the_budget_by_default() -> None:
    assert DEFAULTS.low_water_ratio == 0.50
    assert DEFAULTS.low_water_ratio <= DEFAULTS.summary_trigger_ratio


def test_prune_not_triggered_below_90_percent() -> None:
    plan = prune(8999)
    assert not plan.triggered
    assert plan.pruned == ()
    assert plan.usage_after_prune == 8999
    assert plan.fits(BUDGET)


def test_prune_triggers_at_exactly_90_percent() -> None:
    plan = prune(9000)
    assert plan.triggered
    assert plan.pruned


def test_prune_threshold_with_the_real_8192_budget() -> None:
    budget = compute_budget(model_context_limit=8192, max_output_tokens=2048, settings=DEFAULTS)
    assert budget.input_budget == 5530
    builder = SessionBuilder()
    builder.turn(1, user=1000, answer=1000)
    for turn in range(2, 6):
        builder.turn(turn)
    builder.turn(6, answer=None)
    history = builder.messages

    def plan(usage: int) -> PrunePlan:
        return plan_prune(
            budget=budget,
            settings=DEFAULTS,
            fixed_tokens=fixed_for_usage(usage, history),
            history=history,
            current_turn_seq=6,
        )

    # 0.90 * 5530 = 4977 exactly.
    assert plan(4977).triggered
    assert not plan(4976).triggered
    # Turns 1-2 are old: answers (1000, 100) first, then users (1000, 100); the low-water
    # mark (2765) is not reached, and nothing else may go.
    assert plan(4977).pruned == (0, 1, 2, 3)
    assert plan(4977).usage_after_prune == 4977 - 2200


def test_prune_takes_old_tool_chatter_first_oldest_first() -> None:
    # 9000 must get below 5000: both old tool units (2500 + 2500) and nothing else.
    plan = prune(9000)
    assert plan.pruned == (1, 2, 5, 6, 7)
    assert plan.usage_after_prune == 4000
    assert plan.fits(BUDGET)


def test_prune_stops_as_soon_as_usage_is_under_the_low_water_mark() -> None:
    settings = BudgetSettings(low_water_ratio=0.66)  # 6600
    plan = prune(9000, settings=settings)
    assert plan.pruned == (1, 2)
    assert plan.usage_after_prune == 6500


def test_prune_takes_old_plain_assistant_after_tool_chatter() -> None:
    plan = prune(10_000)  # needs > 5000: 5000 of tool chatter + the oldest answer
    assert plan.pruned == (1, 2, 3, 5, 6, 7)
    plan = prune(10_500)  # needs > 5500: both old answers
    assert plan.pruned == (1, 2, 3, 5, 6, 7, 8)


def test_prune_takes_old_user_messages_after_old_assistant() -> None:
    plan = prune(11_000)  # needs > 6000: chatter 5000, answers 1000, oldest user 500
    assert plan.pruned == (0, 1, 2, 3, 5, 6, 7, 8)
    plan = prune(11_500)  # needs > 6500: all of turns 1-2
    assert plan.pruned == OLD_SEQS
    assert plan.usage_after_prune == 4500


def test_prune_takes_window_tool_chatter_of_completed_turns_last() -> None:
    # All old history (7000) goes first; then the window's tool exchanges, oldest first,
    # until usage is under the low-water mark.
    plan = prune(12_050)
    assert plan.pruned == (*OLD_SEQS, 10, 11)
    assert plan.usage_after_prune == 4950
    plan = prune(12_150)
    assert plan.pruned == (*OLD_SEQS, 10, 11, 16, 17)
    assert plan.usage_after_prune == 4950


def test_prune_right_after_a_summary_starts_at_the_summary_threshold() -> None:
    # 8000 is under 90 %: no prune on its own, but after a summary (>= 70 %) it goes on.
    assert not prune(8000).triggered
    plan = prune(8000, summarised=True)
    assert plan.triggered
    assert plan.pruned == (1, 2, 5, 6, 7)
    assert plan.usage_after_prune == 3000


def test_prune_after_a_summary_below_the_summary_threshold_does_nothing() -> None:
    settings = BudgetSettings(summary_trigger_ratio=0.85)  # 8500
    assert not prune(8499, settings=settings, summarised=True).triggered
    assert prune(8500, settings=settings, summarised=True).triggered


def test_prune_never_takes_window_user_messages_or_answers() -> None:
    plan = prune(100_000)
    window_kept = {9, 12, 13, 14, 15, 18}
    assert not window_kept & set(plan.pruned)


def test_current_turn_is_never_pruned() -> None:
    plan = prune(100_000)
    assert not CURRENT_SEQS & set(plan.pruned)


def test_history_that_cannot_fit_reports_fits_false() -> None:
    plan = prune(100_000)
    assert plan.triggered
    assert plan.pruned == (*OLD_SEQS, 10, 11, 16, 17)
    assert plan.usage_after_prune == 100_000 - PRUNABLE_TOKENS
    assert not plan.fits(BUDGET)


def test_fits_is_inclusive_of_the_input_budget() -> None:
    at_budget = prune(10_000 + PRUNABLE_TOKENS)
    assert at_budget.usage_after_prune == 10_000
    assert at_budget.fits(BUDGET)
    over = prune(10_001 + PRUNABLE_TOKENS)
    assert over.usage_after_prune == 10_001
    assert not over.fits(BUDGET)


@pytest.mark.parametrize("usage", range(9000, 20_001, 250))
def test_tool_call_and_its_results_are_pruned_together(usage: int) -> None:
    plan = prune(usage)
    assert_units_whole(plan.pruned)
    pruned = set(plan.pruned)
    assert plan.usage_after_prune == usage - sum(m.tokens for m in HISTORY if m.seq in pruned)


def test_anchored_messages_and_their_units_are_never_pruned() -> None:
    # Anchor the oldest answer (3) and one tool result (6) of the call at 5.
    plan = prune(100_000, anchors=frozenset({mid(3), mid(6)}))
    pruned = set(plan.pruned)
    assert not {3, 5, 6, 7} & pruned
    assert {0, 1, 2, 4, 8} <= pruned


def test_anchoring_the_call_message_keeps_its_results() -> None:
    plan = prune(100_000, anchors=frozenset({mid(10)}))
    pruned = set(plan.pruned)
    assert not {10, 11} & pruned
    assert {16, 17} <= pruned


def test_anchored_old_user_messages_are_kept() -> None:
    plan = prune(100_000, anchors=frozenset({mid(0), mid(4)}))
    assert not {0, 4} & set(plan.pruned)


def test_anchors_in_the_current_turn_or_unknown_ids_change_nothing_else() -> None:
    assert prune(100_000, anchors=frozenset({mid(19), 999_999})).pruned == prune(100_000).pruned


# --------------------------------------------------------------------------- fallback truncation


def fallback(
    usage: int,
    *,
    anchors: frozenset[int] = frozenset(),
    eligible: Sequence[int] = OLD_SEQS,
    settings: BudgetSettings = DEFAULTS,
) -> tuple[int, ...]:
    return plan_fallback_truncation(
        budget=BUDGET,
        settings=settings,
        fixed_tokens=fixed_for_usage(usage),
        history=HISTORY,
        eligible=eligible,
        current_turn_seq=CURRENT_TURN,
        anchor_message_ids=anchors,
    )


def test_fallback_truncation_removes_nothing_under_the_low_water_mark() -> None:
    settings = BudgetSettings(summary_trigger_ratio=0.85, low_water_ratio=0.85)  # 8500
    assert fallback(8499, settings=settings) == ()
    assert fallback(8500, settings=settings) == (1, 2)


def test_fallback_truncation_takes_tool_chatter_first_and_stops_under_the_low_water_mark() -> None:
    assert fallback(8000) == (1, 2, 5, 6, 7)  # 3000 < 5000
    settings = BudgetSettings(low_water_ratio=0.6)  # 6000
    assert fallback(8000, settings=settings) == (1, 2)  # 5500 < 6000


def test_fallback_truncation_takes_plain_assistant_after_tool_chatter() -> None:
    assert fallback(10_200) == (1, 2, 3, 5, 6, 7)  # needs > 5200


def test_fallback_truncation_keeps_user_messages() -> None:
    removed = fallback(100_000)
    assert removed == (1, 2, 3, 5, 6, 7, 8)
    assert not {0, 4} & set(removed)


def test_fallback_truncation_keeps_anchors_and_their_units() -> None:
    assert fallback(100_000, anchors=frozenset({mid(8), mid(2)})) == (3, 5, 6, 7)


def test_fallback_truncation_stays_inside_the_eligible_range() -> None:
    assert set(fallback(100_000)) <= set(OLD_SEQS)
    # Only turn 1 eligible: turn 2's chatter stays even when far over budget.
    assert fallback(100_000, eligible=(0, 1, 2, 3)) == (1, 2, 3)
    assert fallback(100_000, eligible=()) == ()
