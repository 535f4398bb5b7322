"""``python -m bench proposals``: what the assistant put forward and the user chose or
confirmed, in the last prompt of a long session.

The fact lives in the assistant's message and the user only picks or confirms it:

- a **choice**: "I can book the 09:40 or the 13:15 — which one?", or a list of options, and
  the user picks by naming it ("13:15 works"), by its place ("option 2", "go with the
  second", "ja, die zweite") or relative to the others ("the later one", "the cheaper one,
  please"), in the next message or a few messages later after putting it off;
- a **single value put forward**: "Should I set the budget to 4,200 euros?" and the user
  says yes ("do it", "sounds good", "oui, vas-y"), or accepts with a change ("ok but make it
  4,600 euros": the user's own value is the fact);
- a **correction the assistant proposes**: the user said "the venue for the gala is the
  Marriott Riverside"; later the assistant says "You said the venue is the Marriott
  Riverside, but the booking shows the Hilton Quayside — should I update it?" and the user
  confirms without repeating the value ("yes, update it", "right, my mistake"). The new
  value must be in the last prompt, the old one never shown as current;
- the **controls**: proposals the user declines ("no, not yet", "let's hold off"), a choice
  answered with a question and then left ("neither for now"), and a proposed correction the
  user rejects ("no, it's the Marriott Riverside, the booking is wrong"). A declined value
  must not become the user's fact (it is counted when it is anywhere in the last prompt), a
  rejected correction leaves the user's value current. Beside them, ordinary statements of
  the third held-out set's shared frames.

Filler, session length, model and scorer are those of ``bench replies``
(:func:`bench.replies.closed_session`). Seeds: **tuning 110-119** (the ones to look at),
**reporting 210-219** (run only for the figures). ::

    python -m bench proposals --seeds tuning
    python -m bench proposals --seeds reporting --summarizer both
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import dataclass

from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Fact, Scenario, Turn, normalise
from bench.heldout.scorer import SessionResult
from bench.heldout.third import agents as a
from bench.heldout.third.facts import SHARED
from bench.heldout.third.generator import ACKS
from bench.replies import (
    CHATTER,
    PUT_OFF,
    TURNS,
    closed_session,
    parse_seeds,
    run,
    summarizer_settings,
)

TUNING_SEEDS = tuple(range(110, 120))
REPORTING_SEEDS = tuple(range(210, 220))
#: Per session: choices answered next, choices answered a few messages later, single values
#: confirmed, accepted with a change, corrections confirmed, and the controls.
CHOICES = 8
LATER_CHOICES = 2
SINGLES = 4
CHANGED = 2
CORRECTIONS = 3
DECLINED = 3
CONTROLS = 6

#: The kinds whose value must NOT be in the last prompt as the user's.
DECLINED_KIND = "declined: proposed value in the last prompt"


@dataclass(frozen=True)
class Offer:
    """A choice between two values the assistant offers, ordered (earlier or cheaper first)."""

    request: str
    #: With ``{a}`` and ``{b}``.
    inline: tuple[str, ...]
    #: The question after a list of the two.
    listed: str
    pairs: tuple[tuple[str, str], ...]
    #: Replies that pick the first or the second by comparing them; () when they do not
    #: compare.
    lower: tuple[str, ...]
    higher: tuple[str, ...]
    #: The language of the replies that pick by place.
    language: str = "en"


#: Replies that pick by name ({v}) and by place, by language: (first, second).
NAMED = {
    "en": ("{v} works", "{v} please", "go with {v}", "{v}", "let's do {v}"),
    "de": ("{v} bitte", "ja, {v}", "{v} passt"),
    "fr": ("{v}, s'il te plaît", "plutôt {v}"),
    "es": ("{v}, por favor", "mejor {v}"),
    "pl": ("{v} poproszę", "{v}"),
}
BY_PLACE = {
    "en": (
        ("option 1", "the first one", "go with the first"),
        ("option 2", "the second one", "go with the second", "#2"),
    ),
    "de": (("die erste", "ja, die erste"), ("die zweite", "ja, die zweite")),
    "fr": (("la première", "la première, merci"), ("la deuxième", "la deuxième, merci")),
    "es": (("la primera", "la primera, gracias"), ("la segunda", "la segunda, gracias")),
    "pl": (("pierwszą", "tę pierwszą"), ("drugą", "tę drugą")),
}

OFFERS: tuple[Offer, ...] = (
    Offer(
        "book the dentist for my son",
        ("Dr Okafor has {a} or {b} free next week. Which one?",),
        "Which appointment should I take?",
        (
            ("Monday 9:20", "Wednesday 16:10"),
            ("Tuesday 8:50", "Thursday 17:35"),
            ("Monday 10:25", "Friday 15:15"),
        ),
        (),
        (),
    ),
    Offer(
        "zarezerwuj salę na szkolenie",
        ("Mogę zarezerwować salę {a} albo salę {b}. Którą?",),
        "Którą salę mam zarezerwować?",
        (("Wawel", "Sukiennice"), ("Kazimierz Duża", "Podgórze"), ("Nowa Huta", "Zabłocie")),
        (),
        (),
        "pl",
    ),
    Offer(
        "renew the storage plan for the design team",
        ("The plan comes at {a} or {b} a year — which tier?",),
        "Which tier should I renew?",
        (
            ("1,180 dollars", "1,740 dollars"),
            ("960 dollars", "1,320 dollars"),
            ("2,050 dollars", "2,690 dollars"),
        ),
        ("the cheaper tier", "the cheaper one"),
        ("the bigger one", "the more expensive one"),
    ),
    Offer(
        "book me a train to Leeds for the Thursday workshop",
        ("I can book the {a} or the {b} — which one?", "There's a {a} and a {b}. Which one?"),
        "Which train should I book?",
        (("09:38", "13:17"), ("08:07", "11:52"), ("07:26", "10:34")),
        ("the earlier one", "the early one pls"),
        ("the later one", "later one"),
    ),
    Offer(
        "find a hotel near the Lisbon office for the kickoff",
        ("I found two: {a} or {b}. Which do you prefer?",),
        "Which hotel should I reserve?",
        (
            ("Hotel Alfama Azul", "Casa do Rio"),
            ("Pensão Miradouro", "Hotel Tejo Norte"),
            ("Lapa Garden Suites", "Hotel Graça Velha"),
        ),
        (),
        (),
    ),
    Offer(
        "get quotes for the van rental next week",
        ("Two quotes came back: {a} or {b}. Which should I accept?",),
        "Which quote should I accept?",
        (("340 euros", "415 euros"), ("285 euros", "360 euros"), ("510 euros", "575 euros")),
        ("the cheaper one, please", "cheaper one"),
        ("the more expensive one, it includes insurance",),
    ),
    Offer(
        "set up the call with the Osaka supplier",
        ("They can do {a} or {b} our time — which suits you?",),
        "Which slot should I confirm?",
        (("7:30am", "4:45pm"), ("6:15am", "5:20pm"), ("8:10am", "3:55pm")),
        ("the earlier one",),
        ("the later one", "the later slot"),
    ),
    Offer(
        "Bitte buche einen Tisch für das Teamessen",
        ("Ich kann um {a} oder um {b} reservieren. Welche Zeit?",),
        "Welche Zeit soll ich nehmen?",
        (("18:40", "20:25"), ("19:05", "21:10"), ("17:55", "19:50")),
        ("die frühere", "früher bitte"),
        ("die spätere", "später bitte"),
        "de",
    ),
    Offer(
        "réserve une salle pour l'atelier client",
        ("J'ai la salle {a} ou la salle {b}. Laquelle ?",),
        "Quelle salle dois-je réserver ?",
        (("Belvédère", "Montorgueil"), ("Bastille Haute", "Tuileries Sud"), ("Orsay", "Vendôme")),
        (),
        (),
        "fr",
    ),
    Offer(
        "reserva el vuelo a Sevilla para la feria",
        ("Hay un vuelo por {a} o uno por {b}. ¿Cuál prefieres?",),
        "¿Cuál reservo?",
        (("128 euros", "167 euros"), ("94 euros", "139 euros"), ("211 euros", "246 euros")),
        ("el más barato", "el más barato, gracias"),
        (),
        "es",
    ),
    Offer(
        "order the standing desks for the new hires",
        ("Do you want the {a} or the {b}?", "I can order the {a} or the {b} — which one?"),
        "Which model should I order?",
        (
            ("Flexispot E7", "Autonomous SmartDesk"),
            ("Uplift V2", "Jarvis Bamboo"),
            ("Ergotron LX", "Vari Electric"),
        ),
        (),
        (),
    ),
    Offer(
        "book the courier for the Hamburg samples",
        ("Pickup is possible at {a} or {b}. Which one?",),
        "Which pickup slot do you want?",
        (("10:22", "14:41"), ("09:13", "15:33"), ("11:06", "16:27")),
        ("the earlier one", "earliest please"),
        ("the later one",),
    ),
    Offer(
        "find a caterer for the quarterly review",
        ("I have two offers: {a} or {b}. Which should I book?",),
        "Which caterer should I book?",
        (
            ("Olive Grove Catering", "Saffron Table"),
            ("Birchwood Kitchen", "Copper Pot Events"),
            ("Green Fig Catering", "Harbour Feast"),
        ),
        (),
        (),
    ),
)


@dataclass(frozen=True)
class Single:
    """One value the assistant puts forward for a yes."""

    request: str
    #: With ``{v}``.
    question: str
    values: tuple[str, ...]
    #: Another value the user may give instead, with ``{w}``: (value, reply).
    changes: tuple[tuple[str, str], ...]
    yes: tuple[str, ...] = ("yes", "do it", "sounds good", "yes please", "ok go ahead", "perfect")
    no: tuple[str, ...] = ("no, not yet", "let's hold off", "no thanks", "not now")


SINGLES_SAID: tuple[Single, ...] = (
    Single(
        "plan the budget for the Porto offsite",
        "Should I set the budget to {v}?",
        ("4,200 euros", "3,850 euros", "5,100 euros"),
        (("4,600 euros", "ok but make it {w}"), ("4,450 euros", "yes, but {w} to be safe")),
    ),
    Single(
        "sort out the catering headcount for the board lunch",
        "Shall I put the headcount at {v}?",
        ("26 people", "31 people", "38 people"),
        (("29 people", "ok but make it {w}"), ("34 people", "almost — {w}")),
    ),
    Single(
        "schedule the quarterly planning session",
        "How about {v} for the planning session?",
        ("Wednesday the 14th", "Tuesday the 20th", "Friday the 23rd"),
        (("Thursday the 15th", "ok but {w} instead"),),
    ),
    Single(
        "Bitte kümmere dich um den Mietwagen für die Messe",
        "Soll ich den Wagen bei {v} buchen?",
        ("Sixt Flughafen", "Europcar Hauptbahnhof", "Avis Messe Süd"),
        (("Hertz Altstadt", "nein, lieber {w}"),),
        yes=("ja", "ja, mach das", "passt", "genau"),
        no=("nein, noch nicht", "nein danke"),
    ),
    Single(
        "organise le transfert pour la conférence",
        "Je réserve la navette de {v} ?",
        ("7h45", "8h20", "6h55"),
        (("9h10", "oui mais plutôt {w}"),),
        yes=("oui", "oui, vas-y", "parfait", "d'accord"),
        no=("non, pas encore", "non merci"),
    ),
    Single(
        "set the renewal for the analytics licence",
        "Want me to renew it for {v}?",
        ("two years", "eighteen months", "three years"),
        (("one year", "ok but only {w}"),),
    ),
)


@dataclass(frozen=True)
class Revision:
    """A statement of the user's, and the correction of it the assistant proposes later."""

    statement: str
    request: str
    #: With ``{old}`` and ``{new}``.
    proposal: str
    pairs: tuple[tuple[str, str], ...]
    confirms: tuple[str, ...]
    rejects: tuple[str, ...]


