"""The fifth held-out set makes the sessions its report describes, the same for a seed, with
every fact, correction and question where the scorer looks for it, and runs through the
harness, which reports corrections by style and questions by kind."""

from __future__ import annotations

from functools import cache

from bench.heldout.__main__ import SETS, report, run
from bench.heldout.fifth import REPORT_SEEDS, generate
from bench.heldout.fifth import facts as f
from bench.heldout.fifth.agents import AGENTS
from bench.heldout.fifth.generator import FAR_GAP
from bench.heldout.generator import MIN_QUESTION_GAP, value_pattern
from bench.heldout.scenario import Fact, Scenario, Turn, normalise

FACT_KINDS = {
    f.PLAIN,
    f.WORDS,
    f.RELATIVE,
    f.SCRIPT,
    f.LANGUAGE,
    f.THIRD,
    f.IN_QUESTION,
    f.EMAIL,
    f.TABLE,
    f.BULLETS,
    f.ANSWER,
    f.TYPO,
    f.HALVES,
}
STYLES = {
    f.MARKED,
    f.UNMARKED,
    f.FAR,
    f.RENAMED,
    f.OTHER_LANGUAGE,
    f.OF_THIRD,
    f.PARTIAL,
    f.TWICE,
    f.RETRACTED,
    f.TYPO_FIX,
}
QUESTION_KINDS = {f.Q_FACT, f.Q_CORRECTED, f.Q_ASSISTANT, f.Q_TOOL, f.Q_SPANS}


@cache
def _session(seed: int, turns: int = 280) -> Scenario:
    return generate(seed, turns)


def _says(text: str, value: str) -> bool:
    return bool(value_pattern(value).search(normalise(text)))


def _tool_results(turn: Turn) -> list[str]:
    return [result for step in turn.steps for result in step.results]


def _corrected(scenario: Scenario) -> list[Fact]:
    return [fact for fact in scenario.facts if fact.corrected_to is not None]


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(7003, 120) == generate(7003, 120)
    assert generate(7003, 120) != generate(7008, 120)


def test_the_harness_offers_the_set_by_name() -> None:
    assert SETS["fifth"].report_seeds == tuple(range(7000, 7010))
    assert SETS["fifth"].generate is generate


def test_the_report_seeds_cover_every_agent_twice() -> None:
    agents = [_session(seed, 120).agent for seed in REPORT_SEEDS]
    assert sorted(agents) == sorted(agent.name for agent in AGENTS for _ in range(2))


def test_sessions_have_the_documented_size() -> None:
    for seed in (7000, 7004):
        scenario = _session(seed)
        assert len(scenario.turns) == 280
        assert scenario.context_limit == 8192
        assert len(scenario.facts) == 26
        assert len(_corrected(scenario)) == 10
        assert len(scenario.questions) >= 22
        assert all(fact.turn < 140 for fact in scenario.facts)
        assert all(
            fact.correction_turn < 210
            for fact in scenario.facts
            if fact.correction_turn is not None
        )


def test_each_value_is_in_the_user_message_of_the_turn_that_states_it() -> None:
    # The control the scorer runs on the prompt of that turn, checked here on the sessions.
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        for fact in scenario.facts:
            assert _says(scenario.turns[fact.turn].user, fact.value)


def test_every_correction_s_old_and_new_values_are_where_the_key_says() -> None:
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        for fact in _corrected(scenario):
            assert fact.corrected_to is not None
            assert fact.correction_turn is not None
            correcting = scenario.turns[fact.correction_turn]
            assert correcting.kind == "correction"
            assert _says(correcting.user, fact.corrected_to)
            assert _says(scenario.turns[fact.turn].user, fact.value)
            for value, said in fact.superseded:
                assert fact.turn < said < fact.correction_turn
                assert _says(scenario.turns[said].user, value)
                assert value != fact.corrected_to
            if fact.style != f.RETRACTED:
                assert fact.corrected_to not in fact.old_values


def test_every_session_holds_one_correction_of_each_style() -> None:
    for seed in REPORT_SEEDS:
        styles = [fact.style for fact in _corrected(_session(seed))]
        assert sorted(styles) == sorted(STYLES)


