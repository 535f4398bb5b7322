"""How much of what a prompt shares with the previous one do its cache breakpoints cover?

A 400-turn tool-using session (``bench.synth``) runs through contextd with every prompt in
Anthropic's format. For each prompt after the first:

- *shared*: the tokens of the longest run of leading blocks (system, then each message's
  blocks, breakpoints aside) that it has in common with the previous prompt: what a prefix
  cache could serve at best;
- *covered*: the tokens up to the last of its breakpoints that lies within that run at a
  block where the previous prompt had a breakpoint too, so that the previous request wrote a
  cache entry there that this one reads (strict: Anthropic's look-back over earlier block
  boundaries, which could only add to it, is not counted).

The figure is covered / shared over the whole session. Blocks are costed with o200k_base over
their text (JSON for tool calls), a proxy for Claude's tokenizer: it is a share, so the
proxy's bias cancels out.

    python -m bench.cache_breakpoints [--turns 400] [--model claude-sonnet-4-5] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import tiktoken

from bench.common import machine, running_app
from bench.synth import generate

ENCODING = tiktoken.get_encoding("o200k_base")


@dataclass(frozen=True)
class Unit:
    """One block of a prompt, where it stands, what it costs, and whether it is marked."""

    key: tuple[int, str, str]
    tokens: int
    breakpoint: bool


def _cost(block: dict[str, Any]) -> int:
    text = block.get("text")
    if not isinstance(text, str):
        text = json.dumps({k: v for k, v in block.items() if k != "cache_control"})
    return len(ENCODING.encode(text, disallowed_special=()))


def units(prompt: dict[str, Any]) -> list[Unit]:
    system = prompt["system"] or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    placed = [(-1, "system", block) for block in system]
    placed += [
        (index, message["role"], block)
        for index, message in enumerate(prompt["messages"])
        for block in message["content"]
    ]
    return [
        Unit(
            key=(
                index,
                role,
                json.dumps({k: v for k, v in block.items() if k != "cache_control"}),
            ),
            tokens=_cost(block),
            breakpoint="cache_control" in block,
        )
        for index, role, block in placed
    ]


def coverage(previous: Sequence[Unit], current: Sequence[Unit]) -> tuple[int, int]:
    """(shared tokens, tokens covered by a breakpoint the previous prompt also wrote)."""
    shared = 0
    for before, now in zip(previous, current, strict=False):
        if before.key != now.key:
            break
        shared += 1
    covered_blocks = 0
    for index in range(shared):
        if current[index].breakpoint and previous[index].breakpoint:
            covered_blocks = index + 1
    return (
        sum(u.tokens for u in current[:shared]),
        sum(u.tokens for u in current[:covered_blocks]),
    )


async def run(turns: int, model: str, database_url: str | None) -> dict[str, Any]:
    conversation = generate(turns, seed=3)
    prompts: list[dict[str, Any]] = []
    async with running_app(database_url) as client:
        session = (
            await client.post(
                "/v1/sessions", json={"model": model, "system": {"global": conversation.system}}
            )
        ).json()
        sid = session["id"]
        for turn in conversation.turns:
            response = await client.post(
                f"/v1/sessions/{sid}/turns", json={**turn.start_body(), "format": "anthropic"}
            )
            assert response.status_code == 201, response.text
            prompts.append(response.json())
            turn_id = prompts[-1]["turn_id"]
            for step in turn.steps:
                response = await client.post(
                    f"/v1/sessions/{sid}/turns/{turn_id}/steps",
                    json={**step.body(), "format": "anthropic"},
                )
                assert response.status_code == 200, response.text
                prompts.append(response.json())
            await client.post(
                f"/v1/sessions/{sid}/turns/{turn_id}/complete", json=turn.complete_body()
            )
    shared = covered = fully = 0
    marks = 0
    for before, now in itertools.pairwise(prompts):
        pair_shared, pair_covered = coverage(units(before), units(now))
        shared += pair_shared
        covered += pair_covered
        fully += pair_covered == pair_shared
        marks = max(marks, sum(u.breakpoint for u in units(now)))
    return {
        "turns": turns,
        "model": model,
        "prompts": len(prompts),
        "input_budget": session["budget"]["input_budget"],
        "shared_tokens": shared,
        "covered_tokens": covered,
        "covered_share": covered / shared if shared else 1.0,
        "pairs_fully_covered_share": fully / (len(prompts) - 1),
        "most_breakpoints_in_a_prompt": marks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--model", default="claude-sonnet-4-5")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.model, args.database_url))
    print(f"cache breakpoints of the Anthropic rendering, {machine()}")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:30} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
