"""A session of the fourth set, made from a seed: one of five agents (the seed picks it in
turn). The first half holds the user's facts: single details, a person, a place and a time
said in one message, a detail given as the answer to the assistant's question, and one
misspelt and put right in the next message. Corrections follow, marked or not, a few turns
or many turns later: one corrected again, one of a third person's detail, one that drops a
detail altogether, and one that changes only the time of the person-place-time message.
Routine work with tool steps, prose, small talk and rambles fills the rest, and the second
half asks about user facts and about details the assistant or a tool stated, long after
they were said."""

from __future__ import annotations

import random

from bench.heldout.fourth import agents as a
from bench.heldout.fourth.facts import (
    ANSWER,
    BY_AGENT,
    FIXED,
    FIXES,
    LIST,
    MARKED,
    RECORRECTIONS,
    SHARED,
    THIRD,
    UNMARKED,
)
from bench.heldout.generator import check_values_unique
from bench.heldout.scenario import Fact, Scenario, Turn
from bench.heldout.sets import (
    Agent,
    Frame,
    Source,
    WorkingTurns,
    ask_later,
    correction_start,
    free_pairs,
    free_turns,
)

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
#: Single-detail statements a session holds: of its agent's, and of the ones every agent has.
AGENT_SINGLES = 5
SHARED_SINGLES = 17
#: Whole corrections (the first corrected again, one of a third person's detail), besides
#: one that drops a detail and one that changes a single detail of a message.
CORRECTED = 6
#: How many user facts are asked about later (every assistant's and tool's detail is).
ASKED = 20
REPORT_SEEDS = tuple(range(6000, 6010))

ACKS = (
    "Noted.",
    "Saved.",
    "Got it, thanks.",
    "OK — written down.",
    "Understood ✔",
    "Thanks, I'll remember.",
    "Right, noted for later.",
)
CHAT = (
    ("k", "👌"),
    ("ty", "You're welcome."),
    ("🙏", "Any time."),
    ("haha ok", "😄"),
    ("moltes gràcies", "De res!"),
    ("takk skal du ha", "Bare hyggelig!"),
    ("dankie", "Plesier!"),
    ("hvala ti", "Nema na čemu."),
    ("aitäh", "Palun!"),
    ("ačiū", "Prašom!"),
    ("diolch", "Croeso!"),
    ("ngiyabonga", "Wamukelekile!"),
    ("eskerrik asko", "Ez horregatik!"),
    ("terima kasih banyak", "Sama-sama!"),
    ("شکریہ", "کوئی بات نہیں!"),
    ("мерси", "Моля!"),
    ("back from lunch", "Welcome back."),
    ("give me 5", "Sure."),
    ("are you still there", "Yes, still here."),
    ("nvm", "No problem."),
)
#: Long messages that state nothing the scorer asks about: the noise real users add.
RAMBLES = (
    "ugh sorry the train wifi keeps cutting out so if i vanish mid sentence thats why also "
    "the guy next to me is on a call on speaker so i cant think straight",
    "You know what, the more I use this the more I think half my job is remembering what "
    "other people told me three weeks ago. Anyway. Not a question, just venting.",
    "Perdona, avui vaig de bòlit, et vaig enviant les coses a poc a poc.",
    "Beklager, litt treg i dag — barna har vært syke hele uka.",
    "okay where was I. there was something important and it's gone. it'll come back.",
    "Žao mi je ako kasnim s odgovorima, imam sastanke cijeli dan.",
)
QUESTION_ANSWERS = (
    "Let me look back through our notes.",
    "One moment, checking what you told me.",
    "Looking it up in our conversation.",
    "Give me a second to find it.",
)
#: Ways a later question starts: most with nothing, some with a word of lead-in.
QUESTION_LEADS = ("", "", "", "sorry, ", "quick one: ", "hmm ", "remind me — ")
CLOSING = "that's all for today, thanks"


