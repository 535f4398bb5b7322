"""``python -m bench.heldout``: the held-out retention and recall figures, by kind.

Each seed's session runs twice through the real app (in process, a throwaway SQLite file),
with recall off and on. Six sets, written apart: ``first`` (a platform team's agent, report
seeds 1000-1009), ``second`` (travel, finance, support, research and coding agents, report
seeds 3000-3009), ``third`` (clinic scheduling, renovation, recruiting, event planning and
on-call agents, report seeds 5000-5009), ``fourth`` (legal intake, home automation,
language tutoring, freight dispatch and lab sample agents, report seeds 6000-6009),
``fifth`` (insurance claims, school office, restaurant stock, analytics SQL and grant-writing
agents, report seeds 7000-7009; it labels how each correction was made and what each later
question is about, and the report gives those figures too) and ``sixth`` (coding, travel
booking, DevOps on-call, personal finance and research agents, report seeds 8000-8009,
tuning seeds 8100-8119; users who ramble, dictate, switch language mid-sentence, paste
Slack threads, YAML and CSV, and answer the assistant's proposals; labelled as the fifth
is); any other seed is fine for a look.

``--summarizer llm`` runs the LLM summariser (app/summarize/llm.py) against a scripted model
(tests/fake_llm.py) that drops a third of the items it is given and reorders the rest;
``both`` runs the extractive summariser and then that. The final figures, every set, both
summarisers, recall off and on:

    python -m bench heldout --set all --summarizer both

``--embeddings-url`` has the app embed every message with all-MiniLM-L6-v2 served by
``python -m bench.embeddings_server`` (an OpenAI-compatible ``/embeddings``), so that recall
fuses meaning with full text; a turn that asks a question waits until every earlier message
has its vector (a real agent asks minutes, not milliseconds, after the source was said).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from bench.common import running_app
from bench.heldout import fifth, fourth, generator, second, sixth, third
from bench.heldout.scenario import Scenario
from bench.heldout.scorer import Agent, SessionResult
from bench.recall import wait_for_embeddings

#: What bench/embeddings_server.py serves.
EMBEDDINGS_MODEL = "all-MiniLM-L6-v2"

REPORT_SEEDS = tuple(range(1000, 1010))


@dataclass(frozen=True)
class HeldOutSet:
    generate: Callable[[int, int], Scenario]
    report_seeds: tuple[int, ...]


SETS: dict[str, HeldOutSet] = {
    "first": HeldOutSet(generator.generate, REPORT_SEEDS),
    "second": HeldOutSet(second.generate, second.REPORT_SEEDS),
    "third": HeldOutSet(third.generate, third.REPORT_SEEDS),
    "fourth": HeldOutSet(fourth.generate, fourth.REPORT_SEEDS),
    "fifth": HeldOutSet(fifth.generate, fifth.REPORT_SEEDS),
    "sixth": HeldOutSet(sixth.generate, sixth.REPORT_SEEDS),
}


def seed_list(text: str) -> list[int]:
    """ "1000-1009" or "1,5,9" (or both, comma-separated)."""
    seeds: list[int] = []
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            seeds.extend(range(int(low), int(high) + 1))
        elif part:
            seeds.append(int(part))
    return seeds


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f}%)" if total else "-"


def report(results: Iterable[SessionResult]) -> str:
    results = list(results)
    lines = []
    for recall in (False, True):
        runs = [r for r in results if r.recall is recall]
        if not runs:
            continue
        lines.append(f"\n== recall {'on' if recall else 'off'} ({len(runs)} sessions) ==")
        kinds: dict[str, list[int]] = {}
        for run in runs:
            for kind, (hit, total) in run.facts.items():
                kinds.setdefault(kind, [0, 0])
                kinds[kind][0] += hit
                kinds[kind][1] += total
        lines.append(f"{'facts in the last prompt':<40}{'present':>18}")
        for kind in sorted(kinds):
            lines.append(f"  {kind:<38}{_share(*kinds[kind]):>18}")
        hit = sum(k[0] for k in kinds.values())
        total = sum(k[1] for k in kinds.values())
        lines.append(f"  {'all':<38}{_share(hit, total):>18}")
        agents: dict[str, list[int]] = {}
        for run in runs:
            counts = agents.setdefault(run.agent, [0, 0])
            counts[0] += sum(h for h, _ in run.facts.values())
            counts[1] += sum(t for _, t in run.facts.values())
        if len(agents) > 1:
            lines.append("facts in the last prompt, by agent")
            for agent in sorted(agents):
                lines.append(f"  {agent:<38}{_share(*agents[agent]):>18}")
        corrections = sum(r.corrections for r in runs)
        lines.append("corrections")
        new = sum(r.correction_new_present for r in runs)
        old = sum(r.correction_old_current for r in runs)
        lines.append(f"  {'new value present':<38}{_share(new, corrections):>18}")
        lines.append(f"  {'old value presented as current':<38}{_share(old, corrections):>18}")
        styles: dict[str, list[int]] = {}
        for run in runs:
            for style, row in run.by_style.items():
                sums = styles.setdefault(style, [0, 0, 0])
                for column, count in enumerate(row):
                    sums[column] += count
        if styles:
            lines.append(f"{'corrections by style':<40}{'new present':>18}{'old as current':>18}")
            for style in sorted(styles):
                count, new, old = styles[style]
                lines.append(f"  {style:<38}{_share(new, count):>18}{_share(old, count):>18}")
        lines.append(f"{'later questions':<40}{'source in prompt':>18}{'answer in prompt':>18}")
        questions = [q for r in runs for q in r.questions]
        groups = (
            ("shares a word with the source", lambda q: q.shares_word),
            ("shares no word", lambda q: not q.shares_word),
            ("source said by the user", lambda q: q.source_role == "user"),
            ("source said by the assistant", lambda q: q.source_role == "assistant"),
            ("source returned by a tool", lambda q: q.source_role == "tool"),
            ("all", lambda q: True),
        )
        for name, keep in groups:
            chosen = [q for q in questions if keep(q)]
            source = sum(q.source_present for q in chosen)
            answer = sum(q.answer_present for q in chosen)
            lines.append(
                f"  {name:<38}{_share(source, len(chosen)):>18}{_share(answer, len(chosen)):>18}"
            )
        kinds_asked = sorted({q.kind for q in questions if q.kind})
        if kinds_asked:
            lines.append(
                f"{'later questions by kind':<40}{'source in prompt':>18}{'answer in prompt':>18}"
            )
            for kind in kinds_asked:
                chosen = [q for q in questions if q.kind == kind]
                source = sum(q.source_present for q in chosen)
                answer = sum(q.answer_present for q in chosen)
                shares = f"{_share(source, len(chosen)):>18}{_share(answer, len(chosen)):>18}"
                lines.append(f"  {kind:<38}{shares}")
        # A question whose answer spans two messages is two entries at one turn: both count.
        together: list[list[Any]] = []
        for run in runs:
            by_turn: dict[int, list[Any]] = {}
            for q in run.questions:
                by_turn.setdefault(q.turn, []).append(q)
            together.extend(group for group in by_turn.values() if len(group) > 1)
        if together:
            source = sum(all(q.source_present for q in group) for group in together)
            answer = sum(all(q.answer_present for q in group) for group in together)
            shares = f"{_share(source, len(together)):>18}{_share(answer, len(together)):>18}"
            lines.append(f"  {'every part of a two-message answer':<38}{shares}")
        prompts = sum(r.prompts for r in runs)
        over = sum(r.over_budget for r in runs)
        invalid = sum(r.invalid for r in runs)
        largest = max(r.max_share for r in runs)
        lines.append("prompts")
        lines.append(f"  {'over budget (tiktoken)':<38}{_share(over, prompts):>18}")
        lines.append(f"  {'invalid for OpenAI chat':<38}{_share(invalid, prompts):>18}")
        lines.append(f"  {'refused (422)':<38}{sum(r.refused for r in runs):>18}")
        lines.append(f"  {'largest prompt / input budget':<38}{largest:>18.3f}")
        found, stated = sum(r.stated_found for r in runs), sum(r.stated for r in runs)
        lines.append("control: a fact found in the prompt of the turn that states it")
        lines.append(f"  {'found':<38}{_share(found, stated):>18}")
    return "\n".join(lines)


def model_input(requests: list[dict[str, Any]]) -> str:
    """What the scripted model was sent per request, in o200k tokens of its messages."""
    import tiktoken

    encoding = tiktoken.get_encoding("o200k_base")
    sizes = sorted(
        sum(len(encoding.encode(m["content"], disallowed_special=())) for m in r["messages"])
        for r in requests
    )
    return (
        f"model input per request (o200k tokens): mean {sum(sizes) / len(sizes):.0f}, "
        f"median {sizes[len(sizes) // 2]}, max {sizes[-1]}, total {sum(sizes)}"
    )


@contextmanager
def summarizer_settings(summarizer: str) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """The app's settings for ``summarizer`` and the requests its model was sent; for
    ``llm``, a scripted model served meanwhile that drops a third of the items it is given
    and reorders the rest (as bench/summary_retention.py runs it)."""
    if summarizer == "extractive":
        yield {}, []
        return
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
        yield settings, fake.requests


async def run(
    seeds: list[int],
    turns: int,
    modes: list[bool],
    *,
    generate: Callable[[int, int], Scenario] = generator.generate,
    settings: dict[str, Any] | None = None,
    label: str = "",
    embeddings_url: str | None = None,
) -> list[SessionResult]:
    results = []
    settings = dict(settings or {})
    if embeddings_url:
        settings.update(
            embeddings_base_url=embeddings_url,
            embeddings_model=EMBEDDINGS_MODEL,
            embeddings_timeout_seconds=60.0,
            # What is measured is ranking: on a busy machine the default 1 s for a
            # question's embedding would make some questions rank by full text alone.
            embeddings_query_timeout_seconds=30.0,
        )
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/heldout.db"

        async def settled() -> float:
            return await wait_for_embeddings(url)

        async with running_app(url, settings=settings) as client:
            for seed in seeds:
                scenario = generate(seed, turns)
                for recall in modes:
                    started = time.perf_counter()
                    agent = Agent(
                        client, scenario, recall=recall, settled=settled if embeddings_url else None
                    )
                    result = await agent.run()
                    results.append(result)
                    print(  # noqa: T201
                        f"{label}seed {seed} recall {'on' if recall else 'off'}: "
                        f"{sum(h for h, _ in result.facts.values())}/{len(scenario.facts)} "
                        f"facts, {sum(q.source_present for q in result.questions)}/"
                        f"{len(result.questions)} sources, {result.prompts} prompts in "
                        f"{time.perf_counter() - started:.0f}s",
                        file=sys.stderr,
                    )
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout", description=__doc__)
    parser.add_argument("--set", choices=(*SETS, "all"), default="first", dest="which")
    parser.add_argument(
        "--seeds", help="e.g. 1000-1009 or 1,2,3 (default: each set's report seeds)"
    )
    parser.add_argument("--turns", type=int, default=280)
    parser.add_argument("--recall", choices=("both", "on", "off"), default="both")
    parser.add_argument("--summarizer", choices=("extractive", "llm", "both"), default="extractive")
    parser.add_argument("--json", help="also write every session's figures to this file")
    parser.add_argument(
        "--embeddings-url",
        help="embed with this /embeddings server (python -m bench.embeddings_server: "
        "http://127.0.0.1:8091/v1); recall then fuses meaning with full text",
    )
    args = parser.parse_args(argv)
    modes = {"both": [False, True], "on": [True], "off": [False]}[args.recall]
    names = list(SETS) if args.which == "all" else [args.which]
    summarizers = ["extractive", "llm"] if args.summarizer == "both" else [args.summarizer]
    began = time.perf_counter()
    figures: list[dict[str, Any]] = []
    for name in names:
        chosen = SETS[name]
        seeds = seed_list(args.seeds) if args.seeds else list(chosen.report_seeds)
        for summarizer in summarizers:
            with summarizer_settings(summarizer) as (settings, requests):
                results = asyncio.run(
                    run(
                        seeds,
                        args.turns,
                        modes,
                        generate=chosen.generate,
                        settings=settings,
                        label=f"{name} set, {summarizer}: ",
                        embeddings_url=args.embeddings_url,
                    )
                )
            print(  # noqa: T201
                f"\n##### {name} set, {summarizer} summariser, seeds {min(seeds)}-{max(seeds)}"
                + (f", embeddings {EMBEDDINGS_MODEL}" if args.embeddings_url else "")
                + (f", {len(requests)} requests to the scripted model" if requests else "")
                + (f"\n{model_input(requests)}" if requests else "")
                + f"\n{report(results)}",
                flush=True,
            )
            figures.extend({"set": name, "summarizer": summarizer, **asdict(r)} for r in results)
    print(f"\n{time.perf_counter() - began:.0f}s in all")  # noqa: T201
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
