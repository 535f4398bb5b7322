"""``python -m bench pasted-facts``: facts the user pastes or dictates, in the last prompt of
a long session.

Four shapes, each scored by kind:

- a **pasted block** — YAML (a Kubernetes manifest, a compose file, a CI job), JSON, TOML,
  a ``.env`` file, CSV rows, plain ``key: value`` lines — of 5 to 40 lines, with the fact as
  one line among boilerplate (``apiVersion``, ``kind``, ``metadata``, labels, probes, ports,
  log levels…), sometimes after a line of the user's own ("here's what prod runs:");
- a **number in an odd format** of one locale or another: "1.5k a month", "¥12 000",
  "€2.340,50", "12,5 %", "3 lakh", "2-3 weeks" (an en dash), "USD 1.2M", "CHF 4'500", "₹2,40,000";
- a **dictated** message: no punctuation, or punctuation spoken ("comma", "full stop",
  "new paragraph"), "um" and "uh", numbers in words, a run-on of several facts;
- a **pasted chat thread** (Slack-style "Name  10:42 AM" lines and what each said) with one
  line of the user's own above or below it, which holds the fact.

Beside them, ordinary statements of the third held-out set's shared frames are scored as a
control. Filler is the third set's. Sessions are 250 turns at gpt-4o-mini's 8,192 tokens,
facts in the first half, scored as the held-out sets score (:mod:`bench.heldout.scorer`).

Seeds: **tuning 520-529** (the ones to look at), **reporting 620-629** (run once for the
figures, not read). ::

    python -m bench pasted-facts --seeds tuning
    python -m bench pasted-facts --seeds reporting

``--crowded`` makes sessions whose user block cannot hold everything: ten pastes a session
beside short statements the user types, dates and times in odd formats ("the 3rd of Feb,
14h30", "02/03 at 9:15", "Thu 9am"), names and plain one-liners. It says whether what the
user wrote in their own sentences keeps its place when pastes compete for the room. Seeds:
**tuning 530-539**, **reporting 630-639**. ::

    python -m bench pasted-facts --crowded --seeds tuning
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass

from bench.heldout.scenario import Fact, Scenario, Turn
from bench.heldout.third import agents as a
from bench.heldout.third.facts import SHARED
from bench.heldout.third.generator import ACKS
from bench.replies import closed_session, generator_main

TURNS = 250
TUNING_SEEDS = tuple(range(520, 530))
REPORTING_SEEDS = tuple(range(620, 630))
#: Per session: pasted blocks, numbers in odd formats, dictated messages, chat threads,
#: ordinary statements (the control).
PASTES = 6
ODD_NUMBERS = 6
DICTATED = 5
THREADS = 2
CONTROLS = 4


@dataclass(frozen=True)
class Setting:
    """A value a config holds that a user would ask about later: its key as each format
    spells it, and values unlike anything else in a session."""

    key: str
    values: tuple[str, ...]


SETTINGS: tuple[Setting, ...] = (
    Setting("memory_limit", ("1536Mi", "2816Mi", "3584Mi")),
    Setting("cpu_limit", ("1750m", "2250m", "1350m")),
    Setting("region", ("eu-south-2", "ap-southeast-4", "me-central-1")),
    Setting("db_host", ("pg-ledger-07.internal", "pg-quartz-12.internal")),
    Setting("archive_bucket", ("acme-ledger-archive", "fjord-invoices-cold")),
    Setting("oncall_email", ("oncall-payments@fjordline.example", "ops-rota@kestrel.example")),
    Setting("owner", ("Ingrid Solheim", "Tadeusz Wróbel", "Amara Okonjo")),
    Setting("image_tag", ("2.31.7", "4.18.3", "0.47.12")),
    Setting("request_timeout", ("47s", "83s", "112s")),
    Setting("retention_days", ("417", "563", "731")),
    Setting("max_connections", ("1372", "2791")),
    Setting("smtp_port", ("2587", "4465")),
)


def _key(setting: Setting, style: str) -> str:
    parts = setting.key.split("_")
    if style == "camel":
        return parts[0] + "".join(p.title() for p in parts[1:])
    if style == "upper":
        return setting.key.upper()
    return setting.key


#: Boilerplate: the keys every such file has, with values a user rarely asks about.
K8S_HEAD = (
    ("apiVersion", "apps/v1"),
    ("kind", "Deployment"),
)
SERVICES = ("ledger-api", "billing-worker", "search-indexer", "notify-gateway")
NOISE = (
    ("logLevel", "info"),
    ("imagePullPolicy", "IfNotPresent"),
    ("restartPolicy", "Always"),
    ("protocol", "TCP"),
    ("containerPort", "8080"),
    ("initialDelaySeconds", "5"),
    ("periodSeconds", "10"),
    ("path", "/healthz"),
    ("enabled", "true"),
    ("debug", "false"),
    ("timezone", "UTC"),
    ("encoding", "utf-8"),
    ("format", "json"),
    ("workers", "4"),
    ("maxSurge", "1"),
    ("maxUnavailable", "0"),
    ("type", "RollingUpdate"),
    ("healthcheck", "/ready"),
    ("metrics", "true"),
    ("tracing", "false"),
)

INTROS = (
    "",
    "here's what prod runs:",
    "this is the current config, fyi",
    "pasting the manifest so you have it",
    "from the repo:",
    "",
)


def _noise(rng: random.Random, count: int) -> list[tuple[str, str]]:
    return rng.sample(NOISE, min(count, len(NOISE)))


def _yaml(rng: random.Random, setting: Setting, value: str, size: int) -> str:
    """A Kubernetes manifest with the setting among the container's keys."""
    service = rng.choice(SERVICES)
    key = _key(setting, "camel")
    shown = f'"{value}"' if value[0].isdigit() and "." not in value else value
    noise = _noise(rng, max(0, size - 12))
    cut = rng.randint(0, len(noise))
    lines = [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        f"  name: {service}",
        "  labels:",
        f"    app: {service}",
        "spec:",
        "  template:",
        "    spec:",
        "      containers:",
        f"        - name: {service}",
        *(f"          {k}: {v}" for k, v in noise[:cut]),
        f"          {key}: {shown}",
        *(f"          {k}: {v}" for k, v in noise[cut:]),
    ]
    return "\n".join(lines)