REVISIONS: tuple[Revision, ...] = (
    Revision(
        "the venue for the gala is the {old}",
        "can you check the gala booking?",
        "You said the venue is the {old}, but the booking shows the {new} — should I update "
        "it to the {new}?",
        (
            ("Marriott Riverside", "Hilton Quayside"),
            ("Grand Meridien", "Palace Crown"),
            ("Lakeside Manor", "Elm Court Hotel"),
        ),
        ("yes, update it", "right, my mistake", "correct", "yes pls"),
        ("no, it's the {old}, the booking is wrong",),
    ),
    Revision(
        "my flight to Montreal is {old}",
        "check in for my flight please",
        "Earlier you gave the flight as {old}, but the airline has {new} for your booking. "
        "Should I use {new} instead?",
        (("AC 871", "AC 875"), ("AC 853", "AC 857"), ("AC 892", "AC 896")),
        ("yes, my mistake", "yes", "right, use that"),
        ("no, {old} is right",),
    ),
    Revision(
        "the PO for the resin order is {old}",
        "send the resin invoice for approval",
        "You mentioned PO {old}, but the invoice references PO {new}. Should I change it to {new}?",
        (("PO-40718", "PO-40781"), ("PO-55203", "PO-55230"), ("PO-61094", "PO-61049")),
        ("correct", "yes, change it", "ok yes"),
        ("no, keep {old}",),
    ),
    Revision(
        "unsere Ansprechpartnerin bei der Spedition ist Frau {old}",
        "bitte schick die Lieferavis an die Spedition",
        "Du hast Frau {old} genannt, im System steht aber Frau {new}. Soll ich auf Frau {new} "
        "ändern?",
        (("Brandauer", "Brandstätter"), ("Kleinschmidt", "Kleinhans"), ("Oberhuber", "Obermaier")),
        ("ja, stimmt", "ja, bitte ändern", "genau"),
        ("nein, es ist Frau {old}",),
    ),
    Revision(
        "the Harwell site's gate code is {old}",
        "can you send the site access details to the contractor?",
        "You said the gate code is {old}, but the site log shows {new}. Should I send {new} "
        "instead?",
        (("7731", "7749"), ("5183", "5261"), ("2258", "2314")),
        ("yes, send that", "right, my mistake", "yes"),
        ("no, {old} is right",),
    ),
)


