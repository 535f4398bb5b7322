"""How many prompts of a deepseek-reasoner agent with tools would DeepSeek refuse?

DeepSeek's thinking mode answers 400 ("Missing reasoning_content field") to a request in
which an assistant message that made tool calls lacks its ``reasoning_content``
(https://api-docs.deepseek.com/guides/thinking_mode). A tool-using agent (tests/
agent_traffic.py steps, each call preceded by reasoning, one in five empty) runs a session
at a 16k window; every prompt is checked for that, and for an empty reasoning given back as
anything but "".

    python -m bench.deepseek_reasoning [--turns 60] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import random
from typing import Any

from bench.common import machine, running_app
from tests.agent_traffic import agent_step
from tests.support import words


async def run(turns: int, database_url: str | None) -> dict[str, Any]:
    rng = random.Random(73)
    prompts = refused_by_deepseek = empty_changed = over = 0
    async with running_app(database_url) as client:
        session = (
            await client.post(
                "/v1/sessions",
                json={
                    "model": "deepseek-reasoner",
                    "context_limit": 16_000,
                    "max_output_tokens": 2048,
                    "system": {"global": "You are a coding agent."},
                },
            )
        ).json()
        sid, budget = session["id"], session["budget"]["input_budget"]
        reasoning: dict[str, str] = {}
        for number in range(turns):
            text = f"Ticket {number}: " + words(rng.randint(10, 120), number)
            turn = (
                await client.post(f"/v1/sessions/{sid}/turns", json={"message": {"content": text}})
            ).json()
            for _ in range(rng.choice((1, 1, 2, 3))):
                step = agent_step(rng, huge=False)
                thought = "" if rng.random() < 0.2 else words(rng.randint(30, 300), number)
                step.body["assistant"]["reasoning_content"] = thought
                reasoning[step.call_ids[0]] = thought
                response = await client.post(
                    f"/v1/sessions/{sid}/turns/{turn['turn_id']}/steps", json=step.body
                )
                if response.status_code != 200:
                    continue
                prompt = response.json()
                prompts += 1
                over += prompt["budget"]["estimated_input_tokens"] > budget
                calls = [m for m in prompt["messages"] if m.get("tool_calls")]
                refused_by_deepseek += any(
                    not isinstance(m.get("reasoning_content"), str) for m in calls
                )
                empty_changed += any(
                    reasoning[m["tool_calls"][0]["id"]] == "" and m.get("reasoning_content") != ""
                    for m in calls
                )
            await client.post(
                f"/v1/sessions/{sid}/turns/{turn['turn_id']}/complete",
                json={"assistant": {"content": "Done.", "reasoning_content": words(120, number)}},
            )
    return {
        "turns": turns,
        "prompts": prompts,
        "prompts_deepseek_would_refuse": refused_by_deepseek,
        "prompts_with_an_empty_reasoning_changed": empty_changed,
        "prompts_over_budget": over,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.database_url))
    print(f"deepseek-reasoner with tools at 16k, {machine()}")  # noqa: T201
    for key, value in figures.items():
        print(f"  {key:42} {value}")  # noqa: T201


if __name__ == "__main__":
    main()