def _json(rng: random.Random, setting: Setting, value: str, size: int) -> str:
    noise = dict(_noise(rng, max(2, size - 6)))
    items = list(noise.items())
    items.insert(rng.randint(0, len(items)), (_key(setting, "camel"), value))
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "name": rng.choice(SERVICES),
        "version": "1.0.0",
        "settings": dict(items),
    }
    return json.dumps(document, indent=2)


def _toml(rng: random.Random, setting: Setting, value: str, size: int) -> str:
    noise = _noise(rng, max(2, size - 5))
    cut = rng.randint(0, len(noise))

    def line(key: str, val: str) -> str:
        return f"{key} = {val}" if val.isdigit() or val in ("true", "false") else f'{key} = "{val}"'

    lines = [
        "[package]",
        f'name = "{rng.choice(SERVICES)}"',
        'edition = "2021"',
        "",
        "[server]",
        *(line(k, v) for k, v in noise[:cut]),
        line(_key(setting, "snake"), value),
        *(line(k, v) for k, v in noise[cut:]),
    ]
    return "\n".join(lines)


def _env(rng: random.Random, setting: Setting, value: str, size: int) -> str:
    noise = [(k.upper(), v) for k, v in _noise(rng, max(3, size - 3))]
    noise.insert(rng.randint(0, len(noise)), (_key(setting, "upper"), value))
    lines = ["# .env.production", "NODE_ENV=production", *(f"{k}={v}" for k, v in noise)]
    return "\n".join(lines)


def _key_values(rng: random.Random, setting: Setting, value: str, size: int) -> str:
    noise = _noise(rng, max(3, size - 1))
    noise.insert(rng.randint(0, len(noise)), (setting.key.replace("_", " "), value))
    return "\n".join(f"{k}: {v}" for k, v in noise)


WAREHOUSES = ("Tilbury", "Felixstowe", "Immingham", "Grangemouth")
GOODS = ("pallet wrap", "cable ties", "label rolls", "tote bins", "hi-vis vests", "tape guns")


def _csv(rng: random.Random, setting: Setting, value: str, size: int) -> tuple[str, str]:
    """CSV rows of stock; the fact is the one row whose note holds ``value``'s kind of
    detail (the count of a unique item)."""
    rows = ["sku,item,qty,warehouse"]
    count = max(4, size - 1)
    special = rng.randrange(count)
    for index in range(count):
        if index == special:
            rows.append(f"RX-{rng.randint(100, 999)},{setting.key.replace('_', ' ')},{value},")
        else:
            rows.append(
                f"ST-{index:03d},{rng.choice(GOODS)},{rng.randint(1, 9) * 10},"
                f"{rng.choice(WAREHOUSES)}"
            )
    return "\n".join(rows), value