def test_the_styles_are_what_their_names_say() -> None:
    for seed in (7001, 7002, 7005):
        scenario = _session(seed)
        by_style = {fact.style: fact for fact in _corrected(scenario)}
        far = by_style[f.FAR]
        assert far.correction_turn is not None
        assert far.correction_turn - far.turn >= FAR_GAP
        twice = by_style[f.TWICE]
        assert len({*twice.old_values, twice.corrected_to}) == 3
        retracted = by_style[f.RETRACTED]
        assert retracted.corrected_to == retracted.value
        assert len(retracted.superseded) == 1
        assert by_style[f.OF_THIRD].kind == f.THIRD
        partial = by_style[f.PARTIAL]
        listed = [fact for fact in scenario.facts if fact.kind == f.BULLETS]
        assert len(listed) == 3
        assert [fact is partial for fact in listed].count(True) == 1
        assert partial.correction_turn is not None
        fixing = scenario.turns[partial.correction_turn].user
        assert not any(_says(fixing, fact.value) for fact in listed if fact is not partial)
        typo = by_style[f.TYPO_FIX]
        assert typo.correction_turn == typo.turn + 1
        assert not _says(scenario.turns[typo.turn].user, str(typo.corrected_to))
        other = by_style[f.OTHER_LANGUAGE]
        assert other.correction_turn is not None
        said = scenario.turns[other.correction_turn].user
        assert said.split(":")[0] in {s.split(":")[0] for s in f.OTHER_LANGUAGE_SAYINGS}


def test_every_fact_kind_is_labelled_and_the_report_seeds_hold_them_all() -> None:
    kinds = {fact.kind for seed in REPORT_SEEDS for fact in _session(seed).facts}
    assert kinds == FACT_KINDS


def test_a_terse_answer_follows_the_assistant_s_question_without_repeating_it() -> None:
    for seed in (7000, 7003):
        scenario = _session(seed)
        (fact,) = [fact for fact in scenario.facts if fact.kind == f.ANSWER]
        asked = scenario.turns[fact.turn - 1].answer
        assert "?" in asked
        assert not _says(asked, fact.value)
        assert len(scenario.turns[fact.turn].user.split()) <= 6


def test_questions_come_long_after_their_source_in_the_second_half() -> None:
    for seed in (7002, 7007):
        scenario = _session(seed)
        assert all(q.turn >= 140 for q in scenario.questions)
        assert all(q.turn - q.source_turn >= MIN_QUESTION_GAP for q in scenario.questions)
        assert all(scenario.turns[q.turn].kind == "question" for q in scenario.questions)


def test_every_question_s_source_exists_in_the_message_its_role_names() -> None:
    roles, kinds = set(), set()
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        for question in scenario.questions:
            turn = scenario.turns[question.source_turn]
            texts = {"user": [turn.user], "assistant": [turn.answer], "tool": _tool_results(turn)}
            roles.add(question.source_role)
            kinds.add(question.kind)
            assert any(question.source_window in normalise(t) for t in texts[question.source_role])
            assert any(_says(t, question.value) for t in texts[question.source_role])
    assert roles == {"user", "assistant", "tool"}
    assert kinds == QUESTION_KINDS


def test_a_corrected_fact_is_asked_about_at_its_latest_value() -> None:
    asked = []
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        latest = {
            fact.correction_turn: fact.corrected_to for fact in scenario.facts if fact.corrected_to
        }
        for question in scenario.questions:
            if question.kind == f.Q_CORRECTED:
                asked.append(question)
                assert question.value == latest[question.source_turn]
    assert asked


def test_one_question_needs_two_messages_said_apart() -> None:
    for seed in (7004, 7009):
        scenario = _session(seed)
        spans = [q for q in scenario.questions if q.kind == f.Q_SPANS]
        assert len(spans) == 2
        assert spans[0].turn == spans[1].turn
        assert spans[0].source_turn != spans[1].source_turn
        halves = [fact for fact in scenario.facts if fact.kind == f.HALVES]
        assert {q.value for q in spans} == {fact.value for fact in halves}


def test_questions_come_both_sharing_a_word_with_the_source_and_not() -> None:
    questions = [q for seed in REPORT_SEEDS for q in _session(seed).questions]
    shared = sum(q.shares_word for q in questions)
    assert 0.3 < shared / len(questions) < 0.7


async def test_a_short_session_runs_through_the_harness_and_reports_by_style_and_kind() -> None:
    (result,) = await run([7001], 100, [True], generate=generate)
    scenario = _session(7001, 100)
    assert result.agent == scenario.agent
    assert result.refused == 0
    assert result.over_budget == 0
    assert result.invalid == 0
    assert result.stated > 0
    assert result.stated_found == result.stated
    assert sum(total for _, total in result.facts.values()) == len(scenario.facts)
    assert set(result.facts) <= FACT_KINDS
    assert len(result.questions) == len(scenario.questions)
    assert {q.kind for q in result.questions} == {q.kind for q in scenario.questions}
    corrected = _corrected(scenario)
    assert sum(row[0] for row in result.by_style.values()) == len(corrected)
    assert set(result.by_style) == {fact.style for fact in corrected}
    text = report([result])
    assert "corrections by style" in text
    assert f.TYPO_FIX in text
    assert "later questions by kind" in text
    assert "every part of a two-message answer" in text
