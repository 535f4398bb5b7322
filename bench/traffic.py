"""Realistic, varied sessions for tuning and reporting what the summary keeps of the user.

A session is a tool-using agent on an 8k model, 250 to 300 turns. In its first half the user
states about thirty facts of many kinds, in many registers: the name they go by (accented and
non-Latin ones too), places, their people, preferences, constraints, who owns what (no I, my
or we), facts inside questions and requests, deadlines and amounts in words, long lower-case
messages without punctuation, several languages, and corrections that revise an earlier fact
("actually, not X — Y"). Around them the user makes routine requests (grep this trace, rerun
that job) and small talk, the assistant answers in prose of many shapes, and tools return
logs, JSON, tables, CSV, diffs and stack traces full of ids, numbers and other people's names
and cities.

Every fact has a probe (the value that must be in the last prompt, in the summary or raw);
a correction also has the old value, which must never be presented as current: a line of the
prompt that holds the old value and not the new one counts against it.

The rules of the summariser were tuned on :data:`TUNING_SEEDS` (and, once, on
:data:`LOOKED_AT_SEEDS`); :data:`REPORTING_SEEDS` were never looked at while tuning.
Only the standard library is used.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass

from bench import synth

SYSTEM = (
    "You are a platform engineering assistant for a small team. Use the tools to look "
    "things up before you answer, and keep answers short."
)
TUNING_SEEDS = (0, 1, 2, 3, 4)
#: Reported, then looked at (corrections' old values stayed current, facts run on in one
#: message were lost with a correction): tuned on since, so no longer held out.
LOOKED_AT_SEEDS = (*range(100, 110), *range(200, 210), *range(300, 310))
REPORTING_SEEDS = tuple(range(400, 410))

#: The kinds of facts, in the order reports list them.
FACT_KINDS = (
    "name",
    "unicode name",
    "place",
    "relation",
    "preference",
    "constraint",
    "ownership",
    "inside a request",
    "deadline in words",
    "number in words",
    "rambling",
    "other language",
    "correction",
)


@dataclass(frozen=True)
class Fact:
    kind: str
    probe: str
    turn: int
    text: str
    #: A correction's superseded value.
    old_probe: str | None = None


@dataclass(frozen=True)
class Session:
    seed: int
    conversation: synth.Conversation
    facts: tuple[Fact, ...]


# --- values -------------------------------------------------------------------------------
# Pools per kind; a session draws without replacement, and no value of one pool is a
# substring of another's or of the filler (checked by the unit test of this module).
_LATIN_NAMES = ("Rosalind", "Evander", "Griselda", "Percival", "Henrietta", "Ambrose", "Isolde")
_UNICODE_NAMES = (
    "Zoë",
    "Søren",
    "Đorđe",
    "Łucja",
    "Ngọc Anh",
    "Дмитрий",
    "王芳",
    "Αθηνά",
    "Siobhán",
    "Çağla",
    "たかし",
    "Jörg",
)
_PEOPLE = (
    "Marguerite",
    "Theodoric",
    "Priyanka",
    "Oluwaseun",
    "Bogdana",
    "Fitzgerald",
    "Mireille",
    "Kwabena",
    "Ingeborg",
    "Tancredi",
    "Wilhelmina",
    "Anselm",
    "Radomir",
    "Esperanza",
    "Leopoldine",
    "Cuthbert",
)
_PLACES = (
    "Kraków",
    "Malmö",
    "Reykjavík",
    "São Paulo",
    "Tromsø",
    "Ushuaia",
    "Hobart",
    "Windhoek",
    "Asunción",
    "Valparaíso",
    "Plovdiv",
    "Kaunas",
    "Zaragoza",
    "Dunedin",
)
_RELATIONS = (
    "manager",
    "co-founder",
    "tech lead",
    "sister",
    "mentor",
    "skip-level",
    "pairing buddy",
)
_PREFERENCES = (
    ("bullet points", "answers as bullet points, not paragraphs"),
    ("British spelling", "British spelling in anything customer-facing"),
    ("24-hour clock", "times on the 24-hour clock"),
    ("no emojis", "no emojis in commit messages"),
    ("metric units", "metric units everywhere"),
    ("squash merges", "squash merges over merge commits"),
    ("dark mode screenshots", "dark mode screenshots in the docs"),
    ("tabs", "tabs over spaces in the Makefiles"),
)
_CONSTRAINTS = (
    ("release-train", "never push straight to the release-train branch"),
    ("ledger_entries", "don't touch the ledger_entries table, billing shares it"),
    ("GPL", "no GPL dependencies, legal will not sign off"),
    ("Fridays", "no deploys on Fridays"),
    ("staging-eu", "keep staging-eu untouched until the audit is over"),
    ("root account", "never use the root account for anything scripted"),
    ("cron on the bastion", "nothing new goes into cron on the bastion host"),
)
_THINGS = (
    "billing service",
    "on-call rota",
    "Terraform state",
    "status page",
    "SSO integration",
    "nightly export",
    "mobile release",
    "search index",
    "vendor contracts",
    "incident postmortems",
)
_DEADLINES = (
    "by the end of next quarter",
    "before the Easter break",
    "by the first Monday in March",
    "two weeks before Christmas",
    "by mid-August",
    "before the summer offsite",
    "by the end of the fiscal year",
    "within ten working days",
)
_PROJECTS = ("the audit", "the migration", "the SOC 2 report", "the rewrite", "the launch")
_AMOUNTS = (
    (
        "forty thousand",
        (
            "the budget for the cluster is forty thousand euros, not a cent more",
            "Keep the whole migration under forty thousand dollars.",
        ),
    ),
    (
        "twelve engineers",
        ("we have twelve engineers on the pager rotation", "the org is twelve engineers total"),
    ),
    (
        "three hundred nodes",
        ("the fleet is three hundred nodes at peak", "prod peaks at three hundred nodes"),
    ),
    (
        "eighty dollars",
        (
            "the staging box must cost under eighty dollars a month",
            "cap staging at eighty dollars a month",
        ),
    ),
    (
        "seventeen customers",
        (
            "only seventeen customers are on the enterprise plan",
            "seventeen customers still use the v1 API",
        ),
    ),
    (
        "two and a half million",
        (
            "the backfill is about two and a half million rows",
            "the orders table holds two and a half million rows",
        ),
    ),
    ("ninety days", ("retention for the logs is ninety days", "we keep audit logs ninety days")),
)
_ARCHITECTURES = (
    "arm64 graviton boxes",
    "the old sparc cluster",
    "spot instances only",
    "a single availability zone",
    "bare metal in the colo",
    "windows server 2019",
)
_FOREIGN = (
    ("Chantal", "fr", "Ma responsable s'appelle {v}, elle valide toutes les mises en prod."),
    ("Straßburg", "de", "Unser Büro ist seit Januar in {v}, nicht mehr in der Zentrale."),
    ("Montevideo", "es", "El equipo de soporte trabaja desde {v}, así que ojo con los horarios."),
    ("Benedita", "pt", "Quem aprova os contratos é a {v}, não mande nada sem ela."),
    ("lunedì", "it", "Il rilascio si fa sempre di {v} mattina, mai di venerdì."),
    ("Wrocław", "pl", "Nasze drugie biuro jest we {v}, tam siedzi cały zespół QA."),
    ("Utrecht", "nl", "Het datacenter staat in {v}, dus latency naar de VS is hoog."),
)
_DISTRACTOR_PEOPLE = ("Alice Brandt", "Marta Kowalska", "Kenji Watanabe", "Omar Haddad")
_DISTRACTOR_CITIES = ("Frankfurt", "Dublin", "Singapore", "Ohio", "Tokyo", "Virginia")

# --- how a user says things ----------------------------------------------------------------
_NAME = (
    "btw I'm {v}, that's what everyone here calls me",
    "you can call me {v}",
    "name's {v}. sign the status reports with that please",
    "Please address me as {v} in anything you draft.",
)
_PLACE = (
    "I'm working from {v} this month, so mornings are early for me.",
    "our new office is in {v}",
    "the whole ops team sits in {v} now",
    "heads up: the customer's data has to stay in {v}",
)
_RELATION = (
    "my {r} is {v}, loop her in on anything risky",
    "{v} is my {r}, by the way",
    "fyi {v} — my {r} — signs off on the budget",
    "I report to {v}; they're my {r}.",
)
_PREFERENCE = (
    "I prefer {v}.",
    "i'd rather have {v}",
    "Please use {v} from now on.",
    "small thing but I really like {v}",
)
_CONSTRAINT = (
    "Rule: {v}.",
    "one thing — {v}",
    "please remember {v}",
    "hard rule from security: {v}",
)
_OWNERSHIP = (
    "{p} owns the {t}.",
    "the {t} belongs to {p}'s team",
    "{t} is {p}'s responsibility now",
    "{p} handles the {t}, ask there first",
    "anything about the {t} goes through {p}",
)
_IN_REQUEST = (
    "can you remind the team that {p} is out until the twentieth?",
    "could you draft a note saying the kickoff is in {c} this year",
    "since {p} approves all schema changes, should we ping them before the migration?",
    "can you check whether the {c} region has capacity — that's where the pilot customer is",
    "when you write the runbook, mention that {p} is the escalation contact",
    "would it make sense to cache more, given the dashboards are only read from {c}?",
)
_DEADLINE = (
    "{j} has to be finished {v}.",
    "heads up, {j} is due {v}",
    "we promised {j} {v}",
    "legal wants {j} wrapped up {v}, no slipping",
)
_RAMBLING = (
    "so yeah i was talking to the folks upstairs and it turns out the whole thing has to run "
    "on {v} because thats what security signed off on last year so keep that in mind when you "
    "pick instance types and stuff",
    "ok long story short the vendor call went fine i guess but the one thing that came out of "
    "it is we are stuck with {v} for at least another year so dont plan anything that needs "
    "something else",
    "honestly i dont love it but after all the back and forth we are going with {v} for prod "
    "and nobody wants to reopen that discussion so lets just build around it",
)
#: (kind of value, original phrasing, correction phrasings naming the old value or not).
_CORRECTABLE = (
    (
        "place",
        "the offsite is in {old} this year",
        (
            "actually, not {old} — the offsite moved to {new}",
            "correction: the offsite is in {new}, not {old}",
            "scratch that, offsite is {new} now",
        ),
    ),
    (
        "deadline",
        "the pentest report is due {old}",
        (
            "actually the pentest report is due {new}, not {old}",
            "update: pentest report moved to {new}",
        ),
    ),
    (
        "owner",
        "{old} owns the payments dashboard",
        (
            "correction: {new} owns the payments dashboard now, not {old}",
            "actually it's {new} who owns the payments dashboard",
        ),
    ),
    (
        "amount",
        "the load test budget is {old}",
        (
            "wait, I got that wrong — the load test budget is {new}, not {old}",
            "sorry, load test budget is actually {new}",
        ),
    ),
    (
        "person",
        "the new hire starting next month is {old}",
        (
            "my mistake, the new hire is {new}, not {old}",
            "correction: the new hire's name is {new}",
        ),
    ),
)
_CORRECTION_VALUES = {
    "place": ("Lyon", "Porto", "Gothenburg", "Bergen", "Ghent", "Cluj"),
    "deadline": (
        "the end of June",
        "the second week of May",
        "early October",
        "the last Friday in April",
        "New Year's Eve",
    ),
    "owner": ("Ravindra", "Sunniva", "Octavian", "Philomena", "Gustavo"),
    "amount": ("nine thousand euros", "fifteen thousand euros", "six thousand euros"),
    "person": ("Evangeline", "Bartosz", "Nkechi", "Lorcan"),
}

_ROUTINE = (
    "grep the logs for trace {hex}",
    "rerun {job}",
    "can you check why {svc} is failing again",
    "show me the diff for {path}",
    "what's the p99 on {endpoint} now?",
    "tail worker-{n}.log",
    "ok try again with --verbose",
    "bump {pkg} to {ver}",
    "open a PR for that",
    "why did test_{word}_{word2} fail?",
    "list the pods in {ns}",
    "restart {svc} please",
    "Can you look at the last {n} lines of the {svc} log?",
    "what does that stack trace mean",
    "compare this run with build #{n}",
    "Run the migration dry-run against {ns}.",
    "check the disk usage on db-{n}",
    "is {svc} healthy now?",
    "Please summarise what changed in {path} since yesterday.",
    "ok and the error rate on {endpoint}?",
    "kill job {job} and start it again with {n} workers",
    "search the codebase for {word}_{word2}",
)
_SMALL_TALK = (
    "thanks!",
    "lol",
    "nice, ty",
    "ugh, mondays",
    "brb coffee",
    "haha ok",
    "good morning",
    "that took a while",
    "appreciate it",
    "cool cool",
    "sorry, was in a meeting",
    "merci !",
    "danke",
    "ok",
    "great, that's what I thought",
    "hmm interesting",
    "perfect",
    "how's your day going",
    "sounds good to me",
    "yep",
)
_WORDS = (
    "cache",
    "queue",
    "retry",
    "token",
    "shard",
    "index",
    "batch",
    "export",
    "report",
    "lease",
    "socket",
    "webhook",
    "ledger",
    "invoice",
    "parser",
)
_SERVICES = ("api-gateway", "ingest", "billing-worker", "auth", "search-api", "scheduler")
_NAMESPACES = ("prod-eu", "prod-us", "staging", "batch", "observability")
_PACKAGES = ("httpx", "sqlalchemy", "pydantic", "uvicorn", "redis", "boto3")
_ENDPOINTS = ("/v1/orders", "/v1/search", "/healthz", "/v2/invoices", "/v1/sessions")
_TOOLS = ("run_shell", "read_file", "query_logs", "http_get", "query_db", "kubectl")


def _hex(rng: random.Random, length: int = 12) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(length))


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        hex=_hex(rng),
        job=f"{rng.choice(_WORDS)}-{rng.randint(10, 999)}",
        svc=rng.choice(_SERVICES),
        path=f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py",
        endpoint=rng.choice(_ENDPOINTS),
        n=rng.randint(2, 400),
        pkg=rng.choice(_PACKAGES),
        ver=f"{rng.randint(0, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
        word=rng.choice(_WORDS),
        word2=rng.choice(_WORDS),
        ns=rng.choice(_NAMESPACES),
    )


def _routine(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(_SMALL_TALK)
    return _fill(rng, rng.choice(_ROUTINE))


# --- what tools return ------------------------------------------------------------------
def _log(rng: random.Random, lines: int) -> str:
    levels = ("INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG")
    out = []
    for i in range(lines):
        out.append(
            f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
            f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z {rng.choice(levels)} "
            f"[{rng.choice(_SERVICES)}] trace={_hex(rng, 16)} "
            + rng.choice(("request done", "retrying", "lease renewed", "slow query", "cache miss"))
            + f" status={rng.choice((200, 200, 201, 404, 500, 503))} dur_ms={rng.randint(1, 9000)}"
            + (f" user={rng.choice(_DISTRACTOR_PEOPLE)}" if i % 7 == 3 else "")
        )
    return "\n".join(out)


def _json(rng: random.Random, rows: int) -> str:
    return json.dumps(
        {
            "items": [
                {
                    "id": _hex(rng, 8),
                    "owner": rng.choice(_DISTRACTOR_PEOPLE),
                    "region": rng.choice(_DISTRACTOR_CITIES),
                    "status": rng.choice(("running", "failed", "pending")),
                    "cpu": round(rng.random() * 4, 2),
                    "tags": rng.sample(_WORDS, 2),
                }
                for _ in range(rows)
            ],
            "next_cursor": _hex(rng, 20),
        },
        indent=1,
    )


def _table(rng: random.Random, rows: int) -> str:
    out = ["| pod | node | restarts | age | owner |", "|---|---|---|---|---|"]
    for _ in range(rows):
        out.append(
            f"| {rng.choice(_SERVICES)}-{_hex(rng, 5)} | ip-10-0-{rng.randint(0, 255)}-"
            f"{rng.randint(0, 255)} | {rng.randint(0, 40)} | {rng.randint(1, 90)}d | "
            f"{rng.choice(_DISTRACTOR_PEOPLE)} |"
        )
    return "\n".join(out)


def _trace(rng: random.Random, frames: int) -> str:
    out = ["Traceback (most recent call last):"]
    for _ in range(frames):
        out.append(
            f'  File "/srv/app/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py", line '
            f"{rng.randint(1, 900)}, in {rng.choice(_WORDS)}_{rng.choice(_WORDS)}"
        )
        out.append(
            f"    result = await self.{rng.choice(_WORDS)}(request_id={rng.randint(1, 10**6)})"
        )
    out.append(
        f"asyncpg.exceptions.DeadlockDetectedError: deadlock detected (process "
        f"{rng.randint(1000, 99999)} waits for ShareLock on transaction "
        f"{rng.randint(10**5, 10**7)})"
    )
    return "\n".join(out)


def _csv(rng: random.Random, rows: int) -> str:
    out = ["date,region,requests,errors,p99_ms"]
    for _ in range(rows):
        out.append(
            f"2026-10-{rng.randint(1, 31):02d},{rng.choice(_DISTRACTOR_CITIES)},"
            f"{rng.randint(1000, 900000)},{rng.randint(0, 900)},{rng.randint(20, 4000)}"
        )
    return "\n".join(out)


def _diff(rng: random.Random, hunks: int) -> str:
    out = [f"diff --git a/src/{rng.choice(_WORDS)}.py b/src/{rng.choice(_WORDS)}.py"]
    for _ in range(hunks):
        line = rng.randint(1, 500)
        out.append(f"@@ -{line},6 +{line},7 @@")
        out.append(f"-    timeout = {rng.randint(1, 60)}")
        out.append(
            f"+    timeout = settings.{rng.choice(_WORDS)}_timeout  # was {rng.randint(1, 60)}"
        )
        out.append(f"     return {rng.choice(_WORDS)}.{rng.choice(_WORDS)}()")
    return "\n".join(out)


def _tool_output(rng: random.Random) -> str:
    tokens = max(10, min(3500, round(math.exp(rng.gauss(4.9, 1.0)))))
    kind = rng.choice((_log, _json, _table, _trace, _csv, _diff))
    unit = {_log: 40, _json: 70, _table: 35, _trace: 45, _csv: 22, _diff: 45}[kind]
    return kind(rng, max(1, tokens // unit))


# --- what the assistant says -----------------------------------------------------------------
def _assistant(rng: random.Random) -> str:
    svc, job = rng.choice(_SERVICES), f"{rng.choice(_WORDS)}-{rng.randint(10, 999)}"
    shapes = (
        f"Job {job} finished in {rng.randint(1, 59)}m{rng.randint(0, 59)}s with exit code "
        f"{rng.choice((0, 0, 1, 137))}.",
        f"I checked the logs of {svc}: {rng.randint(2, 90)} errors in the last hour, all "
        f"timeouts to db-{rng.randint(1, 9)}. I think the pool is too small; I'd raise it to "
        f"{rng.randint(20, 80)}.",
        "Here is what I found:\n"
        + "\n".join(
            f"- {rng.choice(_SERVICES)}: {rng.choice(('ok', 'degraded', 'restarting'))} "
            f"({rng.randint(1, 99)}% cpu)"
            for _ in range(rng.randint(2, 5))
        ),
        f"The stack trace points at `{rng.choice(_WORDS)}_{rng.choice(_WORDS)}()` — a deadlock "
        "between two writers. Next steps:\n1. add a retry\n2. order the locks\n3. rerun the job",
        f"Done. PR #{rng.randint(100, 9999)} bumps {rng.choice(_PACKAGES)} and fixes the flaky "
        f"test. CI is green on {rng.choice(_NAMESPACES)}.",
        "```python\n"
        f"async def {rng.choice(_WORDS)}(session):\n"
        f"    return await session.get({rng.randint(1, 99)})\n"
        "```\nThis should do it; want me to open a PR?",
        f"Alice Brandt's dashboard shows p99 at {rng.randint(90, 3000)} ms on "
        f"{rng.choice(_ENDPOINTS)} from {rng.choice(_DISTRACTOR_CITIES)}.",
        "Should I also clean up the old replicas, or leave them until tomorrow?",
        f"Sure. Restarted {svc}; it came back healthy after {rng.randint(5, 90)} s.",
        "Good question. Short answer: yes, but only if the migration runs first, otherwise the "
        "new column is missing and every insert fails.",
    )
    return rng.choice(shapes)


# --- facts ---------------------------------------------------------------------------------
def _facts(rng: random.Random, first_half: int) -> list[Fact]:
    people = list(_PEOPLE)
    rng.shuffle(people)
    places = list(_PLACES)
    rng.shuffle(places)

    def person() -> str:
        return people.pop()

    def place() -> str:
        return places.pop()

    facts: list[tuple[str, str, str, str | None]] = []  # kind, probe, text, old

    def add(kind: str, probe: str, text: str, old: str | None = None) -> None:
        facts.append((kind, probe, text, old))

    v = rng.choice(_LATIN_NAMES)
    add("name", v, rng.choice(_NAME).format(v=v))
    for v in rng.sample(_UNICODE_NAMES, 3):
        template = rng.choice(
            (
                "{v} is on the platform team with me",
                "the contractor helping us is {v}",
                "our designer is {v}, send mockups there",
                "Please credit {v} in the release notes.",
            )
        )
        add("unicode name", v, template.format(v=v))
    for _ in range(2):
        v = place()
        add("place", v, rng.choice(_PLACE).format(v=v))
    for r in rng.sample(_RELATIONS, 3):
        v = person()
        add("relation", v, rng.choice(_RELATION).format(v=v, r=r))
    for probe, v in rng.sample(_PREFERENCES, 3):
        add("preference", probe, rng.choice(_PREFERENCE).format(v=v))
    for probe, v in rng.sample(_CONSTRAINTS, 3):
        add("constraint", probe, rng.choice(_CONSTRAINT).format(v=v))
    for thing in rng.sample(_THINGS, 3):
        v = person()
        add("ownership", v, rng.choice(_OWNERSHIP).format(p=v, t=thing))
    for template in rng.sample(_IN_REQUEST, 2):
        v = person() if "{p}" in template else place()
        add("inside a request", v, template.format(p=v, c=v))
    for v, job in zip(rng.sample(_DEADLINES, 2), rng.sample(_PROJECTS, 2), strict=True):
        add("deadline in words", v, rng.choice(_DEADLINE).format(v=v, j=job))
    for probe, sentences in rng.sample(_AMOUNTS, 2):
        add("number in words", probe, rng.choice(sentences))
    for template, v in zip(rng.sample(_RAMBLING, 2), rng.sample(_ARCHITECTURES, 2), strict=True):
        add("rambling", v, template.format(v=v))
    for probe, _, template in rng.sample(_FOREIGN, 2):
        add("other language", probe, template.format(v=probe))
    # Order the plain facts in time; corrections come after what they correct.
    rng.shuffle(facts)
    turns = sorted(rng.sample(range(1, first_half), len(facts) + 5))
    dated = [
        Fact(kind, probe, turn, text, old)
        for (kind, probe, text, old), turn in zip(facts, turns, strict=False)
    ]
    spare = turns[len(facts) :]
    for (subject, original, fixes), at in zip(
        rng.sample(_CORRECTABLE, 4), rng.sample(spare, 4), strict=True
    ):
        old, new = rng.sample(_CORRECTION_VALUES[subject], 2)
        before = rng.randint(1, max(1, at - 8))
        dated.append(Fact("corrected", old, before, original.format(old=old)))
        later = rng.randint(at, first_half)
        dated.append(
            Fact("correction", new, later, rng.choice(fixes).format(old=old, new=new), old)
        )
    return sorted(dated, key=lambda fact: fact.turn)


def _user_message(rng: random.Random, said: list[Fact]) -> str:
    if not said:
        return _routine(rng)
    parts = [fact.text for fact in said]
    shape = rng.random()
    if shape < 0.25:
        parts.append(_fill(rng, rng.choice(_ROUTINE)))
    elif shape < 0.4:
        parts.insert(0, rng.choice(("ok so", "also", "oh and", "one more thing:", "quick note:")))
    return " ".join(parts)


def generate(seed: int, turns: int | None = None) -> Session:
    """One session: 250 to 300 turns unless ``turns`` is given; facts in the first half."""
    rng = random.Random(f"traffic-{seed}")
    count = turns if turns is not None else rng.randint(250, 300)
    facts = _facts(rng, max(20, count // 2))
    built: list[synth.Turn] = []
    for number in range(count):
        said = [fact for fact in facts if fact.turn == number]
        user = _user_message(rng, said)
        steps = []
        for step in range(rng.choice((0, 1, 1, 1, 2, 3))):
            calls = [
                {
                    "id": f"call_{number}_{step}_{i}",
                    "type": "function",
                    "function": {
                        "name": rng.choice(_TOOLS),
                        "arguments": json.dumps({"q": _fill(rng, rng.choice(_ROUTINE))}),
                    },
                }
                for i in range(rng.choice((1, 1, 1, 2)))
            ]
            results = tuple(
                {"role": "tool", "tool_call_id": call["id"], "content": _tool_output(rng)}
                for call in calls
            )
            steps.append(
                synth.ToolStep({"role": "assistant", "content": None, "tool_calls": calls}, results)
            )
        built.append(
            synth.Turn(
                {"role": "user", "content": user},
                tuple(steps),
                {"role": "assistant", "content": _assistant(rng)},
            )
        )
    scored = tuple(fact for fact in facts if fact.kind != "corrected" and fact.turn < count)
    return Session(seed, synth.Conversation(seed, SYSTEM, tuple(built)), scored)


def score(last_prompt: str, facts: tuple[Fact, ...]) -> dict[str, object]:
    """Per kind, the facts whose probe the last prompt holds; per correction, whether its
    new value is there and whether a line presents the old value without the new one."""
    lines = last_prompt.splitlines()
    kinds: dict[str, list[bool]] = {}
    lost: list[str] = []
    old_as_current = 0
    for fact in facts:
        kept = fact.probe in last_prompt
        kinds.setdefault(fact.kind, []).append(kept)
        if not kept:
            lost.append(f"[{fact.kind}] {fact.text}")
        if fact.old_probe is not None and any(
            fact.old_probe in line and fact.probe not in line for line in lines
        ):
            old_as_current += 1
            lost.append(f"[old as current] {fact.text}")
    corrections = sum(fact.old_probe is not None for fact in facts)
    return {
        "by_kind": {kind: (sum(v), len(v)) for kind, v in kinds.items()},
        "kept": sum(sum(v) for v in kinds.values()),
        "facts": len(facts),
        "corrections": corrections,
        "old_as_current": old_as_current,
        "lost": lost,
    }