PASTE_FORMATS = ("yaml", "json", "toml", "env", "csv", "key-value")


def _pasted(rng: random.Random, setting: Setting, value: str, shape: str) -> str:
    size = rng.randint(5, 40)
    if shape == "yaml":
        body = _yaml(rng, setting, value, size)
    elif shape == "json":
        body = _json(rng, setting, value, size)
    elif shape == "toml":
        body = _toml(rng, setting, value, size)
    elif shape == "env":
        body = _env(rng, setting, value, size)
    elif shape == "csv":
        body, _ = _csv(rng, setting, value, size)
    else:
        body = _key_values(rng, setting, value, size)
    intro = rng.choice(INTROS)
    fenced = rng.random() < 0.5 and shape != "key-value"
    if fenced:
        body = f"```{shape if shape != 'key-value' else ''}\n{body}\n```"
    return f"{intro}\n{body}" if intro else body


@dataclass(frozen=True)
class Said:
    """A message that states one fact: ``{v}`` is the value scored."""

    kind: str
    text: str
    values: tuple[str, ...]


ODD: tuple[Said, ...] = (
    Said("k suffix", "we're spending about {v} a month on the cloud bill", ("1.5k", "2.3k")),
    Said(
        "yen, space grouping",
        "the quote from the Osaka supplier came back at {v}",
        ("¥12 000", "¥48 500"),
    ),
    Said("euro, German", "Miete ist {v} warm, Nebenkosten schon drin", ("€2.340,50", "€1.875,20")),
    Said("percent, comma decimal", "la TVA sur ce service est de {v}", ("12,5 %", "8,5 %")),
    Said("lakh", "the flat in Pune is going for {v} a year", ("3 lakh", "4.5 lakh")),
    Said(
        "range, en dash",
        "lead time on the enclosures is {v} now",
        ("2\u20133 weeks", "5\u20137 weeks"),
    ),
    Said(
        "currency code, M", "their ARR is roughly {v} going by the deck", ("USD 1.2M", "USD 3.4M")
    ),
    Said("Swiss apostrophe", "the Zurich venue wants {v} for the room", ("CHF 4'500", "CHF 7'250")),
    Said("Indian grouping", "the agency's retainer is {v} per quarter", ("₹2,40,000", "₹3,60,000")),
    Said(
        "real, Brazilian",
        "o aluguel do escritório fica em {v} por mês",
        ("R$ 3.200,00", "R$ 5.450,00"),
    ),
    Said("euro after, French", "le devis du traiteur est à {v}", ("1 250,00 €", "2 180,00 €")),
    Said("tilde, k", "we expect {v} signups after the launch email", ("~40k", "~65k")),
)

DICTATED_SAID: tuple[Said, ...] = (
    Said(
        "spoken punctuation",
        "um so the plumber comma his name is {v} comma he's coming on thursday full stop "
        "he needs the side gate open full stop",
        ("Marek Nowicki", "Dorian Fairweather"),
    ),
    Said(
        "spoken punctuation",
        "ok note for the project full stop the budget for the garden is {v} full stop "
        "new paragraph and we need the skip gone by the weekend",
        ("three thousand four hundred pounds", "two thousand seven hundred pounds"),
    ),
    Said(
        "numbers in words",
        "uh the code for the key box is {v} so whoever goes over can let themselves in",
        ("four seven one nine", "eight three six two"),
    ),
    Said(
        "run-on",
        "yeah so basically I talked to the school this morning and they said the trip is "
        "going ahead and um my son's teacher is {v} and she said the kids need packed "
        "lunches and the coach leaves at eight so we have to be there early anyway",
        ("Mrs Abernathy", "Mr Okoro"),
    ),
    Said(
        "run-on",
        "so the thing is um the insurance renewal came through and the excess is {v} now "
        "which is more than last year but whatever we'll live with it I guess",
        ("four hundred and fifty pounds", "six hundred and twenty five pounds"),
    ),
    Said(
        "spoken punctuation",
        "right so comma the dentist moved my appointment to {v} full stop can you put it in "
        "the calendar question mark",
        ("the twenty third", "the twenty eighth"),
    ),
    Said(
        "numbers in words",
        "my new mobile number is {v} in case the old one still shows up anywhere",
        ("oh seven seven one two four four nine", "oh seven nine eight three one five"),
    ),
)

