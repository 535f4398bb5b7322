"""``python -m bench.heldout.tool_diagnose``: why a later question about a detail a tool
returned (or, with ``--roles assistant``, one the assistant stated) does not bring its
source back, on seeds one tunes on.

Each seed's session runs once through the real app (in process, a throwaway SQLite file,
recall on). At the turn start of each question whose source is a tool result (or an
assistant's message, with ``--roles``), what recall
did is kept (the candidates the full-text search gave, their order after ranking, the
block) and the question is put in one of these causes, and said to share a word with its
source or not:

- ``in the prompt``: the source had not left the prompt (nothing for recall to do);
- ``shown``: the block shows the source's words around the detail;
- ``not a candidate``: the search did not return the source (no query word in it, or
  more than the candidates asked for ranked above it);
- ``ranked below the block``: a candidate, ranked lower than what the block holds;
- ``tool results full``: ranked within reach, left out for ``MAX_TOOL_RESULTS``;
- ``in the block, window misses``: shown, by a window of its words that does not hold the
  detail.

With ``--verbose`` each question is printed with its source's rank and the words the recall
searched for. ::

    python -m bench.heldout.tool_diagnose --set third --seeds 5000-5009 --verbose
    python -m bench.heldout.tool_diagnose --set first --seeds 1100-1102 --roles tool,assistant
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from app.budget import recall as block_rules
from app.search import recall as turn_recall
from app.search.repository import SearchRepository
from bench.common import running_app
from bench.heldout.__main__ import SETS, seed_list
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Question, Scenario, normalise
from bench.heldout.scorer import Agent, prompt_text


@dataclass
class _Seen:
    """What recall did at the latest turn start."""

    terms: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    found: list[Any] = field(default_factory=list)
    ranked: list[block_rules.RecallHit] = field(default_factory=list)
    block: block_rules.RecallBlock | None = None

    def clear(self) -> None:
        self.terms, self.phrases, self.found, self.ranked, self.block = (), (), [], [], None


SEEN = _Seen()


def _watch() -> None:
    """Keep what recall searched for, found, ranked and showed at each turn start."""
    repository = SearchRepository
    candidates = repository.recall_candidates
    ranked = turn_recall.TurnRecall._ranked
    block = block_rules.recall_block

    async def recall_candidates(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = await candidates(self, *args, **kwargs)
        SEEN.terms, SEEN.phrases, SEEN.found = args[1], args[2], found
        return found

    async def watched_ranked(self: Any, *args: Any, **kwargs: Any) -> Any:
        hits = await ranked(self, *args, **kwargs)
        SEEN.ranked = hits
        return hits

    def watched_block(*args: Any, **kwargs: Any) -> Any:
        made = block(*args, **kwargs)
        SEEN.block = made
        return made

    repository.recall_candidates = recall_candidates  # type: ignore[method-assign]
    turn_recall.TurnRecall._ranked = watched_ranked  # type: ignore[method-assign]
    setattr(turn_recall, "recall_block", watched_block)  # noqa: B010


class _Diagnosing(Agent):
    def __init__(self, *args: Any, verbose: bool, roles: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.verbose = verbose
        self.roles = roles
        self.causes: Counter[str] = Counter()
        self.questions = {q.turn: q for q in self.scenario.questions}
        self.asked: dict[int, str] = {}

    async def run(self) -> Any:
        for index, turn in enumerate(self.scenario.turns):
            self.asked[index] = turn.user
        return await super().run()

    def _score_question(self, question: Question, messages: list[dict[str, Any]]) -> None:
        super()._score_question(question, messages)
        if question.source_role in self.roles:
            self._diagnose(question, messages)
        SEEN.clear()

    def _diagnose(self, question: Question, messages: list[dict[str, Any]]) -> None:
        pattern = value_pattern(question.value)
        block_text = SEEN.block.text if SEEN.block is not None else ""
        outside = [m for m in messages if not str(m.get("content", "")).startswith("Recalled")]
        holding = [
            hit
            for hit in SEEN.ranked
            if hit.role == question.source_role and pattern.search(normalise(hit.text))
        ]
        found_ids = [hit.message_id for hit in SEEN.found]
        shown = SEEN.block.message_ids if SEEN.block is not None else ()
        tools_before = 0
        place = None
        if holding:
            source = holding[0]
            place = next(i for i, hit in enumerate(SEEN.ranked) if hit is source)
            tools_before = sum(hit.role == "tool" for hit in SEEN.ranked[:place])
        if question.source_window in prompt_text(outside):
            cause = "in the prompt"
        elif question.source_window in normalise(block_text):
            cause = "shown"
        elif not holding:
            cause = "not a candidate"
        elif holding[0].message_id in shown:
            cause = "in the block, window misses"
        elif (
            question.source_role == "tool"
            and tools_before >= block_rules.MAX_TOOL_RESULTS
            and (not SEEN.block or place is None or place < len(SEEN.ranked))
        ):
            cause = "tool results full"
        else:
            cause = "ranked below the block"
        cause = f"{question.source_role}: {cause}"
        cause += ", shares a word" if question.shares_word else ", shares no word"
        self.causes[cause] += 1
        if self.verbose:
            print(  # noqa: T201
                f"  [{cause}] seed {self.scenario.seed} turn {question.turn}: "
                f"{self.asked[question.turn]!r} value {question.value!r}; "
                f"terms {SEEN.terms} phrases {SEEN.phrases}; candidates {len(found_ids)}, "
                f"source ranked {place} ({tools_before} tool results before it), "
                f"block {len(shown)} messages",
                file=sys.stderr,
            )
            if not cause.startswith(("shown", "in the")):
                for hit in SEEN.ranked[: (place or 5) + 1]:
                    print(  # noqa: T201
                        f"      {hit.role:<9} {hit.seq:>5} {hit.text[:110]!r}", file=sys.stderr
                    )


async def _run(
    which: str, seeds: list[int], turns: int, verbose: bool, roles: tuple[str, ...]
) -> Counter[str]:
    _watch()
    generate = SETS[which].generate
    causes: Counter[str] = Counter()
    async with running_app() as client:
        for seed in seeds:
            scenario: Scenario = generate(seed, turns)
            agent = _Diagnosing(client, scenario, recall=True, verbose=verbose, roles=roles)
            await agent.run()
            causes.update(agent.causes)
            print(f"seed {seed}: {dict(agent.causes)}", file=sys.stderr)  # noqa: T201
    print(f"\n{which} set, seeds {seeds}: questions about {', '.join(roles)} details, by cause")  # noqa: T201
    for cause, count in sorted(causes.items()):
        print(f"  {cause:<50}{count:>6}")  # noqa: T201
    return causes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.heldout.tool_diagnose", description=__doc__
    )
    parser.add_argument(
        "--set", choices=("first", "second", "third"), default="third", dest="which"
    )
    parser.add_argument("--seeds", required=True, help="e.g. 5000-5009")
    parser.add_argument("--turns", type=int, default=280)
    parser.add_argument("--verbose", action="store_true", help="print every question")
    parser.add_argument(
        "--roles",
        default="tool",
        help="whose details to diagnose, comma-separated: tool, assistant (default: tool)",
    )
    args = parser.parse_args(argv)
    roles = tuple(role for role in args.roles.split(",") if role)
    asyncio.run(_run(args.which, seed_list(args.seeds), args.turns, args.verbose, roles))


if __name__ == "__main__":
    main()
