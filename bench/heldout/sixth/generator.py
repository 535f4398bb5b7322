"""A session of the sixth set, made from a seed: one of five agents (the seed picks it in
turn: coding, travel, on-call, finance, research), 280 turns at an 8k model by default.

The first half holds 30 user details, labelled by how they are said: plainly; in passing in
the middle of a long rambling message; dictated by voice, lower case and unpunctuated;
switching language mid-sentence; numbers as people write them ("1.5k a month", "¥12 000",
"€2.340,50", "CHF 85/h"); dates and times ("quarter past four", "2026-04-17", "the 3rd",
"end of Q3"); names in Greek, Cyrillic, Devanagari, Hangul and Hebrew; inside a request
("can you remind the team that…"); as a short reply picking one of the options the assistant
proposed ("yes the 14th works"); and inside pasted material: a Slack thread, a YAML config and
a CSV, two details each.

Ten corrections, one of each style: marked, unmarked, 100+ turns after the original, in
another language, said twice, corrected twice, retracted (the first value stands again),
"scratch that" within the message that states it, one field of a paste, and one proposed by
the assistant that the user confirms without repeating it. Routine work fills the rest: tool
steps with ``call_…`` and ``toolu_…`` ids, outputs from one line to long dumps, dictated and
code-switched requests, small talk in many languages, long rambles and pasted threads that
state nothing asked about. The second half asks about the user's details and about what the
assistant said or a tool returned, some questions sharing a word with the source, some not.
"""

from __future__ import annotations

import random
from dataclasses import replace

from bench.heldout.generator import (
    MIN_QUESTION_GAP,
    _texts,
    check_values_unique,
    source_window,
    value_pattern,
)
from bench.heldout.scenario import Fact, Question, Scenario, SourceRole, Turn, normalise
from bench.heldout.scenario import shares_a_word as _shares_a_word
from bench.heldout.sets import Agent, Frame, WorkingTurns, correction_start, free_pairs, free_turns
from bench.heldout.sixth import agents as a
from bench.heldout.sixth import facts as f

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
#: Single details per shape (the rest of the 30 are the reply and the pastes' six).
PER_SHAPE = 3
REQUEST_SINGLES = 2
#: User details asked about later (every assistant's and tool's detail is asked about too).
ASKED = 16
FAR_GAP = 100
REPORT_SEEDS = tuple(range(8000, 8010))
#: Seeds to look at while writing or checking the set; never the report seeds.
TUNING_SEEDS = tuple(range(8100, 8120))

ACKS = ("Noted.", "Got it.", "👍", "OK, saved.", "Understood.", "Thanks, noted that down.")
CHAT = (
    ("ok", "👍"),
    ("k", "Okay."),
    ("thx!!", "Any time."),
    ("merci", "De rien !"),
    ("danke dir", "Gern geschehen."),
    ("gracias!", "¡De nada!"),
    ("ありがとう", "どういたしまして。"),
    ("спасибо", "Пожалуйста!"),
    ("ευχαριστώ", "Παρακαλώ!"),
    ("धन्यवाद", "कोई बात नहीं।"),
    ("감사합니다", "천만에요!"),
    ("תודה", "בבקשה!"),
    ("one sec phone", "Sure."),
    ("back", "Welcome back."),
    ("lol yes", "😄"),
    ("hmm not sure", "No rush."),
    ("wait what", "Sorry — which part was unclear?"),
)
#: Requests as dictation software writes them: lower case, no punctuation, run-on.
DICTATED = (
    "can you check the thing from before and then tell me if its done",
    "ok next one please and then the one after that",
    "hey so whats the latest on that",
    "open the last result again i didnt read it properly",
    "go back to the previous step and do it again but slower",
    "yeah do that and let me know",
)
#: Code-switched requests that carry no detail.
SWITCHED = (
    "ok mach mal weiter with the next one",
    "bueno, and now what?",
    "c'est bon, continue",
    "ちょっと待って, let me think",
    "ладно, keep going",
)
#: Long user messages that state nothing asked about.
RAMBLES = (
    "honestly I don't know why I'm telling you this but the neighbours have started "
    "renovating at 7am every single day and I've had about four hours of sleep, so if I "
    "sound unhinged that's why, anyway what I actually wanted was for you to keep going "
    "with whatever you were doing, don't mind me",
    "pasting this because it made me laugh:\n\n**Jonas** 14:02\nwho took the last "
    "oat milk\n**Priyanka** 14:03\nnot me\n**Jonas** 14:03\nthere were three cartons\n"
    "**Oskar** 14:10\n:eyes:\n\nok back to work",
    "status: tired. plan: coffee, then the thing from this morning, then probably another "
    "coffee. the printer on our floor is broken again and there's a sign on it in three "
    "languages which is more effort than anyone has put into fixing it",
    "> Reminder: the building will be closed on the bank holiday. Please take home "
    "anything you need.\n\nsaw this, doesn't affect me, just sharing",
)
REPEATS = ("again", "same", "next", "and?", "status", "go on", "👍 continue")
QUESTION_ANSWERS = (
    "Let me look back.",
    "Checking our earlier messages.",
    "One moment.",
    "Let me find that.",
)
QUESTION_LEADS = ("", "", "", "hey ", "quick one: ", "sorry, ", "remind me — ", "wait, ")
CLOSING = "ok thats it for today"

