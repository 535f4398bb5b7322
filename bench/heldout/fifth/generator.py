"""A session of the fifth set, made from a seed: one of five agents (the seed picks it in
turn), 280 turns at an 8k model by default.

The first half holds the user's details: single ones (said plainly, in words, relative to
today, in another script or language, about a third person, inside a question), two inside
pasted texts (an e-mail with its headers, a markdown table), three in a bullet list, one as a
terse answer to the assistant's question, one misspelt and fixed in the next message, and two
said a couple of messages apart that one later question needs together.

Then corrections, one of each style: marked, unmarked, 100+ turns after the original, in
other words for the same subject, in another language, of a third person's detail, of one
item of the list, one corrected twice, one retracted (the first value stands again), besides
the typo fixed at once. Every fact and correction is labelled (``Fact.kind``,
``Fact.style``), and so is every later question (``Question.kind``).

Routine work fills the rest: requests (many repeated: "status", "same again", "next"), tool
steps whose output runs from a line to a long dump, status lines and prose of every length,
one-word replies in many languages, pasted e-mails and lists that state nothing asked
about. The second half asks about the user's details and about what the assistant said or a
tool returned, long after they were said.
"""

from __future__ import annotations

import random

from bench.heldout.fifth import agents as a
from bench.heldout.fifth import facts as f
from bench.heldout.generator import MIN_QUESTION_GAP, check_values_unique, source_window
from bench.heldout.scenario import (
    Fact,
    Question,
    Scenario,
    SourceRole,
    Turn,
    shares_a_word,
)
from bench.heldout.sets import Agent, WorkingTurns, correction_start, free_pairs, free_turns

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
#: Single details a session holds: of its agent's (its third person's and its first, which
#: may be said in other words, always among them), and of the ones every agent has.
AGENT_SINGLES = 6
SHARED_SINGLES = 9
#: User details asked about later, besides the two halves one question needs together
#: (every assistant's and tool's detail is asked about too).
ASKED = 16
#: How far after the original a far correction comes, at least.
FAR_GAP = 100
REPORT_SEEDS = tuple(range(7000, 7010))

ACKS = (
    "Noted.",
    "Got it.",
    "Saved to the notes.",
    "OK.",
    "Thanks — recorded.",
    "👍 noted",
    "Understood, I'll keep that in mind.",
)
CHAT = (
    ("ok", "👍"),
    ("?", "Still here — what do you need?"),
    ("thx", "You're welcome."),
    ("brb", "Sure."),
    ("lol", "😄"),
    ("hmm", "Take your time."),
    ("yes", "Great."),
    ("მადლობა", "არაფრის!"),
    ("շնորհակալություն", "Խնդրեմ։"),  # noqa: RUF001
    ("நன்றி", "பரவாயில்லை!"),
    ("አመሰግናለሁ", "ምንም አይደል።"),
    ("ස්තූතියි", "කමක් නැහැ!"),
    ("നന്ദി", "സാരമില്ല!"),
    ("អរគុណ", "មិនអីទេ!"),
    ("આભાર", "કંઈ વાંધો નહીં!"),
    ("asante sana", "Karibu!"),
    ("sağ ol", "Rica ederim!"),
    ("dzięki", "Nie ma za co!"),
    ("valeu", "De nada!"),
    ("köszi", "Szívesen!"),
    ("mersi", "Cu plăcere!"),
    ("salamat po", "Walang anuman!"),
    ("ẹ ṣé", "Kò tọ́pẹ́!"),
    ("coffee break, back in 10", "See you in a bit."),
    ("sorry was in a meeting", "No problem, picking up where we left off."),
)
#: Long user messages that state nothing asked about: pasted mail, lists, asides.
PASTES = (
    "fyi, no action needed:\n\nFrom: Facilities <facilities@example.org>\nSubject: Lift "
    "maintenance\nDate: Wed, 4 Mar 2026 09:00:00 +0000\n\nDear all,\nThe east lift will be out "
    "of service for maintenance next week. Please use the west lift or the stairs. We "
    "apologise for any inconvenience.\n\nFacilities Team",
    "my to-do list for today, just so you know what I'm juggling\n- reply to the auditors\n"
    "- chase the printer repair\n- lunch?\n- read the policy update\n- call mum back",
    "honestly the wifi here is dreadful today, if I drop off mid-message that's why. also "
    "someone has microwaved fish in the shared kitchen again and the whole floor smells of it",
    "> Please remember to complete your mandatory training by the end of the quarter. Staff "
    "who have not completed it will be contacted by their line manager.\n\nanother one of "
    "these. ignore, I've done mine",
    "Okay so I've been thinking about the way we do the weekly numbers and I think there's a "
    "better way but I can't put my finger on it yet. Let's not change anything today, I just "
    "wanted to say it out loud before I forget that I had the thought.",
    "| thing | status |\n|---|---|\n| expenses | sent |\n| timesheet | not yet |\n| "
    "training | done |\n\nthat's my admin, carry on",
)
#: Routine requests said again and again, as real users do.
REPEATS = ("status?", "same again", "next", "and now?", "any update", "go on", "again pls")
QUESTION_ANSWERS = (
    "Let me check our notes.",
    "One moment, looking back through the conversation.",
    "Checking what you said.",
    "Give me a second.",
)
QUESTION_LEADS = ("", "", "", "", "quick q: ", "sorry, ", "remind me, ", "wait — ")
CLOSING = "ok that's me done for today"


