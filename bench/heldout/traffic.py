"""``python -m bench.heldout.traffic``: what tool-using agents really send, and where contextd
stops taking it.

- **A long turn**: one user message, then 60 steps at an 8k context, as a coding agent makes
  them: 1-3 parallel calls a step with ids shaped as the provider makes them (OpenAI
  ``call_`` + 24 characters, Anthropic ``toolu_01`` + 22), real arguments (a command line, a
  path, a query: 15-35 tokens), results of every kind and length, and in four steps two
  parallel results of about 20,000 tokens each. Run as OpenAI input with gpt-4o-mini, as
  Anthropic input with gpt-4o-mini, and as Anthropic input with a Claude model.
- **A DeepSeek reasoner with tools**: 40 turns of 1-4 steps at an 8k context; every assistant
  message carries ``reasoning_content`` (a few empty, as the API sometimes returns it).
  DeepSeek's rule (api-docs.deepseek.com/guides/thinking_mode, "Tool Calls"): between two user
  messages, if the model made a tool call, every assistant message's ``reasoning_content``
  there must be passed back in all later requests, or the API answers 400 ("Missing
  reasoning_content field in the assistant message at message index N"). A prompt breaks it
  when such a message lacks the field, or its text differs from what the model gave.

For each: the prompts, the first step refused (422) and why, prompts over the budget (OpenAI
counting, for the OpenAI-rendered gpt-4o-mini prompts), and prompts a provider would refuse
(OpenAI: tool results answer the calls of the assistant message before them; Anthropic:
every ``tool_use`` answered by a ``tool_result`` in the next user message; DeepSeek: the rule
above).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import tiktoken

from bench.common import running_app
from bench.heldout import material as m
from bench.heldout.__main__ import seed_list
from bench.heldout.scorer import chat_problems
from tests.openai_counting import prompt_tokens

CONTEXT_LIMIT = 8192
STEPS = 60
BIG_RESULT_TOKENS = 20_000
_ENCODING = tiktoken.get_encoding("o200k_base")


@dataclass
class Outcome:
    name: str
    prompts: int = 0
    over_budget: int = 0
    invalid: int = 0
    first_invalid: str | None = None
    refused_at: str | None = None
    refusal: str | None = None
    notes: list[str] = field(default_factory=list)


def toolu_id(rng: random.Random) -> str:
    return "toolu_01" + "".join(rng.choices(string.ascii_letters + string.digits, k=22))


def big_result(rng: random.Random, tokens: int) -> str:
    """A log of about ``tokens`` tokens (o200k), as a tool that dumps a whole file gives."""
    parts, total = [], 0
    while total < tokens:
        chunk = m.log_output(rng)
        parts.append(chunk)
        total += len(_ENCODING.encode(chunk))
    return "\n".join(parts)


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: dict[str, object]
    result: str


def long_turn_steps(seed: int, *, anthropic_ids: bool) -> list[list[Call]]:
    rng = random.Random(seed)
    big_steps = set(rng.sample(range(5, STEPS), 4))
    steps = []
    for number in range(STEPS):
        width = 2 if number in big_steps else rng.choice((1, 1, 1, 2, 3))
        calls = []
        for _ in range(width):
            name, arguments, output = m.tool_call(rng)
            result = big_result(rng, BIG_RESULT_TOKENS) if number in big_steps else output(rng)
            call = toolu_id(rng) if anthropic_ids else m.call_id(rng)
            calls.append(Call(call, name, arguments, result))
        steps.append(calls)
    return steps


def _openai_step(calls: Sequence[Call]) -> dict[str, Any]:
    return {
        "assistant": {
            "content": None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in calls
            ],
        },
        "tool_results": [{"tool_call_id": c.id, "content": c.result} for c in calls],
    }


def _anthropic_step(calls: Sequence[Call]) -> dict[str, Any]:
    return {
        "format": "anthropic",
        "assistant": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                *(
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                    for c in calls
                ),
            ],
        },
        "tool_results": [
            {"type": "tool_result", "tool_use_id": c.id, "content": c.result} for c in calls
        ],
    }


def anthropic_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where an Anthropic Messages prompt breaks tool_use / tool_result pairing."""
    problems = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        uses = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        if not uses:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        blocks = following.get("content") if following else None
        answered = {
            b.get("tool_use_id")
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and b.get("type") == "tool_result"
        }
        if following is None:
            problems.append(f"message {index}: tool_use with no next message")
        elif uses - answered:
            problems.append(f"message {index}: tool_use {sorted(uses - answered)} unanswered")
    return problems


async def long_turn(
    client: httpx.AsyncClient, *, name: str, model: str, anthropic: bool, seed: int
) -> Outcome:
    outcome = Outcome(name)
    created = await client.post(
        "/v1/sessions",
        json={"model": model, "context_limit": CONTEXT_LIMIT, "tools": m.TOOLS},
    )
    created.raise_for_status()
    budget = created.json()["budget"]["input_budget"]
    base = f"/v1/sessions/{created.json()['id']}"
    started = await client.post(
        f"{base}/turns",
        json={
            "message": {
                "role": "user",
                "content": "The nightly import failed for three regions. Find out why, fix what "
                "you can, and tell me what you could not fix.",
            },
            "format": "anthropic" if anthropic else "openai",
        },
    )
    started.raise_for_status()
    turn = started.json()["turn_id"]
    for number, calls in enumerate(long_turn_steps(seed, anthropic_ids=anthropic), 1):
        body = _anthropic_step(calls) if anthropic else _openai_step(calls)
        posted = await client.post(f"{base}/turns/{turn}/steps", json=body)
        if posted.status_code == 422:
            outcome.refused_at = f"step {number}"
            outcome.refusal = posted.json()["error"]["code"]
            break
        posted.raise_for_status()
        prompt = posted.json()
        outcome.prompts += 1
        if anthropic:
            problems = anthropic_problems(prompt["messages"])
        else:
            problems = chat_problems(prompt["messages"])
            if (
                model.startswith("gpt")
                and prompt_tokens(model, prompt["messages"], m.TOOLS) > budget
            ):
                outcome.over_budget += 1
        if problems:
            outcome.invalid += 1
            outcome.first_invalid = outcome.first_invalid or f"step {number}: {problems[0]}"
    return outcome


