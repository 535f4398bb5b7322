"""How the proxy counts of the open-weight families hold against their real tokenizers.

    python -m bench.tokenizers [--seed N] [--fit]

Needs the families' extras (``pip install -e '.[tokenizers]'``). Generates, from one seed,
texts of every kind an agent's prompt carries (prose, code, JSON, CJK, emoji, digit-heavy
CSV, hex-heavy logs, and a mix of all) and long tool-using sessions made of them. For each
family it prints, per text kind, the worst real/estimate ratio of the proxy; then, at 8k and
16k windows, with and without 20 declared tools, the prompts a budget built on the proxy
estimate would send: how many are over the input budget by the real tokenizer, the max and
mean fill (real tokens / input budget). ``before`` is the flat factor with OpenAI's tool
rule, ``after`` the content-aware margins with the family's chat template.

``--fit`` prints the smallest margins that keep every text of the seed under the estimate;
tune on one seed, report on another.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.budget.margins import ContentMargins, content_mix
from app.budget.tokens import (
    DEFAULT_RULES,
    ScaledCounter,
    TiktokenCounter,
    TokenCounter,
    count_message,
    count_request,
    lookup_model,
)
from app.tokens.registry import TokenizerRegistry

Message = dict[str, Any]

FAMILIES = {
    "mistral": "mistral-small",
    "mistral-any": "mistral-large",
    "llama3": "llama-3.1",
    "qwen": "qwen3",
    "deepseek": "deepseek-chat",
}
KINDS = ("prose", "code", "json", "cjk", "emoji", "digits", "hexlog", "mixed")

_WORDS = [
    "the",
    "agent",
    "checked",
    "each",
    "booking",
    "and",
    "found",
    "that",
    "the",
    "second",
    "flight",
    "was",
    "delayed",
    "while",
    "hotel",
    "rooms",
    "near",
    "the",
    "station",
    "remained",
    "available",
    "for",
    "three",
    "nights",
    "with",
    "breakfast",
    "included",
    "although",
    "prices",
    "changed",
    "after",
    "midnight",
    "so",
    "we",
    "should",
    "confirm",
    "before",
    "paying",
]
_EMOJI = "🎉🚀✅❌🔥👍😀🙏💡📦⚠️🧪🌍✈️🏨"
_HIRAGANA = "".join(chr(c) for c in range(0x3042, 0x3094))
# The first CJK unified ideographs: common and rarer characters alike, as real text has.
_COMMON_CJK = "".join(chr(c) for c in range(0x4E00, 0x5A00))


def _prose(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _code(rng: random.Random, n: int) -> str:
    lines = []
    for i in range(max(1, n // 8)):
        name = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
        lines.append(f"def {name}_{i}(items: list[str], limit: int = 10) -> dict[str, int]:")
        lines.append(f"    result = {{key: len(key) for key in items[:limit] if key != '{name}'}}")
        lines.append(f"    return result  # {rng.choice(_WORDS)} {rng.choice(_WORDS)}")
    return "\n".join(lines)


def _json(rng: random.Random, n: int) -> str:
    rows = [
        {
            "id": f"{rng.choice(_WORDS)}-{rng.randint(1, 999)}",
            "price": round(rng.uniform(10, 9999), 2),
            "available": rng.random() < 0.5,
            "tags": [rng.choice(_WORDS) for _ in range(3)],
        }
        for _ in range(max(1, n // 20))
    ]
    return json.dumps({"results": rows}, indent=rng.choice([None, 2]))


def _cjk(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(rng.choice(_COMMON_CJK) if rng.random() < 0.7 else rng.choice(_HIRAGANA))
        if rng.random() < 0.08:
            out.append("。")
    return "".join(out)


def _emoji(rng: random.Random, n: int) -> str:
    words = []
    for _ in range(n):
        words.append(rng.choice(_WORDS))
        if rng.random() < 0.3:
            words.append(rng.choice(_EMOJI) * rng.randint(1, 3))
    return " ".join(words)


def _digits(rng: random.Random, n: int) -> str:
    lines = ["id,timestamp,amount,balance,reference"]
    for i in range(max(1, n // 12)):
        lines.append(
            f"{i},{rng.randint(1_600_000_000, 1_800_000_000)},{rng.uniform(-1e6, 1e6):.4f},"
            f"{rng.uniform(0, 1e9):.2f},{rng.randint(10**11, 10**12)}"
        )
    return "\n".join(lines)


def _hexlog(rng: random.Random, n: int) -> str:
    lines = []
    for _ in range(max(1, n // 14)):
        trace = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        lines.append(
            f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
            f" ERROR req={trace} sha=0x{rng.getrandbits(64):016x} {rng.choice(_WORDS)} failed"
        )
    return "\n".join(lines)


_GENERATORS: dict[str, Callable[[random.Random, int], str]] = {
    "prose": _prose,
    "code": _code,
    "json": _json,
    "cjk": _cjk,
    "emoji": _emoji,
    "digits": _digits,
    "hexlog": _hexlog,
}


def text_of(kind: str, rng: random.Random, n: int) -> str:
    if kind == "mixed":
        parts = [_GENERATORS[k](rng, max(4, n // 7)) for k in _GENERATORS]
        rng.shuffle(parts)
        return "\n\n".join(parts)
    return _GENERATORS[kind](rng, n)


def corpus(seed: int, per_kind: int = 60) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [
        (kind, text_of(kind, rng, int(math.exp(rng.uniform(math.log(8), math.log(1500))))))
        for kind in KINDS
        for _ in range(per_kind)
    ]


def tools(count: int) -> list[Message]:
    """Tools with nested schemas, as agents declare them."""
    out = []
    for i in range(count):
        out.append(
            {
                "type": "function",
                "function": {
                    "name": f"tool_{i}_{_WORDS[i % len(_WORDS)]}",
                    "description": f"Look up {_WORDS[i % 7]} records and return matching rows.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": "What to search for"},
                            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                            "filters": {
                                "type": "object",
                                "properties": {
                                    "since": {"type": "string", "format": "date-time"},
                                    "kinds": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                            "order": {"type": "string", "enum": ["asc", "desc"]},
                        },
                        "required": ["query"],
                    },
                },
            }
        )
    return out


def session(seed: int, steps: int = 120) -> list[tuple[str, Message]]:
    """A long tool-using session: (content kind, message) in order."""
    rng = random.Random(seed)
    out: list[tuple[str, Message]] = [("prose", {"role": "system", "content": _prose(rng, 40)})]
    for step in range(steps):
        kind = rng.choice(KINDS)
        out.append(("prose", {"role": "user", "content": _prose(rng, rng.randint(5, 60))}))
        call_id = f"call_{step}_{rng.getrandbits(32):08x}"
        arguments = json.dumps({"query": _prose(rng, 4), "limit": rng.randint(1, 50)})
        out.append(
            (
                "json",
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "tool_1_agent", "arguments": arguments},
                        }
                    ],
                },
            )
        )
        size = int(math.exp(rng.uniform(math.log(20), math.log(1800))))
        result = text_of(kind, rng, size)
        out.append((kind, {"role": "tool", "tool_call_id": call_id, "content": result}))
        answer = text_of(rng.choice(["prose", "prose", "cjk", "emoji", "code"]), rng, 40)
        out.append(("prose", {"role": "assistant", "content": answer}))
    return out


# -- fitting and reporting --------------------------------------------------------------------


def fit(texts: list[tuple[str, str]], real: TokenCounter, proxy: TokenCounter) -> ContentMargins:
    """The smallest margins (in that order: factor, digits, CJK, emoji) under which every
    text's estimate is at least its real count, with a little headroom."""
    rows = []
    for _, text in texts:
        mix = content_mix(text)
        rows.append((real.count_text(text), proxy.count_text(text), mix))
    plain = [r / p for r, p, m in rows if p and not (m.digits or m.cjk or m.emoji)]
    factor = max(plain) if plain else 1.0

    def worst(attribute: str, done: Callable[[int, Any], float]) -> float:
        # Texts with few such characters are left to the factor check below: one token
        # of rounding over three digits would set the allowance of every digit.
        values: list[float] = [
            (r - done(p, m)) / getattr(m, attribute)
            for r, p, m in rows
            if getattr(m, attribute) >= 20 and p >= 40
        ]
        return max([0.0, *values])

    digit = worst("digits", lambda p, m: factor * p if not (m.cjk or m.emoji) else math.inf)
    cjk = worst("cjk", lambda p, m: factor * p + digit * m.digits if not m.emoji else math.inf)
    emoji = worst("emoji", lambda p, m: factor * p + digit * m.digits + cjk * m.cjk)
    margins = ContentMargins(
        round(factor * 1.02, 2),
        round(digit + 0.02, 2),
        round(cjk + 0.02, 2),
        round(emoji + 0.02, 2),
    )
    # Whatever the mixed texts still exceed goes to the factor.
    short = max(
        r / max(1, margins.estimate(p, t)) for (r, p, _), (_, t) in zip(rows, texts, strict=True)
    )
    if short > 1:
        margins = replace(margins, factor=round(margins.factor * short + 0.01, 2))
    return margins


