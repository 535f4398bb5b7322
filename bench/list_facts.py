"""``python -m bench list-facts``: facts the user states in a list, or inside a question of
their own, in the last prompt of a long session.

Two kinds of fact a user states in a shape other than a sentence of their own:

- a **list**: a message of several lines as people jot them, markdown ``- `` and ``* ``,
  numbered ``1.`` and ``1)``, ``•``, with or without a line before it ("a few things for the
  offsite:"), two to four facts in it (a name, an amount, a count, a place, a time, an
  owner, some terse: "- 62 people", "- budget 4,200 euros") mixed with tasks ("- book the
  train"), in English, German, French, Spanish and Polish;
- a fact **inside a question**: "should I tell the landlord the rent is now 1,450?", "do I
  need to let Marco know the venue moved to Braga?", in the same languages.

Beside them, ordinary statements of the third held-out set's shared frames are scored as a
control. Filler is the third set's (routine requests with tool steps, prose, chat, rambles).
Sessions are 250 turns at gpt-4o-mini's 8,192 tokens, facts in the first half, scored as
the held-out sets score (:mod:`bench.heldout.scorer`).

Seeds: **tuning 300-309** (the ones to look at), **reporting 400-409** (run only for the
figures). ::

    python -m bench list-facts --seeds tuning
    python -m bench list-facts --seeds reporting
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.heldout.scenario import Fact, Scenario, Turn
from bench.heldout.third import agents as a
from bench.heldout.third.facts import SHARED
from bench.heldout.third.generator import ACKS
from bench.replies import closed_session, generator_main

TURNS = 250
TUNING_SEEDS = tuple(range(300, 310))
REPORTING_SEEDS = tuple(range(400, 410))
#: Per session: list messages, facts inside questions, ordinary statements (the control).
LISTS = 5
QUESTIONS = 5
CONTROLS = 6


@dataclass(frozen=True)
class Item:
    """One line of a list that states a fact: ``{v}`` is the value scored."""

    kind: str
    text: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Language:
    intros: tuple[str, ...]
    items: tuple[Item, ...]
    tasks: tuple[str, ...]


LANGUAGES: tuple[Language, ...] = (
    Language(
        intros=(
            "ok a few things for the offsite:",
            "notes from the call with the venue",
            "before I forget:",
            "",
        ),
        items=(
            Item("name", "the venue contact is {v}", ("Hallgerd Sunde", "Obiageli Nwosu")),
            Item("amount", "budget {v}", ("4,200 euros", "3,750 euros", "5,150 euros")),
            Item("count", "{v}", ("62 people", "48 people", "71 people")),
            Item("owner", "{v} owns the catering order", ("Ruairí", "Benedikte", "Casimir")),
            Item("place", "dinner is at {v}", ("the Old Tannery", "Kelham Works", "Hollins Mill")),
            Item("time", "coach leaves at {v}", ("quarter past eight", "7:40", "half seven")),
            Item("constraint", "no venues north of {v}", ("Harrogate", "Skipton", "Ripon")),
            Item("relation", "{v} is my deputy while I'm out", ("Wilhelmina", "Thaddeus")),
            Item("identifier", "PO number {v}", ("PO-77314", "PO-58026", "PO-91147")),
        ),
        tasks=("book the train", "send the invite to the team", "ask about the projector"),
    ),
    Language(
        intros=("Für die Planung:", "kurz zusammengefasst", ""),
        items=(
            Item("name", "Ansprechpartnerin ist Frau {v}", ("Liebknecht", "Oberhauser")),
            Item("amount", "die Kaution beträgt {v}", ("1.850 Euro", "2.300 Euro", "990 Euro")),
            Item("place", "Treffpunkt ist {v}", ("am Rathausmarkt", "an der Speicherstadt")),
            Item("time", "Abfahrt um {v}", ("halb neun", "Viertel nach sieben")),
            Item("count", "wir sind {v} Personen", ("dreiundzwanzig", "siebzehn")),
        ),
        tasks=("Raum reservieren", "Rechnung an die Buchhaltung schicken"),
    ),
    Language(
        intros=("quelques infos :", "pour le séminaire", ""),
        items=(
            Item("name", "le traiteur s'appelle {v}", ("Maison Delorme", "Chez Vautrin")),
            Item("amount", "le devis est de {v}", ("3 400 €", "2 950 €", "4 120 €")),
            Item("place", "on dort à {v}", ("Annecy-le-Vieux", "Saint-Malo intra-muros")),
            Item("owner", "{v} gère les badges", ("Élodie", "Gwenaëlle", "Anatole")),
        ),
        tasks=("envoyer le devis", "réserver la salle"),
    ),
    Language(
        intros=("para el viaje:", "resumen rápido", ""),
        items=(
            Item("name", "el contacto en el hotel es {v}", ("Remedios Ibarra", "Joaquín Olmedo")),
            Item("time", "el check-in es a las {v}", ("tres y media", "cuatro menos cuarto")),
            Item("place", "el hotel está en {v}", ("Triana", "Lavapiés", "El Carmen")),
        ),
        tasks=("reservar los billetes", "mandar la lista a recepción"),
    ),
    Language(
        intros=("na szybko:", ""),
        items=(
            Item("name", "kierowniczka budowy to {v}", ("Bożena Krawczyk", "Jadwiga Sobczak")),
            Item("amount", "zaliczka wynosi {v}", ("4 300 zł", "2 750 zł")),
        ),
        tasks=("zamówić kontener", "zadzwonić do elektryka"),
    ),
)

#: How a list's lines are marked: ``{n}`` is the line's number.
MARKERS = ("- {text}", "* {text}", "{n}. {text}", "{n}) {text}", "• {text}")


@dataclass(frozen=True)
class Asking:
    """A question of the user's that states a fact."""

    kind: str
    text: str
    values: tuple[str, ...]


