"""Mistral models' prompts, counted by contextd and by Mistral's own request encoding.

    python -m bench.mistral_counts [--seed N] [--turns 300] [--window 8192]

Needs ``pip install -e '.[mistral]'`` (mistral-common with sentencepiece). For each Mistral
entry of the model table, one generated session of ``--turns`` turns (prose, code, JSON,
CJK, emoji, digit tables and hex logs; one to three parallel tool calls a step with Mistral's
9-character call ids, compact JSON arguments and results of 20 to 1,800 tokens; 12 declared
tools) is cut, at every step, to the prompt a budget on contextd's count sends: the system
message and the newest whole turns that fit in the input budget, the open turn always. Each
prompt is then encoded with ``mistral_common``'s ``encode_chat_completion`` (chat template,
tools, its request normaliser) by every tokenizer the entry's models use, and the table
prints how many prompts the real encoding puts over the input budget, and the worst and mean
fill (real tokens / input budget). ``--through-app MODEL`` posts the same session to the
real app instead and encodes every prompt it hands out. ``before`` is the flat proxy the entries had
(o200k_base x 1.20, with the Tekken template); ``after`` is the counter the table gives them now.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import string
from dataclasses import replace
from typing import Any

from app.budget.policy import BudgetSettings, compute_budget
from app.budget.tokens import (
    DEFAULT_RULES,
    ChatRules,
    ScaledCounter,
    TiktokenCounter,
    TokenCounter,
    count_message,
    count_tools,
    lookup_model,
    reply_priming,
)
from app.tokens.registry import TokenizerRegistry
from bench.tokenizers import text_of

Message = dict[str, Any]


def _versions() -> dict[str, Any]:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    return {
        "v3-spm": MistralTokenizer.v3(),
        "v7-spm": MistralTokenizer.v7(),
        "v3-tekken": MistralTokenizer.v3(is_tekken=True),
        "v3-tekken-mm": MistralTokenizer.v3(is_tekken=True, is_mm=True),
    }


#: Which of them each entry's models use (mistral-common's MODEL_NAME_TO_TOKENIZER_CLS and
#: the models' tokenizer files); v1 and v2 refuse tools or parallel results, so they count
#: the same session without tools below.
ENTRY_VERSIONS = {
    "mistral-large": ("v3-spm", "v7-spm", "v3-tekken"),
    "codestral": ("v3-spm", "v3-tekken"),
    "mixtral": ("v3-spm",),
    "mistral": ("v3-spm", "v7-spm", "v3-tekken", "v3-tekken-mm"),
    "mistral-small": ("v3-tekken", "v3-tekken-mm"),
    "mistral-medium": ("v3-tekken-mm",),
    "ministral": ("v3-tekken",),
    "mistral-nemo": ("v3-tekken",),
}
#: The entries' rules before: the flat factor with the Tekken models' template.
BEFORE_RULES = ChatRules(template="mistral")
KINDS = ("prose", "code", "json", "cjk", "emoji", "digits", "hexlog", "mixed")


def _call_id(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))


def declared_tools(count: int) -> list[Message]:
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": f"Look up records of kind {i} and return them as JSON.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for"},
                        "limit": {"type": "integer", "description": "At most this many"},
                        "order": {"type": "string", "enum": ["newest", "oldest"]},
                    },
                    "required": ["query"],
                },
            },
        }
        for i in range(count)
    ]


def session(seed: int, turns: int) -> list[list[Message]]:
    """Turns of messages: a user message, steps of parallel calls and results, an answer."""
    rng = random.Random(seed)
    out: list[list[Message]] = []
    for _ in range(turns):
        turn: list[Message] = [
            {"role": "user", "content": text_of(rng.choice(KINDS), rng, rng.randint(10, 120))}
        ]
        for _ in range(rng.choice((0, 1, 1, 2))):
            calls = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                arguments = {"query": text_of("prose", rng, 6), "limit": rng.randint(1, 500)}
                calls.append(
                    {
                        "id": _call_id(rng),
                        "type": "function",
                        "function": {
                            "name": f"tool_{rng.randrange(12)}",
                            "arguments": json.dumps(arguments, separators=(",", ":")),
                        },
                    }
                )
            turn.append({"role": "assistant", "content": "", "tool_calls": calls})
            for call in calls:
                size = int(math.exp(rng.uniform(math.log(20), math.log(1800))))
                kind = rng.choice(KINDS)
                result = text_of(kind, rng, size)
                if kind == "json":  # tools answer compact JSON
                    result = json.dumps(json.loads(result), separators=(",", ":"))
                turn.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        answer = text_of(rng.choice(("prose", "prose", "cjk", "code", "digits")), rng, 60)
        turn.append({"role": "assistant", "content": answer})
        out.append(turn)
    return out


def prompts(
    system: Message,
    turns: list[list[Message]],
    counter: TokenCounter,
    tools: list[Message],
    budget: int,
) -> list[list[Message]]:
    """Every prompt the session sends (at each turn's start and after each step): the
    system message and the newest whole earlier turns that fit by ``counter``; a prompt
    whose open turn alone is over the budget is not sent (contextd shrinks or refuses it)."""
    counts = [[count_message(counter, m) for m in turn] for turn in turns]
    fixed = reply_priming(counter) + count_tools(counter, tools) + count_message(counter, system)
    out = []
    for index, turn in enumerate(turns):
        for end in range(1, len(turn)):
            if turn[end - 1]["role"] == "assistant" or (
                end < len(turn) and turn[end]["role"] == "tool"
            ):
                continue  # a prompt ends on the user message or a step's last result
            used = fixed + sum(counts[index][:end])
            start = index
            while start > 0 and used + sum(counts[start - 1]) <= budget:
                start -= 1
                used += sum(counts[start])
            earlier = [m for t in turns[start:index] for m in t]
            if used <= budget:  # over it, contextd would refuse or cap, not send
                out.append([system, *earlier, *turn[:end]])
    return out


def real_tokens(tokenizer: Any, messages: list[Message], tools: list[Message]) -> int:
    from mistral_common.protocol.instruct.request import ChatCompletionRequest

    request: Any = ChatCompletionRequest.model_validate(
        {"messages": messages, "tools": tools or None}
    )
    return len(tokenizer.encode_chat_completion(request).tokens)


async def through_app(model: str, turns: list[list[Message]], system: str, window: int) -> None:
    """The same session posted to the real app (SQLite): every prompt it hands out (turn
    starts and steps, summaries and pruning included) encoded by each tokenizer the
    model's entry uses."""
    from bench.common import running_app

    tokenizers = _versions()
    versions = ENTRY_VERSIONS[lookup_model(model).entry or "mistral"]
    tools = declared_tools(12)
    sent: list[list[Message]] = []
    refused = 0
    async with running_app() as client:
        session = (
            await client.post(
                "/v1/sessions",
                json={
                    "model": model,
                    "context_limit": window,
                    "system": {"global": system},
                    "tools": tools,
                },
            )
        ).json()
        base = f"/v1/sessions/{session['id']}/turns"
        budget = session["budget"]["input_budget"]

        async def call(path: str, body: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal refused
            response = await client.post(path, json=body)
            if response.status_code == 422:
                refused += 1
                return None
            response.raise_for_status()
            prompt: dict[str, Any] = response.json()
            sent.append(prompt["messages"])
            return prompt

        for turn in turns:
            started = await call(base, {"message": turn[0]})
            if started is None:
                continue
            turn_id = started["turn_id"]
            index = 1
            while turn[index]["role"] == "assistant" and turn[index].get("tool_calls"):
                calls = turn[index]["tool_calls"]
                results = turn[index + 1 : index + 1 + len(calls)]
                body = {
                    "assistant": {"content": None, "tool_calls": calls},
                    "tool_results": [
                        {"tool_call_id": r["tool_call_id"], "content": r["content"]}
                        for r in results
                    ],
                }
                await call(f"{base}/{turn_id}/steps", body)
                index += 1 + len(calls)
            await client.post(
                f"{base}/{turn_id}/complete", json={"assistant": {"content": turn[-1]["content"]}}
            )
    print(  # noqa: T201
        f"\nthrough the app: {model}, {len(turns)} turns, {window // 1024}k window, input "
        f"budget {budget}, {len(sent)} prompts, {refused} refused\n\n"
        "| tokenizer | over budget | max fill | mean fill |\n|---|---:|---:|---:|"
    )
    for version in versions:
        fills = [real_tokens(tokenizers[version], p, tools) / budget for p in sent]
        print(  # noqa: T201
            f"| {version} | {sum(f > 1 for f in fills)} | {max(fills):.1%} "
            f"| {sum(fills) / len(fills):.1%} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--window", type=int, default=8192)
    parser.add_argument("--every", type=int, default=1, help="check every n-th prompt")
    parser.add_argument(
        "--through-app", metavar="MODEL", help="post the session to the real app instead"
    )
    args = parser.parse_args()
    if args.through_app:
        rng = random.Random(args.seed)
        system_text = text_of("prose", rng, 200)
        asyncio.run(
            through_app(args.through_app, session(args.seed, args.turns), system_text, args.window)
        )
        return
    registry = TokenizerRegistry()
    tokenizers = _versions()
    tools = declared_tools(12)
    o200k = registry.counter_for(lookup_model("gpt-4o"))[0]
    assert isinstance(o200k, TiktokenCounter)
    print(  # noqa: T201
        f"seed {args.seed}, {args.turns} turns, {args.window // 1024}k window, 12 tools\n\n"
        "| entry | counting | prompts | tokenizer | over budget | max fill | mean fill |\n"
        "|---|---|---:|---|---:|---:|---:|"
    )
    rng = random.Random(args.seed)
    system = {"role": "system", "content": text_of("prose", rng, 200)}
    turns = session(args.seed, args.turns)
    for entry, versions in ENTRY_VERSIONS.items():
        spec = lookup_model(entry)
        budget = compute_budget(
            model_context_limit=args.window,
            max_output_tokens=spec.max_output_tokens or args.window,
            settings=BudgetSettings(),
        ).input_budget
        after, fell_back = registry.counter_for(spec)
        assert not fell_back
        before = ScaledCounter(replace(o200k, rules=DEFAULT_RULES), 1.20, BEFORE_RULES)
        for label, counter in (("before", before), ("after", after)):
            sent = prompts(system, turns, counter, tools, budget)[:: args.every]
            for version in versions:
                fills = [real_tokens(tokenizers[version], p, tools) / budget for p in sent]
                over = sum(fill > 1 for fill in fills)
                print(  # noqa: T201
                    f"| {entry} | {label} ({counter.name}) | {len(sent)} | {version} | {over} "
                    f"| {max(fills):.1%} | {sum(fills) / len(fills):.1%} |"
                )


if __name__ == "__main__":
    main()
