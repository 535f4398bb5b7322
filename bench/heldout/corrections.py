"""Sessions made to test corrections, one of each style per session, scored by style.

A session (a platform team's agent, the first set's filler: routine requests with tool
steps, prose and small talk) holds, in its first half, facts the user states and never
changes (the control: a correction must not take them with it, whatever words they share)
and facts the user later corrects, each in one style:

- ``marked``: the correction says so ("actually, … not X", "correction: …");
- ``unmarked``: the new value stated as if for the first time ("Delivery address: …");
- ``twice``: corrected, then corrected again (X → Y → Z);
- ``third person``: a fact about somebody else ("Maria's flight is …");
- ``retraction``: the fact dropped, no new value ("forget the caterer, we're not using one");
- ``partial``: one value of a statement of two changes, the other stays;
- ``reworded``: the correction names the subject in other words or with another ending
  ("the move" / "we're moving");
- ``other language``: statement and correction in German, Spanish, French, Portuguese,
  Polish, Italian, Dutch or Indonesian;
- ``typo``: the very next message fixes a typo ("*Kowalski", "sorry, 45 not 54").

Report seeds 7000-7009 (not the fifth held-out set's: another generator); tuning seeds
7100-7119. The summary alone, fast: ``python -m bench.heldout.corrections_fold``. ::

    python -m bench.heldout.corrections --seeds 7000-7009
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from dataclasses import dataclass
from typing import Any

from app.budget.recall import RECALL_HEADING
from bench.heldout import material as m
from bench.heldout.generator import _filler, check_values_unique, value_pattern
from bench.heldout.scenario import Fact, Scenario, Turn, normalise
from bench.heldout.scorer import Agent, _lines, prompt_text

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
REPORT_SEEDS = tuple(range(7000, 7010))
TUNING_SEEDS = tuple(range(7100, 7120))
STYLES = (
    "marked",
    "unmarked",
    "twice",
    "third person",
    "retraction",
    "partial",
    "reworded",
    "other language",
    "typo",
)
ACKS = ("Noted.", "Got it.", "OK, updated.", "Thanks, noted.", "Understood.")


@dataclass(frozen=True)
class Topic:
    """A detail a user may state and correct: its values, how it is said, how it is said
    again with another value (``restate``), in other words (``reword``), and how it is
    dropped (``drop``: the message, and the words of it that stand in the old value's place)."""

    values: tuple[str, ...]
    say: tuple[str, ...]
    restate: tuple[str, ...]
    reword: tuple[str, ...]
    drop: tuple[tuple[str, str], ...]


TOPICS: tuple[Topic, ...] = (
    Topic(
        ("the Corn Exchange", "Harbour Hall", "the Linden Rooms", "Marlow Barn"),
        ("the venue for the launch is {v}", "we booked {v} as the launch venue"),
        ("the launch venue is {v}", "the venue for the launch is {v}"),
        ("the hall for the launch is {v}", "we're launching at {v}"),
        (("forget what I said about the venue, the launch is going online", "going online"),),
    ),
    Topic(
        ("Bella's Kitchen", "Saffron and Sage", "Olive Grove Catering", "Hartley Feasts"),
        ("the caterer for the offsite is {v}", "{v} is catering the offsite"),
        ("the offsite caterer is {v}", "the caterer for the offsite is {v}"),
        ("{v} is doing the food at the offsite", "food for the offsite comes from {v}"),
        (("forget the caterer, we're not using one for the offsite", "not using one"),),
    ),
    Topic(
        ("12 Oak Street", "4 Elm Road", "9 Birch Lane", "31 Quarry Hill"),
        ("Deliver the new monitors to {v}", "the monitors get delivered to {v}"),
        ("Delivery address for the monitors: {v}.", "the monitors go to {v}"),
        ("ship the screens to {v}", "send the monitor parcel to {v}"),
        (("cancel the monitor delivery, I'll collect them myself", "collect them myself"),),
    ),
    Topic(
        ("4,200 euros", "3,850 euros", "5,100 euros", "2,975 euros"),
        ("the budget cap for the conference trip is {v}", "we can spend {v} on the trip, max"),
        ("the trip budget cap is {v}", "the budget cap for the conference trip is {v}"),
        ("the trip can cost {v} at most", "spending on the conference trip is capped at {v}"),
        (("forget the cap on the trip, there's no limit anymore", "no limit anymore"),),
    ),
    Topic(
        ("Halima Osei", "Tobias Renner", "Ines Carvalho", "Marek Dvořák"),
        ("our accountant is {v}", "{v} is our accountant"),
        ("the accountant is {v}", "our accountant is {v}"),
        ("{v} does our books", "{v} handles our accounts"),
        (("we don't have an accountant anymore, we do the books in-house", "in-house"),),
    ),
    Topic(
        ("the 3rd of June", "the 17th of June", "the 24th of June", "the 1st of July"),
        ("we're moving flats on {v}", "our move is on {v}"),
        ("the move is on {v}", "we're moving on {v}"),
        ("moving day is {v}", "we move out on {v}"),
        (("the move is off, we're staying put", "staying put"),),
    ),
)
#: A fact about somebody else, and the correction of it.
THIRD: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    (
        "Maria's flight is the {v} one",
        ("7:40pm", "9:15pm", "6:05pm"),
        "Maria's flight is the {new} one, not the {old}",
        ("Maria's flight is the {new} one",),
    ),
    (
        "Jonas is staying at {v} during the summit",
        ("the Kestrel Inn", "the Alder Hotel", "the Quayside Lodge"),
        "Jonas is at {new} now, not {old}",
        ("Jonas moved to {new} for the summit", "actually Jonas is staying at {new}"),
    ),
    (
        "Priya starts on {v}",
        ("the 8th of September", "the 15th of September", "the 22nd of September"),
        "sorry, Priya starts on {new}, not {old}",
        ("Priya's start date is {new}", "correction: Priya starts {new}"),
    ),
)
#: A statement of two values, and a correction of the second (``{keep}`` the first).
PARTIAL: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "the awards dinner is at {a} on the {b}",
        ("the Granary", "Castle Keep Hall", "the Boathouse"),
        ("12th", "14th", "19th"),
        (
            "the awards dinner is still at {a} but it's the {new} now, not the {old}",
            "same place for the awards dinner, {a}, but on the {new} instead",
        ),
    ),
    (
        "the vendor call is with {a} at {b}",
        ("Rosalind Achebe", "Henrik Solberg", "Dalia Mansour"),
        ("10.30am", "11.45am", "3.20pm"),
        (
            "the vendor call is still with {a}, just moved to {new}",
            "vendor call: same person ({a}) but {new} now, not {old}",
        ),
    ),
)
#: A fact in another language: statement, correction (``{new}``, ``{old}``), values.
FOREIGN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Unser Steuerberater sitzt in {v}.",
        "Korrektur: der Steuerberater sitzt jetzt in {new}, nicht mehr in {old}.",
        ("Bielefeld", "Paderborn", "Gütersloh"),
    ),
    (
        "La reunión con el proveedor es el {v}.",
        "Perdón, me equivoqué: la reunión con el proveedor es el {new}.",
        ("martes 4", "jueves 6", "lunes 10"),
    ),
    (
        "Le traiteur pour le séminaire, c'est {v}.",
        "Petite correction : le traiteur du séminaire sera {new}, pas {old}.",
        ("Maison Perrin", "Chez Lucette", "Atelier Gourmand"),
    ),
    (
        "O nosso contabilista é o {v}.",
        "Desculpa, enganei-me: o contabilista agora é o {new}.",
        ("Rui Tavares", "Nuno Prates", "Joaquim Seabra"),
    ),
    (
        "Spotkanie zespołu jest w {v}.",
        "Poprawka: spotkanie zespołu jest jednak w {new}.",
        ("Gdyni", "Toruniu", "Olsztynie"),
    ),
    (
        "La consegna arriva a {v}.",
        "Correzione: la consegna arriva a {new}, non a {old}.",
        ("Bergamo", "Brescia", "Cremona"),
    ),
    (
        "Het kantoor verhuist naar {v}.",
        "Eigenlijk verhuist het kantoor naar {new}.",
        ("Zwolle", "Deventer", "Apeldoorn"),
    ),
    (
        "Kantor cabang kami ada di {v}.",
        "Ralat: kantor cabang sekarang di {new}, bukan {old}.",
        ("Semarang", "Malang", "Balikpapan"),
    ),
)
#: A statement with a typo, the fix in the next message (``{old}`` the typo, ``{new}``).
TYPOS: tuple[tuple[str, str, str, str], ...] = (
    ("the plumber we hired is Piotr Kowalsky", "Kowalsky", "Kowalski", "*Kowalski"),
    ("the deposit for the van is 54 pounds", "54 pounds", "45 pounds", "sorry, 45 not 54"),
    ("the tasting is on the 21st", "21st", "12th", "typo: meant the 12th"),
    ("my locker code is 7391", "7391", "7319", "oops, 7319*"),
    ("the new intern is called Annika Bergstorm", "Bergstorm", "Bergstrom", "*Bergstrom, sorry"),
)
#: Facts that are never corrected, some sharing words with the corrected ones.
STANDING: tuple[tuple[str, str], ...] = (
    ("the venue for the team dinner is {v}", "Quince and Vine"),
    ("my manager is {v}", "Oyelaran Bassey"),
    ("the launch press contact is {v}", "Wen Jiahui"),
    ("the offsite is in {v}", "Kilkenny"),
    ("our office wifi password is {v}", "heron-lantern-42"),
    ("the conference trip is to {v}", "Ljubljana"),
    ("my daughter's school is {v}", "St Brigid's"),
    ("the backup accountant is {v}", "Selin Aydın"),  # noqa: RUF001
    ("the dinner budget is {v}", "640 euros"),
    ("Maria's hotel is {v}", "the Ferrymans Rest"),
    ("Jonas's manager is {v}", "Kalinda Mbeki"),
    ("the monitors are {v}", "Dell U2723QE"),
)


