"""Property tests: the summarise-then-prune pipeline keeps its promises for any session.

The pipeline is the one the turn service runs: ``plan_summary``; if it triggers, the eligible
messages leave the window and the summary's cost joins the fixed tokens (or, when the
summariser fails, ``plan_fallback_truncation`` decides what to leave out); then ``plan_prune``
with anchors drawn from what is left.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.budget.assembly import chat_message, chat_problems
from app.budget.policy import (
    Budget,
    BudgetSettings,
    HistoryMessage,
    compute_budget,
    history_tokens,
    plan_fallback_truncation,
    plan_prune,
    plan_summary,
)

PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Session:
    history: tuple[HistoryMessage, ...]
    chats: dict[int, dict[str, Any]]  # seq -> the message as the chat API sees it
    current_turn: int


@st.composite
def sessions(draw: st.DrawFn) -> Session:
    """Turns of a user message, 0..3 tool steps (a call and 1..3 results) and a final answer;
    the last turn is the current one and has no final answer yet."""
    first_turn = draw(st.integers(min_value=1, max_value=30))
    n_turns = draw(st.integers(min_value=1, max_value=12))
    tokens = st.integers(min_value=1, max_value=2000)
    history: list[HistoryMessage] = []
    chats: dict[int, dict[str, Any]] = {}

    def add(message: HistoryMessage, chat: dict[str, Any]) -> None:
        history.append(message)
        chats[message.seq] = chat

    seq = draw(st.integers(min_value=0, max_value=500))
    for turn in range(first_turn, first_turn + n_turns):
        current = turn == first_turn + n_turns - 1
        add(
            HistoryMessage(seq, turn, "user", draw(tokens), message_id=10_000 + seq),
            chat_message(role="user", content=f"user message {seq}"),
        )
        seq += 1
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            call_seq = seq
            n_results = draw(st.integers(min_value=1, max_value=3))
            call_ids = [f"call_{call_seq}_{k}" for k in range(n_results)]
            add(
                HistoryMessage(
                    call_seq,
                    turn,
                    "assistant",
                    draw(tokens),
                    calls_tools=True,
                    message_id=10_000 + call_seq,
                ),
                chat_message(
                    role="assistant",
                    content=None,
                    tool_calls=[
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": "{}"},
                        }
                        for call_id in call_ids
                    ],
                ),
            )
            seq += 1
            for call_id in call_ids:
                add(
                    HistoryMessage(
                        seq,
                        turn,
                        "tool",
                        draw(tokens),
                        answers_seq=call_seq,
                        message_id=10_000 + seq,
                    ),
                    chat_message(role="tool", content=f"result {seq}", tool_call_id=call_id),
                )
                seq += 1
        if not current:
            add(
                HistoryMessage(seq, turn, "assistant", draw(tokens), message_id=10_000 + seq),
                chat_message(role="assistant", content=f"answer {seq}"),
            )
            seq += 1
    return Session(tuple(history), chats, first_turn + n_turns - 1)


@st.composite
def budget_settings(draw: st.DrawFn) -> BudgetSettings:
    summary_ratio = draw(st.floats(min_value=0.3, max_value=0.95))
    prune_ratio = draw(st.floats(min_value=summary_ratio, max_value=1.0))
    return BudgetSettings(
        summary_trigger_ratio=summary_ratio,
        prune_trigger_ratio=prune_ratio,
        low_water_ratio=draw(st.floats(min_value=0.1, max_value=summary_ratio)),
        mandatory_summary_turns=draw(st.integers(min_value=0, max_value=10)),
        protected_window_turns=draw(st.integers(min_value=1, max_value=6)),
    )


@st.composite
def budgets(draw: st.DrawFn, policy: BudgetSettings) -> Budget:
    budget = compute_budget(
        model_context_limit=draw(st.integers(min_value=1300, max_value=150_000)),
        max_output_tokens=draw(st.integers(min_value=1, max_value=16_384)),
        settings=policy,
    )
    assert budget.valid
    return budget


@dataclass(frozen=True)
class Outcome:
    session: Session
    budget: Budget
    policy: BudgetSettings
    fixed_tokens: int
    summarised: frozenset[int]
    truncated: frozenset[int]  # left out by the fallback truncation
    pruned: frozenset[int]
    anchors: frozenset[int]
    usage_after_prune: int
    prune_triggered: bool
    fits: bool
    kept: tuple[HistoryMessage, ...]


def run_pipeline(data: st.DataObject, *, summariser_fails: bool) -> Outcome:
    session = data.draw(sessions(), label="session")
    policy = data.draw(budget_settings(), label="settings")
    budget = data.draw(budgets(policy), label="budget")
    # Mostly a share of the budget, sometimes more than all of it.
    fixed = data.draw(
        st.integers(min_value=3, max_value=budget.input_budget)
        | st.integers(min_value=3, max_value=2 * budget.input_budget),
        label="fixed_tokens",
    )
    history = session.history

    summary = plan_summary(
        budget=budget,
        settings=policy,
        fixed_tokens=fixed,
        history=history,
        current_turn_seq=session.current_turn,
        turns_since_summary=data.draw(st.integers(min_value=0, max_value=12), label="since"),
    )
    assert summary.usage_before == fixed + history_tokens(history)
    previous_anchors = frozenset(
        data.draw(st.sets(st.sampled_from([m.message_id or 0 for m in history])), label="prev")
    )
    summarised: frozenset[int] = frozenset()
    truncated: frozenset[int] = frozenset()
    if summary.triggered and summariser_fails:
        truncated = frozenset(
            plan_fallback_truncation(
                budget=budget,
                settings=policy,
                fixed_tokens=fixed,
                history=history,
                eligible=summary.eligible,
                current_turn_seq=session.current_turn,
                anchor_message_ids=previous_anchors,
            )
        )
        check_fallback(session, summary.eligible, truncated, previous_anchors)
    elif summary.triggered:
        summarised = frozenset(summary.eligible)
        fixed += data.draw(st.integers(min_value=1, max_value=3000), label="summary_tokens")

    remaining = [m for m in history if m.seq not in summarised | truncated]
    anchors = frozenset(
        data.draw(
            st.sets(st.sampled_from([m.message_id or 0 for m in remaining]), max_size=8),
            label="anchors",
        )
    )
    prune = plan_prune(
        budget=budget,
        settings=policy,
        fixed_tokens=fixed,
        history=remaining,
        current_turn_seq=session.current_turn,
        anchor_message_ids=anchors,
        summarised=bool(summarised),
    )
    pruned = frozenset(prune.pruned)
    assert len(pruned) == len(prune.pruned), "a seq pruned twice"
    kept = tuple(m for m in remaining if m.seq not in pruned)
    return Outcome(
        session=session,
        budget=budget,
        policy=policy,
        fixed_tokens=fixed,
        summarised=summarised,
        truncated=truncated,
        pruned=pruned,
        anchors=anchors,
        usage_after_prune=prune.usage_after_prune,
        prune_triggered=prune.triggered,
        fits=prune.fits(budget),
        kept=kept,
    )


def first_protected_turn(outcome: Outcome) -> int:
    return outcome.session.current_turn - outcome.policy.protected_window_turns + 1


def unit_of(history: Sequence[HistoryMessage], message: HistoryMessage) -> set[int]:
    return {m.seq for m in history if m.unit_key == message.unit_key}


def check_fallback(
    session: Session,
    eligible: Sequence[int],
    truncated: frozenset[int],
    anchors: frozenset[int],
) -> None:
    by_seq = {m.seq: m for m in session.history}
    assert truncated <= set(eligible)
    for seq in truncated:
        message = by_seq[seq]
        assert message.role in ("assistant", "tool"), "fallback truncation dropped a user message"
        assert message.message_id not in anchors
        assert unit_of(session.history, message) <= truncated, "a tool unit was split"


def check_invariants(outcome: Outcome) -> None:
    history = outcome.session.history
    all_seqs = [m.seq for m in history]
    kept_seqs = [m.seq for m in outcome.kept]
    left_out = outcome.summarised | outcome.truncated | outcome.pruned

    # Every message is in exactly one place: kept, summarised, truncated or pruned.
    assert not outcome.summarised & outcome.pruned
    assert not outcome.truncated & outcome.pruned
    assert not set(kept_seqs) & left_out
    assert set(kept_seqs) | left_out == set(all_seqs)
    assert outcome.pruned <= set(all_seqs)

    # Order is preserved: the kept messages are a subsequence of the history.
    assert kept_seqs == [s for s in all_seqs if s in set(kept_seqs)]
    assert kept_seqs == sorted(kept_seqs)

    # Budget adherence: the reported usage is the real one, and never silently over.
    usage = outcome.fixed_tokens + history_tokens(outcome.kept)
    assert outcome.usage_after_prune == usage
    assert outcome.fits == (usage <= outcome.budget.input_budget)

    # Nothing of the current turn is dropped; every window user message is kept.
    current = {m.seq for m in history if m.turn_seq == outcome.session.current_turn}
    assert current <= set(kept_seqs)
    window_users = {
        m.seq for m in history if m.role == "user" and m.turn_seq >= first_protected_turn(outcome)
    }
    assert window_users <= set(kept_seqs)

    # Summaries only ever cover turns older than the protected window.
    for message in history:
        if message.seq in outcome.summarised:
            assert message.turn_seq < first_protected_turn(outcome)

    # Anchored messages, and the units they belong to, are never pruned.
    for message in history:
        if message.message_id in outcome.anchors:
            assert not unit_of(history, message) & outcome.pruned

    # Calls and results travel together, checked on the structure ...
    kept_set = set(kept_seqs)
    for message in history:
        if message.answers_seq is not None:
            assert (message.seq in kept_set) == (message.answers_seq in kept_set), message
    # ... and on the rendered prompt: the kept messages are a valid chat.
    chats = [outcome.session.chats[seq] for seq in kept_seqs]
    assert chat_problems([{"role": "system", "content": "rules"}, *chats]) == []
    assert chat_problems(chats) == []


def still_prunable(outcome: Outcome) -> list[HistoryMessage]:
    """Kept messages the policy would have been allowed to prune."""
    found = []
    for message in outcome.kept:
        if message.turn_seq == outcome.session.current_turn:
            continue
        unit = [m for m in outcome.kept if m.unit_key == message.unit_key]
        if any(m.message_id in outcome.anchors for m in unit):
            continue
        head = unit[0]
        if head.turn_seq >= first_protected_turn(outcome) and not head.calls_tools:
            continue
        found.append(message)
    return found


def check_rejection_is_a_last_resort(outcome: Outcome) -> None:
    """A prompt that does not fit has had everything the policy may prune pruned."""
    if not outcome.fits:
        assert still_prunable(outcome) == []


def check_prune_reaches_the_low_water_mark(outcome: Outcome) -> None:
    """Once pruning fires it goes under the low-water mark, unless it runs out of units."""
    if outcome.prune_triggered:
        low_water = outcome.policy.low_water_ratio * outcome.budget.input_budget
        assert outcome.usage_after_prune < low_water or still_prunable(outcome) == []


@given(st.data())
@PROPERTY_SETTINGS
def test_pipeline_invariants_hold_for_any_session(data: st.DataObject) -> None:
    outcome = run_pipeline(data, summariser_fails=False)
    check_invariants(outcome)
    check_rejection_is_a_last_resort(outcome)
    check_prune_reaches_the_low_water_mark(outcome)


@given(st.data())
@PROPERTY_SETTINGS
def test_pipeline_invariants_hold_when_the_summariser_fails(data: st.DataObject) -> None:
    outcome = run_pipeline(data, summariser_fails=True)
    assert not outcome.summarised
    check_invariants(outcome)
    check_rejection_is_a_last_resort(outcome)
    check_prune_reaches_the_low_water_mark(outcome)


@given(session=sessions(), policy=budget_settings(), data=st.data())
@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_prune_is_not_triggered_below_the_prune_threshold(
    session: Session, policy: BudgetSettings, data: st.DataObject
) -> None:
    budget = data.draw(budgets(policy))
    limit = int(policy.prune_trigger_ratio * budget.input_budget) - 1
    usage_history = history_tokens(session.history)
    fixed = data.draw(st.integers(min_value=0, max_value=max(0, limit - usage_history)))
    plan = plan_prune(
        budget=budget,
        settings=policy,
        fixed_tokens=fixed,
        history=session.history,
        current_turn_seq=session.current_turn,
    )
    if fixed + usage_history < policy.prune_trigger_ratio * budget.input_budget:
        assert not plan.triggered
        assert plan.pruned == ()
        assert plan.usage_after_prune == fixed + usage_history
    else:
        assert plan.triggered


@given(session=sessions(), policy=budget_settings(), data=st.data())
@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
def test_summary_eligibility_is_exactly_the_turns_before_the_window(
    session: Session, policy: BudgetSettings, data: st.DataObject
) -> None:
    budget = data.draw(budgets(policy))
    plan = plan_summary(
        budget=budget,
        settings=policy,
        fixed_tokens=budget.input_budget,  # always over the threshold
        history=session.history,
        current_turn_seq=session.current_turn,
        turns_since_summary=0,
    )
    first = session.current_turn - policy.protected_window_turns + 1
    expected = tuple(m.seq for m in session.history if m.turn_seq < first)
    assert plan.eligible == expected
    assert plan.triggered == bool(expected)
    assert plan.reason == ("threshold" if expected else None)