def deepseek_problems(messages: Sequence[Mapping[str, Any]], sent: Mapping[str, str]) -> list[str]:
    """Where a prompt breaks DeepSeek's rule for reasoning in tool-calling turns. ``sent``:
    each assistant message's reasoning as the model gave it, by its first call id or, for an
    answer, by its text."""
    problems = []
    span: list[int] = []

    def close() -> None:
        assistants = [i for i in span if messages[i].get("role") == "assistant"]
        if not any(messages[i].get("tool_calls") for i in assistants):
            return
        for i in assistants:
            message = messages[i]
            reasoning = message.get("reasoning_content")
            calls = message.get("tool_calls") or ()
            key = calls[0]["id"] if calls else str(message.get("content"))
            if not isinstance(reasoning, str):
                problems.append(f"message {i}: reasoning_content missing")
            elif key in sent and sent[key] != reasoning:
                problems.append(f"message {i}: reasoning_content changed")

    for index, message in enumerate(messages):
        if message.get("role") == "user":
            close()
            span = []
        else:
            span.append(index)
    close()
    return problems


def _reasoning(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return ""
    return " ".join(rng.sample(m.SENTENCES, rng.randint(2, 6)))


async def deepseek_agent(client: httpx.AsyncClient, *, seed: int, turns: int = 40) -> Outcome:
    outcome = Outcome("deepseek-reasoner with tools, 8k, OpenAI input")
    rng = random.Random(seed)
    created = await client.post(
        "/v1/sessions",
        json={"model": "deepseek-reasoner", "context_limit": CONTEXT_LIMIT, "tools": m.TOOLS},
    )
    created.raise_for_status()
    base = f"/v1/sessions/{created.json()['id']}"
    sent: dict[str, str] = {}

    def check(where: str, body: Mapping[str, Any]) -> None:
        outcome.prompts += 1
        problems = chat_problems(body["messages"]) + deepseek_problems(body["messages"], sent)
        if problems:
            outcome.invalid += 1
            outcome.first_invalid = outcome.first_invalid or f"{where}: {problems[0]}"

    for number in range(1, turns + 1):
        started = await client.post(
            f"{base}/turns", json={"message": {"role": "user", "content": m.routine_request(rng)}}
        )
        if started.status_code == 422:
            outcome.refused_at = outcome.refused_at or f"turn {number} start"
            outcome.refusal = outcome.refusal or started.json()["error"]["code"]
            continue
        started.raise_for_status()
        check(f"turn {number} start", started.json())
        turn = started.json()["turn_id"]
        for step in range(1, rng.randint(1, 4) + 1):
            calls = []
            for _ in range(rng.choice((1, 1, 2))):
                name, arguments, output = m.tool_call(rng)
                calls.append(Call(m.call_id(rng), name, arguments, output(rng)))
            body = _openai_step(calls)
            reasoning = _reasoning(rng)
            body["assistant"]["reasoning_content"] = reasoning
            sent[calls[0].id] = reasoning
            posted = await client.post(f"{base}/turns/{turn}/steps", json=body)
            if posted.status_code == 422:
                outcome.refused_at = outcome.refused_at or f"turn {number} step {step}"
                outcome.refusal = outcome.refusal or posted.json()["error"]["code"]
                break
            posted.raise_for_status()
            check(f"turn {number} step {step}", posted.json())
        answer = f"{m.prose(rng)}\n\n(turn {number})"
        reasoning = _reasoning(rng)
        sent[answer] = reasoning
        completed = await client.post(
            f"{base}/turns/{turn}/complete",
            json={"assistant": {"content": answer, "reasoning_content": reasoning}},
        )
        completed.raise_for_status()
    return outcome


async def run(seed: int) -> list[Outcome]:
    async with running_app() as client:
        return [
            await long_turn(
                client,
                name="60-step turn, OpenAI input, gpt-4o-mini 8k",
                model="gpt-4o-mini",
                anthropic=False,
                seed=seed,
            ),
            await long_turn(
                client,
                name="60-step turn, Anthropic input, gpt-4o-mini 8k",
                model="gpt-4o-mini",
                anthropic=True,
                seed=seed,
            ),
            await long_turn(
                client,
                name="60-step turn, Anthropic input, claude-sonnet-4 8k",
                model="claude-sonnet-4",
                anthropic=True,
                seed=seed,
            ),
            await deepseek_agent(client, seed=seed),
        ]


def report(outcomes: Sequence[Outcome]) -> str:
    lines = []
    for o in outcomes:
        lines.append(o.name)
        lines.append(f"  prompts {o.prompts}, over budget {o.over_budget}, invalid {o.invalid}")
        lines.append(
            f"  first refused: {o.refused_at or 'none'}" + (f" ({o.refusal})" if o.refusal else "")
        )
        lines.append(f"  first invalid: {o.first_invalid or 'none'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout.traffic", description=__doc__)
    parser.add_argument("--seeds", default="2000-2002", help="e.g. 2000-2002 or 2000,2005")
    args = parser.parse_args(argv)
    for seed in seed_list(args.seeds):
        print(f"== seed {seed}\n{report(asyncio.run(run(seed)))}")  # noqa: T201


if __name__ == "__main__":
    main()
