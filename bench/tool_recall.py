"""Does recall bring back what a tool returned? Sessions whose tool results are JSON listings,
service logs, CSV exports, HTML pages, XML documents and tracebacks, 1 kB to 1.9 MB each,
with one detail at any depth of each, asked about later in a user's words.

Each seed makes one session on gpt-4o-mini (8k): a dozen turns whose tool step returns a
large result holding a detail (an error code on one service's deploy, the balance of one
account, the status of one order, what a status page says of one region, a setting of one
component, the exception one job raised), among many lines that share the question's words
(other services' deploys, other accounts, other orders); between them, turns of small talk
and small tool steps that push everything out of the prompt. At the end, one turn per
detail asks for it the way a user would ("what was the error code on the payments
deploy?"). A detail counts when its result has left the prompt; it is recalled when the
recall block holds the detail's value and the words beside it in the result (its line).

Seeds are split: ``TUNING_SEEDS`` are the ones tool recall was tuned on, ``REPORTING_SEEDS``
were only run for the figures. Results are drawn with sizes log-uniform between 1 kB and
1.9 MB (about the most one content part takes), the detail at a uniform depth.

    python -m bench.tool_recall [--seeds tuning|reporting|1,2,3] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.budget.recall import RECALL_HEADING
from bench.common import machine, percentile, running_app

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
RECALL = {"enabled": True}
TUNING_SEEDS = tuple(range(700, 706))
REPORTING_SEEDS = tuple(range(800, 808))
MIN_BYTES = 1_000
MAX_BYTES = 1_900_000

SERVICES = (
    "payments", "ledger", "checkout", "search", "inventory", "notifications", "billing",
    "identity", "shipping", "catalog", "pricing", "reporting", "gateway", "scheduler",
)  # fmt: skip
REGIONS = ("eu-west-1", "eu-central-2", "us-east-1", "us-west-2", "ap-south-1", "sa-east-1")
SURNAMES = (
    "Okafor", "Lindqvist", "Haddad", "Moreau", "Tanaka", "Novak", "Ferreira", "Kowalski",
    "Abara", "Castellanos", "Whitfield", "Sørensen", "Mbeki", "Ivanova", "Dubois", "Petrov",
)  # fmt: skip
GIVEN = ("Amara", "Jonas", "Leila", "Camille", "Hiro", "Petra", "Tomás", "Agnieszka", "Femi")
STATUSES = ("shipped", "packed", "delivered", "awaiting_payment", "in_transit", "returned")
JOBS = ("invoice-export", "nightly-reconcile", "payout-batch", "search-reindex", "vat-report")
PARTS = ("API", "queue", "storage", "CDN")
COMPONENTS = ("sync", "relay", "cache", "indexer")
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN")


@dataclass(frozen=True)
class Detail:
    """One result and what is asked of it: ``value`` must come back, ``line`` is the words
    of the result around it that show the result itself came back."""

    kind: str
    tool: str
    result: str
    value: str
    line: str
    question: str
    depth: float


def _size(rng: random.Random) -> int:
    return int(math.exp(rng.uniform(math.log(MIN_BYTES), math.log(MAX_BYTES))))


def _fill(
    rng: random.Random, line: Callable[[int], str], size: int, planted: str
) -> tuple[str, float]:
    """Lines made by ``line`` up to ``size`` characters, ``planted`` among them at a uniform
    depth; the text and the depth (0 the start, 1 the end)."""
    lines: list[str] = []
    total = 0
    while total < size:
        made = line(len(lines))
        lines.append(made)
        total += len(made) + 1
    at = rng.randrange(len(lines) + 1)
    lines.insert(at, planted)
    return "\n".join(lines), at / max(len(lines) - 1, 1)


def _code(rng: random.Random, prefix: str) -> str:
    return f"{prefix}-{rng.randint(1000, 9999)}"


def _log(rng: random.Random, size: int, service: str) -> Detail:
    value = _code(rng, service[:3].upper())

    def line(n: int) -> str:
        other = _other(rng, lambda: rng.choice(SERVICES))
        stamp = f"2026-11-{rng.randint(10, 27)}T{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 59):02}Z"
        shape = rng.random()
        if shape < 0.15:
            return f"{stamp} ERROR deployer {other} deploy failed: error_code={_code(rng, other[:3].upper())} rollout aborted at step {rng.randint(1, 9)}"
        if shape < 0.3:
            return f"{stamp} INFO deployer {rng.choice(SERVICES)} deploy finished in {rng.randint(20, 400)}s, {rng.randint(2, 12)} replicas ready"
        return f"{stamp} {rng.choice(LEVELS)} {rng.choice(SERVICES)}-worker request id={rng.getrandbits(48):012x} took {rng.randint(2, 900)}ms status={rng.choice((200, 200, 201, 204, 404))}"

    planted = f"2026-11-27T14:{rng.randint(10, 59):02}:07Z ERROR deployer {service} deploy failed: error_code={value} rollout aborted at step {rng.randint(1, 9)}"
    text, depth = _fill(rng, line, size, planted)
    question = rng.choice(
        (
            f"what was the error code on the {service} deploy?",
            f"Which error code did the {service} deploy fail with?",
            f"remind me why the {service} deployment failed, what code was it",
        )
    )
    return Detail(
        "log",
        "read_logs",
        text,
        value,
        f"{service} deploy failed: error_code={value}",
        question,
        depth,
    )


def _csv(rng: random.Random, size: int, account: str) -> Detail:
    value = f"-{rng.randint(100, 9999)}.{rng.randint(10, 99)}"

    def line(n: int) -> str:
        return f"ACC-{_other(rng, lambda: str(rng.randint(100000, 999999)))},{rng.choice(GIVEN)} {rng.choice(SURNAMES)},{rng.choice(REGIONS)},{rng.randint(0, 90000)}.{rng.randint(10, 99)},{rng.choice(('active', 'active', 'dormant', 'frozen'))}"

    planted = (
        f"{account},{rng.choice(GIVEN)} {rng.choice(SURNAMES)},{rng.choice(REGIONS)},{value},active"
    )
    body, depth = _fill(rng, line, size, planted)
    text = "account_id,holder,region,balance,status\n" + body
    question = rng.choice(
        (
            f"what was the balance on account {account} in that export?",
            f"How much did {account} have in the balances CSV?",
        )
    )
    return Detail("csv", "export_balances", text, value, f"{account},", question, depth)


def _json(rng: random.Random, size: int, name: str) -> Detail:
    value = (
        rng.choice(
            (
                "held_for_fraud_review",
                "address_unverified",
                "split_shipment_pending",
                "customs_hold",
            )
        )
        + f"_{rng.randint(100, 999)}"
    )

    def record(n: int) -> str:
        return json.dumps(
            {
                "order_id": f"ORD-{rng.randint(1000000, 9999999)}",
                "customer": _other(rng, lambda: f"{rng.choice(GIVEN)} {rng.choice(SURNAMES)}"),
                "status": rng.choice(STATUSES),
                "total": round(rng.uniform(5, 900), 2),
                "items": rng.randint(1, 9),
            },
            ensure_ascii=False,
        )

    planted = json.dumps(
        {
            "order_id": f"ORD-{rng.randint(1000000, 9999999)}",
            "customer": name,
            "status": value,
            "total": round(rng.uniform(5, 900), 2),
            "items": rng.randint(1, 9),
        },
        ensure_ascii=False,
    )
    records: list[str] = []
    total = 0
    while total < size:
        records.append(record(len(records)))
        total += len(records[-1]) + 2
    at = rng.randrange(len(records) + 1)
    records.insert(at, planted)
    # Pretty-printed the way APIs and tools often print: one field a line; the last records
    # left out while that passes the largest result (printed, a record takes more room).
    parsed = [json.loads(r) for r in records]
    text = json.dumps({"orders": parsed}, indent=2, ensure_ascii=False)
    while len(text) > MAX_BYTES:
        keep = len(parsed) - len(parsed) // 10
        parsed = [r for n, r in enumerate(parsed) if n < keep or r["customer"] == name]
        text = json.dumps({"orders": parsed}, indent=2, ensure_ascii=False)
    question = rng.choice(
        (
            f"what status did {name}'s order have?",
            f"Why was the order for {name} stuck, what did the status say?",
        )
    )
    return Detail(
        "json",
        "list_orders",
        text,
        value,
        f'"status": "{value}"',
        question,
        at / max(len(records) - 1, 1),
    )


def _html(rng: random.Random, size: int, key: str) -> Detail:
    component, region = key.split("\t")
    value = f"degraded since {rng.randint(0, 23):02}:{rng.randint(0, 59):02} UTC"

    def line(n: int) -> str:
        place = _other(
            rng,
            lambda: f"{rng.choice(SERVICES)} {rng.choice(PARTS)}\t{rng.choice(REGIONS)}",
        ).replace("\t", "</td><td>")
        state = rng.choice(("operational", "operational", "maintenance"))
        return f'<tr class="row"><td>{place}</td><td>{state}</td></tr>'

    planted = f'<tr class="row"><td>{component}</td><td>{region}</td><td>{value}</td></tr>'
    body, depth = _fill(rng, line, size, planted)
    text = f"<html><head><title>Status</title></head><body><table>\n{body}\n</table></body></html>"
    question = rng.choice(
        (
            f"what did the status page say about the {component} in {region}?",
            f"Status page: how was {component} doing in {region}?",
        )
    )
    return Detail(
        "html", "fetch_page", text, value, f"<td>{region}</td><td>{value}</td>", question, depth
    )


def _xml(rng: random.Random, size: int, component: str) -> Detail:
    value = str(rng.randint(10000, 99999))

    def line(n: int) -> str:
        return f'  <component name="{_other(rng, lambda: f"{rng.choice(SERVICES)}-{rng.choice(COMPONENTS)}")}" replicas="{rng.randint(1, 9)}"><timeout_ms>{rng.randint(100, 9000)}</timeout_ms></component>'

    planted = f'  <component name="{component}" replicas="{rng.randint(1, 9)}"><timeout_ms>{value}</timeout_ms></component>'
    body, depth = _fill(rng, line, size, planted)
    text = f'<?xml version="1.0"?>\n<config>\n{body}\n</config>'
    question = rng.choice(
        (
            f"what timeout does {component} have in the config?",
            f"In that XML config, which timeout was set for {component}?",
        )
    )
    return Detail("xml", "read_config", text, value, f'name="{component}"', question, depth)


def _traceback(rng: random.Random, size: int, job: str) -> Detail:
    value = rng.choice(
        ("InvoiceTotalMismatch", "LedgerLockTimeout", "CurrencyScaleError", "PayoutCapExceeded")
    ) + str(rng.randint(2, 9))

    def line(n: int) -> str:
        other = _other(rng, lambda: f"{rng.choice(JOBS)}-{rng.randint(10, 99)}")
        return rng.choice(
            (
                f"[{other}] processed batch {rng.randint(1, 9999)} ({rng.randint(10, 999)} rows)",
                f'  File "/srv/jobs/{rng.choice(JOBS).replace("-", "_")}.py", line {rng.randint(10, 900)}, in run_batch',
                f"[{other}] retrying after {rng.randint(1, 30)}s",
            )
        )

    planted = (
        f"[{job}] failed:\nTraceback (most recent call last):\n"
        f'  File "/srv/jobs/runner.py", line 88, in main\n'
        f"jobs.errors.{value}: totals differ for job {job}"
    )
    body, depth = _fill(rng, line, size, planted)
    question = rng.choice(
        (
            f"what exception did the {job} job raise?",
            f"Which error did job {job} fail with in the traceback?",
        )
    )
    return Detail(
        "traceback",
        "job_output",
        body,
        value,
        f"{value}: totals differ for job {job}",
        question,
        depth,
    )


#: Each kind of result: how its key (what the question names: a service, an account, a
#: customer, a component and region, a component, a job) is drawn, and the result made.
KINDS: tuple[
    tuple[Callable[[random.Random], str], Callable[[random.Random, int, str], Detail]], ...
] = (
    (lambda rng: rng.choice(SERVICES), _log),
    (lambda rng: f"ACC-{rng.randint(100000, 999999)}", _csv),
    (lambda rng: f"{rng.choice(GIVEN)} {rng.choice(SURNAMES)}", _json),
    (lambda rng: f"{rng.choice(SERVICES)} {rng.choice(PARTS)}\t{rng.choice(REGIONS)}", _html),
    (lambda rng: f"{rng.choice(SERVICES)}-{rng.choice(COMPONENTS)}", _xml),
    (lambda rng: f"{rng.choice(JOBS)}-{rng.randint(10, 99)}", _traceback),
)
#: The keys of the session being made: no line around a detail, in any result, names one,
#: so that each question names one place in the session.
_TAKEN: set[str] = set()


def _other(rng: random.Random, make: Callable[[], str]) -> str:
    """A value for a line around a detail: anything but a detail's own key."""
    while True:
        made = make()
        if made not in _TAKEN and made.split("-")[-1] not in _TAKEN:
            return made


