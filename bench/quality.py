"""What the prompts hold over a long session at a tight budget: contextd, a plain
newest-first window, and LangChain's ``trim_messages`` (a newest-first window too).

The synthetic conversation (bench/synth.py) runs through contextd in-process (the real app
over ASGI, on a fresh Postgres database, or SQLite without one) on gpt-4's 8k context. At
every assembly (the start of a turn and after each tool step) the prompt contextd returned
is kept; the window and trim_messages get the same transcript at the same point and the same
input budget. For each prompt:

- retention: which planted facts, decisions and open questions (stated in the first turns)
  it still contains, in the summary or in the messages, found by their marker strings;
- prefix stability: whether it starts with the whole previous prompt (the provider's prompt
  cache hits), the definition of bench/cache_stability.py;
- budget: its tokens counted independently with tiktoken, against the input budget, and
  whether it is a valid chat (app.budget.assembly.chat_problems).

    python -m bench.quality [--turns 300] [--database-url …] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from app.budget.assembly import chat_problems
from bench import synth
from bench.cache_stability import newest_first_window
from bench.common import DEFAULT_SERVER, fresh_database, running_app
from tests.support import audit_rows, independent_prompt_tokens

MODEL = "gpt-4"


@dataclass(frozen=True)
class Assembly:
    turn: int  # index of the turn it was made in
    history: int  # messages of the transcript it saw (the system message aside)
    messages: list[dict[str, Any]]


def text_of(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


def measure(
    assemblies: list[Assembly], budget: int, planted: tuple[synth.Planted, ...], after_turn: int
) -> dict[str, Any]:
    tokens = [independent_prompt_tokens(a.messages, MODEL) for a in assemblies]
    kept = sum(
        now.messages[: len(before.messages)] == before.messages
        for before, now in itertools.pairwise(assemblies)
    )
    shares = []
    for assembly in assemblies:
        if assembly.turn < after_turn:
            continue
        text = text_of(assembly.messages)
        due = [p for p in planted if p.turn < assembly.turn]
        if not due:
            continue
        shares.append(sum(p.marker in text for p in due) / len(due))
    last_text = text_of(assemblies[-1].messages)
    at_end = {
        kind: sum(p.marker in last_text for p in planted if p.kind == kind)
        / max(1, sum(p.kind == kind for p in planted))
        for kind in ("fact", "decision", "question")
    }
    return {
        "assemblies": len(assemblies),
        "retention_mean": sum(shares) / len(shares) if shares else None,
        "retention_at_end": sum(p.marker in last_text for p in planted) / max(1, len(planted)),
        "retention_at_end_by_kind": at_end,
        "prefix_kept_share": kept / max(1, len(assemblies) - 1),
        "max_share_of_budget": max(tokens) / budget,
        "mean_share_of_budget": sum(tokens) / len(tokens) / budget,
        "over_budget": sum(t > budget for t in tokens),
        "invalid": sum(bool(chat_problems(a.messages)) for a in assemblies),
    }


async def contextd_assemblies(
    conversation: synth.Conversation,
    database_url: str | None,
    *,
    settings: dict[str, Any] | None = None,
) -> tuple[list[Assembly], list[synth.Message], dict[str, Any]]:
    """contextd's prompts, the transcript the agent kept, and what contextd reported
    (``settings`` over the defaults)."""
    assemblies: list[Assembly] = []
    history: list[synth.Message] = []
    rejected: dict[str, int] = {}
    async with running_app(database_url, settings=settings) as client:
        session = (
            await client.post(
                "/v1/sessions", json={"model": MODEL, "system": {"global": conversation.system}}
            )
        ).json()
        sid, budget = session["id"], session["budget"]["input_budget"]
        base = f"/v1/sessions/{sid}/turns"
        for number, turn in enumerate(conversation.turns):
            response = await client.post(base, json=turn.start_body())
            if response.status_code != 201:
                key = f"start {response.status_code} {response.json().get('code')}"
                rejected[key] = rejected.get(key, 0) + 1
                continue
            history.append(turn.user)
            turn_id = response.json()["turn_id"]
            assemblies.append(Assembly(number, len(history), response.json()["messages"]))
            for step in turn.steps:
                response = await client.post(f"{base}/{turn_id}/steps", json=step.body())
                history.extend([step.assistant, *step.results])
                if response.status_code != 200:
                    key = f"step {response.status_code} {response.json().get('code')}"
                    rejected[key] = rejected.get(key, 0) + 1
                    continue
                assemblies.append(Assembly(number, len(history), response.json()["messages"]))
            done = await client.post(f"{base}/{turn_id}/complete", json=turn.complete_body())
            done.raise_for_status()
            history.append(turn.answer)
        rows = await audit_rows(client, sid)
        summaries = (
            await client.get(f"/v1/sessions/{sid}/summaries", params={"limit": 500})
        ).json()
    report = {
        "input_budget": budget,
        "rejected": rejected,
        "audit_prefix_kept_share": sum(r["prefix_kept"] is True for r in rows)
        / max(1, len(rows) - 1),
        "summaries": len(summaries["summaries"]),
        "summary_tokens_max": max((s["token_count"] for s in summaries["summaries"]), default=0),
        "summarizers": sorted({s["summarizer"] for s in summaries["summaries"]}),
        "prunes": sum(bool(r["pruned_message_ids"]) for r in rows),
    }
    return assemblies, history, report


def window_assemblies(
    system: synth.Message, history: list[synth.Message], points: list[Assembly], budget: int
) -> list[Assembly]:
    return [
        Assembly(p.turn, p.history, newest_first_window(system, history[: p.history], budget))
        for p in points
    ]


def trim_assemblies(
    system: synth.Message, history: list[synth.Message], points: list[Assembly], budget: int
) -> list[Assembly]:
    from bench import baselines

    converted = baselines.to_langchain([system, *history])
    counter = baselines.langchain_counter(MODEL)
    made = []
    for point in points:
        trimmed = baselines.trim(converted[: point.history + 1], budget, counter)
        made.append(Assembly(point.turn, point.history, baselines.from_langchain(trimmed)))
    return made


async def run(
    turns: int, server_url: str | None, prefix: str, seed: int = 0, libraries: bool = True
) -> dict[str, Any]:
    began = time.perf_counter()
    conversation = synth.generate(turns, seed)
    async with AsyncExitStack() as stack:
        url = (
            await stack.enter_async_context(fresh_database(server_url, prefix))
            if server_url
            else None
        )
        assemblies, history, report = await contextd_assemblies(conversation, url)
    budget = report["input_budget"]
    system = {"role": "system", "content": conversation.system}
    after = max(p.turn for p in conversation.planted) + 1
    results: dict[str, Any] = {
        "model": MODEL,
        "turns": turns,
        "database": "Postgres" if server_url else "SQLite",
        "input_budget": budget,
        "planted": len(conversation.planted),
        "retention_from_turn": after,
        "contextd_report": report,
        "contextd": measure(assemblies, budget, conversation.planted, after),
    }
    window = await asyncio.to_thread(window_assemblies, system, history, assemblies, budget)
    results["newest-first window"] = measure(window, budget, conversation.planted, after)
    if libraries:
        trimmed = await asyncio.to_thread(trim_assemblies, system, history, assemblies, budget)
        results["langchain trim_messages"] = measure(trimmed, budget, conversation.planted, after)
    results["targets"] = judge(results)
    results["seconds"] = time.perf_counter() - began
    return results


IMPLEMENTATIONS = ("contextd", "newest-first window", "langchain trim_messages")


def judge(results: dict[str, Any]) -> list[dict[str, Any]]:
    mine = results["contextd"]
    return [
        {
            "target": "contextd: no prompt over the input budget (tiktoken, independently)",
            "measured": f"{mine['over_budget']} over; max {mine['max_share_of_budget']:.1%}",
            "pass": mine["over_budget"] == 0,
        },
        {
            "target": "contextd: every prompt a valid chat",
            "measured": f"{mine['invalid']} invalid",
            "pass": mine["invalid"] == 0,
        },
        {
            "target": "contextd keeps more planted items than a newest-first window (mean)",
            "measured": f"{mine['retention_mean']:.0%} vs "
            f"{results['newest-first window']['retention_mean']:.0%}",
            "pass": mine["retention_mean"] > results["newest-first window"]["retention_mean"],
        },
    ]


def table(results: dict[str, Any]) -> str:
    names = [n for n in IMPLEMENTATIONS if n in results]
    rows = [
        ("planted items kept, mean over prompts", "retention_mean", "{:.0%}"),
        ("planted items kept, last prompt", "retention_at_end", "{:.0%}"),
        ("prompts starting with the previous prompt", "prefix_kept_share", "{:.0%}"),
        ("largest prompt, share of budget", "max_share_of_budget", "{:.1%}"),
        ("mean prompt, share of budget", "mean_share_of_budget", "{:.1%}"),
        ("prompts over budget", "over_budget", "{}"),
        ("invalid prompts", "invalid", "{}"),
        ("prompts", "assemblies", "{}"),
    ]
    lines = ["| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for label, key, shape in rows:
        lines.append(
            f"| {label} | " + " | ".join(shape.format(results[n][key]) for n in names) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--database-url",
        default=DEFAULT_SERVER,
        help="Postgres server; 'sqlite' for a temporary SQLite file",
    )
    parser.add_argument("--database-prefix", default="contextd_bench")
    parser.add_argument("--quick", action="store_true", help="80 turns")
    args = parser.parse_args()
    server = None if args.database_url == "sqlite" else args.database_url
    results = asyncio.run(
        run(80 if args.quick else args.turns, server, args.database_prefix, args.seed)
    )
    print(f"contextd: {results['contextd_report']}")  # noqa: T201
    print(table(results))  # noqa: T201
    for target in results["targets"]:
        print(f"  {'PASS' if target['pass'] else 'MISS'}  {target['target']}: {target['measured']}")  # noqa: T201


if __name__ == "__main__":
    main()