def _correction(rng: random.Random, style: str, turn: int) -> tuple[list[tuple[str, int]], Fact]:
    """The statements of one corrected fact in ``style`` as (text, turn offset), and its
    fact (turns relative: the statement at 0)."""
    topic = rng.choice(TOPICS)
    old, new, final = rng.sample(topic.values, 3)
    say = rng.choice(topic.say).format(v=old)
    if style == "marked":
        text = rng.choice(
            (
                "actually, {r}, not {old}",
                "Correction: {r}.",
                "sorry, my mistake — {r}",
                "wait, I got that wrong: {r}",
            )
        ).format(r=rng.choice(topic.restate).format(v=new), old=old)
        return [(say, 0), (text, 1)], Fact(style, old, 0, new, 1)
    if style == "unmarked":
        text = rng.choice(("{r}.", "just so you have it: {r}", "{r}, fyi")).format(
            r=rng.choice(topic.restate).format(v=new)
        )
        return [(say, 0), (text, 1)], Fact(style, old, 0, new, 1)
    if style == "twice":
        first = f"actually, {rng.choice(topic.restate).format(v=new)}"
        second = rng.choice(
            (
                "changed again, sorry: {r}",
                "final answer: {r}",
                "not {new} after all — {r}",
            )
        ).format(r=rng.choice(topic.restate).format(v=final), new=new)
        fact = Fact(style, old, 0, final, 2, superseded=((new, 1),))
        return [(say, 0), (first, 1), (second, 2)], fact
    if style == "reworded":
        text = rng.choice(("{r}", "{r} now", "update: {r}")).format(
            r=rng.choice(topic.reword).format(v=new)
        )
        return [(say, 0), (text, 1)], Fact(style, old, 0, new, 1)
    if style == "retraction":
        text, words = rng.choice(topic.drop)
        return [(say, 0), (text, 1)], Fact(style, old, 0, words, 1)
    raise ValueError(style)