def _chosen_later(rng: random.Random, said: str) -> str:
    return rng.choice(("ok, {r}", "so — {r}", "found out: {r}", "Dave says {r}")).format(r=said)


def generate(seed: int, turns: int = TURNS) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 120)."""
    if turns < 120:
        raise ValueError("a session has at least 120 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    half = turns // 2
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []
    #: Where each value may occur: the scorer finds a fact by its value.
    allowed: dict[str, set[int]] = {}

    def free_run(length: int, start: int = 1, end: int = half) -> int:
        starts = [
            t
            for t in range(start, end - length)
            if all(u not in slots for u in range(t, t + length))
        ]
        return rng.choice(starts)

    def place(values: tuple[str, ...], *at: int) -> None:
        for value in values:
            allowed.setdefault(value, set()).update(at)

    offers = rng.sample(OFFERS, len(OFFERS))
    for number in range(CHOICES + LATER_CHOICES + 1):
        offer = offers[number]
        first, second = rng.choice(offer.pairs)
        pick = rng.randrange(2)
        value = (first, second)[pick]
        ways = ["named", "by place"] + (["relative"] if (offer.lower and offer.higher) else [])
        way = rng.choice(ways)
        if way == "named":
            said = rng.choice(NAMED[offer.language]).format(v=value)
        elif way == "by place":
            said = rng.choice(BY_PLACE[offer.language][pick])
        else:
            said = rng.choice((offer.lower, offer.higher)[pick])
        if rng.random() < 0.3:
            asked = f"{offer.listed}\n- {first}\n- {second}"
            shape = "list"
        else:
            asked = rng.choice(offer.inline).format(a=first, b=second)
            shape = "inline"
        if number == CHOICES + LATER_CHOICES:
            # The control: asked back, then left ("neither for now").
            at = free_run(3)
            slots[at] = Turn(offer.request, (), asked, "fact")
            slots[at + 1] = Turn(
                "what's the difference between them?", (), a.prose(rng, agent), "chat"
            )
            slots[at + 2] = Turn("hmm, neither for now, leave it", (), "OK, I'll leave it.", "chat")
            place((first, second), at)
            facts.append(Fact(DECLINED_KIND, first, at + 1, correction_turn=at))
            continue
        if number < CHOICES:
            at = free_run(2)
            slots[at] = Turn(offer.request, (), asked, "fact")
            slots[at + 1] = Turn(said, (), rng.choice(ACKS), "fact")
            reply_at = at + 1
            kind = f"choice {way} ({shape}), next message"
        else:
            chat = rng.random() < 0.6
            at = free_run(4 if chat else 3)
            slots[at] = Turn(offer.request, (), asked, "fact")
            slots[at + 1] = Turn(rng.choice(PUT_OFF), (), "Sure, take your time.", "chat")
            if chat:
                chatted, answer = rng.choice(CHATTER)
                slots[at + 2] = Turn(chatted, (), answer, "chat")
            reply_at = at + (3 if chat else 2)
            said = _chosen_later(rng, said)
            slots[reply_at] = Turn(said, (), "Done, booked.", "fact")
            kind = "choice, a few messages later"
        place((first, second), at, reply_at)
        # ``turn`` is the reply's (found where stated: the proposal is in the raw window).
        facts.append(Fact(kind, value, reply_at))

    singles = rng.sample(SINGLES_SAID, SINGLES + CHANGED)
    for number, single in enumerate(singles):
        value = rng.choice(single.values)
        at = free_run(2)
        slots[at] = Turn(single.request, (), single.question.format(v=value), "fact")
        place((value,), at)
        if number < SINGLES - 1:
            slots[at + 1] = Turn(rng.choice(single.yes), (), rng.choice(ACKS), "fact")
            place((value,), at + 1)
            facts.append(Fact("single value confirmed", value, at + 1))
        elif number == SINGLES - 1:
            # The control: a single value declined.
            slots[at + 1] = Turn(rng.choice(single.no), (), "OK, I'll wait.", "chat")
            facts.append(Fact(DECLINED_KIND, value, at + 1, correction_turn=at))
        else:
            own, reply = rng.choice(single.changes)
            slots[at + 1] = Turn(reply.format(w=own), (), rng.choice(ACKS), "fact")
            place((own,), at + 1)
            place((value,), at + 1)
            facts.append(Fact("accepted with a change", own, at + 1))

    revisions = rng.sample(REVISIONS, CORRECTIONS + 1)
    for number, revision in enumerate(revisions):
        old, new = rng.choice(revision.pairs)
        stated = free_run(1, 1, half // 2)
        slots[stated] = Turn(revision.statement.format(old=old), (), rng.choice(ACKS), "fact")
        at = free_run(2, stated + 4)
        asked = revision.proposal.format(old=old, new=new)
        slots[at] = Turn(revision.request, (), asked, "correction")
        place((old,), stated, at, at + 1)
        place((new,), at, at + 1)
        if number < CORRECTIONS:
            slots[at + 1] = Turn(rng.choice(revision.confirms), (), "Updated.", "correction")
            facts.append(
                Fact("correction proposed, confirmed", old, stated, new, at + 1, style="confirmed")
            )
        else:
            said = rng.choice(revision.rejects).format(old=old)
            slots[at + 1] = Turn(said, (), "OK, I'll keep it.", "correction")
            facts.append(Fact("control: correction proposed, rejected", old, stated))
            facts.append(Fact(DECLINED_KIND, new, at + 1, correction_turn=at))

    for control in rng.sample(SHARED, CONTROLS):
        at = free_run(1)
        value = rng.choice(control.values)
        said = rng.choice(control.statements).format(v=value)
        slots[at] = Turn(said, (), rng.choice(ACKS), "fact")
        place((value,), at)
        facts.append(Fact("control: " + control.kind, value, at))

    def check(scenario: Scenario) -> None:
        for value, turns_said in allowed.items():
            pattern = value_pattern(value)
            for index, turn in enumerate(scenario.turns):
                texts = [turn.user, turn.answer, *(s.content or "" for s in turn.steps)]
                texts += [r for s in turn.steps for r in s.results]
                texts += [c.arguments for s in turn.steps for c in s.calls]
                if index not in turns_said and any(pattern.search(normalise(t)) for t in texts):
                    raise AssertionError(f"seed {seed}: value {value!r} also at turn {index}")

    return closed_session(rng, seed, turns, agent, slots, facts, check=check)


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f}%)" if total else "-"


def report(results: list[SessionResult]) -> str:
    """Facts in the last prompt by kind, corrections' old values shown as current, declined
    values in the last prompt, and the prompts' validity."""
    kinds: dict[str, list[int]] = {}
    for result in results:
        for kind, (hit, total) in result.facts.items():
            counts = kinds.setdefault(kind, [0, 0])
            counts[0] += hit
            counts[1] += total
    kept = {k: v for k, v in kinds.items() if k != DECLINED_KIND}
    lines = [f"{'facts in the last prompt':<48}{'present':>16}"]
    lines.extend(f"  {kind:<46}{_share(*kept[kind]):>16}" for kind in sorted(kept))
    wanted = [v for k, v in kept.items() if not k.startswith("control")]
    lines.append(
        f"  {'all chosen or confirmed':<46}"
        f"{_share(sum(k[0] for k in wanted), sum(k[1] for k in wanted)):>16}"
    )
    lines.append(f"  {DECLINED_KIND:<46}{_share(*kinds.get(DECLINED_KIND, [0, 0])):>16}")
    fixes = sum(r.corrections for r in results)
    shown = sum(r.correction_old_current for r in results)
    lines.append(f"  {'corrected value shown as current':<46}{_share(shown, fixes):>16}")
    prompts = sum(r.prompts for r in results)
    lines.append(
        f"prompts: {prompts}, over budget {sum(r.over_budget for r in results)}, invalid "
        f"{sum(r.invalid for r in results)}, refused {sum(r.refused for r in results)}; "
        f"control (found where stated): "
        f"{_share(sum(r.stated_found for r in results), sum(r.stated for r in results))}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench proposals", description=__doc__)
    parser.add_argument("--seeds", default="tuning", help="tuning, reporting, or e.g. 110-114")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--recall", choices=("on", "off"), default="on")
    parser.add_argument("--summarizer", choices=("extractive", "llm", "both"), default="extractive")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds, TUNING_SEEDS, REPORTING_SEEDS)
    summarizers = ["extractive", "llm"] if args.summarizer == "both" else [args.summarizer]
    began = time.perf_counter()
    for summarizer in summarizers:
        with summarizer_settings(summarizer) as settings:
            label = f"proposals, {summarizer}: "
            results = asyncio.run(
                run(seeds, args.turns, args.recall == "on", settings, label, generate)
            )
        print(  # noqa: T201
            f"\n##### choices and confirmations, {summarizer} summariser, recall {args.recall}, "
            f"seeds {min(seeds)}-{max(seeds)}, {args.turns} turns\n{report(results)}",
            flush=True,
        )
    print(f"\n{time.perf_counter() - began:.0f}s in all")  # noqa: T201


if __name__ == "__main__":
    main()
