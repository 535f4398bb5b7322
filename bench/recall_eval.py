"""Does recall find the source? Sessions where details (URLs, paths, versions, names, numbers,
plain facts) leave the prompt and are asked about later, scored by kind and by whether the
question shares a word with the source.

Each seed makes one session of ordinary varied traffic on gpt-4 (8k): user messages from terse
to rambling, assistant prose of several shapes, tool steps whose results are logs, JSON,
listings or diffs. Early turns state the details; around them are what makes recall hard:

* an earlier question about the same item, which shares its words but not its answer;
* later chatter that mentions the item without the detail;
* details whose answer spans two messages (both must come back);
* many messages that share the question's common words.

At the end, one new turn per item and question form asks about it: ``shared`` questions
share at least one word with the source, ``none`` questions share none (the generator checks
both). An item counts when every message holding its detail has left the prompt (no message
of the prompt but the system message, where the summary is, and the recall block holds it);
it is recalled when the recall block holds all of its detail.

Seeds are split: ``TUNING_SEEDS`` are the ones ranking was tuned on; ``REPORTING_SEEDS`` were
never looked at while tuning, and their figures are the ones to quote.

With ``--embeddings``, the recall-on session runs again in an app whose embeddings API is the
topic-vector fake of the tests (tests/fake_embeddings.py: pets, money, food, health), so the
``none`` questions about those topics can be found by meaning. It is not a language model:
its figures say whether fusion keeps what full text found, not how a real model does.

    python -m bench.recall_eval [--seeds reporting|tuning|1,2,3] [--sqlite] [--embeddings]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from typing import Any

from app.budget.recall import RECALL_HEADING
from app.search.terms import STOP_WORDS
from bench.common import DEFAULT_SERVER, fresh_database, machine, percentile, running_app
from bench.recall import wait_for_embeddings

MODEL = "gpt-4"
RECALL = {"enabled": True, "share": 0.1, "max_hits": 5}
TUNING_SEEDS = (1, 2, 3, 4, 5)
REPORTING_SEEDS = (101, 102, 103, 104, 105, 106)
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """Content words, as recall looks them up (stop words aside), crudely stemmed."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)]
    return word


@dataclass
class Item:
    kind: str
    #: The messages that state the detail: (role, text).
    sources: list[tuple[str, str]]
    #: What must be in the recall block (every one).
    details: list[str]
    shared: str
    none: str
    #: Asked before the detail is given: shares its words, not its answer.
    earlier_question: str
    #: Said later: mentions the item, not its detail.
    mention: str

    def check(self) -> None:
        source = set().union(*(words(text) for _, text in self.sources))
        if not words(self.shared) & source:
            raise ValueError(f"shared question shares nothing: {self.shared!r}")
        common = words(self.none) & source
        if common:
            raise ValueError(f"none question shares {common}: {self.none!r}")
        for detail in self.details:
            if detail in self.mention or detail in self.earlier_question:
                raise ValueError(f"the distractor holds the detail {detail!r}")


_FIRST = ["Ana", "Joaquín", "Priya", "Tomasz", "Chidi", "Mei", "Lars", "Fatima", "Óscar", "Yuki"]
_LAST = ["Oliveira", "Nowak", "Okafor", "Lindqvist", "Haddad", "Tanaka", "García", "Moreau"]
_SERVICES = ["billing", "ingest", "search", "notifier", "ledger", "scheduler", "gateway"]
_HOSTS = ["internal.acme.io", "corp.example.net", "tools.northwind.dev", "infra.contoso.org"]
_BREEDS = ["labrador", "beagle", "spaniel", "terrier", "greyhound"]
_PETS = ["Biscuit", "Pepper", "Mochi", "Zeus", "Luna", "Nacho"]
_CITIES = ["Lisbon", "Kraków", "Osaka", "Tbilisi", "Valparaíso", "Ghent", "Tromsø"]
_RESTAURANTS = ["Casa Verde", "Sattva", "Green Fig", "Blue Lotus", "Herbivore Kitchen"]


