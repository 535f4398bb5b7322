"""What counting costs a turn at 10, 1,000 and 10,000 stored messages.

Stored messages keep the count made when they were written, so a turn tokenises only what
it brings (the user message, the tool calls and results, the summary it writes): the
tokeniser's work per turn must not grow with history. For each history size this prints the
median time of a whole turn (start + one tool step + completion, database included) and how
many texts and characters the tokeniser encoded for it.

    python -m bench.count_cost [--rounds 30] [--stored 10 1000 10000] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from dataclasses import dataclass
from typing import Any

import tiktoken

from app.tokens.registry import TokenizerRegistry
from bench.common import machine, running_app
from bench.turn_cost import SESSION, one_turn, seed_history


@dataclass
class EncodeTally:
    """Wraps an encoding and counts what it is asked to encode."""

    encoding: tiktoken.Encoding
    calls: int = 0
    chars: int = 0

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        self.calls += 1
        self.chars += len(text)
        return self.encoding.encode(text, disallowed_special=disallowed_special)


async def run(rounds: int, sizes: list[int], database_url: str | None) -> list[dict[str, Any]]:
    tallies: dict[str, EncodeTally] = {}

    def load(name: str) -> EncodeTally:
        tallies.setdefault(name, EncodeTally(tiktoken.get_encoding(name)))
        return tallies[name]

    def tally() -> tuple[int, int]:
        return sum(t.calls for t in tallies.values()), sum(t.chars for t in tallies.values())

    results = []
    with tempfile.TemporaryDirectory() as folder:
        url = database_url or f"sqlite+aiosqlite:///{folder}/bench.db"
        async with running_app(url, tokenizers=TokenizerRegistry(load)) as client:
            sessions = {}
            for stored in sizes:
                sessions[stored] = (await client.post("/v1/sessions", json=SESSION)).json()["id"]
                await seed_history(url, sessions[stored], stored)
            times: dict[int, list[float]] = {stored: [] for stored in sizes}
            encoded: dict[int, list[tuple[int, int]]] = {stored: [] for stored in sizes}
            for number in range(rounds):
                # Interleaved, so that a slow moment of the machine hits every size alike.
                for stored in sizes if number % 2 else reversed(sizes):
                    calls, chars = tally()
                    times[stored].append(await one_turn(client, sessions[stored], number))
                    after_calls, after_chars = tally()
                    encoded[stored].append((after_calls - calls, after_chars - chars))
    for stored in sizes:
        results.append(
            {
                "stored_messages": stored,
                "median_turn_ms": statistics.median(times[stored]) * 1000,
                "encode_calls_per_turn": statistics.median(c for c, _ in encoded[stored]),
                "encoded_chars_per_turn": statistics.median(c for _, c in encoded[stored]),
            }
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--stored", type=int, nargs="+", default=[10, 1_000, 10_000])
    parser.add_argument("--database-url")
    args = parser.parse_args()
    rows = asyncio.run(run(args.rounds, args.stored, args.database_url))
    where = args.database_url.split("@")[-1] if args.database_url else "SQLite"
    print(f"counting cost per turn on {where} — {machine()}")  # noqa: T201
    print(f"  {'stored':>8} {'turn ms':>9} {'encodes':>8} {'chars encoded':>14}")  # noqa: T201
    for row in rows:
        print(  # noqa: T201
            f"  {row['stored_messages']:>8} {row['median_turn_ms']:>9.2f} "
            f"{row['encode_calls_per_turn']:>8.0f} {row['encoded_chars_per_turn']:>14.0f}"
        )


if __name__ == "__main__":
    main()
