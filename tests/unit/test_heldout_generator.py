"""The held-out sessions stay what the report seeds say: the same session for the same seed."""

from __future__ import annotations

import re

from bench.heldout.generator import MIN_QUESTION_GAP, generate, value_pattern


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(7, 60) == generate(7, 60)


def test_other_seeds_make_other_sessions() -> None:
    assert generate(7, 60).turns != generate(8, 60).turns


def test_tool_calls_carry_ids_shaped_as_openai_makes_them() -> None:
    calls = [call for turn in generate(11, 60).turns for step in turn.steps for call in step.calls]
    assert calls
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", call.id) for call in calls)


def test_facts_come_in_the_first_half_and_questions_long_after_their_source() -> None:
    scenario = generate(12, 120)
    assert all(fact.turn < 60 for fact in scenario.facts)
    assert scenario.questions
    assert all(q.turn - q.source_turn >= MIN_QUESTION_GAP for q in scenario.questions)


def test_a_value_is_found_between_letters_of_a_script_written_without_spaces() -> None:
    assert value_pattern("大阪").search("来週の金曜日に大阪へ出張します")
    assert not value_pattern("Linz").search("the linzer torte")
