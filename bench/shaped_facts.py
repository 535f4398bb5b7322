"""``python -m bench shaped-facts``: facts the user states in shapes the other generators
vary too little, in the last prompt of a long session.

Four shapes, each scored by kind:

- a **name in another script** (Georgian, Armenian, Devanagari, Tamil, Bengali, Thai,
  Arabic, Hebrew, Hangul, kana, Cyrillic, Greek), in frames that give it no English
  capital to lean on: "our new landlord is {name}", "{name} takes over payroll", lower-case
  chat;
- a fact **inside a question of another shape** than telling somebody something: asking to
  move something ("can we move the site visit to the 14th?"), doubting a figure ("do we
  really need 92 chairs?"), checking ("isn't the deposit 1,900?"), asking what if ("what if
  we hold it in Ghent instead?"), in English, German, French, Spanish, Italian, Portuguese;
- a **list of another shape**: letters ``a)``, ``(1)``, ``1/``, an en dash, an arrow, a
  check box, lines with no mark ("label: value" per line), items separated by semicolons on
  one line, a markdown table of two columns;
- a fact said **while tools run**: the message asks for routine work and states a fact in
  the same breath ("rerun the export — fyi Kofi is on call this week"), and the turn then
  makes one to three tool steps, as an agent's turns do.

Beside them, ordinary statements of the third held-out set's shared frames are scored as a
control. Filler is the third set's (routine requests with tool steps, prose, chat, rambles).
Sessions are 250 turns at gpt-4o-mini's 8,192 tokens, facts in the first half, scored as the
held-out sets score (:mod:`bench.heldout.scorer`).

Seeds: **tuning 500-509** (the ones to look at), **reporting 600-609** (run only for the
figures). ::

    python -m bench shaped-facts --seeds tuning
    python -m bench shaped-facts --seeds reporting
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.heldout.scenario import Fact, Scenario, Turn
from bench.heldout.third import agents as a
from bench.heldout.third.facts import SHARED
from bench.heldout.third.generator import ACKS, WORK
from bench.replies import closed_session, generator_main

TURNS = 250
TUNING_SEEDS = tuple(range(500, 510))
REPORTING_SEEDS = tuple(range(600, 610))
#: Per session: names in another script, facts inside questions, lists, facts said while
#: tools run, ordinary statements (the control).
NAMES = 6
QUESTIONS = 6
LISTS = 3
WHILE_TOOLS = 6
CONTROLS = 4


@dataclass(frozen=True)
class Said:
    """A message that states one fact: ``{v}`` is the value scored."""

    kind: str
    text: str
    values: tuple[str, ...]


#: Names in scripts without Latin capitals; each frame draws from every script.
SCRIPT_NAMES: tuple[str, ...] = (
    "ნინო ბერიძე",
    "Արամ Պետրոսյան",
    "अनिता शर्मा",
    "கார்த்திக் ராஜா",
    "রাহুল দাস",
    "สมชาย ใจดี",
    "ليلى حداد",
    "נועה לוי",
    "박서연",
    "たなか ゆうき",
    "Зоран Јовановић",
    "Σταύρος Κωνσταντίνου",
)

NAME_FRAMES: tuple[str, ...] = (
    "our new landlord is {v}, rent questions go to him from now on",
    "{v} takes over payroll from next month",
    "btw the plumber we keep calling is {v}",
    "if anyone asks, the building manager is {v}",
    "my flatmate {v} will pick up the parcel",
    "the interpreter for the site visit: {v}",
    "ask for {v} at reception, she has the keys",
    "Der neue Hausmeister heißt {v}.",
    "la nouvelle comptable, c'est {v}",
    "the person who signs the lease is {v}, not me",
    "{v} is my sister-in-law, she's staying with us in May",
    "contact at the embassy — {v}",
)

QUESTIONS_SAID: tuple[Said, ...] = (
    Said("move", "can we move the site visit to the {v}?", ("14th", "23rd")),
    Said("move", "could we push the kickoff to {v} instead?", ("half past ten", "quarter to two")),
    Said("doubt", "do we really need {v} chairs for the hall?", ("ninety-four", "eighty-three")),
    Said("doubt", "isn't the deposit {v} though?", ("1,940", "2,260")),
    Said("what if", "what if we hold the launch in {v} instead?", ("Ghent", "Aarhus")),
    Said(
        "what if",
        "how about {v} for the caterer, they did the wedding?",
        ("Brasserie Vautour", "Casa Lumbreras"),
    ),
    Said("check", "the invoice goes to {v}, right?", ("Wendelin", "Ottilie")),
    Said(
        "check",
        "so the movers come on {v}, correct?",
        ("Thursday the ninth", "Tuesday the seventh"),
    ),
    Said("move", "können wir das Treffen auf den {v} verlegen?", ("elften", "neunzehnten")),
    Said("doubt", "on a vraiment besoin de {v} couverts ?", ("cent dix", "quatre-vingt-dix")),
    Said("what if", "¿y si hacemos la cena en {v}?", ("Chamberí", "Malasaña")),
    Said(
        "check",
        "la consegna è sempre {v}, giusto?",
        ("giovedì mattina", "venerdì pomeriggio"),
    ),
    Said("move", "dá para mudar a reunião para {v}?", ("quarta às nove", "sexta às onze")),
)


@dataclass(frozen=True)
class Item:
    kind: str
    label: str
    text: str
    values: tuple[str, ...]


ITEMS: tuple[Item, ...] = (
    Item("name", "venue contact", "venue contact is {v}", ("Ragnhild Eide", "Chidinma Okafor")),
    Item("amount", "budget", "budget {v}", ("6,350 euros", "5,480 euros")),
    Item("count", "headcount", "{v}", ("57 people", "64 people")),
    Item("place", "hotel", "hotel is {v}", ("the Grand Harbour", "Villa Ortensia")),
    Item("time", "check-in", "check-in from {v}", ("four o'clock", "half past three")),
    Item("owner", "badges", "{v} does the badges", ("Zdeněk", "Ysolde")),
    Item("identifier", "booking ref", "booking ref {v}", ("BK-40417", "BK-72291")),
    Item("relation", "deputy", "{v} is my deputy that week", ("Fenella", "Torsten")),
)

TASKS = ("book the coach", "send the agenda", "ask about parking")

#: How a list's lines are marked: ``{n}`` the line's number, ``{c}`` its letter.
MARKERS = (
    "{c}) {text}",
    "({n}) {text}",
    "{n}/ {text}",
    "\u2013 {text}",  # an en dash
    "→ {text}",
    "- [ ] {text}",
)
INTROS = ("for the retreat:", "summary of the call", "")


def _listed(rng: random.Random, used: set[str]) -> tuple[str, str, list[Fact]]:
    """A list message of three or four facts and up to one task, its shape, and its facts
    (turn unset)."""
    pool = [item for item in ITEMS if not set(item.values) & used]
    items = rng.sample(pool, min(len(pool), rng.randint(3, 4)))
    rows: list[tuple[Item | None, str]] = []
    for item in items:
        value = rng.choice(item.values)
        used.update(item.values)
        rows.append((item, value))
    tasks = [(None, task) for task in rng.sample(TASKS, rng.randint(0, 1))]
    shape = rng.choice(("marked", "marked", "labels", "semicolons", "table"))
    facts = [Fact("list: " + item.kind, value, -1) for item, value in rows if item]
    intro = rng.choice(INTROS)
    if shape == "labels":
        body = [f"{item.label}: {value}" for item, value in rows if item]
    elif shape == "semicolons":
        parts = [item.text.format(v=value) for item, value in rows if item]
        body = ["; ".join(parts + [text for _, text in tasks])]
    elif shape == "table":
        body = ["| what | detail |", "|---|---|"]
        body += [f"| {item.label} | {value} |" for item, value in rows if item]
    else:
        lines = [item.text.format(v=value) for item, value in rows if item]
        lines += [text for _, text in tasks]
        rng.shuffle(lines)
        marker = rng.choice(MARKERS)
        body = [marker.format(n=n, c="abcdef"[n - 1], text=text) for n, text in enumerate(lines, 1)]
        shape = marker.split("{text}")[0].strip().replace("{n}", "1").replace("{c}", "a")
    text = "\n".join([intro, *body] if intro else body)
    return text, shape, facts


WHILE_TOOLS_SAID: tuple[Said, ...] = (
    Said("owner", "rerun the export — fyi {v} is on call this week", ("Kofi", "Margarethe")),
    Said(
        "place",
        "check the overnight jobs, oh and the offsite moved to {v}",
        ("Bruges", "Lucerne", "Trieste"),
    ),
    Said(
        "amount",
        "pull last week's numbers; the cap we agreed is {v} now",
        ("3,150 euros", "2,870 euros"),
    ),
    Said(
        "time",
        "can you restart the worker? standup is at {v} from tomorrow",
        ("twenty past nine", "ten to ten"),
    ),
    Said(
        "name",
        "look at the failing build while I'm on the phone with {v}, our new auditor",
        ("Philippa Hartnell", "Ignatius Oyelaran"),
    ),
    Said(
        "constraint",
        "go ahead and clean up the temp tables, but nothing gets deleted before {v}",
        ("the audit closes", "month end"),
    ),
    Said(
        "identifier",
        "search the logs for the timeout; the vendor ticket is {v}",
        ("VT-55821", "VT-30964"),
    ),
    Said(
        "preference",
        "sync the calendar; I only take calls after {v}, put that in the notes",
        ("half eleven", "two in the afternoon"),
    ),
)


def generate(seed: int, turns: int = TURNS) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 120)."""
    if turns < 120:
        raise ValueError("a session has at least 120 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    half = turns // 2
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []

    def free() -> int:
        return rng.choice([t for t in range(1, half) if t not in slots])

    for frame, name in zip(
        rng.sample(NAME_FRAMES, NAMES), rng.sample(SCRIPT_NAMES, NAMES), strict=True
    ):
        at = free()
        slots[at] = Turn(frame.format(v=name), (), rng.choice(ACKS), "fact")
        facts.append(Fact("name in another script", name, at))

    for said in rng.sample(QUESTIONS_SAID, QUESTIONS):
        value = rng.choice(said.values)
        at = free()
        answer = "Possibly. Let me know what you decide and I'll update things."
        slots[at] = Turn(said.text.format(v=value), (), answer, "fact")
        facts.append(Fact("inside a question: " + said.kind, value, at))

    used: set[str] = set()
    for _ in range(LISTS):
        text, shape, listed = _listed(rng, used)
        at = free()
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        facts.extend(Fact(f"{fact.kind} ({shape})", fact.value, at) for fact in listed)

    for said in rng.sample(WHILE_TOOLS_SAID, WHILE_TOOLS):
        value = rng.choice(said.values)
        at = free()
        steps = tuple(WORK.step(rng, agent) for _ in range(rng.randint(1, 3)))
        slots[at] = Turn(said.text.format(v=value), steps, a.prose(rng, agent), "fact")
        facts.append(Fact("while tools run: " + said.kind, value, at))

    for control in rng.sample(SHARED, CONTROLS):
        at = free()
        value = rng.choice(control.values)
        slots[at] = Turn(
            rng.choice(control.statements).format(v=value), (), rng.choice(ACKS), "fact"
        )
        facts.append(Fact("control: " + control.kind, value, at))

    return closed_session(rng, seed, turns, agent, slots, facts)


def main(argv: list[str] | None = None) -> None:
    generator_main(
        argv,
        command="shaped-facts",
        about=__doc__,
        headline="names, questions, lists and facts said while tools run",
        generate=generate,
        tuning=TUNING_SEEDS,
        reporting=REPORTING_SEEDS,
        turns=TURNS,
    )


if __name__ == "__main__":
    main()
