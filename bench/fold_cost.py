"""What does one fold of the extractive summariser cost, and where does it go?

The synthetic conversation of the latency benchmark (bench/synth.py) is folded as the policy
folds it at gpt-4o (input budget 119,552 tokens, summary target 20% of it): eight turns at a
time into the previous summary. Then the turns the latency benchmark times (a short question,
"Ok.") are folded eight at a time, as a worker serving that session folds them, each fold
timed (CPU) twice on the same input:

- remembering: what earlier folds read off the summary's items is kept (the serving path);
- re-reading: nothing is remembered, every item is read again (what each fold did before).

Each fold's CPU is split by stage: candidate extraction of the new messages, the previous
summary's items weighed again (``carried``), de-duplication, corrections, and assembly within
the target (counting lines included), with counting also shown on its own. Only the pure fold
is timed: no database, no HTTP (bench/latency.py times the turn).

    python -m bench fold-cost [--stored 10000] [--folds 12]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from app.budget.summary import SECTION_TITLES, SummaryContent
from app.budget.tokens import TokenCounter, content_text, lookup_model
from app.summarize import SourceMessage, SummaryRequest, extractive
from app.tokens.registry import TokenizerRegistry
from bench import synth

MODEL = "gpt-4o"
INPUT_BUDGET = 119_552
TARGET_TOKENS = int(0.20 * INPUT_BUDGET)
TURNS_PER_FOLD = 8
STAGES = ("_extract", "_carried", "_unique", "_supersede", "_assemble")
STAGE_NAMES = {
    "_extract": "candidates of the new messages",
    "_carried": "previous summary's items weighed again",
    "_unique": "de-duplication",
    "_supersede": "corrections",
    "_assemble": "assembly within the target",
    "counting": "  of which counting lines",
}


@contextmanager
def stage_clock(spent: defaultdict[str, float], counter: TokenCounter) -> Iterator[None]:
    """CPU seconds of each stage of a fold into ``spent`` while the block runs."""

    def clocked(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - started

        return run

    originals = {name: getattr(extractive, name) for name in STAGES}
    count_text = counter.count_text
    for name, function in originals.items():
        setattr(extractive, name, clocked(name, function))
    object.__setattr__(counter, "count_text", clocked("counting", count_text))
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(extractive, name, function)
        object.__delattr__(counter, "count_text")


def sources(turns: tuple[synth.Turn, ...], first_id: int) -> tuple[SourceMessage, ...]:
    messages = [m for turn in turns for m in turn.messages()]
    return tuple(
        SourceMessage(first_id + index, str(m["role"]), content_text(m.get("content")))
        for index, m in enumerate(messages)
    )


def timed_turns(start: int) -> tuple[synth.Turn, ...]:
    return tuple(
        synth.Turn(
            {"role": "user", "content": f"Round {n}: which option should I book now, and why?"},
            (),
            {"role": "assistant", "content": "Ok."},
        )
        for n in range(start, start + TURNS_PER_FOLD)
    )


def run(stored: int, folds: int) -> dict[str, Any]:
    counter, _ = TokenizerRegistry().counter_for(lookup_model(MODEL))
    conversation = synth.with_messages(stored, 0)
    previous: SummaryContent | None = None
    next_id = 1
    for start in range(0, len(conversation.turns), TURNS_PER_FOLD):
        batch = sources(conversation.turns[start : start + TURNS_PER_FOLD], next_id)
        next_id += len(batch)
        request = SummaryRequest(previous, batch, TARGET_TOKENS, counter)
        previous = extractive.summarize_extractive(request)
    assert previous is not None
    held = sum(len(getattr(previous, f)) for f in SECTION_TITLES)
    results: dict[str, Any] = {"stored": next_id - 1, "items": held, "folds": folds}
    for mode in ("re-reading", "remembering"):
        spent: defaultdict[str, float] = defaultdict(float)
        times: list[float] = []
        state, first = previous, next_id
        if mode == "remembering":
            # A serving worker read the summary's items when it folded them in; here the
            # re-reading run has just forgotten them: one fold, untimed, reads them again.
            warm = sources(timed_turns(0), first)
            extractive.summarize_extractive(SummaryRequest(state, warm, TARGET_TOKENS, counter))
        for number in range(folds):
            batch = sources(timed_turns(number * TURNS_PER_FOLD), first)
            first += len(batch)
            request = SummaryRequest(state, batch, TARGET_TOKENS, counter)
            if mode == "re-reading":
                extractive.forget_texts()
            with stage_clock(spent, counter):
                started = time.process_time()
                state = extractive.summarize_extractive(request)
                times.append((time.process_time() - started) * 1000)
        total = sum(times) / 1000
        results[mode] = {
            "median_ms": statistics.median(times),
            "max_ms": max(times),
            "shares": {name: spent[name] / total for name in (*STAGES, "counting")},
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--folds", type=int, default=12)
    args = parser.parse_args()
    results = run(args.stored, args.folds)
    print(  # noqa: T201
        f"{MODEL}, summary target {TARGET_TOKENS:,} tokens; {results['stored']:,} messages "
        f"folded, the summary holds {results['items']} items; {results['folds']} folds of 8 "
        "short turns timed (CPU) each way"
    )
    modes = ("re-reading", "remembering")
    print("| | " + " | ".join(modes) + " |")  # noqa: T201
    print("|---|" + "---:|" * len(modes))  # noqa: T201
    for key, label in (("median_ms", "fold CPU, median (ms)"), ("max_ms", "fold CPU, max (ms)")):
        cells = " | ".join(f"{results[mode][key]:.1f}" for mode in modes)
        print(f"| {label} | {cells} |")  # noqa: T201
    for name, label in STAGE_NAMES.items():
        cells = " | ".join(f"{results[mode]['shares'][name]:.0%}" for mode in modes)
        print(f"| {label} | {cells} |")  # noqa: T201
    speedup = results["re-reading"]["median_ms"] / results["remembering"]["median_ms"]
    print(f"remembering: {speedup:.1f}x less CPU per fold (medians)")  # noqa: T201


if __name__ == "__main__":
    main()
