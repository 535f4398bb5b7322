"""Long turns as real agents send them: tool-call ids of ``call_`` and 24 characters,
arguments of 15-35 tokens, parallel calls, now and then two results of about 20k tokens in
one step, and (for Claude) thinking with its signature and redacted thinking before the
calls. Seeded, so a failing step can be replayed; shared by the tests and bench/long_turns.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass
from typing import Any

_ID_ALPHABET = string.ascii_letters + string.digits
_WORDS = (
    "billing", "ledger", "invoice", "retry", "backoff", "schema", "cursor", "shard", "tenant",
    "quota", "webhook", "refund", "currency", "rounding", "timezone", "parser", "cache",
)  # fmt: skip
_PROSE = (
    "the", "handler", "returns", "a", "row", "when", "retry", "budget", "is", "spent", "and",
    "logs", "warning", "for", "tenant", "with", "status", "code", "of", "request", "field",
)  # fmt: skip


def _arguments(name: str, rng: random.Random) -> dict[str, Any]:
    """Arguments of 15-35 tokens, as coding agents' tools take them."""

    def word(options: tuple[str, ...]) -> str:
        return rng.choice(options)

    if name == "read_file":
        return {
            "path": f"services/{word(_WORDS)}/{word(_WORDS)}_{rng.randint(1, 99)}.py",
            "start_line": rng.randint(1, 400),
            "end_line": rng.randint(401, 1200),
        }
    if name == "grep":
        return {
            "pattern": f"def {word(_WORDS)}_{word(_WORDS)}\\(",
            "path": f"services/{word(_WORDS)}",
            "case_sensitive": rng.random() < 0.5,
        }
    if name == "run_tests":
        return {
            "selector": f"tests/{word(_WORDS)}/test_{word(_WORDS)}.py::test_{word(_WORDS)}",
            "timeout_seconds": rng.choice((60, 120, 300)),
        }
    return {"query": " ".join(word(_WORDS) for _ in range(rng.randint(4, 9))), "max_results": 5}


_TOOLS = ("read_file", "grep", "run_tests", "web_search")


def call_id(rng: random.Random) -> str:
    """An id as OpenAI hands them out: ``call_`` and 24 letters and digits."""
    return "call_" + "".join(rng.choice(_ID_ALPHABET) for _ in range(24))


def tool_output(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens of log-and-code-like output."""
    lines = []
    total = 0
    while total < tokens:
        words = [rng.choice(_PROSE) for _ in range(rng.randint(6, 14))]
        lines.append(f"{rng.randint(1, 9999):>5}: " + " ".join(words))
        total += len(words) + 3
    return "\n".join(lines)


def signature(rng: random.Random, raw_bytes: int) -> str:
    """An opaque base64 blob the size of Claude's thinking signatures."""
    return base64.b64encode(rng.randbytes(raw_bytes)).decode()


@dataclass(frozen=True)
class Step:
    body: dict[str, Any]
    call_ids: tuple[str, ...]
    result_tokens: tuple[int, ...]


def agent_step(rng: random.Random, *, thinking: bool = False, huge: bool | None = None) -> Step:
    """One step of a tool-using agent: 1-3 parallel calls with realistic arguments and
    results; ``huge`` (or one step in eight) makes it two results of about 20k tokens."""
    if huge is None:
        huge = rng.random() < 0.125
    count = 2 if huge else rng.choice((1, 1, 1, 2, 2, 3))
    calls: list[dict[str, Any]] = []
    results = []
    sizes = []
    for _ in range(count):
        name = rng.choice(_TOOLS)
        cid = call_id(rng)
        arguments = json.dumps(_arguments(name, rng))
        calls.append(
            {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
        )
        size = (
            rng.randint(18_000, 22_000)
            if huge
            else rng.choice((rng.randint(80, 600), rng.randint(600, 2_500)))
        )
        sizes.append(size)
        results.append({"tool_call_id": cid, "content": tool_output(rng, size)})
    assistant: dict[str, Any] = {"content": None, "tool_calls": calls}
    if thinking:
        parts: list[dict[str, Any]] = [
            {
                "type": "thinking",
                "thinking": " ".join(rng.choice(_PROSE) for _ in range(rng.randint(40, 160))),
                "signature": signature(rng, rng.randint(300, 900)),
            }
        ]
        if rng.random() < 0.2:
            parts.append(
                {"type": "redacted_thinking", "data": signature(rng, rng.randint(600, 2400))}
            )
        parts.append({"type": "text", "text": "Checking that next."})
        assistant["content"] = parts
    return Step(
        body={"assistant": assistant, "tool_results": results},
        call_ids=tuple(c["id"] for c in calls),
        result_tokens=tuple(sizes),
    )