WORK = WorkingTurns(a, calls_per_step=(1, 1, 1, 2, 2, 3))


def _filler(rng: random.Random, agent: Agent) -> Turn:
    draw = rng.random()
    if draw < 0.40:
        return WORK.routine(rng, agent)
    if draw < 0.50:
        turn = WORK.routine(rng, agent)
        return Turn(rng.choice(REPEATS + DICTATED + SWITCHED), turn.steps, turn.answer, "routine")
    if draw < 0.66:
        return Turn(a.request(rng, agent), (), a.prose(rng, agent), "prose")
    if draw < 0.90:
        user, answer = rng.choice(CHAT)
        return Turn(user, (), answer, "chat")
    return Turn(rng.choice(RAMBLES), (), a.prose(rng, agent), "paste")


#: (who said it, its turn, the message, the value, (question sharing a word, one not), kind).
Source = tuple[SourceRole, int, str, str, tuple[str, str], str]


def _question(rng: random.Random, ask: str) -> str:
    lead = rng.choice(QUESTION_LEADS)
    return f"{lead}{ask[0].lower()}{ask[1:]}" if lead else ask


def _state(rng: random.Random, frame: Frame, value: str) -> str:
    said = rng.choice(frame.statements)
    return said.format(v=value, open=rng.choice(f.RAMBLE_OPEN), close=rng.choice(f.RAMBLE_CLOSE))