def generate(seed: int, turns: int = 160, *, ask: bool = False) -> Scenario:
    """The session of ``seed``: ``turns`` turns, one correction of each style. With ``ask``
    the last message asks again about every corrected subject, in the words of the first
    statement ("… the venue for the launch is what?"), so that recall brings the superseded
    statements back and the last prompt shows what it does with them."""
    rng = random.Random(seed)
    half = turns // 2
    limit = int(turns * 0.7)
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []
    used_topics: set[int] = set()

    def place(texts: list[tuple[str, int]], fact: Fact, *, gap: int) -> None:
        """Put the statement in the first half and what follows it ``gap`` turns apart (the
        next turn for a typo); the fact's turns become absolute."""
        span = max(offset for _, offset in texts) * gap
        while True:
            at = rng.randrange(1, half)
            wanted = [at + offset * gap for _, offset in texts]
            if all(t not in slots and t < limit for t in wanted) and at + span < limit:
                break
        for text, offset in texts:
            kind = "fact" if offset == 0 else "correction"
            slots[at + offset * gap] = Turn(text, (), rng.choice(ACKS), kind)
        facts.append(
            Fact(
                fact.kind,
                fact.value,
                at,
                fact.corrected_to,
                None if fact.correction_turn is None else at + fact.correction_turn * gap,
                tuple((value, at + said * gap) for value, said in fact.superseded),
            )
        )

    for style in ("marked", "unmarked", "twice", "reworded", "retraction"):
        while True:
            texts, fact = _correction(rng, style, 0)
            topic = next(i for i, t in enumerate(TOPICS) if fact.value in t.values)
            if topic not in used_topics:
                used_topics.add(topic)
                break
        place(texts, fact, gap=rng.choice((4, 15, 40)))
    statement, values, corrected, unmarked = rng.choice(THIRD)
    old, new = rng.sample(values, 2)
    text = rng.choice((corrected, *unmarked)).format(new=new, old=old)
    place(
        [(statement.format(v=old), 0), (text, 1)],
        Fact("third person", old, 0, new, 1),
        gap=rng.choice((5, 30)),
    )
    statement, keeps, changes, phrasings = rng.choice(PARTIAL)
    keep = rng.choice(keeps)
    old, new = rng.sample(changes, 2)
    text = rng.choice(phrasings).format(a=keep, new=new, old=old)
    place(
        [(statement.format(a=keep, b=old), 0), (text, 1)],
        Fact("partial", old, 0, new, 1),
        gap=rng.choice((5, 30)),
    )
    # The value the partial correction keeps: it must stay (said again by the correction).
    facts.append(
        Fact("partial: value kept", keep, facts[-1].turn, correction_turn=facts[-1].correction_turn)
    )
    for _ in range(2):
        said, corrected, values = FOREIGN[rng.randrange(len(FOREIGN))]
        if any(fact.value in values for fact in facts):
            continue
        old, new = rng.sample(values, 2)
        place(
            [(said.format(v=old), 0), (corrected.format(old=old, new=new), 1)],
            Fact("other language", old, 0, new, 1),
            gap=rng.choice((6, 35)),
        )
    said, typo, fixed, fix = rng.choice(TYPOS)
    place([(said, 0), (fix, 1)], Fact("typo", typo, 0, fixed, 1), gap=1)
    for template, value in rng.sample(STANDING, 8):
        at = rng.choice([t for t in range(1, half) if t not in slots])
        slots[at] = Turn(template.format(v=value), (), rng.choice(ACKS), "fact")
        facts.append(Fact("unrelated", value, at))

    closing = m.CLOSING
    if ask:
        asked = []
        for fact in facts:
            if fact.corrected_to is None or fact.kind == "typo":
                continue
            text = normalise(slots[fact.turn].user)
            for other in facts:  # no value of the session's is said again
                text = value_pattern(other.value).sub("what", text)
            asked.append(text.rstrip("."))
        closing = "before I go, remind me: " + " / ".join(asked) + "?"
    slots[turns - 1] = Turn(closing, (), "Bye!", "chat")
    session = [slots[t] if t in slots else _filler(rng) for t in range(turns)]
    scenario = Scenario(
        seed=seed,
        model=MODEL,
        context_limit=CONTEXT_LIMIT,
        system={
            "global": "You are a careful assistant for a small team's work and errands.",
            "role": "Be brief. Use the tools to look before you change anything.",
        },
        goal="Help with whatever the user asks, and keep what they tell you straight.",
        tools=list(m.TOOLS),
        turns=session,
        facts=sorted(facts, key=lambda fact: fact.turn),
        questions=[],
        agent="corrections",
    )
    check_values_unique(scenario)
    return scenario


