"""Property tests of the policy's parts: the prune threshold and summary eligibility.

The whole decision (summary, fallback, prune, caps, rejection) is property-tested as one
function, the one the turn service runs, in ``test_decision_properties.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.budget.assembly import chat_message
from app.budget.policy import (
    Budget,
    BudgetSettings,
    HistoryMessage,
    compute_budget,
    history_tokens,
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
