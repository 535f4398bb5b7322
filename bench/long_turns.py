"""Does a long turn of realistic tool steps on a small model go on to its end?

One 60-step turn per case on an 8k window (tests/agent_traffic.py: ids of ``call_`` and 24
characters, arguments of 15-35 tokens, 1-3 parallel calls, one step in eight with two
results of about 20k tokens, Claude's thinking with signatures and redacted thinking). Each
step is posted as the agent would; after a refused step the turn goes on with the next one,
so every case makes 60 posts. Printed:
the first refused step, the refused steps, and how many prompts were within budget and valid
in both formats.

    python -m bench.long_turns [--steps 60] [--seeds 3] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import random
from typing import Any

from app.budget.anthropic import AnthropicPrompt, anthropic_problems, to_anthropic
from app.budget.assembly import chat_problems
from bench.common import machine, running_app
from tests.agent_traffic import agent_step
from tests.support import audit_rows

CASES = {
    "gpt-4 (8k), OpenAI format": ("gpt-4", None, "openai", False),
    "gpt-4 (8k), Anthropic format": ("gpt-4", None, "anthropic", False),
    "Claude with thinking at 8k": ("claude-sonnet-4-5", 8192, "anthropic", True),
}


async def run_case(
    client: Any, model: str, limit: int | None, fmt: str, thinking: bool, steps: int, seed: int
) -> dict[str, Any]:
    rng = random.Random(seed)
    body: dict[str, Any] = {"model": model, "system": {"global": "You are a coding agent."}}
    if limit is not None:
        body |= {"context_limit": limit, "max_output_tokens": 1024}
    session = (await client.post("/v1/sessions", json=body)).json()
    sid, budget = session["id"], session["budget"]["input_budget"]
    turn = (
        await client.post(
            f"/v1/sessions/{sid}/turns",
            json={"message": {"content": "Find why invoices round wrongly and fix it."}},
        )
    ).json()
    refused: list[int] = []
    invalid = over = 0
    for step in range(steps):
        posted = agent_step(rng, thinking=thinking)
        response = await client.post(
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/steps",
            json={**posted.body, "format": fmt},
        )
        if response.status_code != 200:
            refused.append(step)
            continue
        prompt = response.json()
        if prompt["budget"]["estimated_input_tokens"] > budget:
            over += 1
        if fmt == "openai":
            problems = chat_problems(prompt["messages"]) or anthropic_problems(
                to_anthropic(prompt["messages"])
            )
        else:
            problems = anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"]))
        invalid += bool(problems)
    rows = await audit_rows(client, sid)
    breaks = sum(row["prefix_kept"] is False for row in rows)
    return {"first_refused": refused[0] if refused else None, "refused": len(refused),
            "over": over, "invalid": invalid, "breaks": breaks}  # fmt: skip


async def run(steps: int, seeds: int, database_url: str | None) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {}
    async with running_app(database_url) as client:
        for name, (model, limit, fmt, thinking) in CASES.items():
            runs = [
                await run_case(client, model, limit, fmt, thinking, steps, seed)
                for seed in range(seeds)
            ]
            firsts = [r["first_refused"] for r in runs if r["first_refused"] is not None]
            figures[name] = {
                "turns": seeds,
                "turns_with_a_refusal": len(firsts),
                "first_refused_step_min": min(firsts) if firsts else None,
                "refused_steps": sum(r["refused"] for r in runs),
                "prompts_over_budget": sum(r["over"] for r in runs),
                "prompts_invalid": sum(r["invalid"] for r in runs),
                "prefix_breaks": sum(r["breaks"] for r in runs),
            }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.steps, args.seeds, args.database_url))
    print(f"long turns, {args.steps} steps x {args.seeds} seeds, {machine()}")  # noqa: T201
    for name, values in figures.items():
        print(f"  {name}")  # noqa: T201
        for key, value in values.items():
            print(f"    {key:24} {value}")  # noqa: T201


if __name__ == "__main__":
    main()