class _ByStyle(Agent):
    """The scorer's agent, keeping each correction's outcome by style: the new value in the
    last prompt, the old one presented as current, and whether the recall block did that."""

    outcomes: list[tuple[str, bool, bool, bool]]

    def _score_facts(self, messages: list[dict[str, Any]]) -> None:
        super()._score_facts(messages)
        text, lines = prompt_text(messages), _lines(messages)
        recalled = _lines(
            [m for m in messages if str(m.get("content") or "").startswith(RECALL_HEADING)]
        )
        self.outcomes = []
        for fact in self.scenario.facts:
            if fact.corrected_to is None:
                continue
            new = value_pattern(fact.corrected_to)
            olds = [value_pattern(value) for value in fact.old_values]

            def stale(among: list[str], new: Any = new, olds: Any = olds) -> bool:
                return any(o.search(line) and not new.search(line) for line in among for o in olds)

            self.outcomes.append((fact.kind, bool(new.search(text)), stale(lines), stale(recalled)))


async def _run(seeds: list[int], turns: int, settings: dict[str, Any], *, ask: bool) -> None:
    from bench.common import running_app

    #: style -> [corrections, new value present, old value as current, by the recall block]
    by_style: dict[str, list[int]] = {}
    kept = [0, 0]
    async with running_app(settings=settings) as client:
        for seed in seeds:
            agent = _ByStyle(client, generate(seed, turns, ask=ask), recall=True)
            result = await agent.run()
            for kind, (hit, total) in result.facts.items():
                if kind in ("unrelated", "partial: value kept"):
                    kept[0] += hit
                    kept[1] += total
            for style, present, current, recalled in agent.outcomes:
                counts = by_style.setdefault(style, [0, 0, 0, 0])
                counts[0] += 1
                counts[1] += present
                counts[2] += current
                counts[3] += recalled
            print(f"seed {seed}: {agent.outcomes}", file=sys.stderr)  # noqa: T201
    print(  # noqa: T201
        f"{'style':<18}{'new value present':>20}{'old value as current':>24}{'(in recall)':>14}"
    )
    sums = [0, 0, 0, 0]
    for style in (*STYLES, "all"):
        counts = sums if style == "all" else by_style.get(style, [0, 0, 0, 0])
        if style != "all":
            sums = [a + b for a, b in zip(sums, counts, strict=True)]
        n = counts[0]
        print(  # noqa: T201
            f"{style:<18}{f'{counts[1]}/{n}':>20}{f'{counts[2]}/{n}':>24}{f'{counts[3]}/{n}':>14}"
        )
    print(f"facts never corrected, in the last prompt: {kept[0]}/{kept[1]}")  # noqa: T201


def main(argv: list[str] | None = None) -> None:
    from bench.heldout.__main__ import seed_list, summarizer_settings

    parser = argparse.ArgumentParser(
        prog="python -m bench.heldout.corrections", description=__doc__
    )
    parser.add_argument("--seeds", default="7000-7009")
    parser.add_argument("--turns", type=int, default=160)
    parser.add_argument("--summarizer", choices=("extractive", "llm"), default="extractive")
    parser.add_argument(
        "--ask",
        action="store_true",
        help="end each session with a question about every corrected subject (recall)",
    )
    args = parser.parse_args(argv)
    with summarizer_settings(args.summarizer) as (settings, _):
        asyncio.run(_run(seed_list(args.seeds), args.turns, settings, ask=args.ask))


if __name__ == "__main__":
    main()
