"""The benchmarks' synthetic conversation: the same for a seed, valid chat, and it plants
what it says it plants."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from app.budget.assembly import chat_problems
from bench import synth

REPO = Path(__file__).resolve().parents[2]


def test_a_seed_gives_the_same_conversation_and_another_seed_a_different_one() -> None:
    assert synth.generate(40, seed=3) == synth.generate(40, seed=3)
    assert synth.generate(40, seed=3).messages() != synth.generate(40, seed=4).messages()


def test_a_shorter_conversation_is_a_prefix_of_a_longer_one() -> None:
    short, long = synth.generate(20, seed=1), synth.generate(60, seed=1)
    assert long.turns[:20] == short.turns
    assert short.planted == long.planted  # all planted within the first 12 turns


def test_the_flattened_conversation_is_a_valid_chat() -> None:
    conversation = synth.generate(80, seed=2)
    next_question = {"role": "user", "content": "And now?"}
    assert chat_problems([*conversation.chat(), next_question]) == []
    for turn in conversation.turns:
        assert turn.user["role"] == "user"
        assert turn.answer["role"] == "assistant"
        assert turn.answer["content"]
        for step in turn.steps:
            calls = [c["id"] for c in step.assistant["tool_calls"]]
            assert [r["tool_call_id"] for r in step.results] == calls
            body = step.body()
            assert [r["tool_call_id"] for r in body["tool_results"]] == calls


def test_every_planted_item_is_stated_once_in_its_turn_with_its_marker() -> None:
    conversation = synth.generate(100, seed=5)
    kinds = [p.kind for p in conversation.planted]
    assert (kinds.count("fact"), kinds.count("decision"), kinds.count("question")) == (6, 4, 4)
    markers = [p.marker for p in conversation.planted]
    assert len(set(markers)) == len(markers)
    every_text = [m["content"] or "" for m in conversation.messages()]
    for item in conversation.planted:
        assert item.turn < 12
        assert item.marker in item.text
        holders = [text for text in every_text if item.marker in text]
        assert len(holders) == 1
        turn = conversation.turns[item.turn]
        where = turn.answer if item.kind == "decision" else turn.user
        assert item.text in where["content"]
    questions = [p.text for p in conversation.planted if p.kind == "question"]
    assert all(text.endswith("?") for text in questions)


def test_with_messages_stops_at_the_first_whole_turn_reaching_the_count() -> None:
    for count in (10, 100, 1000):
        conversation = synth.with_messages(count, seed=0)
        total = len(conversation.messages())
        assert total >= count
        assert total - len(conversation.turns[-1].messages()) < count
        assert all(p.turn < len(conversation.turns) for p in conversation.planted)


def test_tool_results_are_mostly_small_with_a_long_tail() -> None:
    rng = random.Random(0)
    sizes = sorted(synth.tool_result_tokens(rng) for _ in range(5000))
    assert sizes[len(sizes) // 2] < 200
    assert sizes[-1] > 2000
    assert max(sizes) <= 6000


def test_the_generator_needs_none_of_the_bench_extra() -> None:
    """CI installs the test extra only: importing the generator loads no bench library."""
    probe = (
        "import sys, bench.synth; "
        "print([m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'llama_index', 'matplotlib', 'aiohttp')])"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout.strip() == "[]"


def test_user_facts_are_the_same_for_a_seed_and_cover_every_kind() -> None:
    one = synth.generate(40, seed=1, user_facts_per_kind=2)
    assert one == synth.generate(40, seed=1, user_facts_per_kind=2)
    assert one.user_facts != synth.generate(40, seed=2, user_facts_per_kind=2).user_facts
    kinds = [fact.kind for fact in one.user_facts]
    assert sorted(kinds) == sorted(synth.USER_FACT_KINDS * 2)
    probes = [fact.probe for fact in one.user_facts]
    assert len(set(probes)) == len(probes)
    for fact in one.user_facts:
        assert fact.turn < 12
        assert fact.probe in fact.text
        assert fact.text in one.turns[fact.turn].user["content"]
        assert not any(c.isdigit() for c in fact.text)
    # Tool output mentions values of the same kinds, never a probe of what the user said.
    tool_text = "\n".join(m["content"] for m in one.messages() if m["role"] == "tool")
    assert "Review" in tool_text or "Tag:" in tool_text or "Guest on file" in tool_text
    for message in one.messages():
        if message["role"] != "user":
            assert not any(fact.probe in (message["content"] or "") for fact in one.user_facts)


def test_user_facts_use_several_phrasings_per_kind_across_seeds() -> None:
    openings: dict[str, set[str]] = {kind: set() for kind in synth.USER_FACT_KINDS}
    for seed in range(30):
        for fact in synth.generate(12, seed=seed, user_facts_per_kind=2).user_facts:
            openings[fact.kind].add(fact.text.replace(fact.probe, "…")[:12])
    assert all(len(found) >= 3 for found in openings.values()), openings


def test_without_user_facts_the_conversation_is_as_before() -> None:
    plain = synth.generate(40, seed=3)
    assert plain.user_facts == ()
    assert plain == synth.generate(40, seed=3, user_facts_per_kind=0)
    with_facts = synth.generate(40, seed=3, user_facts_per_kind=2)
    assert with_facts.planted == plain.planted
    # Only user messages gain sentences and tool results a line: the rest is unchanged.
    for before, after in zip(plain.messages(), with_facts.messages(), strict=True):
        if before["role"] == "assistant":
            assert before == after
        else:
            assert after["content"].startswith(before["content"])
