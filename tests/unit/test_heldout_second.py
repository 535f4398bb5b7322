"""The second held-out set makes the sessions its report describes, the same for a seed."""

from __future__ import annotations

from typing import cast

import httpx

from bench.heldout.generator import MIN_QUESTION_GAP
from bench.heldout.scenario import Fact, Scenario
from bench.heldout.scorer import Agent, SessionResult
from bench.heldout.second import generate
from bench.heldout.second.domains import DOMAINS


def test_a_seed_makes_the_same_session_every_time() -> None:
    assert generate(7, 80) == generate(7, 80)


def test_consecutive_seeds_come_from_different_agents() -> None:
    goals = {generate(seed, 60).goal for seed in range(len(DOMAINS))}
    assert len(goals) == len(DOMAINS)


def test_facts_come_in_the_first_half_and_questions_long_after_their_source() -> None:
    scenario = generate(12, 160)
    assert all(fact.turn < 80 for fact in scenario.facts)
    assert scenario.questions
    assert all(q.turn - q.source_turn >= MIN_QUESTION_GAP for q in scenario.questions)


def test_one_fact_is_corrected_twice_and_keeps_both_old_values() -> None:
    scenario = generate(3, 280)
    twice = [fact for fact in scenario.facts if fact.superseded]
    assert len(twice) == 1
    (fact,) = twice
    assert fact.corrected_to not in fact.old_values
    assert len(set(fact.old_values)) == 2


def test_a_partial_correction_changes_one_of_two_values_said_together() -> None:
    scenario = generate(5, 280)
    by_turn: dict[int, list[str | None]] = {}
    for fact in scenario.facts:
        by_turn.setdefault(fact.turn, []).append(fact.corrected_to)
    assert any(len(changed) == 2 and changed.count(None) == 1 for changed in by_turn.values())


def test_a_corrected_fact_is_asked_about_at_its_latest_value() -> None:
    scenario = generate(8, 280)
    latest = {f.correction_turn: f.corrected_to for f in scenario.facts if f.corrected_to}
    for question in scenario.questions:
        if question.source_turn in latest:
            assert question.value == latest[question.source_turn]


def _scored(lines: list[str]) -> SessionResult:
    fact = Fact(
        "date",
        "next March",
        3,
        "in about six weeks",
        40,
        superseded=(("at the end of October", 20),),
    )
    scenario = Scenario(1, "gpt-4o-mini", 8192, {}, "", [], facts=[fact])
    # Scoring a prompt reads no client: none is made.
    agent = Agent(cast(httpx.AsyncClient, None), scenario, recall=False)
    agent._score_facts([{"role": "user", "content": "\n".join(lines)}])
    return agent.result


def test_the_middle_value_of_a_fact_corrected_twice_alone_on_a_line_reads_as_current() -> None:
    result = _scored(["passport expires at the end of October", "it expires in about six weeks"])
    assert (result.correction_new_present, result.correction_old_current) == (1, 1)


def test_a_line_naming_old_values_beside_the_new_one_is_history() -> None:
    result = _scored(["in about six weeks, not at the end of October or next March"])
    assert (result.correction_new_present, result.correction_old_current) == (1, 0)
