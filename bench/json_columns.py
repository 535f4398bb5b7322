"""What writing a JSON column's text costs, for values whose text holds a ``null``.

The engine's encoder (``app.db.dump_json``) writes orjson's text, and ``json``'s where the
two would store something different. It once wrote any text with a ``null`` in it a second
time with ``json``; that cost is orjson's and json's together, printed here beside what it
costs now (orjson's, and a look through the value for NaN or an infinity). CPU time per
call, the best of several rounds, in microseconds.

    python -m bench.json_columns [--calls 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import time
import timeit
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

from app.db import dump_json
from bench.common import machine

BLOCKS = ("system", "goal", "memory", "summary", "window", "current", "recall")

#: Column values as the turn path writes them, each with a ``null`` somewhere in its text.
VALUES: dict[str, Any] = {
    "an assistant's 3 tool calls, a null in their arguments": [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": "search", "arguments": json.dumps({"q": "x" * 40, "limit": None})},
        }
        for i in range(3)
    ],
    "session metadata with a None": {"a": None, "b": [1, 2, 3], "c": {"d": "e" * 200}},
    "a 21 kB tool result that says null": [{"type": "text", "text": "null " + "résumé " * 3000}],
    "7 blocks' breakdown, a None in each": {
        name: {"tokens": i, "cap": None, "items": i} for i, name in enumerate(BLOCKS)
    },
    "500 message ids and a None": [*range(500), None],
    "300 floats and a None": [1.5] * 300 + [None],
}


def cpu_microseconds(call: Callable[[], object], calls: int, rounds: int) -> float:
    """The best round's CPU time per call."""
    timer = timeit.Timer(call, timer=time.process_time)
    return min(timer.repeat(repeat=rounds, number=calls)) / calls * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args(argv)

    load = " ".join(f"{figure:.1f}" for figure in os.getloadavg())
    print(f"{machine()}, load average {load}")  # noqa: T201
    print("| value | orjson | json | before (both) | now | before / now |")  # noqa: T201
    print("| --- | ---: | ---: | ---: | ---: | ---: |")  # noqa: T201
    for name, value in VALUES.items():
        assert b"null" in orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS), name
        orjson_cost, json_cost, now = (
            cpu_microseconds(partial(encode, value), options.calls, options.rounds)
            for encode in (_orjson_text, json.dumps, dump_json)
        )
        before = orjson_cost + json_cost
        print(  # noqa: T201
            f"| {name} | {orjson_cost:.1f} | {json_cost:.1f} | {before:.1f} | {now:.1f} "
            f"| {before / now:.1f}x |"
        )


def _orjson_text(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


if __name__ == "__main__":
    main()
