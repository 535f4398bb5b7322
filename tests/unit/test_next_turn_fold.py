"""What a turn start says the next one will fold is what the next one asks to fold."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import event, given
from hypothesis import strategies as st

from app.budget.decision import Message, next_turn_fold, plan_assembly
from tests.unit.test_decision_properties import PROPERTY_SETTINGS, after, draw_case, run


@given(st.data())
@PROPERTY_SETTINGS
def test_the_fold_prepared_for_the_next_turn_start_is_the_one_it_asks_for(
    data: st.DataObject,
) -> None:
    case = draw_case(data.draw)
    snapshot = case.snapshot
    plan = plan_assembly(snapshot)
    decision = run(snapshot, data, "first")
    prepared = next_turn_fold(plan, decision)
    if not decision.accepted:
        assert prepared is None
        return
    # The next turn start, with nothing else said in between: the user's new message.
    following = after(snapshot, decision, ())
    last_seq = max(m.seq for m in following.stored)
    user = Message(id=last_seq + 1000, seq=last_seq + 1, turn_seq=snapshot.turn_seq + 1,
                   role="user", content="And then?")  # fmt: skip
    following = replace(following, new=(user,), turn_seq=snapshot.turn_seq + 1, step=0)
    asked = plan_assembly(following)
    event(f"prepared: {prepared is not None}, asked: {asked.summarise is not None}")
    if asked.summary_plan.reason == "turn_count" and asked.summarise is not None:
        assert prepared is not None
    if prepared is not None and asked.summarise is not None:
        assert asked.summarise.sources == prepared.sources
        assert asked.summarise.previous is prepared.previous
        assert asked.summarise.target_tokens == prepared.target_tokens
    if prepared is not None:
        # Only ever for a turn start due by count, and never alongside a summary just made.
        assert decision.new_summary is None
        latest = snapshot.latest_summary
        every = snapshot.settings.budget.mandatory_summary_turns
        assert every
        assert snapshot.turn_seq - (latest.turn_seq if latest else 0) >= every
