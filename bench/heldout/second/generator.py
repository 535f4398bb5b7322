"""A session of the second set, made from a seed: one of five agents (the seed picks it in
turn), the user's facts in the first half, corrections in many phrasings (some naming the old
value, some not; a few turns or many turns later; one changing half of what was said; one
corrected again), routine work with tool steps, prose, small talk and rambles, and in the
second half questions about details that have long left the prompt."""

from __future__ import annotations

import json
import random

from bench.heldout.generator import check_values_unique
from bench.heldout.scenario import Fact, Scenario, Step, ToolCall, Turn
from bench.heldout.second import domains as d
from bench.heldout.second.facts import CORRECTIONS, FRAMES, PAIRS, RECORRECTIONS
from bench.heldout.sets import Frame, Source, ask_later, correction_start, free_turns

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
#: Single-detail statements a session holds; each pair frame adds two more facts.
FACTS = 30
PAIRED = 2
#: Whole corrections (one of them corrected again), besides one partial correction.
CORRECTED = 5
ASKED = 20
REPORT_SEEDS = tuple(range(3000, 3010))

ACKS = (
    "Noted.",
    "Got it — I'll remember that.",
    "Thanks, that's useful to know.",
    "OK, noted for later.",
    "Understood.",
    "Good to know!",
    "👍 noted",
)
CHAT = (
    ("thx", "Anytime!"),
    ("ok", "👍"),
    ("hahaha", "😄"),
    ("good morning!!", "Good morning! What's first today?"),
    ("one sec, phone", "Sure, take your time."),
    ("merci beaucoup", "Avec plaisir !"),
    ("grazie mille", "Prego!"),
    ("ありがとう", "どういたしまして！"),  # noqa: RUF001
    ("спасибо", "Пожалуйста!"),
    ("this is taking forever", "Sorry — nearly there."),
    ("perfect, thanks", "Glad it helped."),
    ("hmm not sure about that", "Fair — want me to lay out the alternatives?"),
    ("back", "Welcome back."),
)
#: Long messages that state nothing the scorer asks about: the noise real users add.
RAMBLES = (
    "ok sorry this is going to be long but basically this week has been a mess, work moved "
    "two deadlines and the heating broke and im just trying to get the admin stuff done in "
    "between meetings so if i ask the same thing twice thats why",
    "Quick context before the next ask: I've been going back and forth on this for a while, "
    "comparing options on my phone late at night, which is probably not the best way to make "
    "decisions, so I'd love it if you could just tell me what you'd do and why.",
    "not urgent at all but at some point i want to sit down and actually understand how all "
    "of this fits together, it feels like every tool has its own idea of what a month is",
    "I talked to a friend about this yesterday and she said the opposite of what you said, "
    "so now I'm confused. Not saying you're wrong, just want to double-check the reasoning.",
    "can we do the next bit slower? i got lost around the third step last time and didnt "
    "want to say",
)
QUESTION_ANSWERS = (
    "Let me check what we have on that.",
    "Going back through our notes.",
    "One moment, looking it up in the conversation.",
)
CLOSING = "right, that's all for today. thank you!!"


def _step(rng: random.Random, domain: d.Domain) -> Step:
    calls, results = [], []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        name, arguments, output = d.tool_call(rng, domain)
        calls.append(ToolCall(d.call_id(rng), name, json.dumps(arguments, ensure_ascii=False)))
        results.append(output(rng))
    return Step(rng.choice(d.STEP_TEXTS), tuple(calls), tuple(results))


def _routine(rng: random.Random, domain: d.Domain, answer: str | None = None) -> Turn:
    steps = tuple(_step(rng, domain) for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3, 4))))
    return Turn(d.request(rng, domain), steps, answer or d.prose(rng, domain), "routine")


def _filler(rng: random.Random, domain: d.Domain) -> Turn:
    draw = rng.random()
    if draw < 0.55:
        return _routine(rng, domain)
    if draw < 0.7:
        return Turn(d.request(rng, domain), (), d.prose(rng, domain), "prose")
    if draw < 0.88:
        user, answer = rng.choice(CHAT)
        return Turn(user, (), answer, "chat")
    return Turn(rng.choice(RAMBLES), (), d.prose(rng, domain), "ramble")


