"""``python -m bench.heldout.corrections_source``: where an old value presented as current
comes from, on seeds one tunes on.

Each seed's session runs once through the real app (in process, a throwaway SQLite file,
recall on, the extractive summariser), and its last prompt is scored as the held-out scorer
scores it (a line holding an old value without the new one presents the old value as
current). Each such correction is put down to every part of the prompt that holds such a
line: ``summary`` (the summary message), ``recall`` (the recall block), ``raw user`` and
``raw other`` (messages of the recent window: the user's, and the assistant's or a tool's).
With ``--verbose``, the lines themselves. ::

    python -m bench.heldout.corrections_source --set corrections --seeds 7100-7119
    python -m bench.heldout.corrections_source --set corrections-ask --seeds 7100-7119
    python -m bench.heldout.corrections_source --set third --seeds 5000-5009 --verbose

``corrections-ask`` is the corrections generator with a last message that asks again about
every corrected subject (``generate(ask=True)``): what recall brings back then.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from app.budget.recall import RECALL_HEADING
from bench.common import running_app
from bench.heldout import corrections
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Scenario, normalise
from bench.heldout.scorer import Agent

_PIECES = re.compile(r"[\n;]")
SUMMARY_HEADING = "## Summary of earlier conversation"


def _source(message: dict[str, Any]) -> str:
    content = str(message.get("content") or "")
    if content.startswith(RECALL_HEADING):
        return "recall"
    if message.get("role") == "system" and SUMMARY_HEADING in content:
        # The summary may share the system message with the layers before it.
        return "summary"
    if message.get("role") == "system":
        return "system"
    return "raw user" if message.get("role") == "user" else "raw other"


def _parts(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(source, line) of ``message``; a system message holding the summary gives the lines
    after its heading to the summary and the ones before to the system layers."""
    content = message.get("content")
    if not isinstance(content, str):
        return []
    source = _source(message)
    if source == "summary":
        before, _, after = content.partition(SUMMARY_HEADING)
        return [("system", line) for line in _PIECES.split(before)] + [
            ("summary", line) for line in _PIECES.split(after)
        ]
    return [(source, line) for line in _PIECES.split(content)]


class _Sourcing(Agent):
    """The scorer's agent, keeping for each correction the sources of its stale lines."""

    stale: list[tuple[str, str, list[tuple[str, str]]]]

    def _score_facts(self, messages: list[dict[str, Any]]) -> None:
        super()._score_facts(messages)
        lines = [
            (source, normalise(line)) for message in messages for source, line in _parts(message)
        ]
        self.stale = []
        for fact in self.scenario.facts:
            if fact.corrected_to is None:
                continue
            new = value_pattern(fact.corrected_to)
            olds = [value_pattern(value) for value in fact.old_values]
            found = [
                (source, line)
                for source, line in lines
                if any(o.search(line) for o in olds) and not new.search(line)
            ]
            self.stale.append((fact.style or fact.kind, fact.corrected_to, found))


def _generator(name: str) -> Callable[[int], Scenario]:
    if name == "corrections":
        return lambda seed: corrections.generate(seed)
    if name == "corrections-ask":
        return lambda seed: corrections.generate(seed, ask=True)
    from bench.heldout.__main__ import SETS

    if name not in ("first", "second", "third"):
        raise SystemExit("only sets one may tune on: corrections[-ask], first, second, third")
    chosen = SETS[name].generate
    return lambda seed: chosen(seed, 280)


async def _run(name: str, seeds: list[int], *, verbose: bool) -> None:
    generate = _generator(name)
    by_source: Counter[str] = Counter()
    stale_total = corrections_total = 0
    async with running_app() as client:
        for seed in seeds:
            agent = _Sourcing(client, generate(seed), recall=True)
            await agent.run()
            for style, new, found in agent.stale:
                corrections_total += 1
                if not found:
                    continue
                stale_total += 1
                for source in sorted({source for source, _ in found}):
                    by_source[source] += 1
                if verbose:
                    print(f"seed {seed} [{style}] new={new!r}", file=sys.stderr)  # noqa: T201
                    for source, line in found:
                        print(f"    {source:>9}: {line[:200]}", file=sys.stderr)  # noqa: T201
    print(f"old value presented as current: {stale_total}/{corrections_total}")  # noqa: T201
    for source, count in by_source.most_common():
        print(f"  {source:<10}{count:>4}")  # noqa: T201


def main(argv: list[str] | None = None) -> None:
    from bench.heldout.__main__ import seed_list

    parser = argparse.ArgumentParser(
        prog="python -m bench.heldout.corrections_source", description=__doc__
    )
    parser.add_argument("--set", default="corrections")
    parser.add_argument("--seeds", default="7100-7119")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    asyncio.run(_run(args.set, seed_list(args.seeds), verbose=args.verbose))


if __name__ == "__main__":
    main()
