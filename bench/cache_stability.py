"""How often does a prompt keep the previous prompt as its prefix (the provider's cache hits)?

A scripted 500-turn tool-using session at a tight budget (an 8k model). For contextd, the
share comes from its audit rows. For comparison, a plain newest-first window over the same
conversation: each prompt is the system message plus as many of the newest messages as fit
(tool exchanges kept whole), which is what most agents do by hand.

    python -m bench.cache_stability [--turns 500] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
from typing import Any

from bench.common import machine, running_app
from tests.support import audit_rows, independent_prompt_tokens, stored_messages, words


def newest_first_window(
    system: dict[str, Any], history: list[dict[str, Any]], budget: int
) -> list[dict[str, Any]]:
    """System message + the newest messages that fit, never splitting a tool exchange."""
    kept: list[dict[str, Any]] = []
    index = len(history)
    while index > 0:
        start = index - 1
        while start > 0 and history[start]["role"] == "tool":
            start -= 1  # take the assistant call together with all its results
        candidate = history[start:index] + kept
        if independent_prompt_tokens([system, *candidate], "gpt-4") > budget:
            break
        kept, index = candidate, start
    return [system, *kept]


async def run(turns: int, database_url: str | None) -> dict[str, Any]:
    rng = random.Random(11)
    async with running_app(database_url) as client:
        session = (
            await client.post(
                "/v1/sessions",
                json={"model": "gpt-4", "system": {"global": "You are a careful assistant."}},
            )
        ).json()
        sid, budget = session["id"], session["budget"]["input_budget"]
        prompt_lengths: list[int] = []  # stored messages visible at each assembly
        for number in range(turns):
            text = f"Turn {number}: ref BK-{number:04d}. " + words(rng.randint(10, 120), number)
            prompt = (
                await client.post(f"/v1/sessions/{sid}/turns", json={"message": {"content": text}})
            ).json()
            prompt_lengths.append((await client.get(f"/v1/sessions/{sid}")).json()["message_count"])
            if rng.random() < 0.6:
                call = f"c{number}"
                await client.post(
                    f"/v1/sessions/{sid}/turns/{prompt['turn_id']}/steps",
                    json={
                        "assistant": {
                            "tool_calls": [
                                {"id": call, "function": {"name": "search", "arguments": "{}"}}
                            ]
                        },
                        "tool_results": [
                            {"tool_call_id": call, "content": words(rng.randint(40, 500))}
                        ],
                    },
                )
                prompt_lengths.append(
                    (await client.get(f"/v1/sessions/{sid}")).json()["message_count"]
                )
            await client.post(
                f"/v1/sessions/{sid}/turns/{prompt['turn_id']}/complete",
                json={"assistant": {"content": words(rng.randint(10, 80))}},
            )
        rows = await audit_rows(client, sid)
        history = [
            {k: m[k] for k in ("role", "content", "tool_calls", "tool_call_id") if m[k]}
            | {"content": m["content"]}
            for m in await stored_messages(client, sid)
        ]
    system = {"role": "system", "content": "You are a careful assistant."}
    windows = [newest_first_window(system, history[:length], budget) for length in prompt_lengths]
    window_kept = sum(now[: len(before)] == before for before, now in itertools.pairwise(windows))
    contextd_kept = sum(r["prefix_kept"] is True for r in rows)
    comparable = len(rows) - 1
    return {
        "turns": turns,
        "assemblies": len(rows),
        "input_budget": budget,
        "contextd_prefix_kept_share": contextd_kept / comparable,
        "contextd_summaries": sum(r["summary_id"] is not None for r in rows),
        "contextd_prunes": sum(bool(r["pruned_message_ids"]) for r in rows),
        "newest_first_prefix_kept_share": window_kept / (len(windows) - 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.database_url))
    print(f"prefix-cache stability, 8k model, {machine()}")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:32} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