def generate(seed: int, turns: int = 280) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 60)."""
    if turns < 60:
        raise ValueError("a held-out session has at least 60 turns")
    rng = random.Random(seed)
    domain = d.DOMAINS[seed % len(d.DOMAINS)]
    half = turns // 2
    singles = min(FACTS, half // 2 - PAIRED)
    frames: list[Frame] = rng.sample(FRAMES, singles)
    pairs = rng.sample(PAIRS, PAIRED)
    slots: dict[int, Turn] = {}
    at_turns = sorted(rng.sample(range(1, half), singles + PAIRED))
    rng.shuffle(at_turns)

    facts: list[Fact] = []
    #: Per fact: (its statement, the questions about it, the frame if a single).
    about: list[tuple[str, tuple[str, str], Frame | None]] = []
    for frame, at in zip(frames, at_turns, strict=False):
        value = rng.choice(frame.values)
        statement = rng.choice(frame.statements).format(v=value)
        slots[at] = Turn(statement, (), rng.choice(ACKS), "fact")
        facts.append(Fact(frame.kind, value, at))
        about.append((statement, (frame.ask_shared, frame.ask_other), frame))
    for pair, at in zip(pairs, at_turns[singles:], strict=True):
        first, second = rng.choice(pair.values[0]), rng.choice(pair.values[1])
        statement = rng.choice(pair.statements).format(a=first, b=second)
        slots[at] = Turn(statement, (), rng.choice(ACKS), "fact")
        for kind, value, asks in zip(pair.kinds, (first, second), pair.asks, strict=True):
            facts.append(Fact(kind, value, at))
            about.append((statement, asks, None))

    # What the user says last about each fact, where it was changed: (value, turn, text).
    latest: dict[int, tuple[str, int, str]] = {}
    limit = int(turns * 0.65)
    correctable = [i for i, frame in enumerate(frames) if frame.restate is not None]
    chosen = rng.sample(correctable, min(CORRECTED, len(correctable)))
    for number, index in enumerate(chosen):
        frame, fact = frames[index], facts[index]
        assert frame.restate is not None
        free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=70), limit)
        if not free:
            continue
        new = rng.choice([v for v in frame.values if v != fact.value])
        at = free[0]
        text = rng.choice(CORRECTIONS).format(
            old=fact.value, new=new, restated=frame.restate.format(v=new)
        )
        slots[at] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, at)
        latest[index] = (new, at, text)
        # The first one is corrected again, when a value is left to change to.
        others = [v for v in frame.values if v not in (fact.value, new)]
        if number == 0 and others:
            free = free_turns(slots, correction_start(rng, at, limit, farthest=70), limit)
            if free:
                final, again = rng.choice(others), free[0]
                text = rng.choice(RECORRECTIONS).format(
                    old=fact.value, middle=new, new=final, restated=frame.restate.format(v=final)
                )
                slots[again] = Turn(text, (), rng.choice(ACKS), "correction")
                facts[index] = Fact(
                    fact.kind, fact.value, fact.turn, final, again, superseded=((new, at),)
                )
                latest[index] = (final, again, text)
    # One of the pairs has its second detail changed, the first left standing.
    pair_index = rng.randrange(PAIRED)
    index = singles + 2 * pair_index + 1
    fact, pair = facts[index], pairs[pair_index]
    free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=70), limit)
    if free:
        new = rng.choice([v for v in pair.values[1] if v != fact.value])
        text = rng.choice(pair.partial).format(old=fact.value, new=new)
        slots[free[0]] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, free[0])
        latest[index] = (new, free[0], text)

    # Details the assistant states while working, asked about later.
    sources: list[Source] = []
    for detail in domain.details:
        at = rng.choice(free_turns(slots, 3, int(turns * 0.45)))
        value = detail.value(rng)
        answer = f"{d.prose(rng, domain)}\n\n{detail.sentence.format(v=value)}"
        slots[at] = _routine(rng, domain, answer=answer)
        sources.append(("assistant", at, answer, value, (detail.ask_shared, detail.ask_other)))

    for index in rng.sample(range(len(facts)), min(ASKED, len(facts))):
        statement, asks, _ = about[index]
        if index in latest:
            value, at, text = latest[index]
            sources.append(("user", at, text, value, asks))
        else:
            sources.append(("user", facts[index].turn, statement, facts[index].value, asks))

    questions = ask_later(rng, slots, sources, turns=turns, answers=QUESTION_ANSWERS)

    slots[turns - 1] = Turn(CLOSING, (), "You're welcome — talk soon!", "chat")
    session = [slots[t] if t in slots else _filler(rng, domain) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={"global": domain.system, "role": "Be brief; ask before anything irreversible."},
        goal=domain.goal,
        tools=[tool.definition for tool in domain.tools],
        turns=session,
        facts=facts,
        questions=questions,
        agent=domain.name,
    )
    check_values_unique(scenario)
    return scenario
