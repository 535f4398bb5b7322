"""Folds made between turns under load: do they hold up a request, and what do they hold?

Queue: eight sessions complete the turn before their fold turn at once (eight folds of 60
messages start together); a request's work in a worker thread (a no-op through
``off_the_loop``) is timed against one fold alone, in the same run. Memory: 300 sessions each
prepare a fold reading five tool results of 80,000 characters, never taken; what the folds hold
is traced (``tracemalloc``), with the characters they count.

    python -m bench folds-ahead-load
"""

from __future__ import annotations

import asyncio
import random
import time
import tracemalloc
from collections.abc import Mapping

from app.budget.decision import SourceText, SummaryWork
from app.budget.summary import SummaryContent
from app.offload import off_the_loop
from app.summarize.ahead import FoldKey, FoldsAhead
from app.summarize.base import SummaryRequest
from app.summarize.extractive import forget_texts, summarize_extractive
from app.tokens.registry import TokenizerRegistry

WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
)
SESSIONS = 8


def _sources(session: int, rng: random.Random) -> tuple[SourceText, ...]:
    return tuple(
        SourceText(
            session * 10_000 + index,
            "user" if index % 2 == 0 else "assistant",
            " ".join(
                f"My {rng.choice(WORDS)} number {rng.randrange(10**6)} is at "
                f"{rng.choice(WORDS).title()} Street {rng.randrange(999)}."
                for _ in range(8)
            ),
        )
        for index in range(60)
    )


def _key(session: int, sources: tuple[SourceText, ...], counter: str) -> FoldKey:
    return FoldKey.of(
        tenant_id="bench",
        session_id=f"s{session}",
        previous_id=None,
        sources=sources,
        target_tokens=3000,
        counter=counter,
    )


def _nothing(content: SummaryContent) -> Mapping[str, str]:
    return {}


async def queue() -> None:
    registry = TokenizerRegistry()
    counter, _ = registry.counter_for(registry.lookup("gpt-4o"))
    rng = random.Random(3)
    sources = {session: _sources(session, rng) for session in range(SESSIONS)}
    began = time.perf_counter()
    summarize_extractive(SummaryRequest(None, sources[0], 3000, counter))
    alone = (time.perf_counter() - began) * 1000
    forget_texts()
    folds = FoldsAhead()
    for session in range(SESSIONS):
        work = SummaryWork(None, sources[session], 3000, False)
        folds.prepare(
            _key(session, sources[session], counter.name), work, counter=counter, ready=_nothing
        )
        folds.start("bench", f"s{session}")
    await asyncio.sleep(0)
    began = time.perf_counter()
    await off_the_loop(lambda: None)
    waited = (time.perf_counter() - began) * 1000
    print(f"one fold alone: {alone:.0f} ms")  # noqa: T201
    print(  # noqa: T201
        f"a request's off_the_loop no-op behind {SESSIONS} folds: {waited:.0f} ms "
        f"({waited / alone:.2f} folds' time)"
    )
    await folds.close()


async def memory() -> None:
    registry = TokenizerRegistry()
    counter, _ = registry.counter_for(registry.lookup("gpt-4o"))
    tracemalloc.start()
    folds = FoldsAhead()
    for session in range(300):
        sources = tuple(
            SourceText(session * 10 + index, "tool", f"{session}-{index} " + "x" * 80_000)
            for index in range(5)
        )
        work = SummaryWork(None, sources, 400, False)
        folds.prepare(_key(session, sources, counter.name), work, counter=counter, ready=_nothing)
        del sources, work
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(  # noqa: T201
        f"300 sessions' folds of 400,000 characters: {held / 1e6:.0f} MB held, "
        f"{folds.chars_held:,} characters counted"
    )


def main() -> None:
    asyncio.run(queue())
    asyncio.run(memory())


if __name__ == "__main__":
    main()
