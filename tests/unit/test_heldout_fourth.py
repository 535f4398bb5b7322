"""The fourth held-out set makes the sessions its report describes, the same for a seed, with
every fact and question where the scorer looks for it, and runs through the harness."""

from __future__ import annotations

from functools import cache

from bench.heldout.__main__ import SETS, run
from bench.heldout.fourth import REPORT_SEEDS, generate
from bench.heldout.fourth import facts as f
from bench.heldout.fourth.agents import AGENTS
from bench.heldout.generator import MIN_QUESTION_GAP, value_pattern
from bench.heldout.scenario import Scenario, Turn, normalise

LABELS = {
    f.TERSE,
    f.DICTATED,
    f.EMOJI,
    f.BURIED,
    f.QUOTE,
    f.WORDS,
    f.DATE,
    f.RELATIVE,
    f.UNIT,
    f.CURRENCY,
    f.SCRIPT,
    f.LANGUAGE,
    f.THIRD,
    f.LIST,
    f.ANSWER,
    f.FIXED,
}


@cache
def _session(seed: int, turns: int = 280) -> Scenario:
    return generate(seed, turns)


def _says(text: str, value: str) -> bool:
    return bool(value_pattern(value).search(normalise(text)))


def _tool_results(turn: Turn) -> list[str]:
    return [result for step in turn.steps for result in step.results]


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(23, 80) == generate(23, 80)


def test_the_harness_offers_the_set_by_name() -> None:
    assert SETS["fourth"].report_seeds == tuple(range(6000, 6010))


def test_the_report_seeds_cover_every_agent_twice() -> None:
    agents = [_session(seed, 60).agent for seed in REPORT_SEEDS]
    assert sorted(agents) == sorted(agent.name for agent in AGENTS for _ in range(2))


def test_each_value_is_in_the_user_message_of_the_turn_that_states_it() -> None:
    # The control the scorer runs on the prompt of that turn, checked here on the sessions.
    for seed in (6000, 6001, 6002, 6003, 6004):
        scenario = _session(seed)
        for fact in scenario.facts:
            assert _says(scenario.turns[fact.turn].user, fact.value)
            for value, said in fact.superseded:
                assert _says(scenario.turns[said].user, value)
            if fact.corrected_to is not None and fact.correction_turn is not None:
                assert _says(scenario.turns[fact.correction_turn].user, fact.corrected_to)


def test_every_fact_kind_is_labelled_and_the_report_seeds_hold_them_all() -> None:
    kinds = {fact.kind for seed in REPORT_SEEDS for fact in _session(seed).facts}
    assert kinds == LABELS


def test_facts_come_in_the_first_half_and_questions_long_after_their_source() -> None:
    scenario = _session(6002)
    assert all(fact.turn < 140 for fact in scenario.facts)
    assert len(scenario.questions) >= 24
    assert all(q.turn >= 140 for q in scenario.questions)
    assert all(q.turn - q.source_turn >= MIN_QUESTION_GAP for q in scenario.questions)
    assert all(scenario.turns[q.turn].kind == "question" for q in scenario.questions)


def test_a_question_s_source_window_is_in_the_message_its_role_names() -> None:
    roles = set()
    for seed in (6003, 6004):
        scenario = _session(seed)
        for question in scenario.questions:
            turn = scenario.turns[question.source_turn]
            texts = {"user": [turn.user], "assistant": [turn.answer], "tool": _tool_results(turn)}
            roles.add(question.source_role)
            assert any(question.source_window in normalise(t) for t in texts[question.source_role])
            assert any(_says(t, question.value) for t in texts[question.source_role])
    assert roles == {"user", "assistant", "tool"}


def test_questions_come_both_sharing_a_word_with_the_source_and_not() -> None:
    questions = _session(6000).questions + _session(6005).questions
    shared = sum(q.shares_word for q in questions)
    assert 0.3 < shared / len(questions) < 0.7


