"""The sixth held-out set makes the same session for a seed, with every value stated only
where its key says, every fact, correction and question labelled, and runs through the
harness."""

from __future__ import annotations

import json
from functools import cache

from bench.heldout.__main__ import SETS, report, run
from bench.heldout.generator import MIN_QUESTION_GAP, value_pattern
from bench.heldout.scenario import Fact, Scenario, Turn, normalise
from bench.heldout.sixth import REPORT_SEEDS, TUNING_SEEDS, generate
from bench.heldout.sixth import facts as f
from bench.heldout.sixth.agents import AGENTS
from bench.heldout.sixth.generator import FAR_GAP

FACT_KINDS = {
    f.PLAIN,
    f.RAMBLING,
    f.VOICE,
    f.SWITCH,
    f.NUMBER,
    f.WHEN,
    f.SCRIPT,
    f.REQUEST,
    f.REPLY,
    f.SLACK,
    f.YAML,
    f.CSV,
}
STYLES = {
    f.MARKED,
    f.UNMARKED,
    f.FAR,
    f.OTHER_LANGUAGE,
    f.PARTIAL,
    f.RETRACTED,
    f.REPEATED,
    f.SCRATCH,
    f.CONFIRMED,
    f.CHAIN,
}
QUESTION_KINDS = {f.Q_FACT, f.Q_CORRECTED, f.Q_PASTED, f.Q_ASSISTANT, f.Q_TOOL}


@cache
def _session(seed: int, turns: int = 280) -> Scenario:
    return generate(seed, turns)


def _says(text: str, value: str) -> bool:
    return bool(value_pattern(value).search(normalise(text)))


def _texts(turn: Turn) -> list[str]:
    texts = [turn.user, turn.answer]
    for step in turn.steps:
        texts.extend(step.results)
        texts.extend(call.arguments for call in step.calls)
    return texts


def _corrected(scenario: Scenario) -> list[Fact]:
    return [fact for fact in scenario.facts if fact.corrected_to is not None]


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(8003, 140) == generate(8003, 140)
    assert generate(8003, 140) != generate(8008, 140)


def test_the_harness_offers_the_set_by_name_with_its_report_seeds() -> None:
    assert SETS["sixth"].report_seeds == tuple(range(8000, 8010))
    assert SETS["sixth"].generate is generate
    assert not set(REPORT_SEEDS) & set(TUNING_SEEDS)


def test_the_report_seeds_cover_every_agent_twice() -> None:
    agents = [_session(seed, 140).agent for seed in REPORT_SEEDS]
    assert sorted(agents) == sorted(agent.name for agent in AGENTS for _ in range(2))


def test_sessions_have_the_documented_size() -> None:
    for seed in (8000, 8004):
        scenario = _session(seed)
        assert len(scenario.turns) == 280
        assert scenario.context_limit == 8192
        assert scenario.model == "gpt-4o-mini"
        assert len(scenario.facts) == 30
        assert len(_corrected(scenario)) == 10
        assert len(scenario.questions) >= 18
        assert all(fact.turn < 140 for fact in scenario.facts)
        assert all(
            fact.correction_turn < 210
            for fact in scenario.facts
            if fact.correction_turn is not None
        )


def test_every_value_occurs_only_in_the_turns_the_key_names() -> None:
    # generate() checks this and raises otherwise: every report seed and a tuning seed pass.
    for seed in (*REPORT_SEEDS, TUNING_SEEDS[0]):
        _session(seed)


def test_each_value_is_in_the_user_message_of_the_turn_that_states_it() -> None:
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        for fact in scenario.facts:
            assert _says(scenario.turns[fact.turn].user, fact.value)


def test_every_correction_s_new_value_is_said_where_the_key_says() -> None:
    for seed in REPORT_SEEDS:
        scenario = _session(seed)
        for fact in _corrected(scenario):
            assert fact.corrected_to is not None
            assert fact.correction_turn is not None
            at = fact.correction_turn
            if fact.style == f.CONFIRMED:
                # The assistant proposed it one turn before; the user only agrees.
                assert _says(scenario.turns[at - 1].answer, fact.corrected_to)
                assert not _says(scenario.turns[at].user, fact.corrected_to)
            else:
                assert _says(scenario.turns[at].user, fact.corrected_to)
            for value, said in fact.superseded:
                assert fact.turn < said < at
                assert _says(scenario.turns[said].user, value)


def test_every_session_holds_one_correction_of_each_style() -> None:
    for seed in REPORT_SEEDS:
        styles = [fact.style for fact in _corrected(_session(seed))]
        assert sorted(styles) == sorted(STYLES)