#: This set's agents' working turns: a step makes one to three tool calls.
WORK = WorkingTurns(a, calls_per_step=(1, 1, 1, 2, 2, 3))


def _filler(rng: random.Random, agent: Agent) -> Turn:
    draw = rng.random()
    if draw < 0.55:
        return WORK.routine(rng, agent)
    if draw < 0.72:
        return Turn(a.request(rng, agent), (), a.prose(rng, agent), "prose")
    if draw < 0.9:
        user, answer = rng.choice(CHAT)
        return Turn(user, (), answer, "chat")
    return Turn(rng.choice(RAMBLES), (), a.prose(rng, agent), "ramble")


def generate(seed: int, turns: int = 280) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 60)."""
    if turns < 60:
        raise ValueError("a held-out session has at least 60 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    own = BY_AGENT[agent.name]
    half = turns // 2
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []
    #: Per fact: the text that states it and the two questions about it.
    about: list[tuple[str, tuple[str, str]]] = []

    # The two-turn facts first, while there is room for two turns in a row.
    reply_at = rng.choice(free_pairs(slots, 1, half))
    value = rng.choice(own.reply.values)
    said = rng.choice(own.reply.replies).format(v=value)
    slots[reply_at] = Turn(own.reply.request, (), own.reply.question, "fact")
    slots[reply_at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
    facts.append(Fact(ANSWER, value, reply_at + 1))
    about.append((said, (own.reply.ask_shared, own.reply.ask_other)))

    fix = rng.choice(FIXES)
    fix_at = rng.choice(free_pairs(slots, 1, half))
    typo, value = rng.choice(fix.values)
    said = rng.choice(fix.fixes).format(v=value)
    slots[fix_at] = Turn(fix.first.format(typo=typo), (), rng.choice(ACKS), "fact")
    slots[fix_at + 1] = Turn(said, (), "Fixed, thanks.", "fact")
    facts.append(Fact(FIXED, value, fix_at + 1))
    about.append((said, (fix.ask_shared, fix.ask_other)))

    # A short session (a test's) gets fewer singles, so that the first half has room for them.
    room = len(free_turns(slots, 1, half)) // 3 - 1
    agent_count = min(AGENT_SINGLES, room // 3)
    shared_count = min(SHARED_SINGLES, room - agent_count)
    # Every session holds a detail the user later drops, and one about a third person that
    # may be corrected.
    droppable = [f for f in SHARED if f.retract is not None]
    dropped_frame = rng.choice(droppable)
    others = [f for f in SHARED if f is not dropped_frame]
    frames: list[Frame] = [
        *rng.sample(own.singles, agent_count),
        dropped_frame,
        *rng.sample(others, shared_count - 1),
    ]
    at_turns = rng.sample(free_turns(slots, 1, half), len(frames) + 1)
    for frame, at in zip(frames, at_turns, strict=False):
        value = rng.choice(frame.values)
        statement = rng.choice(frame.statements).format(v=value)
        slots[at] = Turn(statement, (), rng.choice(ACKS), "fact")
        facts.append(Fact(frame.kind, value, at))
        about.append((statement, (frame.ask_shared, frame.ask_other)))
    group, group_at = own.group, at_turns[-1]
    chosen = [rng.choice(values) for values in group.values]
    statement = rng.choice(group.statements).format(**dict(zip("abc", chosen, strict=True)))
    slots[group_at] = Turn(statement, (), rng.choice(ACKS), "fact")
    group_start = len(facts)
    for value, asks in zip(chosen, group.asks, strict=True):
        facts.append(Fact(LIST, value, group_at))
        about.append((statement, asks))

    # What the user says last about each fact that changed: (value, turn, text).
    latest: dict[int, tuple[str, int, str]] = {}
    limit = int(turns * 0.7)
    offset = 2  # the answer and the fixed typo come first in ``facts``
    dropped = offset + frames.index(dropped_frame)
    correctable = [
        offset + i for i, f in enumerate(frames) if f.restate is not None and f is not dropped_frame
    ]
    third = [i for i in correctable if frames[i - offset].kind == THIRD]
    chosen_corrections = rng.sample(correctable, min(CORRECTED, len(correctable)))
    if third and not any(i in third for i in chosen_corrections):
        chosen_corrections[-1] = rng.choice(third)
    for number, index in enumerate(chosen_corrections):
        frame, fact = frames[index - offset], facts[index]
        assert frame.restate is not None
        free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=80), limit)
        if not free:
            continue
        new = rng.choice([v for v in frame.values if v != fact.value])
        # Every other correction is unmarked: the user simply states the new value.
        phrasings = UNMARKED if number % 2 else MARKED
        text = rng.choice(phrasings).format(
            old=fact.value, new=new, restated=frame.restate.format(v=new)
        )
        slots[free[0]] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, free[0])
        latest[index] = (new, free[0], text)
        remaining = [v for v in frame.values if v not in (fact.value, new)]
        if number == 0 and remaining:
            again = free_turns(slots, correction_start(rng, free[0], limit, farthest=80), limit)
            if again:
                final = rng.choice(remaining)
                text = rng.choice(RECORRECTIONS).format(
                    old=fact.value, middle=new, new=final, restated=frame.restate.format(v=final)
                )
                slots[again[0]] = Turn(text, (), rng.choice(ACKS), "correction")
                facts[index] = Fact(
                    fact.kind, fact.value, fact.turn, final, again[0], superseded=((new, free[0]),)
                )
                latest[index] = (final, again[0], text)
    # The dropped detail: what stands in its place is what must be in the last prompt.
    fact = facts[dropped]
    assert dropped_frame.retract is not None
    free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=80), limit)
    if free:
        template, instead = dropped_frame.retract
        text = template.format(old=fact.value, new=instead)
        slots[free[0]] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[dropped] = Fact(fact.kind, fact.value, fact.turn, instead, free[0])
    # The time of the person-place-time message changes; the person and place stand.
    index = group_start + 2
    fact = facts[index]
    free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=80), limit)
    if free:
        new = rng.choice([v for v in group.values[2] if v != fact.value])
        text = rng.choice(group.partial).format(old=fact.value, new=new)
        slots[free[0]] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, free[0])
        latest[index] = (new, free[0], text)

    # Details the assistant states, or a tool returns, while working; asked about later.
    sources: list[Source] = []
    for detail in agent.details:
        at = rng.choice(free_turns(slots, 3, int(turns * 0.45)))
        value = detail.value(rng)
        asks = (detail.ask_shared, detail.ask_other)
        if detail.tool:
            slots[at] = WORK.tool_detail(rng, agent, detail, value)
            sources.append(("tool", at, detail.record.format(v=value), value, asks))
        else:
            answer = f"{a.prose(rng, agent)}\n\n{detail.sentence.format(v=value)}"
            slots[at] = WORK.routine(rng, agent, answer=answer)
            sources.append(("assistant", at, answer, value, asks))

    # A dropped detail is not asked about: there is nothing left to answer with.
    askable = [i for i in range(len(facts)) if i != dropped]
    for index in rng.sample(askable, min(ASKED, len(askable))):
        statement, asks = about[index]
        if index in latest:
            value, at, text = latest[index]
            sources.append(("user", at, text, value, asks))
        else:
            sources.append(("user", facts[index].turn, statement, facts[index].value, asks))

    questions = ask_later(
        rng, slots, sources, turns=turns, answers=QUESTION_ANSWERS, leads=QUESTION_LEADS
    )

    slots[turns - 1] = Turn(CLOSING, (), "Bye for now!", "chat")
    session = [slots[t] if t in slots else _filler(rng, agent) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={"global": agent.system, "role": "Be brief. Ask before anything irreversible."},
        goal=agent.goal,
        tools=[tool.definition for tool in agent.tools],
        turns=session,
        facts=facts,
        questions=questions,
        agent=agent.name,
    )
    check_values_unique(scenario)
    return scenario
