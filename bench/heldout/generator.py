"""A tool-using agent's session, made from a seed: user facts in the first half (some later
corrected), routine requests with tool steps, small talk, prose, and, in the second half,
questions about details that have long left the prompt."""

from __future__ import annotations

import json
import random
import re

from bench.heldout import material as m
from bench.heldout.facts import CORRECTIONS, DETAILS, FRAMES, Frame
from bench.heldout.scenario import (
    Fact,
    Question,
    Scenario,
    SourceRole,
    Step,
    ToolCall,
    Turn,
    normalise,
    shares_a_word,
)

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
FACTS = 30
CORRECTED = 5
#: How many of the user's facts are asked about later (the assistant's details are, all five).
ASKED = 20
#: Questions come at least this many turns after their source: by then it has left the prompt.
MIN_QUESTION_GAP = 40


def _step(rng: random.Random) -> Step:
    calls, results = [], []
    for _ in range(rng.choice((1, 1, 1, 1, 2, 2, 3))):
        name, arguments, output = m.tool_call(rng)
        calls.append(ToolCall(m.call_id(rng), name, json.dumps(arguments)))
        results.append(output(rng))
    return Step(m.step_text(rng), tuple(calls), tuple(results))


def _routine(rng: random.Random, answer: str | None = None) -> Turn:
    steps = tuple(_step(rng) for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))))
    return Turn(m.routine_request(rng), steps, answer or m.prose(rng), "routine")


def _filler(rng: random.Random) -> Turn:
    draw = rng.random()
    if draw < 0.5:
        return _routine(rng)
    if draw < 0.75:
        return Turn(m.prose_request(rng), (), m.prose(rng), "prose")
    user, answer = rng.choice(m.CHAT)
    return Turn(user, (), answer, "chat")


def source_window(text: str, value: str, margin: int = 30) -> str:
    """The source's words around the value, within its line: what proves the source itself
    is shown (whole, cut, or as the one line a summary kept), not a paraphrase of it."""
    line = next(line for line in text.splitlines() if normalise(value) in normalise(line))
    source = normalise(line)
    at = source.find(normalise(value))
    return source[max(0, at - margin) : at + len(normalise(value)) + margin].strip()


def _detail_value(rng: random.Random, index: int) -> str:
    words = rng.sample(m.WORDS, 3)
    return (
        rng.choice(("thirteen", "nineteen", "twenty-three")),
        f"test_{words[0]}_{words[1]}_{words[2]}_retry",
        f"OPS-{rng.randint(1000, 9999)}",
        f"ledger_{words[0]}_{words[1]}",
        f"https://wiki.internal.example/ops/runbooks/{words[0]}-{words[1]}-{rng.randint(10, 99)}",
    )[index]