SMALL_TALK = (
    "ok thanks, carry on",
    "Can you check the queue depth on the workers while you are at it?",
    "nice, what's next on the list",
    "I'll be in a meeting for a bit, keep going with the checks",
    "hm, that took a while. anything odd so far?",
    "Please list what you have looked at today so far, briefly.",
)


def generate(
    seed: int, *, details: int = 12, filler: int = 3
) -> tuple[list[dict[str, Any]], list[Detail]]:
    """A session's turns (dicts the runner posts) and the details asked about at its end."""
    rng = random.Random(seed)
    chosen: list[tuple[str, Callable[[random.Random, int, str], Detail]]] = []
    while len(chosen) < details:
        key_of, make = rng.choice(KINDS)
        key = key_of(rng)
        if key not in {k for k, _ in chosen}:
            chosen.append((key, make))
    _TAKEN.clear()
    _TAKEN.update(key for key, _ in chosen)
    _TAKEN.update(key.removeprefix("ACC-") for key, _ in chosen)
    made = [make(rng, _size(rng), key) for key, make in chosen]
    turns: list[dict[str, Any]] = []
    for number, detail in enumerate(made):
        turns.append(
            {
                "user": rng.choice(
                    ("Pull that up for me please.", "Go ahead and run it.", "Check it.")
                ),
                "tool": detail.tool,
                "result": detail.result,
                "answer": "Done, I looked through the output.",
            }
        )
        for _ in range(filler):
            small = f"queue {rng.choice(SERVICES)} depth={rng.randint(0, 500)} oldest={rng.randint(0, 90)}s"
            turns.append(
                {
                    "user": rng.choice(SMALL_TALK),
                    "tool": "queue_depth",
                    "result": "\n".join(small for _ in range(rng.randint(20, 120))),
                    "answer": "Queues look normal. " * rng.randint(5, 30) + f"(check {number})",
                }
            )
    return turns, made