@dataclass
class Fill:
    prompts: int = 0
    over: int = 0
    max_fill: float = 0.0
    total_fill: float = 0.0

    def add(self, real: int, budget: int) -> None:
        self.prompts += 1
        self.over += real > budget
        self.max_fill = max(self.max_fill, real / budget)
        self.total_fill += real / budget

    def row(self) -> str:
        mean = self.total_fill / max(1, self.prompts)
        return f"{self.prompts:7d} {self.over:5d} {self.max_fill:8.1%} {mean:8.1%}"


def prompts_fill(
    messages: list[tuple[str, Message]],
    estimate: TokenCounter,
    real: TokenCounter,
    window: int,
    declared: list[Message],
    fill: Fill,
) -> None:
    """At every fourth step of the session, the prompt a budget on ``estimate`` would send:
    the system message and the newest messages that fit in the input budget. A prompt's
    count is the sum of its messages' (what count_request adds up)."""
    budget = window - 1024
    plain = [m for _, m in messages]
    estimated = [count_message(estimate, m) for m in plain]
    counted = [count_message(real, m) for m in plain]
    fixed_estimate = count_request(estimate, [], declared).input_tokens
    fixed_real = count_request(real, [], declared).input_tokens
    for end in range(5, len(plain) + 1, 4):
        used = fixed_estimate + estimated[0]
        start = end
        while start > 1 and used + estimated[start - 1] <= budget:
            start -= 1
            used += estimated[start]
        while start < end and plain[start]["role"] == "tool":
            start += 1
        fill.add(fixed_real + counted[0] + sum(counted[start:end]), budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--family", choices=sorted(FAMILIES), help="only this family")
    args = parser.parse_args()
    registry = TokenizerRegistry()
    texts = corpus(args.seed)
    for family, model in FAMILIES.items():
        if args.family and family != args.family:
            continue
        spec = lookup_model(model)
        real, _ = registry.counter_for(spec)
        assert isinstance(real, TiktokenCounter), f"{family}: install its extra"
        proxy_spec = replace(spec, tokenizer_family=None)
        after, _ = registry.counter_for(proxy_spec)
        o200k, _ = registry.counter_for(replace(lookup_model("gpt-4o"), name="o200k"))
        before = ScaledCounter(
            TiktokenCounter("o200k_base", o200k.encoding, DEFAULT_RULES),  # type: ignore[attr-defined]
            spec.safety_factor,
        )
        raw = TiktokenCounter("o200k_base", o200k.encoding)  # type: ignore[attr-defined]
        if args.fit:
            print(f"{family}: {fit(texts, real, raw)}")  # noqa: T201
            continue
        print(  # noqa: T201
            f"\n### {family} ({model}; before: o200k x{spec.safety_factor:g}, after: {after.name})"
        )
        print("\nworst real/estimate by content kind (texts of seed", args.seed, ")\n")  # noqa: T201
        print("| kind | texts | before | after |\n|---|---:|---:|---:|")  # noqa: T201
        for kind in KINDS:
            of_kind = [t for k, t in texts if k == kind]
            worst_before = max(real.count_text(t) / max(1, before.count_text(t)) for t in of_kind)
            worst_after = max(real.count_text(t) / max(1, after.count_text(t)) for t in of_kind)
            print(f"| {kind} | {len(of_kind)} | {worst_before:.2f} | {worst_after:.2f} |")  # noqa: T201
        print("\n| window | tools | counting | prompts | over | max fill | mean fill |")  # noqa: T201
        print("|---|---:|---|---:|---:|---:|---:|")  # noqa: T201
        for window in (8192, 16384):
            for n_tools in (0, 20):
                declared = tools(n_tools)
                for label, estimate in (("before", before), ("after", after), ("exact", real)):
                    fill = Fill()
                    for s in range(args.sessions):
                        prompts_fill(
                            session(args.seed * 100 + s), estimate, real, window, declared, fill
                        )
                    p, o, mx, mean = fill.row().split()
                    print(  # noqa: T201
                        f"| {window // 1024}k | {n_tools} | {label} | {p} | {o} | {mx} | {mean} |"
                    )


if __name__ == "__main__":
    main()
