"""A session of the third set, made from a seed: one of five agents (the seed picks it in
turn). The first half holds the user's facts: single details, two lists of details said in
one message, a detail given over two messages, and one given as the answer to the assistant's
question. Corrections follow, marked or not (the user just states the new value), a few turns
or many turns later; one is corrected again, one changes a single detail of a list. Routine
work with tool steps, prose, small talk and rambles fills the rest, and the second half asks
about user facts and about details the assistant or a tool stated, long after they were said."""

from __future__ import annotations

import random

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
from bench.heldout.third import agents as a
from bench.heldout.third.facts import (
    BY_AGENT,
    MARKED,
    RECORRECTIONS,
    SHARED,
    UNMARKED,
)

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
#: Single-detail statements a session holds: of its agent's, and of the ones every agent has.
AGENT_SINGLES = 9
SHARED_SINGLES = 15
#: Whole corrections (the first corrected again), besides one partial correction.
CORRECTED = 6
#: How many user facts are asked about later (every assistant's and tool's detail is).
ASKED = 20
REPORT_SEEDS = tuple(range(5000, 5010))

ACKS = (
    "Noted.",
    "Got it.",
    "Thanks — saved.",
    "OK, I'll keep that in mind.",
    "Understood 👍",
    "Noted, thanks.",
    "Right, got it.",
    "Makes sense, noted.",
)
CHAT = (
    ("ok", "👍"),
    ("thanks!!", "Any time."),
    ("brb", "Sure."),
    ("lol", "😄"),
    ("obrigada!", "De nada!"),
    ("merci", "Avec plaisir."),
    ("danke dir", "Gern geschehen!"),
    ("makasih ya", "Sama-sama!"),
    ("asante sana", "Karibu!"),
    ("kiitos", "Ole hyvä!"),
    ("díky moc", "Není zač."),
    ("mulțumesc", "Cu plăcere!"),
    ("ধন্যবাদ", "আপনাকেও ধন্যবাদ!"),
    ("salamat po", "Walang anuman po!"),
    ("köszi", "Szívesen!"),
    ("hmm", "Want me to go over it again?"),
    ("that was quick", "Glad it helped."),
    ("still there?", "Yes, here."),
    ("coffee first, 2 min", "Enjoy it."),
)
#: Long messages that state nothing the scorer asks about: the noise real users add.
RAMBLES = (
    "sorry if im slow today, slept maybe four hours, the neighbours had a party and then the "
    "alarm went off at six for no reason, so bear with me if i repeat myself",
    "Just thinking out loud: half of what we do every week is chasing people for answers they "
    "already gave somewhere else, and I wonder whether there is a better way, but not today.",
    "ok so I had a whole list in my head on the way in and now it's gone, give me a second to "
    "remember what I wanted to ask you first",
    "honestly the new system is fine but everyone keeps using the old spreadsheet too, so "
    "nothing matches and I spend my mornings reconciling the two. rant over",
    "não liga pra bagunça, hoje o dia está corrido, vou mandando as coisas aos poucos",
    "Kalau aku lambat balas, maaf ya, lagi banyak meeting hari ini.",
)
QUESTION_ANSWERS = (
    "Let me look back through what we have.",
    "Checking our earlier conversation.",
    "One moment, finding it.",
    "Going back through the notes.",
)
#: Ways a later question starts: most with nothing, some with a word of lead-in.
QUESTION_LEADS = ("", "", "", "hey, ", "quick q: ", "sorry, ", "btw ")
CLOSING = "ok that's it for today, cheers"


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
    split_at = rng.choice(free_pairs(slots, 1, half))
    value = rng.choice(own.split.values)
    said = rng.choice(own.split.second).format(v=value)
    slots[split_at] = Turn(own.split.first, (), "Sure, take your time.", "fact")
    slots[split_at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
    facts.append(Fact("over two messages", value, split_at + 1))
    about.append((said, (own.split.ask_shared, own.split.ask_other)))

    reply_at = rng.choice(free_pairs(slots, 1, half))
    value = rng.choice(own.reply.values)
    said = rng.choice(own.reply.replies).format(v=value)
    slots[reply_at] = Turn(own.reply.request, (), own.reply.question, "fact")
    slots[reply_at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
    facts.append(Fact("answer to a question", value, reply_at + 1))
    about.append((said, (own.reply.ask_shared, own.reply.ask_other)))

    # A short session (a test's) gets fewer singles, so that the first half has room for them.
    room = len(free_turns(slots, 1, half)) // 3 - len(own.groups)
    agent_count = min(AGENT_SINGLES, room // 3)
    shared_count = min(SHARED_SINGLES, room - agent_count)
    frames: list[Frame] = rng.sample(own.singles, agent_count) + rng.sample(SHARED, shared_count)
    at_turns = rng.sample(free_turns(slots, 1, half), len(frames) + len(own.groups))
    for frame, at in zip(frames, at_turns, strict=False):
        value = rng.choice(frame.values)
        statement = rng.choice(frame.statements).format(v=value)
        slots[at] = Turn(statement, (), rng.choice(ACKS), "fact")
        facts.append(Fact(frame.kind, value, at))
        about.append((statement, (frame.ask_shared, frame.ask_other)))
    #: Index in ``facts`` of each group's first detail.
    group_start: list[int] = []
    for group, at in zip(own.groups, at_turns[len(frames) :], strict=True):
        chosen = [rng.choice(values) for values in group.values]
        names = dict(zip("abc", chosen, strict=False))
        statement = rng.choice(group.statements).format(**names)
        slots[at] = Turn(statement, (), rng.choice(ACKS), "fact")
        group_start.append(len(facts))
        for kind, value, asks in zip(group.kinds, chosen, group.asks, strict=True):
            facts.append(Fact(kind, value, at))
            about.append((statement, asks))

    # What the user says last about each fact that changed: (value, turn, text).
    latest: dict[int, tuple[str, int, str]] = {}
    limit = int(turns * 0.7)
    offset = 2  # the two-turn facts come first in ``facts``
    correctable = [offset + i for i, frame in enumerate(frames) if frame.restate is not None]
    for number, index in enumerate(rng.sample(correctable, min(CORRECTED, len(correctable)))):
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
        others = [v for v in frame.values if v not in (fact.value, new)]
        if number == 0 and others:
            again = free_turns(slots, correction_start(rng, free[0], limit, farthest=80), limit)
            if again:
                final = rng.choice(others)
                text = rng.choice(RECORRECTIONS).format(
                    old=fact.value, middle=new, new=final, restated=frame.restate.format(v=final)
                )
                slots[again[0]] = Turn(text, (), rng.choice(ACKS), "correction")
                facts[index] = Fact(
                    fact.kind, fact.value, fact.turn, final, again[0], superseded=((new, free[0]),)
                )
                latest[index] = (final, again[0], text)
    # One group has its last detail changed, the others left standing.
    which = rng.randrange(len(own.groups))
    group, index = own.groups[which], group_start[which] + len(own.groups[which].kinds) - 1
    fact = facts[index]
    free = free_turns(slots, correction_start(rng, fact.turn, limit, farthest=80), limit)
    if free:
        new = rng.choice([v for v in group.values[-1] if v != fact.value])
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

    for index in rng.sample(range(len(facts)), min(ASKED, len(facts))):
        statement, asks = about[index]
        if index in latest:
            value, at, text = latest[index]
            sources.append(("user", at, text, value, asks))
        else:
            sources.append(("user", facts[index].turn, statement, facts[index].value, asks))

    questions = ask_later(
        rng, slots, sources, turns=turns, answers=QUESTION_ANSWERS, leads=QUESTION_LEADS
    )

    slots[turns - 1] = Turn(CLOSING, (), "Have a good one!", "chat")
    session = [slots[t] if t in slots else _filler(rng, agent) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={"global": agent.system, "role": "Be brief. Confirm before anything final."},
        goal=agent.goal,
        tools=[tool.definition for tool in agent.tools],
        turns=session,
        facts=facts,
        questions=questions,
        agent=agent.name,
    )
    check_values_unique(scenario)
    return scenario