def _items(rng: random.Random) -> list[Item]:
    service = rng.sample(_SERVICES, 4)
    host = rng.choice(_HOSTS)
    first, last = rng.sample(_FIRST, 3), rng.sample(_LAST, 3)
    major, minor, patch = rng.randint(1, 9), rng.randint(0, 30), rng.randint(0, 20)
    version = f"{major}.{minor}.{patch}"
    pin = f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    port = rng.randint(2000, 9999)
    ticket = f"{rng.choice(['OPS', 'INC', 'PLAT'])}-{rng.randint(1000, 9999)}"
    amount = rng.randint(12, 95) * 100
    pet, breed = rng.choice(_PETS), rng.choice(_BREEDS)
    city = rng.choice(_CITIES)
    restaurant = rng.choice(_RESTAURANTS)
    path = f"/srv/{service[1]}/conf/{rng.choice(['limits', 'routing', 'quotas'])}.yaml"
    url = f"https://grafana.{host}/d/{rng.randint(100, 999)}x/{service[0]}-latency"
    runbook = f"https://wiki.{host}/runbooks/{service[3]}/failover"
    items = [
        Item(
            "url",
            [("user", f"The dashboard we watch for the {service[0]} service is {url} by the way")],
            [url],
            shared=f"Which dashboard did I say we watch for {service[0]}?",
            none="Where can I see the graphs of response times for that component?",
            earlier_question=f"Do we have a dashboard for {service[0]} somewhere?",
            mention=f"I will keep an eye on the {service[0]} dashboard during the rollout.",
        ),
        Item(
            "url",
            [
                (
                    "assistant",
                    f"Found it. The failover runbook for {service[3]} lives at {runbook}; "
                    "it was last edited three weeks ago.",
                )
            ],
            [runbook],
            shared=f"Send me the {service[3]} runbook link again",
            none="What page tells the on-call person how to switch over when it dies?",
            earlier_question=f"is there a runbook for {service[3]} failover?",
            mention=f"The {service[3]} failover runbook might be out of date, worth a look later.",
        ),
        Item(
            "path",
            [("user", f"limits for {service[1]} are configured in {path}, don't touch the rest")],
            [path],
            shared=f"What file holds the {service[1]} limits?",
            none="Where on disk did I point you to for throttling settings of that component?",
            earlier_question=f"where are the {service[1]} limits configured again?",
            mention=f"Reminder to self: the {service[1]} limits need review next sprint.",
        ),
        Item(
            "version",
            [
                (
                    "user",
                    f"We are stuck on Postgres {version} in production until the freeze ends, "
                    f"and the client library is pinned to {pin}.",
                )
            ],
            [version, pin],
            shared=f"Which Postgres version is production on, {version}?",
            none="Which release of the relational store do we run live, and the driver pin?",
            earlier_question="What Postgres version are we on in production?",
            mention="Upgrading Postgres in production is off the table until after the freeze.",
        ),
        Item(
            "name",
            [
                (
                    "user",
                    f"{first[0]} {last[0]} owns the {service[2]} service now, "
                    f"{first[1]} moved to the data team",
                )
            ],
            [f"{first[0]} {last[0]}"],
            shared=f"Who owns {service[2]} these days?",
            none="Which colleague is responsible for that component since the reshuffle?",
            earlier_question=f"who is the owner of {service[2]}?",
            mention=f"Ownership of {service[2]} came up again in the standup.",
        ),
        Item(
            "number",
            [("assistant", f"The staging database listens on port {port}, not the default.")],
            [str(port)],
            shared="What port does the staging database listen on?",
            none="Which socket number did you find for the pre-production store?",
            earlier_question="do you know what port staging's database uses?",
            mention="Staging database connectivity looked flaky earlier, keep in mind.",
        ),
        Item(
            "number",
            [
                (
                    "user",
                    f"For the record, the outage last Tuesday is tracked as {ticket}; "
                    "legal wants every note about it filed there.",
                )
            ],
            [ticket],
            shared="Which ticket tracks the outage from last Tuesday?",
            none="Under what reference does the incident paperwork go?",
            earlier_question="Was there a ticket opened for Tuesday's outage?",
            mention="People keep asking about Tuesday's outage in the channel.",
        ),
        Item(
            "money",
            [("user", f"Our budget for the offsite in {city} is {amount} euros in total.")],
            [str(amount)],
            shared=f"How big was the budget for the {city} offsite?",
            none="How much money can we spend on the team trip?",
            earlier_question=f"Did finance approve a budget for the {city} offsite?",
            mention=f"The {city} offsite planning is going slowly.",
        ),
        Item(
            "prose",
            [("user", f"We adopted a {breed} puppy called {pet} last spring, he hates the rain")],
            [pet],
            shared=f"What is the name of our {breed}?",
            none="Which animal lives with us at home?",
            earlier_question="should I tell you about our dog?",
            mention="The dog needs a walk before the next call, back in ten.",
        ),
        Item(
            "prose",
            [
                (
                    "user",
                    f"For dinner on Friday book {restaurant}, it is vegetarian and near the "
                    "office.",
                )
            ],
            [restaurant],
            shared="Where did I want to book dinner on Friday?",
            none="Which place did we pick to eat at the end of the week?",
            earlier_question="Any idea where we should book dinner on Friday?",
            mention="Friday's dinner booking is still pending confirmation.",
        ),
        Item(
            "spread",
            [
                (
                    "user",
                    f"The bastion host for the {service[1]} cluster is bastion-{port % 97}.{host}",
                ),
                (
                    "user",
                    f"and log in to it as ops-{first[2].lower()} with the hardware key, "
                    "no passwords",
                ),
            ],
            [f"bastion-{port % 97}.{host}", f"ops-{first[2].lower()}"],
            shared=f"How do I log in to the {service[1]} bastion host?",
            none=(
                "What machine and account should someone use to reach the jump box of "
                "that group of machines?"
            ),
            earlier_question=f"what's the bastion for {service[1]}?",
            mention=f"The {service[1]} bastion host was slow again this morning.",
        ),
        Item(
            "health",
            [("user", f"Heads up, {first[1]} is allergic to peanuts, so no satay at the offsite")],
            ["peanuts"],
            shared=f"What is {first[1]} allergic to?",
            none="Which food would send our colleague to the doctor?",
            earlier_question=f"Does {first[1]} have any allergy we should know about?",
            mention=f"{first[1]} confirmed attendance for the offsite.",
        ),
    ]
    for item in items:
        item.check()
    return items