def test_the_styles_are_what_their_names_say() -> None:
    for seed in (8001, 8002, 8005):
        scenario = _session(seed)
        by_style = {fact.style: fact for fact in _corrected(scenario)}
        far = by_style[f.FAR]
        assert far.correction_turn is not None
        assert far.correction_turn - far.turn >= FAR_GAP
        scratch = by_style[f.SCRATCH]
        assert scratch.correction_turn == scratch.turn
        chain = by_style[f.CHAIN]
        assert len({*chain.old_values, chain.corrected_to}) == 3
        retracted = by_style[f.RETRACTED]
        assert retracted.corrected_to == retracted.value
        assert len(retracted.superseded) == 1
        repeated = by_style[f.REPEATED]
        assert repeated.corrected_to is not None
        assert repeated.correction_turn is not None
        earlier = [
            t
            for t in range(repeated.turn + 1, repeated.correction_turn)
            if _says(scenario.turns[t].user, repeated.corrected_to)
        ]
        assert len(earlier) == 1
        partial = by_style[f.PARTIAL]
        assert partial.kind in {f.SLACK, f.YAML, f.CSV}
        assert partial.correction_turn is not None
        fixing = scenario.turns[partial.correction_turn].user
        pasted_with = [
            fact for fact in scenario.facts if fact.turn == partial.turn and fact is not partial
        ]
        assert len(pasted_with) == 1
        assert not _says(fixing, pasted_with[0].value)
        other = by_style[f.OTHER_LANGUAGE]
        assert other.correction_turn is not None
        said = scenario.turns[other.correction_turn].user
        assert said.split(":")[0] in {s.split(":")[0] for s in f.RESTATED_SAYINGS[f.OTHER_LANGUAGE]}


def test_every_fact_kind_is_labelled_and_every_session_holds_them_all() -> None:
    for seed in REPORT_SEEDS:
        assert {fact.kind for fact in _session(seed).facts} == FACT_KINDS


def test_a_reply_picks_an_option_the_assistant_proposed_in_other_words() -> None:
    for seed in (8000, 8003):
        scenario = _session(seed)
        (fact,) = [fact for fact in scenario.facts if fact.kind == f.REPLY]
        proposed = scenario.turns[fact.turn - 1].answer
        assert "?" in proposed
        assert not _says(proposed, fact.value)
        assert len(scenario.turns[fact.turn].user.split()) <= 8


def test_dictated_facts_have_no_capitals_or_punctuation() -> None:
    for seed in (8001, 8006):
        scenario = _session(seed)
        for fact in scenario.facts:
            if fact.kind == f.VOICE and fact.style != f.SCRATCH:
                said = scenario.turns[fact.turn].user
                assert said == said.lower()
                assert not any(mark in said for mark in ".,;:!?")


def test_tool_calls_carry_openai_and_anthropic_ids_and_json_arguments() -> None:
    ids = [
        call.id
        for seed in (8000, 8002)
        for turn in _session(seed).turns
        for step in turn.steps
        for call in step.calls
    ]
    assert any(i.startswith("call_") and len(i) == 29 for i in ids)
    assert any(i.startswith("toolu_01") and len(i) == 30 for i in ids)
    assert len(set(ids)) == len(ids)
    for turn in _session(8000).turns:
        for step in turn.steps:
            for call in step.calls:
                assert isinstance(json.loads(call.arguments), dict)


def test_questions_come_long_after_their_source_in_the_second_half() -> None:
    for seed in (8002, 8007):
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
            texts = {
                "user": [turn.user],
                "assistant": [turn.answer],
                "tool": [r for step in turn.steps for r in step.results],
            }
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


def test_questions_come_both_sharing_a_word_with_the_source_and_not() -> None:
    questions = [q for seed in REPORT_SEEDS for q in _session(seed).questions]
    shared = sum(q.shares_word for q in questions)
    assert 0.3 < shared / len(questions) < 0.8


async def test_a_short_session_runs_through_the_harness_and_reports_by_style_and_kind() -> None:
    (result,) = await run([8101], 120, [True], generate=generate)
    scenario = _session(8101, 120)
    assert result.agent == scenario.agent
    assert result.refused == 0
    assert result.over_budget == 0
    assert result.invalid == 0
    assert result.stated > 0
    assert result.stated_found == result.stated
    assert sum(total for _, total in result.facts.values()) == len(scenario.facts)
    assert set(result.facts) <= FACT_KINDS
    assert len(result.questions) == len(scenario.questions)
    corrected = _corrected(scenario)
    assert sum(row[0] for row in result.by_style.values()) == len(corrected)
    assert set(result.by_style) == {fact.style for fact in corrected}
    text = report([result])
    assert "corrections by style" in text
    assert f.SCRATCH in text
    assert "later questions by kind" in text