#: This set's agents' working turns: a step makes one to three tool calls.
WORK = WorkingTurns(a, calls_per_step=(1, 1, 1, 1, 2, 2, 3))


def _filler(rng: random.Random, agent: Agent) -> Turn:
    draw = rng.random()
    if draw < 0.45:
        return WORK.routine(rng, agent)
    if draw < 0.57:
        turn = WORK.routine(rng, agent)
        return Turn(rng.choice(REPEATS), turn.steps, turn.answer, "routine")
    if draw < 0.72:
        return Turn(a.request(rng, agent), (), a.prose(rng, agent), "prose")
    if draw < 0.91:
        user, answer = rng.choice(CHAT)
        return Turn(user, (), answer, "chat")
    return Turn(rng.choice(PASTES), (), a.prose(rng, agent), "paste")


#: (who said it, its turn, the message, the value, (question sharing a word, one not), kind).
Source = tuple[SourceRole, int, str, str, tuple[str, str], str]


def _question(rng: random.Random, ask: str) -> str:
    lead = rng.choice(QUESTION_LEADS)
    return f"{lead}{ask[0].lower()}{ask[1:]}" if lead else ask


def generate(seed: int, turns: int = 280) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 100)."""
    if turns < 100:
        raise ValueError("a session of the fifth set has at least 100 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    own = f.BY_AGENT[agent.name]
    half = turns // 2
    limit = int(turns * 0.75)
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []
    #: Per fact: the text that states it and the two questions about it.
    about: list[tuple[str, tuple[str, str]]] = []
    #: What the user says last about each fact that changed: (value, turn, text).
    latest: dict[int, tuple[str, int, str]] = {}

    # The details said over two turns first, while there is room for two turns in a row.
    answer = own.answer
    at = rng.choice(free_pairs(slots, 1, half))
    value = rng.choice(answer.values)
    said = rng.choice(answer.replies).format(v=value)
    slots[at] = Turn(answer.request, (), answer.question, "fact")
    slots[at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
    facts.append(Fact(f.ANSWER, value, at + 1))
    about.append((said, (answer.ask_shared, answer.ask_other)))

    typo = own.typo
    at = rng.choice(free_pairs(slots, 1, half))
    wrong, value = rng.choice(typo.values)
    said = rng.choice(f.TYPO_SAYINGS).format(v=value)
    slots[at] = Turn(typo.first.format(typo=wrong), (), rng.choice(ACKS), "fact")
    slots[at + 1] = Turn(said, (), "Fixed.", "correction")
    typo_index = len(facts)
    facts.append(Fact(f.TYPO, wrong, at, value, at + 1, style=f.TYPO_FIX))
    about.append((said, (typo.ask_shared, typo.ask_other)))
    latest[typo_index] = (value, at + 1, said)

    # Two halves, one to three turns apart, that one later question needs together.
    halves = own.halves
    firsts = [t for t in free_turns(slots, 1, half - 4) if t + 2 not in slots]
    first_at = rng.choice(firsts)
    second_at = rng.choice(free_turns(slots, first_at + 2, first_at + 5))
    halves_at: list[tuple[int, str, str]] = []
    for values, sayings, at in (
        (halves.values[0], halves.first, first_at),
        (halves.values[1], halves.second, second_at),
    ):
        value = rng.choice(values)
        said = rng.choice(sayings).format(v=value)
        slots[at] = Turn(said, (), rng.choice(ACKS), "fact")
        facts.append(Fact(f.HALVES, value, at))
        about.append((said, (halves.ask_shared, halves.ask_other)))
        halves_at.append((at, said, value))
    halves_first = len(facts) - 2

    # Pasted texts with two details each, and the bullet list with three.
    for pasted in own.pasted:
        at = rng.choice(free_turns(slots, 1, half))
        chosen = [rng.choice(values) for values in pasted.values]
        text = rng.choice(pasted.texts).format(a=chosen[0], b=chosen[1])
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        for value, asks in zip(chosen, pasted.asks, strict=True):
            facts.append(Fact(pasted.kind, value, at))
            about.append((text, asks))
    bullets = own.bullets
    bullets_at = rng.choice(free_turns(slots, 1, half))
    listed = [rng.choice(values) for values in bullets.values]
    text = rng.choice(bullets.texts).format(a=listed[0], b=listed[1], c=listed[2])
    slots[bullets_at] = Turn(text, (), rng.choice(ACKS), "fact")
    bullets_first = len(facts)
    for value, asks in zip(listed, bullets.asks, strict=True):
        facts.append(Fact(f.BULLETS, value, bullets_at))
        about.append((text, asks))

    # Single details; a shorter session gets fewer.
    room = len(free_turns(slots, 1, half)) // 3
    shared_count = min(SHARED_SINGLES, max(2, room - AGENT_SINGLES))
    renamable = own.singles[0]
    third = next(s for s in own.singles if s.kind == f.THIRD)
    rest = [s for s in own.singles if s not in (renamable, third)]
    singles = [
        renamable,
        third,
        *rng.sample(rest, AGENT_SINGLES - 2),
        *rng.sample(f.SHARED, shared_count),
    ]
    rng.shuffle(singles)
    singles_first = len(facts)
    for single, at in zip(
        singles, rng.sample(free_turns(slots, 1, half), len(singles)), strict=True
    ):
        value = rng.choice(single.values)
        said = rng.choice(single.statements).format(v=value)
        slots[at] = Turn(said, (), rng.choice(ACKS), "fact")
        facts.append(Fact(single.kind, value, at))
        about.append((said, (single.ask_shared, single.ask_other)))

    def index_of(single: f.Said) -> int:
        return singles_first + singles.index(single)

    def place(start: int, end: int) -> int | None:
        free = free_turns(slots, start, end)
        return free[0] if free else None

    def correct(index: int, style: str, sayings: tuple[str, ...], at: int | None) -> str | None:
        """Correct the single fact at ``index`` at turn ``at`` with one of ``sayings``."""
        single, fact = singles[index - singles_first], facts[index]
        if at is None or single.restate is None:
            return None
        new = rng.choice([v for v in single.values if v != fact.value])
        text = rng.choice(sayings).format(
            old=fact.value,
            new=new,
            restated=single.restate.format(v=new),
            renamed=(single.rename or single.restate).format(v=new),
        )
        slots[at] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, at, style=style)
        latest[index] = (new, at, text)
        return new

    # A third person's detail, and a detail in other words for the same subject.
    index = index_of(third)
    correct(
        index,
        f.OF_THIRD,
        f.MARKED_SAYINGS + f.UNMARKED_SAYINGS,
        place(correction_start(rng, facts[index].turn, limit, farthest=80), limit),
    )
    index = index_of(renamable)
    correct(
        index,
        f.RENAMED,
        f.RENAMED_SAYINGS,
        place(correction_start(rng, facts[index].turn, limit, farthest=80), limit),
    )
    correctable = [
        index_of(s) for s in singles if s.restate is not None and s not in (renamable, third)
    ]
    rng.shuffle(correctable)
    # The far one: the earliest fact that leaves room, corrected 100 or more turns later.
    early = sorted(correctable, key=lambda i: facts[i].turn)
    far = next((i for i in early if facts[i].turn + FAR_GAP < limit), None)
    if far is not None:
        correctable.remove(far)
        start = facts[far].turn + FAR_GAP + rng.randint(0, 10)
        correct(far, f.FAR, f.MARKED_SAYINGS + f.UNMARKED_SAYINGS, place(start, limit))
    for style, sayings in (
        (f.MARKED, f.MARKED_SAYINGS),
        (f.UNMARKED, f.UNMARKED_SAYINGS),
        (f.OTHER_LANGUAGE, f.OTHER_LANGUAGE_SAYINGS),
    ):
        if correctable:
            index = correctable.pop()
            start = correction_start(rng, facts[index].turn, limit, farthest=80)
            correct(index, style, sayings, place(start, limit))
    # Corrected twice: the middle value stood for a while; the last one stands.
    if correctable:
        index = correctable.pop()
        single = singles[index - singles_first]
        first_value = facts[index].value
        moved_at = place(correction_start(rng, facts[index].turn, limit, farthest=60), limit)
        middle = correct(index, f.TWICE, f.MARKED_SAYINGS + f.UNMARKED_SAYINGS, moved_at)
        again = (
            None
            if moved_at is None
            else place(correction_start(rng, moved_at, limit, farthest=60), limit)
        )
        if middle is not None and moved_at is not None and again is not None and single.restate:
            final = next(v for v in single.values if v not in (first_value, middle))
            text = rng.choice(f.AGAIN_SAYINGS).format(
                restated=single.restate.format(v=final), middle=middle
            )
            slots[again] = Turn(text, (), rng.choice(ACKS), "correction")
            facts[index] = Fact(
                facts[index].kind,
                first_value,
                facts[index].turn,
                final,
                again,
                superseded=((middle, moved_at),),
                style=f.TWICE,
            )
            latest[index] = (final, again, text)
    # Retracted: a correction the user takes back; the first value is what stands.
    if correctable:
        index = correctable.pop()
        first_value = facts[index].value
        moved_at = place(correction_start(rng, facts[index].turn, limit, farthest=60), limit)
        middle = correct(index, f.RETRACTED, f.MARKED_SAYINGS + f.UNMARKED_SAYINGS, moved_at)
        back = None if moved_at is None else place(moved_at + rng.randint(2, 25), limit)
        if middle is not None and moved_at is not None and back is not None:
            text = rng.choice(f.RETRACT_SAYINGS).format(old=first_value)
            slots[back] = Turn(text, (), rng.choice(ACKS), "correction")
            facts[index] = Fact(
                facts[index].kind,
                first_value,
                facts[index].turn,
                first_value,
                back,
                superseded=((middle, moved_at),),
                style=f.RETRACTED,
            )
            latest[index] = (first_value, back, text)
    # One item of the list changes; the other two stand.
    item = rng.randrange(3)
    index = bullets_first + item
    item_at = place(correction_start(rng, facts[index].turn, limit, farthest=80), limit)
    if item_at is not None:
        old = facts[index].value
        new = rng.choice([v for v in bullets.values[item] if v != old])
        text = rng.choice(f.PARTIAL_SAYINGS).format(old=old, new=new)
        slots[item_at] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(f.BULLETS, old, facts[index].turn, new, item_at, style=f.PARTIAL)
        latest[index] = (new, item_at, text)

    # Details the assistant states, or a tool returns, while working; asked about later.
    sources: list[Source] = []
    for detail in agent.details:
        at = rng.choice(free_turns(slots, 3, int(turns * 0.45)))
        value = detail.value(rng)
        asks = (detail.ask_shared, detail.ask_other)
        if detail.tool:
            slots[at] = WORK.tool_detail(rng, agent, detail, value)
            sources.append(("tool", at, detail.record.format(v=value), value, asks, f.Q_TOOL))
        else:
            said = f"{a.prose(rng, agent)}\n\n{detail.sentence.format(v=value)}"
            slots[at] = WORK.routine(rng, agent, answer=said)
            sources.append(("assistant", at, said, value, asks, f.Q_ASSISTANT))

    halves_indices = (halves_first, halves_first + 1)
    askable = [i for i in range(len(facts)) if i not in halves_indices]
    for index in rng.sample(askable, min(ASKED, len(askable))):
        statement, asks = about[index]
        if index in latest:
            value, at, text = latest[index]
            sources.append(("user", at, text, value, asks, f.Q_CORRECTED))
        else:
            sources.append(
                ("user", facts[index].turn, statement, facts[index].value, asks, f.Q_FACT)
            )

    questions: list[Question] = []
    rng.shuffle(sources)
    for role, source_turn, text, value, (ask_shared, ask_other), kind in sources:
        free = free_turns(slots, max(half, source_turn + MIN_QUESTION_GAP), turns - 1)
        if not free:
            continue
        at = rng.choice(free)
        ask = _question(rng, ask_shared if rng.random() < 0.5 else ask_other)
        slots[at] = Turn(ask, (), rng.choice(QUESTION_ANSWERS), "question")
        questions.append(
            Question(
                at,
                source_turn,
                role,
                value,
                source_window(text, value),
                shares_a_word(ask, text),
                kind,
            )
        )
    # The question whose answer spans the two halves: two entries at one turn.
    start = max(half, halves_at[1][0] + MIN_QUESTION_GAP)
    free = free_turns(slots, start, turns - 1)
    if free:
        at = rng.choice(free)
        ask = _question(rng, halves.ask_shared if rng.random() < 0.5 else halves.ask_other)
        slots[at] = Turn(ask, (), rng.choice(QUESTION_ANSWERS), "question")
        for source_turn, said, value in halves_at:
            questions.append(
                Question(
                    at,
                    source_turn,
                    "user",
                    value,
                    source_window(said, value),
                    shares_a_word(ask, said),
                    f.Q_SPANS,
                )
            )

    slots[turns - 1] = Turn(CLOSING, (), "Bye — talk tomorrow.", "chat")
    session = [slots[t] if t in slots else _filler(rng, agent) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={"global": agent.system, "role": "Be brief. Confirm before anything irreversible."},
        goal=agent.goal,
        tools=[tool.definition for tool in agent.tools],
        turns=session,
        facts=facts,
        questions=sorted(questions, key=lambda q: q.turn),
        agent=agent.name,
    )
    check_values_unique(scenario)
    return scenario