_TOOL_KINDS = ("log", "json", "listing", "diff", "table")
_ASSISTANT_OPENERS = [
    "Done.",
    "Here is what I found.",
    "I checked the usual places.",
    "Short answer: yes.",
    "That took a few tries, but it works now.",
    "I looked through the recent changes.",
]
_TOPICS = [
    "the deploy pipeline",
    "the nightly batch job",
    "the cache hit rate",
    "the error budget",
    "the flaky integration test",
    "the release notes",
    "the on-call rotation",
    "the database migration",
    "the cost report",
    "the access review",
    "the onboarding doc",
    "the retry policy",
]
_VERBS = ["rerun", "check", "summarise", "compare", "look at", "clean up", "grep", "profile"]
_USER_TERSE = ["ok", "go on", "thanks, next", "sure", "yes please", "hm, try again", "👍"]


def _user_line(rng: random.Random, turn: int) -> str:
    topic, verb = rng.choice(_TOPICS), rng.choice(_VERBS)
    shape = rng.random()
    if shape < 0.2:
        return rng.choice(_USER_TERSE)
    if shape < 0.55:
        return f"can you {verb} {topic} for me"
    if shape < 0.8:
        return (
            f"So I was thinking about {topic} again and honestly I am not sure we got it right "
            f"last week, could you {verb} it and tell me if anything looks off, especially "
            f"around run {rng.randint(100, 999)} and whatever happened after the restart"
        )
    return f"Please {verb} {topic} and {rng.choice(_VERBS)} {rng.choice(_TOPICS)} (turn {turn})."


def _assistant_line(rng: random.Random) -> str:
    topic = rng.choice(_TOPICS)
    shape = rng.random()
    if shape < 0.3:
        return f"{rng.choice(_ASSISTANT_OPENERS)} {topic.capitalize()} looks fine today."
    if shape < 0.6:
        bullets = "\n".join(
            f"- {rng.choice(_TOPICS)}: {rng.choice(['ok', 'degraded', 'needs a look', 'green'])}"
            for _ in range(rng.randint(2, 5))
        )
        return f"{rng.choice(_ASSISTANT_OPENERS)}\n{bullets}"
    return (
        f"{rng.choice(_ASSISTANT_OPENERS)} I went through {topic} step by step. The first pass "
        f"showed {rng.randint(2, 40)} warnings, most of them about timeouts in "
        f"{rng.choice(_TOPICS)}; after a {rng.choice(_VERBS)} they dropped to "
        f"{rng.randint(0, 3)}. I would leave it as it is and revisit it if it comes back."
    )


def _tool_output(rng: random.Random) -> str:
    kind = rng.choice(_TOOL_KINDS)
    lines = rng.randint(6, 30)
    if kind == "log":
        return "\n".join(
            f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} "
            f"{rng.choice(['INFO', 'WARN', 'ERROR'])} {rng.choice(_SERVICES)} "
            f"request_id={rng.getrandbits(40):x} latency_ms={rng.randint(1, 900)}"
            for _ in range(lines)
        )
    if kind == "json":
        return json.dumps(
            [
                {"id": rng.getrandbits(24), "status": rng.choice(["ok", "fail"]), "n": i}
                for i in range(lines)
            ]
        )
    if kind == "listing":
        return "\n".join(
            f"-rw-r--r-- 1 app app {rng.randint(100, 99999)} /var/lib/{rng.choice(_SERVICES)}/"
            f"part-{i:04d}.parquet"
            for i in range(lines)
        )
    if kind == "diff":
        return "\n".join(
            f"{rng.choice('+-')} timeout_seconds: {rng.randint(1, 60)}  # {rng.choice(_TOPICS)}"
            for _ in range(lines)
        )
    return "\n".join(
        f"| {rng.choice(_SERVICES)} | {rng.randint(0, 100)}% | {rng.randint(1, 500)} ms |"
        for _ in range(lines)
    )