PEOPLE = ("Priya Nair", "Tom Becker", "Lena Vogt", "Sam Okafor", "Jules Martin")
THREAD_LINES = (
    "can someone check the staging deploy?",
    "on it",
    "looks like the migration timed out again",
    "rerunning now",
    "👍",
    "ok green now",
    "thanks!",
    "anyone know who owns the alerts channel?",
    "I'll take a look after lunch",
    "same error as last week tbh",
)
OWN_LINES: tuple[Said, ...] = (
    Said(
        "freeze date",
        "fyi from #ops: the code freeze starts on {v}",
        ("the 19th of March", "the 7th of April"),
    ),
    Said(
        "owner",
        "context for you — {v} owns the alerts channel now",
        ("Beatriz Calloway", "Henrik Lindqvist"),
    ),
    Said(
        "amount",
        "pasting this so you see it; the overtime cap agreed is {v}",
        ("1,180 euros", "1,430 euros"),
    ),
)


def _thread(rng: random.Random, own: str) -> str:
    lines: list[str] = []
    hour, minute = rng.randint(9, 11), rng.randint(0, 40)
    for _ in range(rng.randint(3, 7)):
        minute += rng.randint(1, 4)
        lines.append(f"{rng.choice(PEOPLE)}  {hour}:{minute:02d} AM")
        lines.append(rng.choice(THREAD_LINES))
    thread = "\n".join(lines)
    return f"{own}\n\n{thread}" if rng.random() < 0.5 else f"{thread}\n\n{own}"


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

    shapes = [PASTE_FORMATS[(seed + i) % len(PASTE_FORMATS)] for i in range(PASTES)]
    for setting, shape in zip(rng.sample(SETTINGS, PASTES), shapes, strict=True):
        value = rng.choice(setting.values)
        at = free()
        slots[at] = Turn(_pasted(rng, setting, value, shape), (), rng.choice(ACKS), "fact")
        facts.append(Fact("paste: " + shape, value, at))

    for said in rng.sample(ODD, ODD_NUMBERS):
        value = rng.choice(said.values)
        at = free()
        slots[at] = Turn(said.text.format(v=value), (), rng.choice(ACKS), "fact")
        facts.append(Fact("odd number: " + said.kind, value, at))

    for said in rng.sample(DICTATED_SAID, DICTATED):
        value = rng.choice(said.values)
        at = free()
        slots[at] = Turn(said.text.format(v=value), (), rng.choice(ACKS), "fact")
        facts.append(Fact("dictated: " + said.kind, value, at))

    for said in rng.sample(OWN_LINES, THREADS):
        value = rng.choice(said.values)
        at = free()
        slots[at] = Turn(_thread(rng, said.text.format(v=value)), (), rng.choice(ACKS), "fact")
        facts.append(Fact("chat thread: " + said.kind, value, at))

    for control in rng.sample(SHARED, CONTROLS):
        at = free()
        value = rng.choice(control.values)
        slots[at] = Turn(
            rng.choice(control.statements).format(v=value), (), rng.choice(ACKS), "fact"
        )
        facts.append(Fact("control: " + control.kind, value, at))

    return closed_session(rng, seed, turns, agent, slots, facts)


#: The crowded shape's seeds, apart from the other shape's.
CROWDED_TUNING_SEEDS = tuple(range(530, 540))
CROWDED_REPORTING_SEEDS = tuple(range(630, 640))
#: Per crowded session: pastes, short dated statements, names, plain one-liners, controls.
CROWDED_PASTES = 10
CROWDED_DATES = 8
CROWDED_NAMES = 4
CROWDED_PLAIN = 4
CROWDED_CONTROLS = 2

