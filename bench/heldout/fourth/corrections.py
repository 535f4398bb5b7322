"""``python -m bench.heldout.fourth.corrections``: the fourth set's corrections by style.

The report gives one line for all corrections; this one splits them, on the last prompt of
each report seed's session (recall on, extractive summariser, SQLite in process), by how the
user made them: a whole correction marked as one ("no wait — …") or not, one corrected
again, one that drops a detail altogether, one that changes only the time of a message that
also names a person and a place; and, across those, the corrections of a third person's
detail. The matches are the scorer's: the new value anywhere in the prompt, an old value
alone on a line.
"""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from typing import Any

from bench.common import running_app
from bench.heldout.fourth import REPORT_SEEDS, generate
from bench.heldout.fourth import facts as f
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Fact, Scenario
from bench.heldout.scorer import Agent, _lines, prompt_text

#: Words only the marked phrasings (facts.MARKED) hold.
MARKS = (
    "no wait",
    "correction!!",
    "misspoke",
    "update:",
    "that was wrong",
    "esmena",
    "rettelse",
    "ignore the",
)
DROPPED = {frame.retract[1] for frame in f.SHARED if frame.retract is not None}


class _LastPrompt(Agent):
    """The harness's agent, keeping the last prompt it scored."""

    last: list[dict[str, Any]]

    def _score_facts(self, messages: list[dict[str, Any]]) -> None:
        self.last = messages
        super()._score_facts(messages)


def style(scenario: Scenario, fact: Fact) -> str:
    assert fact.correction_turn is not None
    said = scenario.turns[fact.correction_turn].user.casefold()
    if fact.superseded:
        return "corrected twice"
    if fact.corrected_to in DROPPED:
        return "dropped altogether"
    if fact.kind == f.LIST:
        return "partial (time only)"
    if any(mark in said for mark in MARKS):
        return "whole, marked"
    return "whole, unmarked"


async def main() -> None:
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    async with running_app() as client:
        for seed in REPORT_SEEDS:
            scenario = generate(seed)
            agent = _LastPrompt(client, scenario, recall=True)
            await agent.run()
            text, lines = prompt_text(agent.last), _lines(agent.last)
            for fact in scenario.facts:
                if fact.corrected_to is None:
                    continue
                new = value_pattern(fact.corrected_to)
                olds = [value_pattern(value) for value in fact.old_values]
                shown = any(old.search(ln) and not new.search(ln) for ln in lines for old in olds)
                groups = [style(scenario, fact)]
                if fact.kind == f.THIRD:
                    groups.append("of a third person")
                for group in groups:
                    row = table[group]
                    row[0] += 1
                    row[1] += bool(new.search(text))
                    row[2] += shown
            print(f"seed {seed} done", file=sys.stderr, flush=True)  # noqa: T201
    print(f"{'corrections':<26}{'new value present':>20}{'old value as current':>24}")  # noqa: T201
    for group, (total, present, as_current) in sorted(table.items()):
        print(f"  {group:<24}{f'{present}/{total}':>20}{f'{as_current}/{total}':>24}")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main())
