"""``python -m bench replies``: answers to the assistant's questions, and typos fixed in the
next message, in the last prompt of a long session.

Two kinds of fact a user states only beside something else:

- an **answer**: the assistant asks ("Which warehouse should the pallets go to?") and the
  user answers, terse to rambling ("Leeds", "the 14th", "yes, both of them, 3 months each",
  "hmm, we talked about this last week … I think it's Leeds"), in the next message, or a few
  messages later after putting it off ("let me check with Dave") and some chat, or one reply
  to two questions. The question comes in several shapes: alone, in the middle of a
  paragraph, after a list of options, at the end of a long answer, in fourteen languages
  (question marks of Latin, Chinese and Japanese, and Arabic script; a French space before "?");
- a **typo fixed** in the next message: "ship the samples to Kowalksi" then "*Kowalski",
  "the PO is 45512" then "sorry 45521", "typo: meant …", "I mean …", "X not Y", in five
  languages. The fixed value must be in the last prompt and the typo never shown as current.

Beside them, ordinary statements of the third held-out set's shared frames are scored as a
control. Filler is the third set's: five agents' routine requests with tool steps, prose of
nine shapes, chat and rambles. Sessions are 250 turns at gpt-4o-mini's 8,192 tokens, facts
in the first half. The scorer is the held-out sets' (:mod:`bench.heldout.scorer`).

Seeds: **tuning 100-109** (the ones to look at), **reporting 200-209**
(run only for the figures). ::

    python -m bench replies --seeds tuning --summarizer extractive
    python -m bench replies --seeds reporting --summarizer both
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.common import running_app
from bench.heldout.generator import check_values_unique
from bench.heldout.scenario import Fact, Scenario, Turn
from bench.heldout.scorer import Agent, SessionResult
from bench.heldout.sets import Agent as AgentKind
from bench.heldout.third import agents as a
from bench.heldout.third.facts import SHARED
from bench.heldout.third.generator import ACKS, _filler

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
TURNS = 250
TUNING_SEEDS = tuple(range(100, 110))
REPORTING_SEEDS = tuple(range(200, 210))
#: Per session: answers in the next message, answers a few messages later, replies to two
#: questions (two facts each), typos fixed, ordinary statements (the control).
ANSWERS = 8
LATER_ANSWERS = 3
TWO_ANSWERS = 2
TYPOS = 6
CONTROLS = 8


@dataclass(frozen=True)
class Asked:
    """The user asks for something, the assistant asks a question back, the user answers."""

    request: str
    question: str
    #: Options the assistant lists (none of them the user's answer).
    options: tuple[str, ...]
    replies: tuple[str, ...]
    values: tuple[str, ...]


@dataclass(frozen=True)
class AskedTwo:
    """Two questions in one message, answered in one reply."""

    request: str
    question: str
    replies: tuple[str, ...]
    first: tuple[str, ...]
    second: tuple[str, ...]


@dataclass(frozen=True)
class Typo:
    """A statement with a typo in it, and the fixes of it said next."""

    statement: str
    #: (typo, fixed)
    pairs: tuple[tuple[str, str], ...]
    fixes: tuple[str, ...]


RAMBLE = (
    "hmm ok so we talked about this with the team last week and honestly I went back and "
    "forth on it, but I think in the end it's {v}, the other option just doesn't work for us"
)

ASKED: tuple[Asked, ...] = (
    Asked(
        "book the pallets for the Hartley order",
        "Which warehouse should the pallets go to?",
        ("Bradford (Canal Road)", "Hull docks", "Sheffield North"),
        ("{v}", "{v}, the one on Kirkstall Road", RAMBLE),
        ("Wakefield", "Doncaster", "Harrogate"),
    ),
    Asked(
        "set up the quarterly review with the regional leads",
        "What date should I put it on?",
        ("the first Monday of the month", "the Thursday after payday", "the last Friday"),
        ("the {v}", "{v} works", "{v} if the big room is free", RAMBLE),
        ("17th", "23rd", "26th"),
    ),
    Asked(
        "renew the parking permits for the depot",
        "Should I renew both permits, or just the one for the van?",
        (),
        ("yes, both of them, {v}", "both — {v}", "both pls. {v}"),
        ("three months each", "six months each", "nine months each"),
    ),
    Asked(
        "bitte die Lieferung für Frau Albrecht planen",
        "An welchem Tag soll geliefert werden?",
        ("Montag früh", "Ende der Woche"),
        ("am {v}", "{v}, vormittags", "{v} bitte, nachmittags ist sie nicht da"),
        ("Donnerstag", "Mittwoch", "Dienstag"),
    ),
    Asked(
        "prépare la réservation pour le séminaire",
        "Combien de participants faut-il prévoir ?",
        (),
        ("{v}", "environ {v}", "{v}, peut-être un ou deux de plus"),
        ("trente-deux", "vingt-sept", "quarante et un"),
    ),
    Asked(
        "organiza el envío a la tienda nueva",
        "¿A qué dirección lo mando?",
        (),
        ("a {v}", "{v}, segundo piso", "{v}. y que llamen antes de subir"),
        ("Calle Alcalá 210", "Calle Serrano 48", "Paseo de Gracia 92"),
    ),
    Asked(
        "marca a consulta do meu pai",
        "Qual é o médico preferido dele?",
        (),
        ("{v}", "a {v}, a de sempre", "é a {v}"),
        ("Inês Carvalho", "Marta Figueiredo", "Joana Teixeira"),
    ),
    Asked(
        "zamów catering na spotkanie zarządu",
        "Ile osób będzie na spotkaniu?",
        (),
        ("{v}", "chyba {v}", "{v}, ale potwierdzę jutro"),
        ("dwadzieścia pięć", "osiemnaście", "trzydzieści dwie"),
    ),
    Asked(
        "会議室を予約してください",
        "何階の会議室がいいですか？",  # noqa: RUF001
        ("三階", "五階"),
        ("{v}", "{v}でお願いします", "{v}がいいです。窓があるので"),
        ("七階", "九階", "十二階"),
    ),
    Asked(
        "帮我订去上海的机票",
        "您想坐哪家航空公司？",  # noqa: RUF001
        (),
        ("{v}", "{v}吧", "还是{v}，积分在那边"),  # noqa: RUF001
        ("东方航空", "春秋航空", "吉祥航空"),
    ),
    Asked(
        "احجز لي فندقا في دبي",
        "كم ليلة تريد البقاء؟",
        (),
        ("{v}", "{v} تقريبا"),
        ("خمس ليال", "ثلاث ليال", "سبع ليال"),
    ),
    Asked(
        "закажи такси в аэропорт",
        "Во сколько вас забрать?",  # noqa: RUF001
        (),
        ("в {v}", "{v}, не позже", "давай в {v}"),
        ("половине шестого", "четверть восьмого", "без десяти семь"),
    ),
    Asked(
        "toplantıyı ayarla lütfen",  # noqa: RUF001
        "Hangi salonu ayırayım?",  # noqa: RUF001
        ("Moda salonu", "Bebek salonu"),
        ("{v}", "{v} olsun", "{v}, projeksiyon orada çalışıyor"),  # noqa: RUF001
        ("Boğaziçi salonu", "Kadıköy salonu", "Galata salonu"),  # noqa: RUF001
    ),
    Asked(
        "tolong pesan tiket kereta ke Bandung",
        "Mau kelas apa?",
        ("ekonomi", "campuran"),
        ("{v}", "{v} aja", "{v}, yang ada colokan"),
        ("eksekutif", "luxury sleeper", "panoramic"),
    ),
    Asked(
        "prenota il ristorante per la cena di squadra",
        "Per che ora prenoto?",
        (),
        ("alle {v}", "{v}, non prima", "facciamo alle {v}"),
        ("venti e trenta", "diciannove e quaranta", "ventuno e un quarto"),
    ),
    Asked(
        "plan de verhuizing van het archief",
        "Naar welke verdieping moet het?",
        ("de kelder", "de begane grond"),
        ("de {v}", "{v}, achterin", "naar de {v} denk ik"),
        ("derde verdieping", "vierde verdieping", "zesde verdieping"),
    ),
)

ASKED_TWO: tuple[AskedTwo, ...] = (
    AskedTwo(
        "order the replacement laptops for the field team",
        "Which model do you want? And how many?",
        ("{a}, {b} of them", "the {a} — {b}", "{b}, all {a}"),
        ("ThinkPad T14", "Latitude 7440", "ZenBook 14"),
        ("thirteen", "seventeen", "twenty-one"),
    ),
    AskedTwo(
        "get the venue deposit paid",
        "How much is the deposit, and who should I pay it to?",
        ("{a}, to {b}", "{a} — pay {b} directly", "it's {a}. {b} handles it"),
        ("1850 euros", "2400 euros", "975 euros"),
        ("Marguerite Olsen", "Tobias Brandt", "Svetlana Kuznetsova"),
    ),
    AskedTwo(
        "reserviere den Transporter",
        "Für welchen Tag? Und wie lange brauchst du ihn?",
        ("{a}, {b}", "am {a}, für {b}"),
        ("Rosenmontag", "Karsamstag", "Gründonnerstag"),
        ("sechs Stunden", "zwei Tage", "drei Stunden"),
    ),
    AskedTwo(
        "prepara el pedido de cajas para la mudanza",
        "¿Cuántas cajas son y a qué planta van?",
        ("{a}, a la {b}", "son {a}, {b}"),
        ("catorce", "veintidós", "diecisiete"),
        ("planta cuarta", "planta baja", "planta octava"),
    ),
)

TYPOS_SAID: tuple[Typo, ...] = (
    Typo(
        "ship the samples to {v} at the Gdańsk lab",
        (("Kowalksi", "Kowalski"), ("Nowakwoski", "Nowakowski"), ("Wiśniewksi", "Wiśniewski")),
        ("*{fixed}", "{fixed}*", "sorry, {fixed} not {typo}", "typo: meant {fixed}"),
    ),
    Typo(
        "the PO for the resin order is {v}",
        (("45512", "45521"), ("83307", "83370"), ("61948", "61984")),
        ("sorry {fixed}", "*{fixed}", "sorry, {fixed} not {typo}", "typo - {fixed}"),
    ),
    Typo(
        "our contact at the freight company is {v}, she picks up after 10",
        (("Ngzoi", "Ngozi"), ("Adaze", "Adaeze"), ("Chiamkaa", "Chiamaka")),
        ("*{fixed}", "I mean {fixed}", "oops, {fixed}", "{fixed} not {typo}"),
    ),
    Typo(
        "gate code for the Harwell site is {v}",
        (("7731", "7713"), ("4096", "4069"), ("2258", "2285")),
        ("sorry, {fixed}", "*{fixed}", "I meant {fixed}", "{fixed} not {typo}, sorry"),
    ),
    Typo(
        "Die Rechnung geht an Herrn {v} in Köln",
        (("Schmdit", "Schmidt"), ("Hofmnan", "Hofmann"), ("Weißmüler", "Weißmüller")),
        ("*{fixed}", "Tippfehler: {fixed}", "sorry, {fixed}"),
    ),
    Typo(
        "le rendez-vous est avec le docteur {v}",
        (("Lefebrve", "Lefebvre"), ("Rousesau", "Rousseau"), ("Beaumnot", "Beaumont")),
        ("*{fixed}", "pardon, {fixed}", "{fixed}*"),
    ),
    Typo(
        "el pedido va a nombre de {v}",
        (("Gonzáelz", "González"), ("Fernádnez", "Fernández"), ("Rodrígeuz", "Rodríguez")),
        ("*{fixed}", "perdón, {fixed}", "{fixed}, no {typo}"),
    ),
    Typo(
        "my flight home is {v} on the Sunday",
        (("BA2490", "BA2940"), ("LH9031", "LH9013"), ("KL1862", "KL1826")),
        ("*{fixed}", "sorry {fixed}", "typo: meant {fixed}"),
    ),
    Typo(
        "kierowca na jutro to pan {v}",
        (("Zielińki", "Zieliński"), ("Wójick", "Wójcik"), ("Kamińksi", "Kamiński")),
        ("*{fixed}", "sorki, {fixed}", "literówka: {fixed}"),
    ),
)

#: What a user says to put an answer off, and how they come back with it.
PUT_OFF = (
    "let me check with Dave",
    "hmm not sure, I'll ask the warehouse team",
    "hang on, checking",
    "good question, let me look",
)
COME_BACK = ("ok, {r}", "found it: {r}", "Dave says {r}", "so — {r}")
CHATTER = (("lol", "😄"), ("brb", "Sure."), ("coffee first", "Enjoy it."), ("ugh mondays", "😅"))
LEAD_INS = (
    "Sure, I can set that up.",
    "Happy to.",
    "On it — one thing first.",
    "I've pulled up what we have on file and started a draft.",
)
TAILS = (
    "Once I know, I'll book it and send you the confirmation.",
    "Then I'll take care of the rest.",
    "I'll hold the slot for an hour meanwhile.",
)


def _asking(rng: random.Random, agent: AgentKind, question: str, options: tuple[str, ...]) -> str:
    """The assistant's message that asks: the question alone, in the middle of a paragraph,
    after a list of options, or at the end of a long answer."""
    shape = rng.randrange(4)
    if shape == 0:
        return f"{rng.choice(LEAD_INS)} {question}"
    if shape == 1:
        return f"{rng.choice(LEAD_INS)} {question} {rng.choice(TAILS)}"
    if shape == 2 and options:
        listed = "\n".join(f"- {option}" for option in options)
        return f"{question} What we usually use:\n{listed}\nOr something else?"
    return f"{a.prose(rng, agent)}\n\n{question}"


def generate(seed: int, turns: int = TURNS) -> Scenario:
    """The session of ``seed``: ``turns`` turns (at least 120)."""
    if turns < 120:
        raise ValueError("a session has at least 120 turns")
    rng = random.Random(seed)
    agent = a.AGENTS[seed % len(a.AGENTS)]
    half = turns // 2
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []

    def free_run(length: int) -> int:
        starts = [
            t for t in range(1, half - length) if all(u not in slots for u in range(t, t + length))
        ]
        return rng.choice(starts)

    def answered_next(at: int, request: str, question: str, said: str) -> None:
        """The user's request and the assistant's question at ``at``, the answer right after."""
        slots[at] = Turn(request, (), question, "fact")
        slots[at + 1] = Turn(said, (), rng.choice(ACKS), "fact")

    asked = rng.sample(ASKED, ANSWERS + LATER_ANSWERS)
    for number, frame in enumerate(asked):
        value = rng.choice(frame.values)
        said = rng.choice(frame.replies).format(v=value)
        question = _asking(rng, agent, frame.question, frame.options)
        if number < ANSWERS:
            at = free_run(2)
            answered_next(at, frame.request, question, said)
            facts.append(Fact("answer, next message", value, at + 1))
            continue
        chat = rng.random() < 0.6
        at = free_run(4 if chat else 3)
        slots[at] = Turn(frame.request, (), question, "fact")
        slots[at + 1] = Turn(rng.choice(PUT_OFF), (), "Sure, take your time.", "chat")
        if chat:
            chatted, reply = rng.choice(CHATTER)
            slots[at + 2] = Turn(chatted, (), reply, "chat")
        answer_at = at + (3 if chat else 2)
        slots[answer_at] = Turn(rng.choice(COME_BACK).format(r=said), (), "Thanks!", "fact")
        facts.append(Fact("answer, a few messages later", value, answer_at))

    for frame2 in rng.sample(ASKED_TWO, TWO_ANSWERS):
        first, second = rng.choice(frame2.first), rng.choice(frame2.second)
        at = free_run(2)
        question = _asking(rng, agent, frame2.question, ())
        said = rng.choice(frame2.replies).format(a=first, b=second)
        answered_next(at, frame2.request, question, said)
        facts.append(Fact("one reply to two questions", first, at + 1))
        facts.append(Fact("one reply to two questions", second, at + 1))

    for typo_frame in rng.sample(TYPOS_SAID, TYPOS):
        typo, fixed = rng.choice(typo_frame.pairs)
        at = free_run(2)
        slots[at] = Turn(typo_frame.statement.format(v=typo), (), rng.choice(ACKS), "fact")
        fix = rng.choice(typo_frame.fixes).format(typo=typo, fixed=fixed)
        slots[at + 1] = Turn(fix, (), rng.choice(("Fixed.", "Got it, corrected.", "👍")), "fact")
        facts.append(Fact("typo fixed in the next message", typo, at, fixed, at + 1))

    for control in rng.sample(SHARED, CONTROLS):
        at = free_run(1)
        value = rng.choice(control.values)
        said = rng.choice(control.statements).format(v=value)
        slots[at] = Turn(said, (), rng.choice(ACKS), "fact")
        facts.append(Fact("control: " + control.kind, value, at))

    return closed_session(rng, seed, turns, agent, slots, facts)


def closed_session(
    rng: random.Random,
    seed: int,
    turns: int,
    agent: AgentKind,
    slots: dict[int, Turn],
    facts: list[Fact],
    check: Callable[[Scenario], None] = check_values_unique,
) -> Scenario:
    """The session of ``seed`` from the turns placed in ``slots``: a goodbye last, the
    agent's routine work everywhere else, every value checked (by ``check``) to occur only
    where placed."""
    slots[turns - 1] = Turn("ok that's it for today, cheers", (), "Have a good one!", "chat")
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
        questions=[],
        agent=agent.name,
    )
    check(scenario)
    return scenario


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f}%)" if total else "-"


def report(results: list[SessionResult]) -> str:
    """Facts in the last prompt by kind, the typos shown as current, and the prompts'
    validity."""
    kinds: dict[str, list[int]] = {}
    for result in results:
        for kind, (hit, total) in result.facts.items():
            counts = kinds.setdefault(kind, [0, 0])
            counts[0] += hit
            counts[1] += total
    lines = [f"{'facts in the last prompt':<44}{'present':>16}"]
    lines.extend(f"  {kind:<42}{_share(*kinds[kind]):>16}" for kind in sorted(kinds))
    lines.append(
        f"  {'all':<42}"
        f"{_share(sum(k[0] for k in kinds.values()), sum(k[1] for k in kinds.values())):>16}"
    )
    fixes = sum(r.corrections for r in results)
    shown = sum(r.correction_old_current for r in results)
    lines.append(f"  {'typo shown as current':<42}{_share(shown, fixes):>16}")
    prompts = sum(r.prompts for r in results)
    lines.append(
        f"prompts: {prompts}, over budget {sum(r.over_budget for r in results)}, invalid "
        f"{sum(r.invalid for r in results)}, refused {sum(r.refused for r in results)}; "
        f"control (found where stated): "
        f"{_share(sum(r.stated_found for r in results), sum(r.stated for r in results))}"
    )
    return "\n".join(lines)


@contextmanager
def summarizer_settings(summarizer: str) -> Iterator[dict[str, Any]]:
    """The app's settings for ``summarizer``: for ``llm``, the scripted model the held-out
    sets use, which drops a third of the items it is given and reorders the rest."""
    if summarizer == "extractive":
        yield {}
        return
    from tests.fake_llm import serve_fake_chat

    with serve_fake_chat() as fake:
        fake.mode = "drop_facts"
        fake.drop_share = 1 / 3
        fake.reorder = True
        yield {
            "summarizer": "llm",
            "summarizer_base_url": fake.url,
            "summarizer_model": "scripted",
            "summary_job_poll_seconds": 0.05,
        }


async def run(
    seeds: list[int],
    turns: int,
    recall: bool,
    settings: dict[str, Any],
    label: str,
    make: Callable[[int, int], Scenario] | None = None,
) -> list[SessionResult]:
    """Each seed's session (of ``make``, this module's :func:`generate` unless given) through
    the real app (in process, a throwaway SQLite file)."""
    make = make or generate
    results = []
    async with running_app(settings=settings) as client:
        for seed in seeds:
            started = time.perf_counter()
            result = await Agent(client, make(seed, turns), recall=recall).run()
            results.append(result)
            print(  # noqa: T201
                f"{label}seed {seed}: {sum(h for h, _ in result.facts.values())}/"
                f"{sum(t for _, t in result.facts.values())} facts, "
                f"{time.perf_counter() - started:.0f}s",
                file=sys.stderr,
            )
    return results


def parse_seeds(
    text: str, tuning: tuple[int, ...] = TUNING_SEEDS, reporting: tuple[int, ...] = REPORTING_SEEDS
) -> list[int]:
    """The seeds ``--seeds`` names: "tuning", "reporting", or ranges ("100-104,107")."""
    named = {"tuning": tuning, "reporting": reporting}
    if text in named:
        return list(named[text])
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def generator_main(
    argv: list[str] | None,
    *,
    command: str,
    about: str | None,
    headline: str,
    generate: Callable[[int, int], Scenario],
    tuning: tuple[int, ...],
    reporting: tuple[int, ...],
    turns: int = TURNS,
) -> None:
    """The command line of a generator that scores facts with :func:`report`
    (``python -m bench list-facts``, ``shaped-facts``, ``pasted-facts``): its seeds, one
    summariser, recall on or off, and the figures under ``headline``."""
    parser = argparse.ArgumentParser(prog=f"python -m bench {command}", description=about)
    parser.add_argument(
        "--seeds",
        default="tuning",
        help=f"tuning, reporting, or e.g. {tuning[0]}-{tuning[0] + 4}",
    )
    parser.add_argument("--turns", type=int, default=turns)
    parser.add_argument("--recall", choices=("on", "off"), default="on")
    parser.add_argument("--summarizer", choices=("extractive", "llm"), default="extractive")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds, tuning, reporting)
    began = time.perf_counter()
    with summarizer_settings(args.summarizer) as settings:
        results = asyncio.run(
            run(seeds, args.turns, args.recall == "on", settings, f"{command}: ", generate)
        )
    print(  # noqa: T201
        f"\n##### {headline}, {args.summarizer} summariser, recall {args.recall}, "
        f"seeds {min(seeds)}-{max(seeds)}, {args.turns} turns\n{report(results)}",
        flush=True,
    )
    print(f"\n{time.perf_counter() - began:.0f}s in all")  # noqa: T201


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench replies", description=__doc__)
    parser.add_argument("--seeds", default="tuning", help="tuning, reporting, or e.g. 100-104")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--recall", choices=("on", "off"), default="on")
    parser.add_argument("--summarizer", choices=("extractive", "llm", "both"), default="extractive")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    summarizers = ["extractive", "llm"] if args.summarizer == "both" else [args.summarizer]
    began = time.perf_counter()
    for summarizer in summarizers:
        with summarizer_settings(summarizer) as settings:
            label = f"replies, {summarizer}: "
            results = asyncio.run(run(seeds, args.turns, args.recall == "on", settings, label))
        print(  # noqa: T201
            f"\n##### answers and typo fixes, {summarizer} summariser, recall {args.recall}, "
            f"seeds {min(seeds)}-{max(seeds)}, {args.turns} turns\n{report(results)}",
            flush=True,
        )
    print(f"\n{time.perf_counter() - began:.0f}s in all")  # noqa: T201


if __name__ == "__main__":
    main()