async def run_seed(client: Any, seed: int, verbose: bool) -> list[dict[str, Any]]:
    turns, made = generate(seed)
    created = await client.post(
        "/v1/sessions",
        json={
            "model": MODEL,
            "context_limit": CONTEXT_LIMIT,
            "system": {"global": "You operate the platform."},
            "recall": RECALL,
        },
    )
    created.raise_for_status()
    base = f"/v1/sessions/{created.json()['id']}/turns"
    for number, turn in enumerate(turns):
        started = await client.post(base, json={"message": {"content": turn["user"]}})
        started.raise_for_status()
        turn_id = started.json()["turn_id"]
        call = f"call_{seed}_{number}"
        step = await client.post(
            f"{base}/{turn_id}/steps",
            json={
                "assistant": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": turn["tool"], "arguments": "{}"},
                        }
                    ],
                },
                "tool_results": [{"tool_call_id": call, "content": turn["result"]}],
            },
        )
        step.raise_for_status()
        (
            await client.post(
                f"{base}/{turn_id}/complete", json={"assistant": {"content": turn["answer"]}}
            )
        ).raise_for_status()
    answers = []
    for detail in made:
        started = time.perf_counter()
        asked = await client.post(base, json={"message": {"content": detail.question}})
        took = time.perf_counter() - started
        asked.raise_for_status()
        messages = asked.json()["messages"]
        block = "\n".join(
            str(m["content"])
            for m in messages
            if str(m.get("content", "")).startswith(RECALL_HEADING)
        )
        rest = "\n".join(
            str(m.get("content"))
            for m in messages
            if not str(m.get("content", "")).startswith(RECALL_HEADING)
        )
        shown = " ".join(block.split())
        answer = {
            "seed": seed,
            "kind": detail.kind,
            "size": len(detail.result),
            "depth": detail.depth,
            "left": detail.value not in rest,
            "recalled": detail.value in shown and " ".join(detail.line.split()) in shown,
            "seconds": took,
        }
        answers.append(answer)
        if verbose:
            print(  # noqa: T201
                f"  seed {seed} {detail.kind:<9} {len(detail.result):>9} chars depth {detail.depth:.2f}: "
                f"{'recalled' if answer['recalled'] else 'MISSED'} {detail.question!r} -> {detail.value!r}",
                file=sys.stderr,
            )
        complete = f"{base}/{asked.json()['turn_id']}/complete"
        (await client.post(complete, json={"assistant": {"content": "Noted."}})).raise_for_status()
    return answers


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} ({hit / total:.0%})" if total else "-"


