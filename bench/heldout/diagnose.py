"""``python -m bench.heldout.diagnose``: why each user fact missing from the last prompt is
missing, on seeds one tunes on.

Each seed's session runs once through the real app (in process, a throwaway SQLite file,
recall off: the summary alone is judged). For every fact whose value is not in the last
prompt, the sentence of the user's message that holds the value is judged again
(:func:`app.budget.statements.tier`) and put in one of these causes:

- ``judged routine`` / ``judged small talk``: the sentence was not taken for a statement;
- ``statement, left out``: judged a statement (or a plain one) and not in the last summary
  (left out for room, or replaced by a correction that was not about it);
- ``in summary, value lost``: the message is cited by the summary and the value is not there
  (cut at a word, split into pieces);
- ``not read``: no piece of the message holds the value whole.

It also counts what the last summary's user block holds, by tier, in lines and in tokens:
what took the room. ::

    python -m bench.heldout.diagnose --set second --seeds 3000,3002,3005,3007
    python -m bench.heldout.diagnose --set first --seeds 1000-1009 --verbose
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections import Counter
from typing import Any

import tiktoken

from app.budget.statements import Tier, tier
from app.budget.tokens import TiktokenCounter
from app.summarize.base import SourceMessage
from app.summarize.extractive import _user_candidates
from bench.common import running_app
from bench.heldout.__main__ import SETS, seed_list
from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Scenario, normalise
from bench.heldout.scorer import Agent, prompt_text


def _sentence_of(text: str, value: str) -> tuple[str, Tier] | None:
    """The piece of a user message the summariser reads that holds ``value``, and its tier."""
    pattern = value_pattern(value)
    for candidate in _user_candidates(SourceMessage(0, "user", text), 0):
        if pattern.search(normalise(candidate.item.text)):
            return candidate.item.text, tier(candidate.item.text)
    return None


class _Watching(Agent):
    """The scorer's agent, keeping the last prompt it scored."""

    last: list[dict[str, Any]]

    def _score_facts(self, messages: list[dict[str, Any]]) -> None:
        self.last = messages
        super()._score_facts(messages)


async def _session(
    client: Any, scenario: Scenario, verbose: bool
) -> tuple[Counter[str], Counter[str], Counter[str]]:
    agent = _Watching(client, scenario, recall=False)
    result = await agent.run()
    base = f"/v1/sessions/{agent.session}"
    users: list[dict[str, Any]] = []
    after = 0
    while True:
        page = (await client.get(f"{base}/messages", params={"after_seq": after})).json()
        users.extend(m for m in page["messages"] if m["role"] == "user")
        if page["next_after_seq"] is None:
            break
        after = page["next_after_seq"]
    summaries = (await client.get(f"{base}/summaries", params={"limit": 1})).json()["summaries"]
    latest = summaries[0] if summaries else None
    items = [
        item
        for field in ("key_facts", "decisions", "open_questions", "action_items")
        for item in (latest or {}).get(field, [])
    ]
    cited = {i for item in items for i in item["source_message_ids"]}
    summary_text = normalise(
        "\n".join([latest["summary_text"] if latest else "", *(i["text"] for i in items)])
    )
    shown = prompt_text(agent.last)
    causes: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    for fact in scenario.facts:
        value = fact.corrected_to or fact.value
        if value_pattern(value).search(shown):
            continue
        said = fact.correction_turn if fact.corrected_to is not None else fact.turn
        assert said is not None
        message = users[said]
        found = _sentence_of(str(message["content"]), value)
        if found is None:
            cause = "not read"
        elif found[1] >= Tier.ROUTINE:
            cause = f"judged {found[1].name.lower().replace('_', ' ')}"
        elif message["id"] in cited and not value_pattern(value).search(summary_text):
            cause = "in summary, value lost"
        else:
            cause = "statement, left out"
        causes[cause] += 1
        by_kind[f"{fact.kind}: {cause}"] += 1
        if verbose:
            sentence = found[0] if found else str(message["content"])
            print(f"  [{cause}] {fact.kind} {value!r}: {sentence[:160]!r}", file=sys.stderr)  # noqa: T201
    counter = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
    held: Counter[str] = Counter()
    for item in items:
        if item["from_user"]:
            name = tier(item["text"]).name.lower()
            held[f"{name} lines"] += 1
            held[f"{name} tokens"] += counter.count_text(f"- {item['text']}") + 1
        else:
            held["assistant/tool lines"] += 1
            held["assistant/tool tokens"] += counter.count_text(f"- {item['text']}") + 1
    lost = sum(causes.values())
    print(  # noqa: T201
        f"seed {scenario.seed} ({scenario.agent}): {len(scenario.facts) - lost}/"
        f"{len(scenario.facts)} facts kept; lost: {dict(causes)}; block: {dict(held)}",
        file=sys.stderr,
    )
    del result
    return causes, by_kind, held


async def _run(which: str, seeds: list[int], turns: int, verbose: bool) -> None:
    generate = SETS[which].generate
    causes: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    held: Counter[str] = Counter()
    async with running_app() as client:
        for seed in seeds:
            c, k, h = await _session(client, generate(seed, turns), verbose)
            causes.update(c)
            by_kind.update(k)
            held.update(h)
    print(f"\n{which} set, seeds {seeds}: facts lost, by cause")  # noqa: T201
    for cause, count in causes.most_common():
        print(f"  {cause:<40}{count:>6}")  # noqa: T201
    print("by kind and cause")  # noqa: T201
    for key, count in sorted(by_kind.items()):
        print(f"  {key:<60}{count:>6}")  # noqa: T201
    print("the last summaries' lines and tokens (all seeds), by tier")  # noqa: T201
    for key, count in sorted(held.items()):
        print(f"  {key:<40}{count:>6}")  # noqa: T201


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout.diagnose", description=__doc__)
    parser.add_argument("--set", choices=tuple(SETS), default="second", dest="which")
    parser.add_argument("--seeds", required=True, help="e.g. 3000,3002 or 1000-1009")
    parser.add_argument("--turns", type=int, default=280)
    parser.add_argument("--verbose", action="store_true", help="print every lost fact")
    args = parser.parse_args(argv)
    asyncio.run(_run(args.which, seed_list(args.seeds), args.turns, args.verbose))


if __name__ == "__main__":
    main()