def generate(seed: int, turns: int = 280) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 60)."""
    if turns < 60:
        raise ValueError("a held-out session has at least 60 turns")
    rng = random.Random(seed)
    half = turns // 2
    # A short session (a test's) gets fewer facts, so that the first half has room for them.
    frames: list[Frame] = rng.sample(FRAMES, min(FACTS, len(FRAMES), half // 2))
    slots: dict[int, Turn] = {}

    fact_turns = sorted(rng.sample(range(1, half), len(frames)))
    facts: list[Fact] = []
    statements: list[str] = []
    for frame, at in zip(frames, fact_turns, strict=True):
        value = rng.choice(frame.values)
        variant = rng.choice(frame.variants)
        statement = variant.statement.format(v=value)
        slots[at] = Turn(statement, (), rng.choice(m.ACKS), "fact")
        facts.append(Fact(frame.kind, value, at))
        statements.append(statement)

    # Corrections: a later turn, before 60% of the session, says the value changed.
    correctable = [i for i, f in enumerate(frames) if f.restate is not None]
    corrected: dict[int, tuple[str, int, str]] = {}
    for index in rng.sample(correctable, min(CORRECTED, len(correctable))):
        frame, fact = frames[index], facts[index]
        free = [t for t in range(fact.turn + 8, int(turns * 0.6)) if t not in slots]
        if not free or frame.restate is None:
            continue
        new = rng.choice([v for v in frame.values if v != fact.value])
        at = rng.choice(free)
        text = rng.choice(CORRECTIONS).format(
            old=fact.value, new=new, restated=frame.restate.format(v=new)
        )
        slots[at] = Turn(text, (), rng.choice(m.ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, at)
        corrected[index] = (new, at, text)

    # Details the assistant states while doing routine work, asked about later.
    sources: list[tuple[SourceRole, int, str, str, str, str]] = []
    for index, detail in enumerate(DETAILS):
        free = [t for t in range(3, int(turns * 0.45)) if t not in slots]
        at = rng.choice(free)
        value = _detail_value(rng, index)
        answer = f"{m.prose(rng)}\n\n{detail.sentence.format(v=value)}"
        slots[at] = _routine(rng, answer=answer)
        sources.append(("assistant", at, answer, value, detail.ask_shared, detail.ask_other))

    frame_variants = {}
    for index, frame in enumerate(frames):
        for variant in frame.variants:
            if variant.statement.format(v=facts[index].value) == statements[index]:
                frame_variants[index] = variant
    for index in rng.sample(range(len(frames)), min(ASKED, len(frames))):
        fact, variant = facts[index], frame_variants[index]
        if index in corrected:
            new, at, text = corrected[index]
            sources.append(("user", at, text, new, variant.ask_shared, variant.ask_other))
        else:
            sources.append(
                (
                    "user",
                    fact.turn,
                    statements[index],
                    fact.value,
                    variant.ask_shared,
                    variant.ask_other,
                )
            )

    questions: list[Question] = []
    rng.shuffle(sources)
    for role, source_turn, text, value, ask_shared, ask_other in sources:
        free = [
            t for t in range(max(half, source_turn + MIN_QUESTION_GAP), turns - 1) if t not in slots
        ]
        if not free:
            continue
        at = rng.choice(free)
        ask = ask_shared if rng.random() < 0.5 else ask_other
        slots[at] = Turn(ask, (), rng.choice(m.QUESTION_ANSWERS), "question")
        questions.append(
            Question(
                at, source_turn, role, value, source_window(text, value), shares_a_word(ask, text)
            )
        )

    slots[turns - 1] = Turn(m.CLOSING, (), "Have a good evening!", "chat")
    session = [slots[t] if t in slots else _filler(rng) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={
            "global": "You are a careful engineering assistant working in the user's systems.",
            "role": "Use the tools to look before you change anything; say what you did.",
        },
        goal="Keep the user's services healthy and help with whatever they ask.",
        tools=list(m.TOOLS),
        turns=session,
        facts=facts,
        questions=sorted(questions, key=lambda q: q.turn),
    )
    check_values_unique(scenario)
    return scenario


def _texts(turn: Turn) -> list[str]:
    texts = [turn.user, turn.answer]
    for step in turn.steps:
        texts.extend(step.results)
        texts.extend(call.arguments for call in step.calls)
        if step.content:
            texts.append(step.content)
    return texts


def _unspaced(char: str) -> bool:
    """Scripts written without spaces between words (kana, CJK ideographs, Hangul
    syllables): there a value sits between other letters, and still is a word of its own."""
    return (
        "\u3040" <= char <= "\u30ff"
        or "\u3400" <= char <= "\u9fff"
        or ("\uac00" <= char <= "\ud7af")
    )


def value_pattern(value: str) -> re.Pattern[str]:
    """A value found as itself, not inside a longer word."""
    text = normalise(value)
    before = "" if _unspaced(text[0]) else r"(?<!\w)"
    after = "" if _unspaced(text[-1]) else r"(?!\w)"
    return re.compile(f"{before}{re.escape(text)}{after}")


def check_values_unique(scenario: Scenario) -> None:
    """A value must occur only where it is stated: elsewhere it would be found by accident."""
    allowed: dict[str, set[int]] = {}
    for fact in scenario.facts:
        allowed.setdefault(fact.value, set()).update({fact.turn, fact.correction_turn or -1})
        for value, said in fact.superseded:
            allowed.setdefault(value, set()).update({said, fact.correction_turn or -1})
            # A re-correction may name the first value too ("not A, not B: C").
            allowed[fact.value].add(said)
        if fact.corrected_to is not None:
            allowed.setdefault(fact.corrected_to, set()).add(fact.correction_turn or -1)
    for question in scenario.questions:
        allowed.setdefault(question.value, set()).add(question.source_turn)
    for value, turns in allowed.items():
        pattern = value_pattern(value)
        for index, turn in enumerate(scenario.turns):
            if index not in turns and any(pattern.search(normalise(t)) for t in _texts(turn)):
                raise AssertionError(
                    f"seed {scenario.seed}: value {value!r} also occurs at turn {index}"
                )
