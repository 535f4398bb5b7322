"""A screenshot-taking Claude agent: what images in tool results do to its prompts.

Each turn is one step whose assistant message is Anthropic's (a thinking block, text and a
``tool_use``) and whose result is a ``tool_result`` with an 800x600 screenshot, then the
answer. The session runs at a small context, once with the images of completed turns beyond
the newest three giving way when room is needed (the default) and once with every image kept
(``CONTEXTD_TOOL_IMAGES_KEPT`` large), and the same steps again posted in the OpenAI shape.

    python -m bench.tool_images [--turns 60] [--context 16000] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import struct
import time
from collections import Counter
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from app.budget.assembly import chat_problems
from bench.common import machine, running_app

SIGNATURE = "EqQBCkYIBxgCKkBl3+kR/0a9Zq==" + "Zm9vYmFy/+" * 8


def _png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    return base64.b64encode(header + struct.pack(">II", width, height) + b"\x08\x02\0\0\0").decode()


SCREENSHOT_DATA = _png(800, 600)
SCREENSHOT = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": SCREENSHOT_DATA},
}


def _step(number: int, anthropic_shape: bool) -> dict[str, Any]:
    call_id = f"toolu_{number:04d}"
    if anthropic_shape:
        return {
            "assistant": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"Page {number}.", "signature": SIGNATURE},
                    {"type": "text", "text": "Taking a screenshot."},
                    {"type": "tool_use", "id": call_id, "name": "screenshot", "input": {"n": 1}},
                ],
            },
            "tool_results": [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": [{"type": "text", "text": f"Page {number}:"}, SCREENSHOT],
                }
            ],
        }
    url = f"data:image/png;base64,{SCREENSHOT_DATA}"
    return {
        "assistant": {
            "content": "Taking a screenshot.",
            "tool_calls": [
                {"id": call_id, "function": {"name": "screenshot", "arguments": '{"n": 1}'}}
            ],
        },
        "tool_results": [
            {
                "tool_call_id": call_id,
                "content": [
                    {"type": "text", "text": f"Page {number}:"},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            }
        ],
    }


async def _session(
    client: httpx.AsyncClient, turns: int, context: int, anthropic_shape: bool
) -> dict[str, Any]:
    prompt_format = "anthropic" if anthropic_shape else "openai"
    session = (
        await client.post("/v1/sessions", json={"model": "gpt-4o", "context_limit": context})
    ).json()
    sid = session["id"]
    step_ms: list[float] = []
    tokens: list[int] = []
    invalid = over = 0
    for number in range(turns):
        turn = (
            await client.post(
                f"/v1/sessions/{sid}/turns", json={"message": {"content": f"Page {number}?"}}
            )
        ).json()
        started = time.perf_counter()
        response = await client.post(
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/steps",
            json={**_step(number, anthropic_shape), "format": prompt_format},
        )
        step_ms.append((time.perf_counter() - started) * 1000)
        prompt = response.json()
        budget = prompt["budget"]
        tokens.append(budget["estimated_input_tokens"])
        over += budget["estimated_input_tokens"] > budget["input_budget"]
        if anthropic_shape:
            invalid += bool(
                anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"]))
            )
        else:
            invalid += bool(chat_problems(prompt["messages"]))
        await client.post(
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/complete",
            json={
                "assistant": {"role": "assistant", "content": [{"type": "text", "text": "Seen."}]}
            },
        )
    rows = (await client.get("/v1/audit", params={"session_id": sid, "limit": 500})).json()["items"]
    summaries = [r["summary_reason"] for r in rows if r["summary_triggered"]]
    images_aside = [r["block_telemetry"]["tool_images"]["images_set_aside"] for r in rows]
    kept = [r["prefix_kept"] for r in rows if r["prefix_kept"] is not None]
    return {
        "median_step_ms": statistics.median(step_ms),
        "mean_prompt_tokens": statistics.mean(tokens),
        "max_prompt_tokens": max(tokens),
        "prompts_over_budget": over,
        "prompts_invalid": invalid,
        "threshold_summaries": summaries.count("threshold"),
        "all_summaries": len(summaries),
        "max_images_set_aside": max(images_aside),
        "prefix_kept_share": sum(kept) / len(kept),
        "prefix_changes": dict(Counter(r["change_reason"] for r in rows if r["change_reason"])),
    }


async def run(turns: int, context: int, database_url: str | None) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for kept in (3, 100_000):
        os.environ["CONTEXTD_TOOL_IMAGES_KEPT"] = str(kept)
        async with running_app(database_url) as client:
            for anthropic_shape in (True, False):
                shape = "anthropic" if anthropic_shape else "openai"
                name = f"{shape}, images kept {'3' if kept == 3 else 'all'}"
                results[name] = await _session(client, turns, context, anthropic_shape)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--context", type=int, default=16_000)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.turns, args.context, args.database_url))
    where = args.database_url.split("@")[-1] if args.database_url else "SQLite"
    print(f"tool images on {where}, {args.turns} turns at {args.context} — {machine()}")  # noqa: T201
    for name, values in figures.items():
        print(f"  {name}")  # noqa: T201
        for key, value in values.items():
            shown = f"{value:.3f}" if isinstance(value, float) else str(value)
            print(f"    {key:24} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