def report(answers: list[dict[str, Any]]) -> str:
    gone = [a for a in answers if a["left"]]
    lines = [
        f"details asked about after their result left the prompt: {len(gone)} of {len(answers)}"
    ]
    lines.append(
        f"  recalled (value and its line in the block): {_share(sum(a['recalled'] for a in gone), len(gone))}"
    )
    for kind in sorted({a["kind"] for a in gone}):
        chosen = [a for a in gone if a["kind"] == kind]
        lines.append(f"    {kind:<10}{_share(sum(a['recalled'] for a in chosen), len(chosen)):>14}")
    for name, low, high in (
        ("under 50 kB", 0, 50_000),
        ("50-262 kB", 50_000, 262_144),
        ("over 262 kB", 262_144, 10**9),
    ):
        chosen = [a for a in gone if low <= a["size"] < high]
        lines.append(f"    {name:<12}{_share(sum(a['recalled'] for a in chosen), len(chosen)):>12}")
    lines.append(
        f"  question turn start p50 {percentile([a['seconds'] for a in answers], 0.5) * 1000:.0f} ms"
    )
    return "\n".join(lines)


async def run(seeds: list[int], verbose: bool) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    async with running_app() as client:
        for seed in seeds:
            answers.extend(await run_seed(client, seed, verbose))
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tool_recall", description=__doc__)
    parser.add_argument("--seeds", default="tuning", help="tuning, reporting or e.g. 1,2,3")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.seeds in ("tuning", "reporting"):
        seeds = list(TUNING_SEEDS if args.seeds == "tuning" else REPORTING_SEEDS)
    else:
        seeds = [int(s) for s in args.seeds.split(",") if s]
    began = time.perf_counter()
    answers = asyncio.run(run(seeds, args.verbose))
    print(f"tool recall, seeds {seeds} ({machine()})")  # noqa: T201
    print(report(answers))  # noqa: T201
    print(f"{time.perf_counter() - began:.0f}s in all")  # noqa: T201


if __name__ == "__main__":
    main()
