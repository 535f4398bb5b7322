"""``python -m bench.heldout.corrections_kinds``: corrections said as people say them, scored
by kind on the summary alone, beside look-alike facts that must not be revised.

Each seed's set holds one correction of each kind, each from a phrasing bank, and one of each
look-alike control:

- ``reworded``: the correction names the subject in other words or a synonym ("the offsite"
  then "the team retreat", "my manager" then "… is my boss now"), or in another sentence shape
  ("push the demo to the 14th");
- ``other mark``: marked in other words ("scratch that", "change of plan", "update:", "turns
  out", "on second thought", "make that", "sorry, I meant");
- ``unmarked``: the same subject said again with a new value, no mark at all;
- ``twice``: corrected, then corrected again (the second replaces the first correction too);
- ``other language``: statement and correction in Spanish, German, French, Portuguese, Polish;
- ``said twice``: a fact the user said twice, then corrected (neither copy stays current);
- controls (``control: …``), which revise nothing: two flights, two people's addresses, an
  "also" addition, a conditional ("if it rains, …"), and two subjects that share a value,
  one of them then corrected (``same value``: the other keeps it). Every value must stay.

Two phrasing banks, written before any rule was changed for them: the tuning bank (seeds
7600-7619) and the reporting bank (seeds 7800-7819), whose subjects, marks and sentences are
others; rules are tuned on the first only, and the second is read as figures, never case by
case. The existing corrections sets (``corrections.py``) are unchanged.

Every statement (with an acknowledgement) is folded, in three summaries each carrying the last,
by the extractive summariser with room for all of it (``corrections_fold``): what the revision
rules decide, apart from what the block leaves out for room. A line holding an old value
without the new one presents it as current; a control value missing was taken by a false
revision. ::

    python -m bench.heldout.corrections_kinds --seeds 7600-7619 --verbose
    python -m bench.heldout.corrections_kinds --seeds 7800-7819
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass

from bench.heldout.corrections_fold import _fold
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Fact, Scenario, Turn, normalise

TUNING_SEEDS = tuple(range(7600, 7620))
REPORT_SEEDS = tuple(range(7800, 7820))
KINDS = ("reworded", "other mark", "unmarked", "twice", "other language", "said twice")
CONTROLS = (
    "control: two flights",
    "control: two people",
    "control: also",
    "control: if",
    "control: same value",
)
ACKS = ("Noted.", "Got it.", "OK, updated.", "Thanks, noted.", "Understood.")
_PIECES = re.compile(r"[\n;]")


@dataclass(frozen=True)
class Case:
    """Statements said in order (``{0}``, ``{1}``, ``{2}``: values drawn from ``values``).
    For a correction the last statement's value is the one in force and every other is old;
    for a control every value stays."""

    kind: str
    texts: tuple[str, ...]
    values: tuple[str, ...]


def _cases(kind: str, rows: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]) -> list[Case]:
    return [Case(kind, texts, values) for texts, values in rows]


_PLACES_A = ("Harrow Mill", "the Tannery", "Ashby Court", "Fenwick Lodge")
_PLACES_B = ("Cobble Yard", "the Old Forge", "Brindle House", "Marsh End Barn")
_NAMES_A = ("Tomasz Reyes", "Dana Whitfield", "Kofi Asante", "Lena Varga")
_NAMES_B = ("Ruth Okonkwo", "Bram de Vries", "Sana Qureshi", "Ivo Petrov")
_DAYS_A = ("the 14th", "the 19th", "the 23rd", "the 27th")
_DAYS_B = ("the 9th", "the 16th", "the 21st", "the 30th")

#: The tuning bank: rules may be read against these, case by case.
TUNING: tuple[Case, ...] = (
    *_cases(
        "reworded",
        (
            (("the offsite is at {0}", "the team retreat is at {1} now"), _PLACES_A),
            (("my manager is {0}", "{1} is my boss now"), _NAMES_A),
            (("the demo is on {0}", "push the demo to {1}"), _DAYS_A),
            (
                ("the dentist appointment is on {0}", "moved my dentist visit to {1}"),
                ("Tuesday", "Thursday", "Friday"),
            ),
            (
                ("we're flying to {0} for the conference", "the conference flight goes to {1}"),
                ("Porto", "Bilbao", "Valencia"),
            ),
            (
                ("the standup is at {0}", "it's {1} now for the standup, not {0}"),
                ("9.15am", "9.45am", "10.05am"),
            ),
        ),
    ),
    *_cases(
        "other mark",
        (
            (("the board meeting is on {0}", "scratch that, the board meeting is {1}"), _DAYS_B),
            (("our caterer is {0}", "change of plan: {1} is catering"), _NAMES_B),
            (("the printer is on {0}", "update: the printer lives on {1}"), _PLACES_B),
            (
                ("the parking permit costs {0}", "turns out the parking permit is {1}"),
                ("85 pounds", "110 pounds", "95 pounds"),
            ),
            (
                ("book the table for {0}", "on second thought, book the table for {1}"),
                ("7pm", "8pm", "6pm"),
            ),
            (
                ("the retro is in room {0}", "sorry, I meant room {1} for the retro"),
                ("B12", "C04", "D17"),
            ),
        ),
    ),
    *_cases(
        "unmarked",
        (
            (("the webinar starts at {0}", "the webinar starts at {1}"), ("2pm", "3pm", "4pm")),
            (
                ("my gym locker is number {0}", "my gym locker is number {1}"),
                ("118", "241", "307"),
            ),
            (("the courier is {0}", "the courier is {1}"), ("DPD", "Evri", "Yodel")),
            (
                ("the hackathon is in {0}", "the hackathon is in {1}"),
                ("Leeds", "Bristol", "Cardiff"),
            ),
        ),
    ),
    *_cases(
        "twice",
        (
            (
                (
                    "the launch party is at {0}",
                    "actually the launch party is at {1}",
                    "scratch that, the launch party is at {2}",
                ),
                _PLACES_A,
            ),
            (
                (
                    "the invoice is due on {0}",
                    "correction: the invoice is due {1}",
                    "changed again — the invoice is due {2}",
                ),
                _DAYS_B,
            ),
            (
                (
                    "our contact at the bank is {0}",
                    "our bank contact is {1} now",
                    "update: the bank contact is {2}",
                ),
                _NAMES_A,
            ),
        ),
    ),
    *_cases(
        "other language",
        (
            (
                (
                    "La cena de empresa es en {0}.",
                    "Cambio de planes: la cena de empresa es en {1}.",
                ),
                ("Sevilla", "Granada", "Córdoba"),
            ),
            (
                ("Unser Workshop ist am {0}.", "Der Workshop ist jetzt am {1}."),
                ("Montag", "Mittwoch", "Freitag"),
            ),
            (
                ("La formation a lieu à {0}.", "En fait, la formation a lieu à {1}."),
                ("Nantes", "Rennes", "Angers"),
            ),
            (
                ("A entrega é em {0}.", "Afinal a entrega é em {1}."),
                ("Coimbra", "Aveiro", "Setúbal"),
            ),
            (
                ("Szkolenie jest w {0}.", "Zmiana planów: szkolenie jest w {1}."),
                ("Lublinie", "Kielcach", "Rzeszowie"),
            ),
        ),
    ),
    *_cases(
        "said twice",
        (
            (
                (
                    "the team lunch is at {0}",
                    "remember, team lunch at {0}",
                    "the team lunch is at {1} now",
                ),
                _PLACES_B,
            ),
            (
                (
                    "my sister lands on {0}",
                    "again, my sister lands on {0}",
                    "actually my sister lands on {1}",
                ),
                _DAYS_A,
            ),
            (
                (
                    "the plumber is {0}",
                    "as I said, the plumber is {0}",
                    "scratch that, the plumber is {1}",
                ),
                _NAMES_B,
            ),
        ),
    ),
    *_cases(
        "control: two flights",
        (
            (
                ("my flight to Oslo leaves at {0}", "my flight back from Oslo leaves at {1}"),
                ("6.10am", "7.25am", "8.40pm"),
            ),
            (
                ("Maria's flight lands at {0}", "Tom's flight lands at {1}"),
                ("5.50pm", "9.05pm", "11.20pm"),
            ),
        ),
    ),
    *_cases(
        "control: two people",
        (
            (("Anna's address is {0}", "Ben's address is {1}"), ("4 Mill Lane", "17 Kiln Row")),
            (
                ("my brother lives in {0}", "my cousin lives in {1}"),
                ("Dundee", "Perth", "Stirling"),
            ),
        ),
    ),
    *_cases(
        "control: also",
        (
            (
                ("we're inviting {0} to the launch", "we're also inviting {1} to the launch"),
                _NAMES_A,
            ),
            (("the kids like {0}", "the kids also like {1}"), ("pancakes", "risotto", "tacos")),
        ),
    ),
    *_cases(
        "control: if",
        (
            (
                ("the picnic is at {0}", "if it rains, the picnic is at {1}"),
                ("Hyde Park", "the Boat Shed", "Kew Green"),
            ),
            (
                ("the deadline is {0}", "if the client pushes back, the deadline is {1}"),
                _DAYS_B,
            ),
        ),
    ),
    *_cases(
        "control: same value",
        (
            (
                ("the dentist is at {0}", "the school pickup is at {0}", "make that {1}"),
                ("3pm", "4pm", "5.30pm"),
            ),
            (
                (
                    "the retro is in room {0}",
                    "the interview is in room {0}",
                    "sorry, I meant room {1}",
                ),
                ("D17", "C04", "B12"),
            ),
        ),
    ),
)

_PLACES_C = ("the Granary Loft", "Weir Cottage", "Hollins Hall", "the Pump Rooms")
_NAMES_C = ("Agnieszka Lowe", "Femi Balogun", "Hugo Lindqvist", "Marta Quiroga")
_DAYS_C = ("the 3rd", "the 11th", "the 18th", "the 26th")

#: The reporting bank: other subjects, marks and sentences, read as figures only.
REPORTING: tuple[Case, ...] = (
    *_cases(
        "reworded",
        (
            (("the quarterly review is on {0}", "the QBR got shifted to {1}"), _DAYS_C),
            (("our landlord is {0}", "{1} owns the flat now"), _NAMES_C),
            (
                ("the kickoff meeting is in {0}", "kickoff's happening in {1} instead"),
                ("Galway", "Sligo", "Athlone"),
            ),
            (
                ("we pick up the rental car at {0}", "the hire car gets collected at {1}"),
                _PLACES_C,
            ),
            (
                ("the wedding reception is at {0}", "reception venue changed, it's {1}"),
                ("Thornby Manor", "Ellery Hall", "the Mill House"),
            ),
            (
                ("the vet appointment is at {0}", "the vet can see us at {1} instead of {0}"),
                ("10.40am", "11.50am", "2.35pm"),
            ),
        ),
    ),
    *_cases(
        "other mark",
        (
            (("the team photo is on {0}", "make that {1} for the team photo"), _DAYS_C),
            (
                ("the new hire's mentor is {0}", "sorry, I meant {1} as the new hire's mentor"),
                _NAMES_C,
            ),
            (
                ("the workshop is in {0}", "hold on, the workshop is in {1}"),
                ("Room 4A", "Room 6C", "Room 2F"),
            ),
            (
                ("the ferry leaves at {0}", "heads up: the ferry leaves at {1}"),
                ("5.45pm", "6.20pm", "7.05pm"),
            ),
            (
                ("the charity run is in {0}", "ah wait, the charity run is in {1}"),
                ("Richmond", "Greenwich", "Hackney"),
            ),
            (
                ("the sofa delivery is on {0}", "never mind that, the sofa comes on {1}"),
                ("Monday", "Wednesday", "Saturday"),
            ),
        ),
    ),
    *_cases(
        "unmarked",
        (
            (
                ("the book club meets at {0}", "the book club meets at {1}"),
                ("6.30pm", "7.30pm", "8.15pm"),
            ),
            (("our accountant is {0}", "our accountant is {1}"), _NAMES_C),
            (
                ("the staff party budget is {0}", "the staff party budget is {1}"),
                ("900 euros", "1,200 euros", "750 euros"),
            ),
            (("the relay race is in {0}", "the relay race is in {1}"), ("York", "Hull", "Ripon")),
        ),
    ),
    *_cases(
        "twice",
        (
            (
                (
                    "the open day is on {0}",
                    "sorry, the open day is on {1}",
                    "no wait, the open day is {2}",
                ),
                _DAYS_C,
            ),
            (
                (
                    "the photographer is {0}",
                    "change of plan, the photographer is {1}",
                    "final change: {2} is the photographer",
                ),
                _NAMES_C,
            ),
            (
                (
                    "the awards night is at {0}",
                    "the awards night moved to {1}",
                    "the awards night is at {2} after all",
                ),
                _PLACES_C,
            ),
        ),
    ),
    *_cases(
        "other language",
        (
            (
                ("El dentista es el {0}.", "Perdona, el dentista es el {1}."),
                ("lunes", "miércoles", "viernes"),
            ),
            (
                ("Die Feier findet in {0} statt.", "Korrektur: die Feier findet in {1} statt."),
                ("Kassel", "Fulda", "Marburg"),
            ),
            (
                ("Le rendez-vous est à {0}.", "Changement : le rendez-vous est à {1}."),
                ("Dijon", "Besançon", "Mulhouse"),
            ),
            (
                ("O jantar é no {0}.", "Correção: o jantar é no {1}."),
                ("Porto Alto", "Vila Nova", "Ribamar"),
            ),
            (
                ("Konferencja jest w {0}.", "Sorry, konferencja jednak w {1}."),
                ("Opolu", "Radomiu", "Płocku"),
            ),
        ),
    ),
    *_cases(
        "said twice",
        (
            (
                (
                    "the choir rehearsal is on {0}",
                    "choir rehearsal is on {0}, don't forget",
                    "the choir rehearsal is on {1} now",
                ),
                ("Tuesday", "Thursday", "Sunday"),
            ),
            (
                (
                    "our IT contact is {0}",
                    "like I said, our IT contact is {0}",
                    "correction, our IT contact is {1}",
                ),
                _NAMES_C,
            ),
            (
                (
                    "the garden party is at {0}",
                    "just repeating: garden party at {0}",
                    "the garden party is at {1}",
                ),
                _PLACES_C,
            ),
        ),
    ),
    *_cases(
        "control: two flights",
        (
            (
                ("our outbound train leaves at {0}", "our return train leaves at {1}"),
                ("7.02am", "4.48pm", "6.33pm"),
            ),
            (
                ("Priya's bus arrives at {0}", "Jonas's bus arrives at {1}"),
                ("1.15pm", "3.40pm", "5.25pm"),
            ),
        ),
    ),
    *_cases(
        "control: two people",
        (
            (
                ("Olu's phone number is {0}", "Mina's phone number is {1}"),
                ("0771 204 338", "0779 815 602"),
            ),
            (("my aunt works at {0}", "my uncle works at {1}"), ("Tesco", "Boots", "Argos")),
        ),
    ),
    *_cases(
        "control: also",
        (
            (("the menu has {0}", "the menu also has {1}"), ("gnocchi", "paella", "biryani")),
            (("{0} is on the panel", "{1} is on the panel too"), _NAMES_C),
        ),
    ),
    *_cases(
        "control: if",
        (
            (
                ("the barbecue is on {0}", "if the forecast is bad, the barbecue is on {1}"),
                ("Saturday", "Sunday"),
            ),
            (
                ("we meet at {0}", "in case the trains strike, we meet at {1}"),
                ("the Clock Tower", "Platform Cafe"),
            ),
        ),
    ),
    *_cases(
        "control: same value",
        (
            (
                (
                    "the vet appointment is on {0}",
                    "the car service is on {0}",
                    "actually, the car service is on {1}",
                ),
                _DAYS_C,
            ),
            (
                (
                    "the yoga class starts at {0}",
                    "the book club starts at {0}",
                    "scratch that, the book club starts at {1}",
                ),
                ("6.15pm", "7.45pm", "8.05pm"),
            ),
        ),
    ),
)


def bank(seed: int) -> tuple[Case, ...]:
    """The phrasing bank of ``seed``: the reporting bank for reporting seeds."""
    if seed in REPORT_SEEDS:
        return REPORTING
    if seed in TUNING_SEEDS:
        return TUNING
    raise SystemExit(f"seed {seed} is neither a tuning (7600-7619) nor a reporting (7800-7819) one")


def generate(seed: int) -> Scenario:
    """One case of each kind and each control from ``seed``'s bank, interleaved in a random
    order (a case's statements keep theirs), its values all distinct."""
    rng = random.Random(seed)
    cases = bank(seed)
    chosen: list[tuple[Case, list[str]]] = []
    used: set[str] = set()
    for kind in (*KINDS, *CONTROLS):
        of_kind = [c for c in cases if c.kind == kind]
        for case in rng.sample(of_kind, k=len(of_kind)):
            slots = max(int(i) for text in case.texts for i in re.findall(r"\{(\d)\}", text)) + 1
            free = [v for v in case.values if v not in used]
            if len(free) >= slots:
                values = rng.sample(free, slots)
                used.update(values)
                chosen.append((case, values))
                break
    # Interleave: a random order of statements keeping each case's own in order.
    queues = [[text.format(*values) for text in case.texts] for case, values in chosen]
    turns: list[Turn] = []
    said: list[list[int]] = [[] for _ in chosen]
    while any(queues):
        pick = rng.choice([i for i, q in enumerate(queues) if q])
        said[pick].append(len(turns))
        turns.append(Turn(queues[pick].pop(0), (), rng.choice(ACKS), "fact"))
    facts: list[Fact] = []
    for (case, values), at in zip(chosen, said, strict=True):
        indices = [int(re.findall(r"\{(\d)\}", text)[0]) for text in case.texts]
        if case.kind.startswith("control"):
            # Every statement is a fact, so that each is folded: the second subject that
            # shares a value ("the school pickup is at 3pm") is what a correction revises.
            for index, turn in zip(indices, at, strict=True):
                facts.append(Fact(case.kind, values[index], turn))
            continue
        final = indices[-1]
        olds = [(values[i], turn) for i, turn in zip(indices, at, strict=True) if i != final]
        facts.append(
            Fact(case.kind, olds[0][0], olds[0][1], values[final], at[-1], tuple(olds[1:]))
        )
    return Scenario(
        seed=seed,
        model="gpt-4o-mini",
        context_limit=8192,
        system={"global": "You are a careful assistant."},
        goal="Keep what the user tells you straight.",
        tools=[],
        turns=turns,
        facts=sorted(facts, key=lambda fact: fact.turn),
        questions=[],
        agent="corrections-kinds",
    )


def score(seeds: list[int], *, verbose: bool) -> str:
    """The figures of ``seeds`` by kind: for a correction, the new value present and an old
    value presented as current; for a control, a value taken (by a false revision)."""
    #: kind -> [cases, new value present, old value as current] or [values, taken, 0]
    by_kind: dict[str, list[int]] = {}
    for seed in seeds:
        scenario = generate(seed)
        rendered = _fold(scenario)
        lines = [normalise(piece) for piece in _PIECES.split(rendered)]
        text = normalise(rendered)
        for fact in scenario.facts:
            counts = by_kind.setdefault(fact.kind, [0, 0, 0])
            counts[0] += 1
            if fact.corrected_to is None:
                taken = not value_pattern(fact.value).search(text)
                counts[1] += taken
                if taken and verbose:
                    said = scenario.turns[fact.turn].user
                    print(f"seed {seed} [{fact.kind}] taken: {said!r}")  # noqa: T201
                continue
            new = value_pattern(fact.corrected_to)
            olds = [value_pattern(value) for value in fact.old_values]
            present = bool(new.search(text))
            stale = [li for li in lines for o in olds if o.search(li) and not new.search(li)]
            counts[1] += present
            counts[2] += bool(stale)
            if (stale or not present) and verbose:
                print(f"seed {seed} [{fact.kind}] new value present: {present}")  # noqa: T201
                turns = [fact.turn, *(t for _, t in fact.superseded), fact.correction_turn]
                for turn in turns:
                    print(f"   said {scenario.turns[turn or 0].user!r}")  # noqa: T201
                for line in stale:
                    print(f"   ! {line[:200]}")  # noqa: T201
    out = [f"{'kind':<24}{'new value present':>20}{'old value as current':>24}"]
    sums = [0, 0, 0]
    for kind in KINDS:
        n, found, old = by_kind.get(kind, [0, 0, 0])
        sums = [sums[0] + n, sums[1] + found, sums[2] + old]
        out.append(f"{kind:<24}{f'{found}/{n}':>20}{f'{old}/{n}':>24}")
    out.append(f"{'all corrections':<24}{f'{sums[1]}/{sums[0]}':>20}{f'{sums[2]}/{sums[0]}':>24}")
    out.append(f"{'control':<24}{'values taken (false revisions)':>44}")
    taken_all = [0, 0]
    for kind in CONTROLS:
        n, lost, _ = by_kind.get(kind, [0, 0, 0])
        taken_all = [taken_all[0] + n, taken_all[1] + lost]
        out.append(f"{kind:<24}{f'{lost}/{n}':>44}")
    out.append(f"{'all controls':<24}{f'{taken_all[1]}/{taken_all[0]}':>44}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    from bench.heldout.__main__ import seed_list

    parser = argparse.ArgumentParser(
        prog="python -m bench.heldout.corrections_kinds", description=__doc__
    )
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    print(score(seed_list(args.seeds), verbose=args.verbose))  # noqa: T201


if __name__ == "__main__":
    main()
