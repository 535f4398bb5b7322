"""What recalling a huge tool result costs against a 50 kB one, in one run (ratios).

A recall block reads a bounded start of each message (``EXCERPT_SCAN_CHARS``) and ``rank``
a bounded start of each candidate (``RANK_CHARS``), and a long hit is looked into no deeper
than the search index reads (``locate``, ``INDEXED_CHARS``): a 5 or 20 MB result must cost
what a 50 kB one does, give or take that bounded look. For each size this times ``locate``
and the hit it makes, then ``rank`` then ``recall_block`` (room 2,000, the gpt-4o counter)
on one JSON listing, best of a few rounds, the features cache emptied before each, and
prints the ratio to the 50 kB case.

    python -m bench.recall_scale [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from app.budget.recall import (
    Candidate,
    RecallHit,
    _features,
    held_text,
    locate,
    rank,
    recall_block,
)
from app.budget.tokens import TokenCounter
from app.tokens.registry import TokenizerRegistry

SIZES = (50_000, 5_000_000, 20_000_000)


def listing(chars: int) -> str:
    """A JSON listing of hosts and ports, cut to ``chars`` characters."""
    rng = random.Random(4)
    rows = [
        {"id": n, "host": f"srv-{rng.randrange(999)}.internal", "port": rng.randrange(1024, 65535)}
        for n in range(250_000)
    ]
    whole = json.dumps(rows)
    return (whole * (chars // len(whole) + 1))[:chars]


def best_time(text: str, counter: TokenCounter, rounds: int) -> float:
    best = float("inf")
    for round_ in range(rounds):
        _features.cache_clear()
        whole = f"{round_} {text}"
        started = time.perf_counter()
        offset = locate(whole, ("port", "srv"))
        candidate = Candidate(RecallHit(1, 1, "tool", held_text(whole, offset), offset=offset), 1.0)
        hits = rank([candidate], "which port did srv-12 use?")
        recall_block(hits, room=2000, max_hits=8, counter=counter, terms=("port", "srv"))
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    registry = TokenizerRegistry()
    counter, _ = registry.counter_for(registry.lookup("gpt-4o"))
    best_time(listing(SIZES[0]), counter, 1)  # the encoding loads on first use: not timed
    times = {size: best_time(listing(size), counter, args.rounds) for size in SIZES}
    for size in SIZES[1:]:
        print(f"{size / 1e6:g} MB / 50 kB: {times[size] / times[SIZES[0]]:.2f}x")  # noqa: T201


if __name__ == "__main__":
    main()