QUESTIONS_SAID: tuple[Asking, ...] = (
    Asking("amount", "should I tell the landlord the rent is now {v}?", ("1,450", "1,380")),
    Asking(
        "place", "do I need to let Marco know the venue moved to {v}?", ("Mirandela", "Tondela")
    ),
    Asking(
        "name",
        "would it be weird to invite {v}? she's my manager's manager",
        ("Ingrid Solberg", "Aoife Brennan"),
    ),
    Asking(
        "time",
        "is it ok if the kickoff stays at {v}, since that's when Ilse lands?",
        ("ten past eleven", "twenty to twelve"),
    ),
    Asking(
        "owner",
        "should the invoice go to {v} since he signs off on the budget?",
        ("Bartholomew", "Leopold"),
    ),
    Asking(
        "count",
        "do we really need {v} chairs if only half the team comes?",
        ("ninety-two", "eighty-six"),
    ),
    Asking(
        "amount",
        "muss ich dem Vermieter sagen, dass die Nebenkosten jetzt {v} betragen?",
        ("2.100 Euro", "1.750 Euro"),
    ),
    Asking(
        "time",
        "est-ce que je dois dire au client que la livraison est prévue le {v} ?",
        ("douze mars", "dix-neuf mars"),
    ),
    Asking(
        "count",
        "¿le digo al proveedor que el pedido mínimo es de {v} cajas?",
        ("cuarenta", "sesenta"),
    ),
    Asking(
        "place",
        "czy mam powiedzieć ekipie, że zbiórka jest w {v}?",
        ("Wieliczce", "Niepołomicach"),
    ),
)


def _listed(rng: random.Random, language: Language, used: set[str]) -> tuple[str, list[Fact]]:
    """A list message of two to four facts and up to two tasks, and its facts (turn unset)."""
    pool = [item for item in language.items if not set(item.values) & used]
    items = rng.sample(pool, min(len(pool), rng.randint(2, 4)))
    lines: list[tuple[str, Fact | None]] = []
    for item in items:
        value = rng.choice(item.values)
        used.update(item.values)
        lines.append((item.text.format(v=value), Fact("list: " + item.kind, value, -1)))
    lines.extend((task, None) for task in rng.sample(language.tasks, rng.randint(0, 2)))
    rng.shuffle(lines)
    marker = rng.choice(MARKERS)
    body = [marker.format(n=n, text=text) for n, (text, _) in enumerate(lines, 1)]
    intro = rng.choice(language.intros)
    text = "\n".join([intro, *body] if intro else body)
    return text, [fact for _, fact in lines if fact is not None]


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

    used: set[str] = set()
    for language in rng.sample(LANGUAGES, LISTS):
        text, listed = _listed(rng, language, used)
        at = free()
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        facts.extend(Fact(fact.kind, fact.value, at) for fact in listed)

    for asking in rng.sample(QUESTIONS_SAID, QUESTIONS):
        value = rng.choice(asking.values)
        at = free()
        answer = "Good question. I'd say yes, but it's your call."
        slots[at] = Turn(asking.text.format(v=value), (), answer, "fact")
        facts.append(Fact("inside a question: " + asking.kind, value, at))

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
        command="list-facts",
        about=__doc__,
        headline="lists and questions",
        generate=generate,
        tuning=TUNING_SEEDS,
        reporting=REPORTING_SEEDS,
        turns=TURNS,
    )


if __name__ == "__main__":
    main()
