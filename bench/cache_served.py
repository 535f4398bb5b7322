"""What share of prompt tokens would a provider's prefix cache serve, and what breaks it?

A tool-using Claude agent with thinking (tests/agent_traffic.py: 1-3 steps a turn, thinking
with signatures, now and then redacted thinking, realistic ids and arguments) runs a long
session at a 16k window, every prompt in Anthropic's format. For each prompt after the
first, blocks (system, then each message's blocks, cache_control aside) are compared with
the previous prompt's:

- *served*: the tokens of the longest run of leading blocks the two share: what a prefix
  cache (Anthropic's, OpenAI's) serves at best (a refused step is posted no further);
- *lost*: the previous prompt's tokens after that run, which this prompt does not repeat in
  place: written to the cache and never read. Each prompt's lost tokens go to the cause its
  audit row names (``change_reason``: summary, prune, reasoning, long_turn, …).

Blocks are costed with o200k_base over their text (JSON for other blocks), a proxy for
Claude's tokenizer: the figures are shares, so its bias cancels out.

    python -m bench.cache_served [--turns 300] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
from collections import Counter
from typing import Any

from bench.cache_breakpoints import units
from bench.common import machine, running_app
from tests.agent_traffic import agent_step
from tests.support import audit_rows, words


async def run(turns: int, database_url: str | None) -> dict[str, Any]:
    rng = random.Random(300)
    prompts: list[dict[str, Any]] = []
    refused = 0
    async with running_app(database_url) as client:
        session = (
            await client.post(
                "/v1/sessions",
                json={
                    "model": "claude-sonnet-4-5",
                    "context_limit": 16_000,
                    "max_output_tokens": 2048,
                    "system": {"global": "You are a coding agent. " + words(300)},
                },
            )
        ).json()
        sid = session["id"]
        for number in range(turns):
            text = f"Ticket {number}: " + words(rng.randint(10, 150), number)
            response = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={"message": {"content": text}, "format": "anthropic"},
            )
            assert response.status_code == 201, response.text
            prompts.append(response.json())
            turn_id = prompts[-1]["turn_id"]
            for _ in range(rng.choice((1, 1, 2, 3))):
                step = agent_step(rng, thinking=True, huge=False)
                response = await client.post(
                    f"/v1/sessions/{sid}/turns/{turn_id}/steps",
                    json={**step.body, "format": "anthropic"},
                )
                if response.status_code == 200:
                    prompts.append(response.json())
                else:
                    refused += 1
            thinking = {
                "type": "thinking",
                "thinking": words(rng.randint(20, 200)),
                "signature": "EqQBCkYIBxgCKkBl3+kR/0a9Zq==",
            }
            await client.post(
                f"/v1/sessions/{sid}/turns/{turn_id}/complete",
                json={"assistant": {"content": [thinking, {"type": "text", "text": "Done."}]}},
            )
        rows = [row for row in await audit_rows(client, sid) if not row["overflow_rejected"]]
    assert len(rows) == len(prompts)
    total = served = 0
    lost: Counter[str] = Counter()
    for (before, now), row in zip(itertools.pairwise(prompts), rows[1:], strict=True):
        previous, current = units(before), units(now)
        shared = 0
        for old, new in zip(previous, current, strict=False):
            if old.key != new.key:
                break
            shared += 1
        served += sum(u.tokens for u in current[:shared])
        total += sum(u.tokens for u in current)
        missed = sum(u.tokens for u in previous[shared:])
        if missed:
            lost[row["change_reason"] or "none"] += missed
    all_lost = sum(lost.values())
    return {
        "turns": turns,
        "prompts": len(prompts),
        "served_share": served / total,
        "lost_tokens": all_lost,
        **{
            f"lost_share_{cause}": count / all_lost
            for cause, count in sorted(lost.items(), key=lambda item: -item[1])
        },
        "summaries": sum(row["summary_id"] is not None for row in rows),
        "prunes": sum(bool(row["pruned_message_ids"]) for row in rows),
        "refused_steps": refused,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.database_url))
    print(f"prefix cache served, Claude with thinking at 16k, {machine()}")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:30} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
