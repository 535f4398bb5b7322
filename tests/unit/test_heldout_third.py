"""The third held-out set makes the sessions its report describes, the same for a seed, with
every fact stated where the scorer looks for it."""

from __future__ import annotations

from functools import cache

from bench.heldout.generator import MIN_QUESTION_GAP, value_pattern
from bench.heldout.scenario import Scenario, Turn, normalise
from bench.heldout.third import REPORT_SEEDS, generate
from bench.heldout.third.agents import AGENTS


@cache
def _session(seed: int, turns: int = 280) -> Scenario:
    return generate(seed, turns)


def _says(text: str, value: str) -> bool:
    return bool(value_pattern(value).search(normalise(text)))


def _tool_results(turn: Turn) -> list[str]:
    return [result for step in turn.steps for result in step.results]


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(11, 80) == generate(11, 80)


def test_the_report_seeds_cover_every_agent_twice() -> None:
    agents = [_session(seed, 60).agent for seed in REPORT_SEEDS]
    assert sorted(agents) == sorted(agent.name for agent in AGENTS for _ in range(2))


def test_each_value_is_in_the_user_message_of_the_turn_that_states_it() -> None:
    # The control the scorer runs on the prompt of that turn, checked here on the session.
    scenario = _session(5001)
    for fact in scenario.facts:
        assert _says(scenario.turns[fact.turn].user, fact.value)
        for value, said in fact.superseded:
            assert _says(scenario.turns[said].user, value)
        if fact.corrected_to is not None and fact.correction_turn is not None:
            assert _says(scenario.turns[fact.correction_turn].user, fact.corrected_to)


def test_facts_come_in_the_first_half_and_questions_long_after_their_source() -> None:
    scenario = _session(5002)
    assert all(fact.turn < 140 for fact in scenario.facts)
    assert len(scenario.questions) >= 24
    assert all(q.turn >= 140 for q in scenario.questions)
    assert all(q.turn - q.source_turn >= MIN_QUESTION_GAP for q in scenario.questions)


def test_a_question_s_source_window_is_in_the_message_its_role_names() -> None:
    scenario = _session(5004)
    roles = set()
    for question in scenario.questions:
        turn = scenario.turns[question.source_turn]
        texts = {"user": [turn.user], "assistant": [turn.answer], "tool": _tool_results(turn)}
        roles.add(question.source_role)
        assert any(question.source_window in normalise(t) for t in texts[question.source_role])
    assert roles == {"user", "assistant", "tool"}


def test_questions_come_both_sharing_a_word_with_the_source_and_not() -> None:
    questions = _session(5000).questions + _session(5005).questions
    shared = sum(q.shares_word for q in questions)
    assert 0.3 < shared / len(questions) < 0.7


def test_a_detail_given_over_two_messages_is_missing_from_the_first() -> None:
    scenario = _session(5003)
    (fact,) = [f for f in scenario.facts if f.kind == "over two messages"]
    assert not _says(scenario.turns[fact.turn - 1].user, fact.value)
    assert _says(scenario.turns[fact.turn].user, fact.value)


def test_a_detail_given_as_an_answer_follows_the_assistant_s_question() -> None:
    scenario = _session(5006)
    (fact,) = [f for f in scenario.facts if f.kind == "answer to a question"]
    assert "?" in scenario.turns[fact.turn - 1].answer
    assert not _says(scenario.turns[fact.turn - 1].answer, fact.value)


def test_one_fact_is_corrected_twice_and_keeps_both_old_values() -> None:
    scenario = _session(5007)
    twice = [fact for fact in scenario.facts if fact.superseded]
    assert len(twice) == 1
    (fact,) = twice
    assert fact.corrected_to not in fact.old_values
    assert len(set(fact.old_values)) == 2


def test_a_partial_correction_changes_one_detail_of_a_list() -> None:
    scenario = _session(5008)
    by_turn: dict[int, list[str | None]] = {}
    for fact in scenario.facts:
        by_turn.setdefault(fact.turn, []).append(fact.corrected_to)
    assert any(
        len(changed) >= 2 and changed.count(None) == len(changed) - 1
        for changed in by_turn.values()
    )


def test_some_corrections_just_state_the_new_value_and_some_come_much_later() -> None:
    corrections = [
        (scenario, fact)
        for seed in (5000, 5009)
        for scenario in [_session(seed)]
        for fact in scenario.facts
        if fact.corrected_to is not None and fact.correction_turn is not None
    ]
    unmarked = [
        scenario.turns[fact.correction_turn].user
        for scenario, fact in corrections
        if fact.correction_turn is not None
        and not _says(scenario.turns[fact.correction_turn].user, fact.value)
        and not any(
            word in scenario.turns[fact.correction_turn].user.casefold()
            for word in ("wrong", "correct", "update", "scratch", "change", "sorry", "oops")
        )
    ]
    assert unmarked
    gaps = [
        fact.correction_turn - turn
        for _, fact in corrections
        if fact.correction_turn is not None
        for turn in [max((fact.turn, *(said for _, said in fact.superseded)))]
    ]
    assert min(gaps) < 10
    assert max(gaps) >= 20


def test_a_corrected_fact_is_asked_about_at_its_latest_value() -> None:
    scenario = _session(5009)
    latest = {f.correction_turn: f.corrected_to for f in scenario.facts if f.corrected_to}
    asked = [q for q in scenario.questions if q.source_turn in latest]
    assert asked
    for question in asked:
        assert question.value == latest[question.source_turn]
