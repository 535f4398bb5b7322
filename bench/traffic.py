"""Realistic, varied sessions for tuning and reporting what the summary keeps of the user.

A session is a tool-using agent on an 8k model, 250 to 300 turns. In its first half the user
states about forty facts of many kinds, in many registers, written as people write to an
agent rather than to fit any rule: the name they go by (accented and non-Latin ones too),
places, their people, preferences, constraints, who owns what (no I, my or we), facts inside
questions ("should I book the Kraków office, since that's where Anselm's team sits?") and
inside requests of many shapes ("pls forward the incident report to Ottoline in legal"),
deadlines and amounts in words, long lower-case messages without punctuation with the fact in
the middle, statements in a dozen languages and five scripts (French, German, Spanish,
Portuguese, Italian, Polish, Dutch, Russian, Japanese, Chinese, Korean), and corrections of
many phrasings: naming the old value or not, "instead", "scratch that", "forget what I said
about …", "… is now …", in other languages, and bare ones said right after the slip ("make
that Thursday instead"). Around them the user makes routine requests (grep this trace, rerun
that job) and small talk, the assistant answers in prose of many shapes, and tools return
logs, JSON, tables, CSV, diffs and stack traces full of ids, numbers and other people's names
and cities.

Every fact has a probe (the value that must be in the last prompt, in the summary or raw);
a correction also has the old value, which must never be presented as current: a line of the
prompt that holds the old value and not the new one counts against it.

The rules of the summariser were tuned on :data:`TUNING_SEEDS` (and, before this generator
was widened, on :data:`LOOKED_AT_SEEDS`); :data:`REPORTING_SEEDS` were never looked at while
tuning. Only the standard library is used.
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
TUNING_SEEDS = tuple(range(10))
#: Reported, then looked at (corrections' old values stayed current, facts run on in one
#: message were lost with a correction), on the narrower generator before this one: tuned on
#: since, so no longer held out.
LOOKED_AT_SEEDS = (*range(100, 110), *range(200, 210), *range(300, 310), *range(400, 410))
REPORTING_SEEDS = tuple(range(700, 710))

#: The kinds of facts, in the order reports list them.
FACT_KINDS = (
    "name",
    "unicode name",
    "place",
    "relation",
    "preference",
    "constraint",
    "ownership",
    "inside a question",
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
    "Aoife",
    "Bích",
    "Ülkü",
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
    "Gwendolyn",
    "Casimir",
    "Ottoline",
    "Florentyna",
    "Barnabas",
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
    "Tbilisi",
    "Medellín",
    "Tallinn",
    "Bratislava",
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
    ("ISO dates", "ISO dates in every report"),
    ("short commit subjects", "short commit subjects, under fifty characters"),
)
_CONSTRAINTS = (
    ("release-train", "never push straight to the release-train branch"),
    ("ledger_entries", "don't touch the ledger_entries table, billing shares it"),
    ("GPL", "no GPL dependencies, legal will not sign off"),
    ("Fridays", "no deploys on Fridays"),
    ("staging-eu", "keep staging-eu untouched until the audit is over"),
    ("root account", "never use the root account for anything scripted"),
    ("cron on the bastion", "nothing new goes into cron on the bastion host"),
    ("read replicas", "reports only run against the read replicas, not the primary"),
    ("business hours", "the primary is not restarted during business hours"),
    ("phones home", "nothing that phones home, the client audits outbound traffic"),
    ("us-east-1", "stay out of us-east-1, that account is frozen"),
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
            "finance gave us forty thousand for the year, can you keep the forecast under that?",
        ),
    ),
    (
        "twelve engineers",
        (
            "we have twelve engineers on the pager rotation",
            "the org is twelve engineers total",
            "with only twelve engineers is a weekly on-call even fair?",
        ),
    ),
    (
        "three hundred nodes",
        (
            "the fleet is three hundred nodes at peak",
            "prod peaks at three hundred nodes",
            "size the alerts for three hundred nodes, thats our peak",
        ),
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
    (
        "six weeks",
        (
            "the freeze lasts six weeks so plan the upgrades around it",
            "could we fit the upgrade in before the freeze? it is six weeks long",
        ),
    ),
)
_ARCHITECTURES = (
    "arm64 graviton boxes",
    "the old sparc cluster",
    "spot instances only",
    "a single availability zone",
    "bare metal in the colo",
    "windows server 2019",
    "postgres eleven",
    "an on-prem kafka",
)
#: (probe, language, sentence): statements and questions in other languages and scripts.
_FOREIGN = (
    ("Chantal", "fr", "Ma responsable s'appelle {v}, elle valide toutes les mises en prod."),
    ("Straßburg", "de", "Unser Büro ist seit Januar in {v}, nicht mehr in der Zentrale."),
    ("Montevideo", "es", "El equipo de soporte trabaja desde {v}, así que ojo con los horarios."),
    ("Benedita", "pt", "Quem aprova os contratos é a {v}, não mande nada sem ela."),
    ("lunedì", "it", "Il rilascio si fa sempre di {v} mattina, mai di venerdì."),
    ("Wrocław", "pl", "Nasze drugie biuro jest we {v}, tam siedzi cały zespół QA."),
    ("Utrecht", "nl", "Het datacenter staat in {v}, dus latency naar de VS is hoog."),
    ("札幌", "ja", "うちのインフラチームは{v}にいるので、朝早くの連絡は避けてください。"),
    ("高橋", "ja", "本番環境へのデプロイは{v}さんの承認が必要です"),
    # Chinese is written with full-width commas, and Russian with Cyrillic letters.
    ("李娜", "zh", "这个项目的负责人是{v}，有问题直接找她。"),  # noqa: RUF001
    ("成都", "zh", "我们的测试服务器都在{v}，所以延迟会比较高"),  # noqa: RUF001
    ("Новосибирск", "ru", "Резервный дата-центр у нас в {v}, не забудь про часовой пояс."),  # noqa: RUF001
    ("부산", "ko", "다음 달 워크숍은 {v}에서 열려요."),
    ("Annecy", "fr", "tu peux réserver une salle à {v} pour jeudi ? toute l'équipe sera là-bas"),
    ("Ewelina", "pl", "możesz przypomnieć wszystkim, że budżet zatwierdza {v}?"),
    (
        "Dortmund",
        "de",
        "kannst du den Kunden fragen, ob das Meeting in {v} bleibt? da sitzt deren IT",
    ),
    ("Cádiz", "es", "¿puedes mandarle el informe a Lucía? ella coordina todo desde {v}"),
)
_DISTRACTOR_PEOPLE = ("Alice Brandt", "Marta Kowalska", "Kenji Watanabe", "Omar Haddad")
_DISTRACTOR_CITIES = ("Frankfurt", "Dublin", "Singapore", "Ohio", "Tokyo", "Virginia")

# --- how a user says things ----------------------------------------------------------------
_NAME = (
    "btw I'm {v}, that's what everyone here calls me",
    "you can call me {v}",
    "name's {v}. sign the status reports with that please",
    "Please address me as {v} in anything you draft.",
    "everyone just calls me {v}",
    "i go by {v} at work, the account name is my legal one",
    "{v} here, I'm the one who'll be bugging you this week",
    "oh and sign anything you draft for me as {v}",
)
_UNICODE_NAME = (
    "{v} is on the platform team with me",
    "the contractor helping us is {v}",
    "our designer is {v}, send mockups there",
    "Please credit {v} in the release notes.",
    "ask {v} about the vpn, they set it up",
    "i think {v} already fixed that in staging last week",
    "cc {v} on the incident report",
    "{v} joined the data team on monday, be nice",
)
_PLACE = (
    "I'm working from {v} this month, so mornings are early for me.",
    "our new office is in {v}",
    "the whole ops team sits in {v}",
    "heads up: the customer's data has to stay in {v}",
    "im flying to {v} tomorrow so ill be slow to reply",
    "we're hosting the hackathon in {v} this year",
    "the pilot customer is headquartered in {v}",
    "most of our users are around {v}, so optimise for that region",
)
_RELATION = (
    "my {r} is {v}, loop her in on anything risky",
    "{v} is my {r}, by the way",
    "fyi {v} — my {r} — signs off on the budget",
    "I report to {v}; they're my {r}.",
    "{v} (my {r}) wants weekly updates on this",
    "talked to my {r} {v} this morning and she's fine with the plan",
    "if i'm out, ask {v}, my {r}, she knows the whole setup",
    "ugh my {r} {v} keeps asking for the numbers",
)
_PREFERENCE = (
    "I prefer {v}.",
    "i'd rather have {v}",
    "Please use {v} from now on.",
    "small thing but I really like {v}",
    "could you stick to {v}? easier for me",
    "{v} please, always",
)
_CONSTRAINT = (
    "Rule: {v}.",
    "one thing — {v}",
    "please remember {v}",
    "hard rule from security: {v}",
    "whatever you do, {v}",
    "just so you know, {v}",
    "the client was very clear: {v}",
    "{v}. learned that one the hard way",
)
_OWNERSHIP = (
    "{p} owns the {t}.",
    "the {t} belongs to {p}'s team",
    "{t} is {p}'s responsibility",
    "{p} handles the {t}, ask there first",
    "anything about the {t} goes through {p}",
    "if the {t} breaks it's {p} you want",
    "{p} looks after the {t} since the reorg",
)
#: A fact inside a question: ``{p}`` a person and ``{c}`` a place; the first named is the probe.
_IN_QUESTION = (
    "should I book the {c} office for the offsite, since that's where {p}'s team sits?",
    "is it fine to tell the vendor that {p} is our contact for billing from now on?",
    "do you think we could run the demo out of {c}? all of the client's people are based there",
    "since {p} is on leave next week, who should sign off on the release?",
    "what time is it in {c} right now? our on-call engineer is there and i don't want to wake them",
    "would {p} be the right reviewer here, she wrote the original scheduler?",
    "can we even keep backups in {c} with the data residency rules the client has?",
    "how do i tell {p} that the migration slipped, she's the one who promised it to the board",
    "given that {p} approves every schema change, should we ping them before the migration?",
    "is the {c} region big enough for the pilot? that's where the customer is",
)
#: A fact inside a request, of many shapes.
_IN_REQUEST = (
    "can you remind the team that {p} is out until the twentieth?",
    "could you draft a note saying the kickoff is in {c} this year",
    "when you write the runbook, mention that {p} is the escalation contact",
    "draft an email to {p} about the renewal, she's the one who negotiates with the vendor",
    "please add {p} as a reviewer, he owns the auth code",
    "put {c} as the location on the retro invite",
    "set up a reminder for me to call {p} about the contract",
    "write the changelog entry and thank {p} for the fix",
    "pls forward the incident report to {p} in legal",
    "update the README so it says the support team is in {c}",
    "ping {p} when the build is green, she's waiting on it to cut the release",
    "open a ticket for {p}'s team about the flaky export, they maintain it",
)
_DEADLINE = (
    "{j} has to be finished {v}.",
    "heads up, {j} is due {v}",
    "we promised {j} {v}",
    "legal wants {j} wrapped up {v}, no slipping",
    "can we get {j} done {v}? that's what i told the board",
    "{j} needs to land {v} or we lose the slot",
)
#: Long lower-case messages without punctuation, the fact somewhere in the middle:
#: ``{v}`` an architecture, ``{p}`` a person, ``{c}`` a place.
_RAMBLING = (
    "so yeah i was talking to the folks upstairs and it turns out the whole thing has to run "
    "on {v} because thats what security signed off on last year so keep that in mind when you "
    "pick instance types and stuff",
    "ok long story short the vendor call went fine i guess but the one thing that came out of "
    "it is we are stuck with {v} for at least another year so dont plan anything that needs "
    "something else",
    "honestly i dont love it but after all the back and forth we are going with {v} for prod "
    "and nobody wants to reopen that discussion so lets just build around it",
    "ok so i just got off a call that was mostly nothing but the one thing you should know is "
    "{p} is taking over the vendor account from next week so anything contract related goes to "
    "them now anyway how are the builds looking",
    "sorry for the wall of text but ive been thinking about this all morning and the real "
    "problem is the staging cluster lives in {c} and everything we test there gets extra "
    "latency so the numbers we have been staring at are kind of meaningless",
    "right so recap from the planning meeting nothing decided on the roadmap yet lots of "
    "arguing about priorities but {p} will run the incident reviews from now on which i think "
    "is good and otherwise same as before i guess",
    "not sure if this matters but the reason the old dashboards look weird is that half the "
    "traffic used to come through {c} before we moved the cdn and the graphs never got "
    "relabelled so dont trust anything before june",
    "i keep forgetting to mention this but the reason we cant just upgrade is {v} and the "
    "vendor wont support anything newer until they finish their own migration which could be "
    "ages",
)
#: (kind of value, original phrasings, corrections that say what they revise (naming the old
#: value or not), bare corrections that only make sense right after the original).
_CORRECTABLE = (
    (
        "place",
        (
            "the offsite is in {old} this year",
            "we're doing the offsite in {old}, venue is booked",
            "offsite's in {old} btw",
        ),
        (
            "actually, not {old} — the offsite moved to {new}",
            "correction: the offsite is in {new}, not {old}",
            "scratch that, offsite is {new} now",
            "forget what I said about the offsite, it's going to be in {new}",
            "change of plans, we're doing the offsite in {new} instead",
            "the offsite is now in {new}",
            "en fait l'offsite sera à {new}, pas à {old}",
            "Korrektur: das Offsite ist in {new}",
        ),
        ("make that {new} instead", "sorry, {new}, not {old}", "no wait — {new}"),
    ),
    (
        "deadline",
        ("the pentest report is due {old}", "pentest report has to be in by {old}"),
        (
            "actually the pentest report is due {new}, not {old}",
            "update: pentest report moved to {new}",
            "they pushed the pentest report back to {new}",
            "the pentest deadline is {new} now",
            "ignore what i said about the pentest report date, it's {new}",
        ),
        ("make that {new} instead", "sorry, i meant {new}"),
    ),
    (
        "owner",
        ("{old} owns the payments dashboard", "the payments dashboard is {old}'s"),
        (
            "correction: {new} owns the payments dashboard now, not {old}",
            "actually it's {new} who owns the payments dashboard",
            "{new} took over the payments dashboard from {old}",
            "forget what I said about the payments dashboard, {new} has it",
            "the payments dashboard is {new}'s now",
        ),
        ("sorry, i mean {new}, not {old}", "oops, {new} i mean"),
    ),
    (
        "amount",
        ("the load test budget is {old}", "we got {old} for the load test"),
        (
            "wait, I got that wrong — the load test budget is {new}, not {old}",
            "sorry, load test budget is actually {new}",
            "the load test budget got cut to {new}",
            "load test budget: {new}, finance just confirmed",
        ),
        ("make that {new}", "sorry, {new} not {old}"),
    ),
    (
        "person",
        ("the new hire starting next month is {old}", "our new hire is called {old}"),
        (
            "my mistake, the new hire is {new}, not {old}",
            "correction: the new hire's name is {new}",
            "turns out the new hire is {new}, hr mixed up the names",
            "hr says the new hire is actually {new}",
        ),
        ("sorry, {new}, not {old}",),
    ),
    (
        "day",
        ("the retro is on {old} this sprint", "let's keep the retro on {old}"),
        (
            "let's move the retro to {new}",
            "retro's on {new} from now on",
            "the retro is on {new} now, not {old}",
        ),
        ("make that {new} instead", "actually {new} works better"),
    ),
    (
        "time",
        ("standup is at {old} every day", "daily standup is {old}"),
        (
            "standup moved to {new}",
            "we're doing standup at {new} from now on",
            "scratch what I said earlier, standup is at {new}",
        ),
        ("make that {new} instead", "no wait, {new}"),
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
    "day": ("Tuesday", "Wednesday", "Thursday"),
    "time": ("half past nine", "ten fifteen", "eleven sharp"),
}
#: How many turns after the original a correction that does not say what it revises comes.
_BARE_WITHIN = 2

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

    facts: list[tuple[str, str, str]] = []  # kind, probe, text

    def add(kind: str, probe: str, text: str) -> None:
        facts.append((kind, probe, text))

    def with_people_and_places(kind: str, template: str) -> None:
        """A template naming a person ``{p}``, a place ``{c}`` or both: the first named is
        the probe."""
        p, c = person(), place()
        probe = (
            p
            if template.find("{p}") >= 0
            and (template.find("{c}") < 0 or template.find("{p}") < template.find("{c}"))
            else c
        )
        add(kind, probe, template.format(p=p, c=c))

    v = rng.choice(_LATIN_NAMES)
    add("name", v, rng.choice(_NAME).format(v=v))
    for v in rng.sample(_UNICODE_NAMES, 3):
        add("unicode name", v, rng.choice(_UNICODE_NAME).format(v=v))
    for template in rng.sample(_PLACE, 2):
        v = place()
        add("place", v, template.format(v=v))
    for r, template in zip(rng.sample(_RELATIONS, 3), rng.sample(_RELATION, 3), strict=True):
        v = person()
        add("relation", v, template.format(v=v, r=r))
    for (probe, v), template in zip(
        rng.sample(_PREFERENCES, 3), rng.sample(_PREFERENCE, 3), strict=True
    ):
        add("preference", probe, template.format(v=v))
    for (probe, v), template in zip(
        rng.sample(_CONSTRAINTS, 3), rng.sample(_CONSTRAINT, 3), strict=True
    ):
        add("constraint", probe, template.format(v=v))
    for thing, template in zip(rng.sample(_THINGS, 3), rng.sample(_OWNERSHIP, 3), strict=True):
        v = person()
        add("ownership", v, template.format(p=v, t=thing))
    for template in rng.sample(_IN_QUESTION, 3):
        with_people_and_places("inside a question", template)
    for template in rng.sample(_IN_REQUEST, 3):
        with_people_and_places("inside a request", template)
    for v, job in zip(rng.sample(_DEADLINES, 2), rng.sample(_PROJECTS, 2), strict=True):
        add("deadline in words", v, rng.choice(_DEADLINE).format(v=v, j=job))
    for probe, sentences in rng.sample(_AMOUNTS, 2):
        add("number in words", probe, rng.choice(sentences))
    architectures = list(rng.sample(_ARCHITECTURES, 3))
    for template in rng.sample(_RAMBLING, 3):
        if "{v}" in template:
            v = architectures.pop()
            add("rambling", v, template.format(v=v))
        else:
            with_people_and_places("rambling", template)
    for probe, _, template in rng.sample(_FOREIGN, 3):
        add("other language", probe, template.format(v=probe))
    # Order the plain facts in time; corrections come after what they correct.
    rng.shuffle(facts)
    turns = sorted(rng.sample(range(1, first_half), len(facts)))
    dated = [
        Fact(kind, probe, turn, text)
        for (kind, probe, text), turn in zip(facts, turns, strict=True)
    ]
    for subject, originals, fixes, bare in rng.sample(_CORRECTABLE, 4):
        old, new = rng.sample(_CORRECTION_VALUES[subject], 2)
        before = rng.randint(1, first_half - 12)
        dated.append(Fact("corrected", old, before, rng.choice(originals).format(old=old)))
        if rng.random() < 0.3:
            # Said right after, the way one fixes a slip, in a message of its own: no need to
            # say what it revises.
            taken = {fact.turn for fact in dated}
            later = before + rng.randint(1, _BARE_WITHIN)
            while later in taken:
                later += 1
            fix = rng.choice(bare)
        else:
            later, fix = rng.randint(before + 1, first_half), rng.choice(fixes)
        dated.append(Fact("correction", new, later, fix.format(old=old, new=new), old))
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