@dataclass
class Turn:
    user: str
    tool: str | None
    answer: str


@dataclass
class Session:
    seed: int
    turns: list[Turn] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)


def generate(seed: int, *, filler_turns: int = 40) -> Session:
    """One session: earlier questions, the details, chatter that mentions them, filler."""
    rng = random.Random(seed)
    items = _items(rng)
    rng.shuffle(items)
    session = Session(seed=seed, items=items)

    def filler() -> Turn:
        tool = _tool_output(rng) if rng.random() < 0.6 else None
        return Turn(_user_line(rng, len(session.turns)), tool, _assistant_line(rng))

    for item in items:
        if rng.random() < 0.7:
            session.turns.append(Turn(item.earlier_question, None, "Let me look into it."))
        for role, text in item.sources:
            if role == "user":
                session.turns.append(Turn(text, None, "Noted, thanks."))
            else:
                session.turns.append(Turn(f"can you find the {item.kind} for me", None, text))
        session.turns.append(filler())
    mentions = [item.mention for item in items]
    rng.shuffle(mentions)
    for index in range(filler_turns):
        turn = filler()
        if index % 3 == 0 and mentions:
            turn.answer = f"{mentions.pop()} {turn.answer}"
        session.turns.append(turn)
    return session


async def converse(
    session: Session,
    database_url: str,
    *,
    names: tuple[str, ...],
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The session in one app with recall off and on (turn by turn in alternation), then
    every question in each."""
    latencies: dict[str, list[float]] = {name: [] for name in names}
    answers: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    async with running_app(database_url, settings=settings) as client:
        ids = {}
        for name in names:
            body: dict[str, Any] = {"model": MODEL, "system": {"global": "You help an SRE team."}}
            if name != "off":
                body["recall"] = RECALL
            ids[name] = (await client.post("/v1/sessions", json=body)).json()["id"]

        async def timed(name: str, path: str, json_body: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            response = await client.post(f"/v1/sessions/{ids[name]}/turns{path}", json=json_body)
            latencies[name].append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            answer: dict[str, Any] = response.json()
            return answer

        for index, turn in enumerate(session.turns):
            for name in names:
                started = await timed(name, "", {"message": {"content": turn.user}})
                turn_id = started["turn_id"]
                if turn.tool is not None:
                    call = f"call_{index}"
                    step = {
                        "assistant": {
                            "content": None,
                            "tool_calls": [
                                {
                                    "id": call,
                                    "type": "function",
                                    "function": {"name": "run", "arguments": "{}"},
                                }
                            ],
                        },
                        "tool_results": [{"tool_call_id": call, "content": turn.tool}],
                    }
                    await timed(name, f"/{turn_id}/steps", step)
                done = f"/v1/sessions/{ids[name]}/turns/{turn_id}/complete"
                body = {"assistant": {"content": turn.answer}}
                (await client.post(done, json=body)).raise_for_status()
        if settings and settings.get("embeddings_base_url"):
            await wait_for_embeddings(database_url)
        for name in names:
            for item in session.items:
                for form in ("shared", "none"):
                    question = getattr(item, form)
                    answers[name].append(
                        await ask(client, ids[name], item, question, form=form)
                        | {"seed": session.seed}
                    )
    return {"latencies": latencies, "answers": answers}


async def ask(
    client: Any, session_id: str, item: Item, question: str, *, form: str
) -> dict[str, Any]:
    path = f"/v1/sessions/{session_id}/turns"
    response = await client.post(path, json={"message": {"content": question}})
    response.raise_for_status()
    prompt: dict[str, Any] = response.json()
    texts = [str(m.get("content")) for m in prompt["messages"]]
    block = next((t for t in texts if t.startswith(RECALL_HEADING)), "")
    shown = [t for t in texts[1:] if not t.startswith(RECALL_HEADING)]
    over = prompt["budget"]["estimated_input_tokens"] > prompt["budget"]["input_budget"]
    done = f"{path}/{prompt['turn_id']}/complete"
    (await client.post(done, json={"assistant": {"content": "Noted."}})).raise_for_status()
    return {
        "kind": item.kind,
        "form": form,
        "left": not any(d in t for d in item.details for t in shown),
        "recalled": all(d in block for d in item.details),
        "in_summary": all(d in texts[0] for d in item.details),
        "recall_tokens": prompt["budget"]["blocks"].get("recall", 0),
        "over_budget": over,
    }


def score(answers: list[dict[str, Any]], form: str) -> dict[str, Any]:
    gone = [a for a in answers if a["form"] == form and a["left"]]
    kinds = sorted({a["kind"] for a in gone})
    return {
        "asked": len(gone),
        "recalled": sum(a["recalled"] for a in gone),
        "in_summary": sum(a["in_summary"] for a in gone),
        "by_kind": {
            kind: f"{sum(a['recalled'] for a in gone if a['kind'] == kind)}"
            f"/{sum(1 for a in gone if a['kind'] == kind)}"
            for kind in kinds
        },
    }


async def run(
    seeds: tuple[int, ...], server_url: str | None, *, embeddings: bool
) -> dict[str, Any]:
    results: dict[str, Any] = {"seeds": seeds, "answers": {}, "latencies": {"off": [], "on": []}}
    answers: dict[str, list[dict[str, Any]]] = {"off": [], "on": [], "embeddings": []}
    with ExitStack() as sync_stack:
        async with AsyncExitStack() as stack:

            async def database(prefix: str) -> str:
                if server_url:
                    url: str = await stack.enter_async_context(fresh_database(server_url, prefix))
                    return url
                folder = sync_stack.enter_context(tempfile.TemporaryDirectory())
                return f"sqlite+aiosqlite:///{folder}/bench.db"

            fake = None
            if embeddings:
                from tests.fake_embeddings import serve_fake_embeddings

                fake = sync_stack.enter_context(serve_fake_embeddings())
            for seed in seeds:
                session = generate(seed)
                done = await converse(
                    session, await database("contextd_bench_rev"), names=("off", "on")
                )
                for name in ("off", "on"):
                    answers[name] += done["answers"][name]
                    results["latencies"][name] += done["latencies"][name]
                if fake is not None:
                    embedded = await converse(
                        session,
                        await database("contextd_bench_rev_emb"),
                        names=("emb",),
                        settings={
                            "embeddings_base_url": fake.url,
                            "embeddings_model": "topic-fake",
                            "embeddings_poll_seconds": 0.05,
                        },
                    )
                    answers["embeddings"] += embedded["answers"]["emb"]
    for name, given in answers.items():
        if given:
            results["answers"][name] = {form: score(given, form) for form in ("shared", "none")}
            results["answers"][name]["over_budget"] = sum(a["over_budget"] for a in given)
            results["answers"][name]["recall_tokens_p50"] = percentile(
                [a["recall_tokens"] for a in given], 0.5
            )
    for name in ("off", "on"):
        latencies = results["latencies"][name]
        results[f"{name}_p50_ms"] = round(percentile(latencies, 0.5), 2)
    del results["latencies"]
    return results


def _line(figures: dict[str, Any]) -> str:
    asked = figures["asked"]
    return (
        f"{figures['recalled']}/{asked} ({figures['recalled'] / max(asked, 1):.0%}), "
        f"in the summary {figures['in_summary']}; by kind {figures['by_kind']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="reporting")
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    parser.add_argument("--embeddings", action="store_true", help="also with the topic fake")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seeds = (
        TUNING_SEEDS
        if args.seeds == "tuning"
        else REPORTING_SEEDS
        if args.seeds == "reporting"
        else tuple(int(s) for s in args.seeds.split(","))
    )
    results = asyncio.run(
        run(seeds, None if args.sqlite else args.database_url, embeddings=args.embeddings)
    )
    if args.json:
        print(json.dumps(results, indent=1))  # noqa: T201
        return
    lines = [
        f"recall evaluation, seeds {list(seeds)} ({'SQLite' if args.sqlite else 'Postgres'}, "
        f"{MODEL}); {machine()}"
    ]
    for name, figures in results["answers"].items():
        lines.append(f"[{name}] shared a word: {_line(figures['shared'])}")
        lines.append(f"[{name}] shared none:  {_line(figures['none'])}")
        lines.append(
            f"[{name}] prompts over budget: {figures['over_budget']}; "
            f"recall block p50 {figures['recall_tokens_p50']} tokens"
        )
    ratio = results["on_p50_ms"] / max(results["off_p50_ms"], 1e-9)
    lines.append(
        f"turn start + step p50: recall off {results['off_p50_ms']} ms, on "
        f"{results['on_p50_ms']} ms ({ratio:.2f}x)"
    )
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