def test_a_detail_fixed_after_a_typo_is_missing_from_the_misspelt_message() -> None:
    scenario = _session(6006)
    (fact,) = [fact for fact in scenario.facts if fact.kind == f.FIXED]
    assert not _says(scenario.turns[fact.turn - 1].user, fact.value)
    assert "*" in scenario.turns[fact.turn].user


def test_a_detail_given_as_an_answer_follows_the_assistant_s_question() -> None:
    scenario = _session(6001)
    (fact,) = [fact for fact in scenario.facts if fact.kind == f.ANSWER]
    assert "?" in scenario.turns[fact.turn - 1].answer
    assert not _says(scenario.turns[fact.turn - 1].answer, fact.value)


def test_one_fact_is_corrected_twice_and_keeps_both_old_values() -> None:
    scenario = _session(6007)
    twice = [fact for fact in scenario.facts if fact.superseded]
    assert len(twice) == 1
    (fact,) = twice
    assert fact.corrected_to not in fact.old_values
    assert len(set(fact.old_values)) == 2


def test_a_third_person_s_detail_is_corrected_in_every_report_session() -> None:
    for seed in REPORT_SEEDS:
        assert any(
            fact.kind == f.THIRD and fact.corrected_to is not None for fact in _session(seed).facts
        )


def test_a_dropped_detail_leaves_words_saying_so_and_is_never_asked_about() -> None:
    instead = {frame.retract[1] for frame in f.SHARED if frame.retract is not None}
    for seed in (6000, 6008):
        scenario = _session(seed)
        (fact,) = [fact for fact in scenario.facts if fact.corrected_to in instead]
        assert fact.correction_turn is not None
        assert scenario.turns[fact.correction_turn].kind == "correction"
        assert all(q.value != fact.corrected_to for q in scenario.questions)


def test_a_partial_correction_changes_only_the_time_of_the_list() -> None:
    scenario = _session(6009)
    listed = [fact for fact in scenario.facts if fact.kind == f.LIST]
    assert len(listed) == 3
    assert [fact.corrected_to is not None for fact in listed] == [False, False, True]
    assert listed[2].correction_turn is not None
    fixing = scenario.turns[listed[2].correction_turn].user
    assert not any(_says(fixing, fact.value) for fact in listed[:2])


def test_some_corrections_just_state_the_new_value_and_some_come_much_later() -> None:
    corrections = [
        (scenario, fact)
        for seed in (6000, 6004)
        for scenario in [_session(seed)]
        for fact in scenario.facts
        if fact.corrected_to is not None and fact.correction_turn is not None
    ]
    unmarked = [
        text
        for scenario, fact in corrections
        if fact.correction_turn is not None
        for text in [scenario.turns[fact.correction_turn].user]
        if not _says(text, fact.value)
        and not any(
            word in text.casefold()
            for word in ("wrong", "correct", "update", "misspoke", "ignore", "wait", "esmena")
        )
    ]
    assert unmarked
    gaps = [
        fact.correction_turn - max((fact.turn, *(said for _, said in fact.superseded)))
        for _, fact in corrections
        if fact.correction_turn is not None
    ]
    assert min(gaps) < 10
    assert max(gaps) >= 20


def test_a_corrected_fact_is_asked_about_at_its_latest_value() -> None:
    asked = []
    for seed in (6001, 6005):
        scenario = _session(seed)
        latest = {f.correction_turn: f.corrected_to for f in scenario.facts if f.corrected_to}
        for question in scenario.questions:
            if question.source_turn in latest:
                asked.append(question)
                assert question.value == latest[question.source_turn]
    assert asked


async def test_a_short_session_runs_through_the_harness_within_budget() -> None:
    (result,) = await run([6003], 60, [True], generate=generate)
    scenario = _session(6003, 60)
    assert result.agent == scenario.agent
    assert result.refused == 0
    assert result.over_budget == 0
    assert result.invalid == 0
    assert result.stated > 0
    assert result.stated_found == result.stated
    assert sum(total for _, total in result.facts.values()) == len(scenario.facts)
    assert set(result.facts) <= LABELS
    assert len(result.questions) == len(scenario.questions)
