"""What the last prompt of a long, realistic session still holds of what the user said.

Sessions of bench/traffic.py (250 to 300 turns, a tool-using agent on gpt-4's 8k context,
about forty user-stated facts of fourteen kinds in the first half, corrections among them)
run through contextd in-process (the real app over ASGI, on SQLite, or a fresh Postgres
database). Per kind: the share of facts whose value the last prompt holds (in the summary or
raw); per correction: whether the new value is there, and whether any line of the prompt
presents the old value without the new one ("old as current"). Also: prompts over budget
(counted independently with tiktoken) and the largest summary's share of the budget.

Seeds are split: the summariser was tuned on the tuning seeds (0-9); the reporting seeds
(700-709) were never looked at while tuning. Seeds 100-109, 200-209, 300-309 and 400-409
were reporting seeds of the narrower generator before; their failures were seen and fixed,
so they count as tuned on ("looked-at").

    python -m bench.summary_retention [--seeds tuning|reporting|looked-at|0,1,…]
                                      [--summarizer llm]
                                      [--database-url sqlite|postgresql+asyncpg://…]

``--summarizer llm`` runs the LLM summariser (app/summarize/llm.py) against a scripted
model (tests/fake_llm.py) that drops a third of the items it is given and reorders the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from contextlib import AsyncExitStack
from typing import Any

from bench import traffic
from bench.common import fresh_database
from bench.quality import MODEL, contextd_assemblies, measure, text_of


async def run_seed(seed: int, server_url: str | None, summarizer: dict[str, Any]) -> dict[str, Any]:
    began = time.perf_counter()
    session = traffic.generate(seed)
    async with AsyncExitStack() as stack:
        url = (
            await stack.enter_async_context(fresh_database(server_url, "contextd_retention"))
            if server_url
            else None
        )
        assemblies, _, report = await contextd_assemblies(
            session.conversation, url, settings=summarizer
        )
    budget = report["input_budget"]
    figures = traffic.score(text_of(assemblies[-1].messages), session.facts)
    adherence = measure(assemblies, budget, (), len(session.conversation.turns))
    return {
        "seed": seed,
        "turns": len(session.conversation.turns),
        **figures,
        "over_budget": adherence["over_budget"],
        "prefix_kept_share": adherence["prefix_kept_share"],
        "summary_max_share": report["summary_tokens_max"] / budget,
        "summaries": report["summaries"],
        "summarizers": report["summarizers"],
        "seconds": time.perf_counter() - began,
    }


def table(runs: list[dict[str, Any]]) -> str:
    """Facts kept by kind, summed over the seeds given."""
    lines = ["| kind | kept | share |", "|---|---:|---:|"]
    for kind in traffic.FACT_KINDS:
        kept = sum(run["by_kind"].get(kind, (0, 0))[0] for run in runs)
        total = sum(run["by_kind"].get(kind, (0, 0))[1] for run in runs)
        if total:
            lines.append(f"| {kind} | {kept}/{total} | {kept / total:.0%} |")
    kept = sum(run["kept"] for run in runs)
    total = sum(run["facts"] for run in runs)
    lines.append(f"| **all** | {kept}/{total} | {kept / total:.1%} |")
    corrections = sum(run["corrections"] for run in runs)
    old = sum(run["old_as_current"] for run in runs)
    lines.append(
        f"| old value presented as current | {old}/{corrections} | {old / corrections:.0%} |"
    )
    return "\n".join(lines)


def _seeds(argument: str) -> list[int]:
    if argument == "tuning":
        return list(traffic.TUNING_SEEDS)
    if argument == "reporting":
        return list(traffic.REPORTING_SEEDS)
    if argument == "looked-at":
        return list(traffic.LOOKED_AT_SEEDS)
    return [int(seed) for seed in argument.split(",")]


async def run(seeds: list[int], server_url: str | None, llm: bool) -> list[dict[str, Any]]:
    if not llm:
        return [await run_seed(seed, server_url, {}) for seed in seeds]
    from tests.fake_llm import serve_fake_chat

    with serve_fake_chat() as fake:
        fake.mode = "drop_facts"
        fake.drop_share = 1 / 3
        fake.reorder = True
        settings = {
            "summarizer": "llm",
            "summarizer_base_url": fake.url,
            "summarizer_model": "scripted",
            "summary_job_poll_seconds": 0.05,
        }
        return [await run_seed(seed, server_url, settings) for seed in seeds]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="tuning")
    parser.add_argument("--summarizer", choices=("extractive", "llm"), default="extractive")
    parser.add_argument("--database-url", default="sqlite")
    parser.add_argument("--lost", action="store_true", help="list what each seed lost")
    args = parser.parse_args()
    server = None if args.database_url == "sqlite" else args.database_url
    runs = asyncio.run(run(_seeds(args.seeds), server, args.summarizer == "llm"))
    for one in runs:
        print(  # noqa: T201
            f"seed {one['seed']} ({one['turns']} turns, {MODEL}, {one['summarizers']}): "
            f"{one['kept']}/{one['facts']} kept, {one['old_as_current']} old as current, "
            f"{one['over_budget']} over budget, summary max {one['summary_max_share']:.1%} of "
            f"budget, prefix kept {one['prefix_kept_share']:.0%}, {one['seconds']:.0f} s"
        )
        if args.lost:
            for line in one["lost"]:
                print(f"    lost {line}")  # noqa: T201
    print(table(runs))  # noqa: T201


if __name__ == "__main__":
    main()
