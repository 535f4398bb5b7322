"""A scripted agent runs a long tool-using session on an 8k model.

Every prompt contextd returns is counted again with tiktoken, independently of contextd's own
estimate, and compared with the input budget. Prints the figures.

    python -m bench.long_session [--turns 500] [--database-url postgresql+asyncpg://…]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

from app.budget.assembly import chat_problems
from bench.common import machine, percentile, running_app
from tests.support import independent_prompt_tokens, words


def tool_size(rng: random.Random) -> int:
    """Mostly modest tool output, now and then a large one."""
    return 1800 if rng.random() < 0.08 else rng.randint(20, 600)


async def run(turns: int, database_url: str | None, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    latencies: list[float] = []
    tokens: list[int] = []
    over_budget = invalid = rejected = 0
    async with running_app(database_url) as client:
        session = (
            await client.post(
                "/v1/sessions",
                json={
                    "model": "gpt-4",
                    "system": {"global": "You are a careful assistant.", "role": "You book."},
                    "goal": "Plan a trip",
                },
            )
        ).json()
        sid, budget = session["id"], session["budget"]["input_budget"]

        async def call(path: str, body: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal over_budget, invalid, rejected
            started = time.perf_counter()
            response = await client.post(path, json=body)
            latencies.append(time.perf_counter() - started)
            if response.status_code == 422:
                rejected += 1
                return None
            response.raise_for_status()
            prompt: dict[str, Any] = response.json()
            counted = independent_prompt_tokens(prompt["messages"], "gpt-4")
            tokens.append(counted)
            over_budget += counted > budget
            invalid += bool(chat_problems(prompt["messages"]))
            return prompt

        for number in range(turns):
            text = f"Turn {number}: ref BK-{number:04d}. " + words(rng.randint(5, 150), number)
            prompt = await call(f"/v1/sessions/{sid}/turns", {"message": {"content": text}})
            if prompt is None:
                continue
            turn = prompt["turn_id"]
            for step in range(rng.choice([0, 1, 1, 2])):
                ids = [f"c{number}_{step}_{i}" for i in range(rng.randint(1, 2))]
                await call(
                    f"/v1/sessions/{sid}/turns/{turn}/steps",
                    {
                        "assistant": {
                            "tool_calls": [
                                {"id": i, "function": {"name": "search", "arguments": "{}"}}
                                for i in ids
                            ]
                        },
                        "tool_results": [
                            {"tool_call_id": i, "content": words(tool_size(rng), rng.randint(0, 9))}
                            for i in ids
                        ],
                    },
                )
            await client.post(
                f"/v1/sessions/{sid}/turns/{turn}/complete",
                json={"assistant": {"content": "Done: " + words(rng.randint(5, 80))}},
            )
        audit = (await client.get("/v1/audit", params={"session_id": sid, "limit": 1})).json()
        summaries = await client.get(f"/v1/sessions/{sid}/summaries", params={"limit": 500})
        stored = (await client.get(f"/v1/sessions/{sid}")).json()["message_count"]
    return {
        "turns": turns,
        "assemblies": len(latencies),
        "stored_messages": stored,
        "input_budget": budget,
        "max_prompt_tokens": max(tokens),
        "max_share_of_budget": max(tokens) / budget,
        "mean_prompt_tokens": sum(tokens) / len(tokens),
        "prompts_over_budget": over_budget,
        "invalid_prompts": invalid,
        "rejected": rejected,
        "summaries": len(summaries.json()["summaries"]),
        "last_audit_id": audit["items"][0]["id"],
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p95_ms": percentile(latencies, 0.95) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--database-url")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.database_url, args.seed))
    print(f"long session on {args.database_url or 'SQLite'} — {machine()}")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:22} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