#: Short statements of a date or a time, written as people type them.
DATES: tuple[Said, ...] = (
    Said(
        "date or time, odd format",
        "parents' evening is {v}",
        ("the 3rd of Feb, 14h30", "the 12th of Mar, 18h15"),
    ),
    Said("date or time, odd format", "plumber comes {v}", ("02/03 at 9:15", "11/04 at 7:45")),
    Said("date or time, odd format", "dentist {v}", ("Thu 9am", "Fri 4.30pm")),
    Said("date or time, odd format", "visa expires {v}", ("2027-04-17", "2027-09-03")),
    Said("date or time, odd format", "flight lands {v}", ("Sun 06h40", "Sat 22h05")),
    Said("date or time, odd format", "MOT booked for {v}", ("14.03. 8:00", "21.05. 10:30")),
    Said("date or time, odd format", "kickoff call {v}", ("Mon 3pm CET", "Wed 11am CET")),
    Said("date or time, odd format", "payday is the {v}", ("27th", "25th")),
    Said(
        "date or time, odd format", "the boiler service is on {v}", ("6/11 8-10am", "19/11 1-3pm")
    ),
    Said("date or time, odd format", "school pickup {v} on Fridays", ("15h20", "15h45")),
)
NAMES: tuple[Said, ...] = (
    Said("name", "my landlord is {v}", ("Gwendolyn Ashby", "Radomir Pavlović")),
    Said("name", "{v} is covering for me next week", ("Ngozi Adeyemi", "Søren Dahl")),
    Said("name", "the new PM is {v}", ("Thandiwe Mokoena", "Bartholomew Quist")),
    Said("name", "vet's called {v}", ("Dr Ilse Brandvold", "Dr Kwame Asante")),
    Said("name", "our accountant is {v}", ("Perpetua Ogunleye", "Leopold Wakefield")),
    Said("name", "{v} handles the lease now", ("Marisol Echeverría", "Declan Fitzmaurice")),
)
PLAIN: tuple[Said, ...] = (
    Said("plain one-liner", "spare key is under the {v}", ("terracotta pot", "green watering can")),
    Said("plain one-liner", "the boiler is a {v}", ("Vaillant ecoTEC", "Worcester Greenstar")),
    Said("plain one-liner", "kids' school uses {v} for messages", ("ClassDojo", "Seesaw")),
    Said("plain one-liner", "we're at {v} for the wedding", ("table fourteen", "table eleven")),
    Said("plain one-liner", "the car is the {v}", ("silver Škoda estate", "red Fiat Panda")),
    Said(
        "plain one-liner", "wifi password is on the {v}", ("fridge whiteboard", "hallway corkboard")
    ),
)


def generate_crowded(seed: int, turns: int = TURNS) -> Scenario:
    """A crowded session of ``seed``: many pastes beside short statements the user typed.
    A draw whose filler happens to say one of the values (a number in the assistant's prose)
    is drawn again, from the next of the seed's own streams."""
    if turns < 120:
        raise ValueError("a session has at least 120 turns")
    for stream in range(10):
        try:
            return _crowded(seed, turns, random.Random(seed + 100_000 * stream))
        except AssertionError:
            continue
    raise AssertionError(f"seed {seed}: no draw keeps every value unique")


def _crowded(seed: int, turns: int, rng: random.Random) -> Scenario:
    agent = a.AGENTS[seed % len(a.AGENTS)]
    half = turns // 2
    slots: dict[int, Turn] = {}
    facts: list[Fact] = []

    def place(kind: str, text: str, value: str) -> None:
        at = rng.choice([t for t in range(1, half) if t not in slots])
        slots[at] = Turn(text, (), rng.choice(ACKS), "fact")
        facts.append(Fact(kind, value, at))

    shapes = [PASTE_FORMATS[(seed + i) % len(PASTE_FORMATS)] for i in range(CROWDED_PASTES)]
    settings = rng.sample(SETTINGS, CROWDED_PASTES)
    for setting, shape in zip(settings, shapes, strict=True):
        value = rng.choice(setting.values)
        place("paste: " + shape, _pasted(rng, setting, value, shape), value)
    for frames, count in ((DATES, CROWDED_DATES), (NAMES, CROWDED_NAMES), (PLAIN, CROWDED_PLAIN)):
        for said in rng.sample(frames, count):
            value = rng.choice(said.values)
            place(said.kind, said.text.format(v=value), value)
    for control in rng.sample(SHARED, CROWDED_CONTROLS):
        value = rng.choice(control.values)
        text = rng.choice(control.statements).format(v=value)
        place("control: " + control.kind, text, value)
    return closed_session(rng, seed, turns, agent, slots, facts)


def main(argv: list[str] | None = None) -> None:
    shape = argparse.ArgumentParser(add_help=False)
    shape.add_argument("--crowded", action="store_true")
    known, rest = shape.parse_known_args(argv)
    crowded = known.crowded
    generator_main(
        rest,
        command="pasted-facts" + (" --crowded" if crowded else ""),
        about=__doc__,
        headline=(
            "many pastes beside short typed statements"
            if crowded
            else "pasted blocks, odd number formats, dictation and chat threads"
        ),
        generate=generate_crowded if crowded else generate,
        tuning=CROWDED_TUNING_SEEDS if crowded else TUNING_SEEDS,
        reporting=CROWDED_REPORTING_SEEDS if crowded else REPORTING_SEEDS,
        turns=TURNS,
    )


if __name__ == "__main__":
    main()