def generate(seed: int, turns: int = 280) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 120)."""
    if turns < 120:
        raise ValueError("a session of the sixth set has at least 120 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    half = turns // 2
    limit = int(turns * 0.75)
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []
    #: Per fact: the text that states it, the two questions about it, and the question kind.
    about: list[tuple[str, tuple[str, str], str]] = []
    #: What the user says last about each fact that changed: (value, turn, text).
    latest: dict[int, tuple[str, int, str]] = {}
    #: Turns besides the key's where a value may occur (a correction said twice, the
    #: assistant's proposal the user confirms).
    extra: dict[str, set[int]] = {}

    # A reply picking one of the assistant's options: two turns in a row.
    reply = rng.choice(f.REPLIES)
    at = rng.choice(free_pairs(slots, 1, half))
    value = rng.choice(reply.values)
    said = rng.choice(reply.replies).format(v=value)
    slots[at] = Turn(reply.request, (), reply.proposal, "fact")
    slots[at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
    facts.append(Fact(f.REPLY, value, at + 1))
    about.append((said, (reply.ask_shared, reply.ask_other), f.Q_FACT))

    # Pasted material, two details each.
    pasted_first = len(facts)
    for pasted in f.PASTED:
        at = rng.choice(free_turns(slots, 1, half))
        chosen = [rng.choice(values) for values in pasted.values]
        text = rng.choice(pasted.texts).format(a=chosen[0], b=chosen[1])
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        for value, asks in zip(chosen, pasted.asks, strict=True):
            facts.append(Fact(pasted.kind, value, at))
            about.append((text, asks, f.Q_PASTED))

    # Single details, three of each shape (two inside requests).
    singles: list[Frame] = []
    for kind, frames in f.SINGLES.items():
        singles.extend(rng.sample(frames, REQUEST_SINGLES if kind == f.REQUEST else PER_SHAPE))
    rng.shuffle(singles)
    scratched = rng.randrange(len(singles))
    singles_first = len(facts)
    for number, (single, at) in enumerate(
        zip(singles, rng.sample(free_turns(slots, 1, half), len(singles)), strict=True)
    ):
        value = rng.choice(single.values)
        said = _state(rng, single, value)
        if number != scratched:
            slots[at] = Turn(said, (), rng.choice(ACKS), "fact")
            facts.append(Fact(single.kind, value, at))
            about.append((said, (single.ask_shared, single.ask_other), f.Q_FACT))
            continue
        # Changed within the very message that states it.
        assert single.restate is not None
        new = rng.choice([v for v in single.values if v != value])
        text = rng.choice(f.SCRATCH_SAYINGS).format(
            said=said, restated=single.restate.format(v=new)
        )
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        facts.append(Fact(single.kind, value, at, new, at, style=f.SCRATCH))
        about.append((text, (single.ask_shared, single.ask_other), f.Q_CORRECTED))
        latest[len(facts) - 1] = (new, at, text)

    def frame_of(index: int) -> Frame:
        return singles[index - singles_first]

    def place(start: int, end: int) -> int | None:
        free = free_turns(slots, start, end)
        return free[0] if free else None

    def other_value(index: int, *taken: str) -> str:
        return rng.choice([v for v in frame_of(index).values if v not in taken])

    def correct(index: int, style: str, sayings: tuple[str, ...], at: int | None) -> str | None:
        """Correct the single fact at ``index`` at turn ``at`` with one of ``sayings``."""
        fact = facts[index]
        restate = frame_of(index).restate
        if at is None or restate is None:
            return None
        new = other_value(index, fact.value)
        text = rng.choice(sayings).format(restated=restate.format(v=new))
        slots[at] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(fact.kind, fact.value, fact.turn, new, at, style=style)
        latest[index] = (new, at, text)
        return new

    correctable = [i for i in range(singles_first, len(facts)) if facts[i].corrected_to is None]
    rng.shuffle(correctable)
    # The far one: the earliest fact that leaves room, corrected 100 or more turns later.
    early = sorted(correctable, key=lambda i: facts[i].turn)
    far = next((i for i in early if facts[i].turn + FAR_GAP < limit), None)
    if far is not None:
        correctable.remove(far)
        start = facts[far].turn + FAR_GAP + rng.randint(0, 10)
        sayings = f.RESTATED_SAYINGS[f.MARKED] + f.RESTATED_SAYINGS[f.UNMARKED]
        correct(far, f.FAR, sayings, place(start, limit))
    for style in (f.MARKED, f.UNMARKED, f.OTHER_LANGUAGE):
        index = correctable.pop()
        start = correction_start(rng, facts[index].turn, limit, farthest=80)
        correct(index, style, f.RESTATED_SAYINGS[style], place(start, limit))

    # Said twice: the same correction again some turns later; the second is the key's.
    index = correctable.pop()
    first_at = place(correction_start(rng, facts[index].turn, limit, farthest=60), limit)
    repeated = correct(index, f.REPEATED, f.RESTATED_SAYINGS[f.REPEATED], first_at)
    again = None if first_at is None else place(first_at + rng.randint(4, 30), limit)
    if repeated is not None and first_at is not None and again is not None:
        restate = frame_of(index).restate
        assert restate is not None
        text = rng.choice(f.REPEAT_AGAIN).format(restated=restate.format(v=repeated))
        slots[again] = Turn(text, (), rng.choice(ACKS), "correction")
        fact = facts[index]
        facts[index] = Fact(fact.kind, fact.value, fact.turn, repeated, again, style=f.REPEATED)
        latest[index] = (repeated, again, text)
        extra.setdefault(repeated, set()).add(first_at)

    # Corrected twice: the middle value stood for a while; the last one stands.
    index = correctable.pop()
    first_value = facts[index].value
    moved_at = place(correction_start(rng, facts[index].turn, limit, farthest=60), limit)
    middle = correct(index, f.CHAIN, f.RESTATED_SAYINGS[f.MARKED], moved_at)
    again = (
        None
        if moved_at is None
        else place(correction_start(rng, moved_at, limit, farthest=50), limit)
    )
    if middle is not None and moved_at is not None and again is not None:
        restate = frame_of(index).restate
        assert restate is not None
        final = other_value(index, first_value, middle)
        text = rng.choice(f.CHAIN_SAYINGS).format(restated=restate.format(v=final), middle=middle)
        slots[again] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(
            facts[index].kind,
            first_value,
            facts[index].turn,
            final,
            again,
            superseded=((middle, moved_at),),
            style=f.CHAIN,
        )
        latest[index] = (final, again, text)

    # Retracted: a correction the user takes back; the first value is what stands.
    index = correctable.pop()
    first_value = facts[index].value
    moved_at = place(correction_start(rng, facts[index].turn, limit, farthest=60), limit)
    middle = correct(index, f.RETRACTED, f.RESTATED_SAYINGS[f.UNMARKED], moved_at)
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

    # The assistant proposes the change; the user only says yes. Not asked about later:
    # the user's own message never names the value.
    confirmed = correctable.pop()
    start = correction_start(rng, facts[confirmed].turn, limit, farthest=80)
    pairs = free_pairs(slots, start, limit)
    restate = frame_of(confirmed).restate
    if pairs and restate is not None:
        at = pairs[0]
        fact = facts[confirmed]
        new = other_value(confirmed, fact.value)
        proposal = rng.choice(f.CONFIRM_PROPOSALS).format(restated=restate.format(v=new))
        slots[at] = Turn(rng.choice(f.CONFIRM_PROMPTS), (), proposal, "correction")
        slots[at + 1] = Turn(rng.choice(f.CONFIRM_REPLIES), (), rng.choice(ACKS), "correction")
        facts[confirmed] = Fact(fact.kind, fact.value, fact.turn, new, at + 1, style=f.CONFIRMED)
        extra.setdefault(new, set()).add(at)

    # One field of a paste changes; the other stands.
    pasted_index = rng.randrange(len(f.PASTED))
    item = rng.randrange(2)
    pasted = f.PASTED[pasted_index]
    index = pasted_first + 2 * pasted_index + item
    item_at = place(correction_start(rng, facts[index].turn, limit, farthest=80), limit)
    if item_at is not None:
        old = facts[index].value
        new = rng.choice([v for v in pasted.values[item] if v != old])
        text = rng.choice(f.PARTIAL_SAYINGS).format(field=pasted.fields[item].format(v=new))
        slots[item_at] = Turn(text, (), rng.choice(ACKS), "correction")
        facts[index] = Fact(pasted.kind, old, facts[index].turn, new, item_at, style=f.PARTIAL)
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

    askable = [i for i in range(len(facts)) if i != confirmed]
    for index in rng.sample(askable, min(ASKED, len(askable))):
        statement, asks, kind = about[index]
        if index in latest:
            value, at, text = latest[index]
            sources.append(("user", at, text, value, asks, f.Q_CORRECTED))
        else:
            sources.append(("user", facts[index].turn, statement, facts[index].value, asks, kind))

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
                _shares_a_word(ask, text),
                kind,
            )
        )

    slots[turns - 1] = Turn(CLOSING, (), "Bye, talk soon.", "chat")
    session = [slots[t] if t in slots else _filler(rng, agent) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={
            "global": agent.system,
            "role": "Answer briefly. Ask before anything irreversible.",
        },
        goal=agent.goal,
        tools=[tool.definition for tool in agent.tools],
        turns=session,
        facts=facts,
        questions=sorted(questions, key=lambda q: q.turn),
        agent=agent.name,
    )
    _check_values_unique(scenario, extra)
    return scenario


def _check_values_unique(scenario: Scenario, extra: dict[str, set[int]]) -> None:
    """The shared check (a value occurs only where it is stated), with the turns a value may
    also occur at here: the first of a correction said twice, and the assistant's proposal
    the user confirms."""
    check_values_unique(_without(scenario, {t for turns in extra.values() for t in turns}))
    for value, turns in extra.items():
        pattern = value_pattern(value)
        for index in turns:
            texts = _texts(scenario.turns[index])
            if not any(pattern.search(normalise(t)) for t in texts):
                raise AssertionError(f"seed {scenario.seed}: {value!r} is not at turn {index}")
            others = [
                v
                for fact in scenario.facts
                for v in (fact.value, fact.corrected_to, *(s for s, _ in fact.superseded))
                if v is not None and v != value
            ]
            for other in others:
                if any(value_pattern(other).search(normalise(t)) for t in texts):
                    raise AssertionError(f"seed {scenario.seed}: {other!r} at turn {index}")


def _without(scenario: Scenario, blank: set[int]) -> Scenario:
    """``scenario`` with the turns in ``blank`` emptied (their text checked apart)."""
    turns = [Turn("", (), "", t.kind) if i in blank else t for i, t in enumerate(scenario.turns)]
    return replace(scenario, turns=turns)
