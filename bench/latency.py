"""How long does it take to get the next prompt, as the stored history grows?

contextd: a real ``contextd serve`` (uvicorn, one worker, open mode on 127.0.0.1) on a fresh
Postgres database. Sessions are filled with the synthetic conversation (bench/synth.py)
through the API, turn by turn (start, tool steps, complete), so the database holds what the
policy left (summaries, pruned and active messages), not a hand-made state. Then, in rounds
that go through every size, one turn is started (timed: the POST that returns the prompt)
and completed (not timed). Sizes up to 100 messages use 10 sessions in rotation, so that
the timed turns themselves do not grow a small history much.

The bare stack (bench/bare_stack.py, FastAPI + asyncpg, one worker, its own fresh database):
a session per size holding as many stored messages, making as many round trips per turn as
contextd does (counted at run time). Its turns are timed in the same rounds as contextd's,
turn for turn, so both see the same machine; the ratio of their medians is the figure.

The libraries: the same conversation (system message, the history, the new user message),
the same input budget, a tiktoken counter that counts like OpenAI. Timed: LangChain's
``trim_messages`` call; LlamaIndex's ``ChatMemoryBuffer.get()`` and ``Memory.get()`` after
the history was ``put``. Each library size has a time budget; a size whose one run is
expected to exceed it is not run.

    python -m bench.latency [--sizes 10,100,1000,5000,10000] [--samples 50] [--quick]
                            [--no-libraries]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from bench import synth
from bench.common import DEFAULT_SERVER, fresh_database, int_list, percentile
from bench.throughput import BareServer, count_round_trips, serving
from bench.wire import Connection
from tests.processes import ServerProcess

MODEL = "gpt-4o"
QUESTION = "Round {n}: given all that, which option should I book now, and why?"


@dataclass
class Timings:
    """Milliseconds of one implementation at one size; ``note`` says why it was not run."""

    runs: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.runs) if self.runs else None

    @property
    def p95(self) -> float | None:
        return percentile(self.runs, 0.95) if self.runs else None

    def summary(self) -> dict[str, Any]:
        return {
            "n": len(self.runs),
            "median_ms": self.median,
            "p95_ms": self.p95,
            "note": self.note,
        }


async def expect(connection: Connection, method: str, path: str, body: Any, status: int) -> Any:
    response = await connection.request(method, path, body)
    if response.status != status:
        raise RuntimeError(f"{method} {path}: {response.status} {response.body[:500]!r}")
    return response.json()


async def feed(connection: Connection, session_id: str, turns: tuple[synth.Turn, ...]) -> None:
    """Send ``turns`` as an agent would: start, each tool step, complete."""
    base = f"/v1/sessions/{session_id}/turns"
    for turn in turns:
        started = await expect(connection, "POST", base, turn.start_body(), 201)
        for step in turn.steps:
            await expect(connection, "POST", f"{base}/{started['turn_id']}/steps", step.body(), 200)
        await expect(
            connection, "POST", f"{base}/{started['turn_id']}/complete", turn.complete_body(), 200
        )


async def new_session(connection: Connection) -> dict[str, Any]:
    body = {"model": MODEL, "system": {"global": synth.SYSTEM}}
    session: dict[str, Any] = await expect(connection, "POST", "/v1/sessions", body, 201)
    return session


async def bare_sessions(url: str, database_url: str, sizes: list[int]) -> dict[int, str]:
    """A bare-stack session per size, holding ``size`` stored messages."""
    connection = Connection(url)
    ids = {}
    for size in sizes:
        session = await expect(connection, "POST", "/v1/sessions", {"model": MODEL}, 201)
        ids[size] = session["id"]
    await connection.close()
    database = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        for size, session_id in ids.items():
            await database.execute(
                "INSERT INTO bare_messages (session_id, turn_id, seq, role, content, token_count) "
                "SELECT $1, 'stored', g, 'user', repeat('word ', 60), 61 "
                "FROM generate_series(1, $2) AS g",
                session_id,
                size,
            )
            await database.execute(
                "UPDATE bare_sessions SET message_count = $2 WHERE id = $1", session_id, size
            )
    finally:
        await database.close()
    return ids


async def timed_turn(connection: Connection, session_id: str, number: int) -> float:
    """Milliseconds of a turn start (the POST that returns the prompt); then complete it."""
    body = {"message": {"content": QUESTION.format(n=number)}}
    path = f"/v1/sessions/{session_id}/turns"
    started = time.perf_counter()
    response = await connection.request("POST", path, body)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != 201:
        raise RuntimeError(f"start turn: {response.status} {response.body[:300]!r}")
    turn_id = response.json()["turn_id"]
    await expect(
        connection, "POST", f"{path}/{turn_id}/complete", {"assistant": {"content": "Ok."}}, 200
    )
    return elapsed


async def contextd_latency(
    base_url: str,
    sizes: list[int],
    samples: int,
    warmup: int,
    seed: int,
    bare: tuple[str, dict[int, str]] | None = None,
) -> tuple[dict[int, Timings], dict[int, dict[str, Any]], int, dict[int, Timings]]:
    """Timings per size, what each size's sessions held, the input budget, and the bare
    stack's timings per size (timed turn for turn with contextd's, when ``bare`` is given)."""
    sessions: dict[int, list[str]] = {}
    budget = 0
    held: dict[int, dict[str, Any]] = {}

    async def fill(size: int) -> None:
        nonlocal budget
        connection = Connection(base_url)
        conversation = synth.with_messages(size, seed)
        started = time.perf_counter()
        ids = []
        for _ in range(10 if size <= 100 else 1):
            session = await new_session(connection)
            budget = session["budget"]["input_budget"]
            await feed(connection, session["id"], conversation.turns)
            ids.append(session["id"])
        sessions[size] = ids
        held[size] = {
            "stored_before": len(conversation.messages()),
            "sessions": len(ids),
            "fill_seconds": time.perf_counter() - started,
        }
        await connection.close()

    await asyncio.gather(*(fill(size) for size in sizes))
    timings = {size: Timings() for size in sizes}
    bare_timings = {size: Timings() for size in sizes}
    connection = Connection(base_url)
    bare_connection = Connection(bare[0]) if bare else None
    for number in range(warmup + samples):
        for size in sizes if number % 2 else sizes[::-1]:
            ids = sessions[size]
            elapsed = await timed_turn(connection, ids[number % len(ids)], number)
            if number >= warmup:
                timings[size].runs.append(elapsed)
            if bare is not None and bare_connection is not None:
                elapsed = await timed_turn(bare_connection, bare[1][size], number)
                if number >= warmup:
                    bare_timings[size].runs.append(elapsed)
    if bare_connection is not None:
        await bare_connection.close()
    for size in sizes:
        last = await expect(connection, "GET", f"/v1/sessions/{sessions[size][0]}", None, 200)
        held[size]["stored_after"] = last["message_count"]
    await connection.close()
    return timings, held, budget, bare_timings


def time_library(
    name: str,
    prepare: Callable[[list[synth.Message]], Callable[[], Any]],
    chats: dict[int, list[synth.Message]],
    samples: int,
    budget_seconds: float,
) -> dict[int, Timings]:
    """Time ``prepare(chat)()`` per size, within ``budget_seconds`` a size (at least one run
    when one run is expected to fit)."""
    results: dict[int, Timings] = {}
    previous: tuple[int, float] | None = None
    for size, chat in sorted(chats.items()):
        timing = results.setdefault(size, Timings())
        if previous is not None:
            # Growth at least linear in the messages: skip a size certain to blow the budget.
            expected = previous[1] * size / previous[0]
            if expected > budget_seconds:
                timing.note = f"not run: one run would take over {budget_seconds:.0f} s"
                previous = (size, expected)
                continue
        call = prepare(chat)
        spent = 0.0
        first = True
        while len(timing.runs) < samples and (first or spent < budget_seconds):
            started = time.perf_counter()
            call()
            elapsed = time.perf_counter() - started
            spent += elapsed
            if first and elapsed * 3 < budget_seconds:
                first = False  # the first run was a warm-up
                continue
            first = False
            timing.runs.append(elapsed * 1000)
        previous = (size, statistics.median(timing.runs) / 1000)
        if len(timing.runs) < samples:
            timing.note = f"{len(timing.runs)} run(s) in a {budget_seconds:.0f} s budget"
        print(f"  {name} at {size}: {timing.summary()}", flush=True)  # noqa: T201
    return results


def library_latency(
    sizes: list[int], samples: int, budget: int, budget_seconds: float, seed: int
) -> dict[str, dict[int, Timings]]:
    from bench import baselines

    chats = {}
    for size in sizes:
        conversation = synth.with_messages(size, seed)
        chats[size] = [*conversation.chat(), {"role": "user", "content": QUESTION.format(n=0)}]

    def langchain(chat: list[synth.Message]) -> Callable[[], Any]:
        messages = baselines.to_langchain(chat)
        counter = baselines.langchain_counter(MODEL)
        return lambda: baselines.trim(messages, budget, counter)

    def buffer(chat: list[synth.Message]) -> Callable[[], Any]:
        held = baselines.chat_memory_buffer(baselines.to_llama(chat), budget, MODEL)
        return lambda: held.get()

    def memory(chat: list[synth.Message]) -> Callable[[], Any]:
        held = baselines.memory(baselines.to_llama(chat), budget, MODEL, f"s{len(chat)}")
        return lambda: held.get()

    return {
        "langchain trim_messages": time_library(
            "trim_messages", langchain, chats, samples, budget_seconds
        ),
        "llama-index ChatMemoryBuffer": time_library(
            "ChatMemoryBuffer", buffer, chats, samples, budget_seconds
        ),
        "llama-index Memory": time_library("Memory", memory, chats, samples, budget_seconds),
    }


def judge(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets: each with its measured value and pass/miss."""
    contextd = results["contextd"]
    targets = []
    bare = results.get("bare", {})
    for size in (10, 10_000):
        key = str(size)
        if key not in contextd:
            continue
        p50, p95 = contextd[key]["median_ms"], contextd[key]["p95_ms"]
        if bare.get(key, {}).get("median_ms"):
            ratio = p50 / bare[key]["median_ms"]
            targets.append(
                {
                    "target": f"turn-start p50 ≤ 2x the bare stack's at {size:,} messages "
                    "(concurrency 1)",
                    "measured": f"{ratio:.2f}x ({p50:.2f} vs {bare[key]['median_ms']:.2f} ms)",
                    "pass": ratio <= 2,
                }
            )
        targets.append(
            {
                "target": f"p95 ≤ 2x contextd's own p50 at {size:,} messages",
                "measured": f"{p95 / p50:.2f}x ({p95:.2f} vs {p50:.2f} ms)",
                "pass": p95 <= 2 * p50,
            }
        )
    if "10" in contextd and "10000" in contextd:
        ratio = contextd["10000"]["median_ms"] / contextd["10"]["median_ms"]
        targets.append(
            {
                "target": "median at 10,000 messages ≤ 1.3 x median at 10",
                "measured": f"{ratio:.2f}x",
                "pass": ratio <= 1.3,
            }
        )
    trim = results["libraries"].get("langchain trim_messages", {})
    for size, factor in ((1000, 25), (5000, 100)):
        key = str(size)
        if key in contextd and trim.get(key, {}).get("median_ms"):
            speedup = trim[key]["median_ms"] / contextd[key]["median_ms"]
            targets.append(
                {
                    "target": f"≥ {factor}x faster than trim_messages at {size:,} messages",
                    "measured": f"{speedup:.1f}x",
                    "pass": speedup >= factor,
                }
            )
    return targets


async def run(
    sizes: list[int],
    samples: int,
    warmup: int,
    server_url: str,
    prefix: str,
    library_seconds: float,
    seed: int = 0,
    libraries: bool = True,
) -> dict[str, Any]:
    started = time.perf_counter()
    trips = await count_round_trips(server_url, prefix)
    async with (
        fresh_database(server_url, prefix) as database_url,
        fresh_database(server_url, prefix) as bare_database_url,
    ):
        with tempfile.TemporaryDirectory() as folder:
            server = ServerProcess(database_url, Path(folder) / "serve.log", auto_migrate="true")
            bare = BareServer(bare_database_url, 1, trips, Path(folder) / "bare.log")
            try:
                base_url = await asyncio.to_thread(server.ready)
                bare_url = await asyncio.to_thread(bare.ready)
                await serving(bare_url)
                bare_ids = await bare_sessions(bare_url, bare_database_url, sizes)
                timings, held, budget, bare_timings = await contextd_latency(
                    base_url, sizes, samples, warmup, seed, bare=(bare_url, bare_ids)
                )
            finally:
                server.stop()
                bare.stop()
    results: dict[str, Any] = {
        "model": MODEL,
        "input_budget": budget,
        "samples": samples,
        "warmup": warmup,
        "sessions": {str(s): v for s, v in held.items()},
        "contextd": {str(s): t.summary() for s, t in timings.items()},
        "contextd_runs": {str(s): t.runs for s, t in timings.items()},
        "bare": {str(s): t.summary() for s, t in bare_timings.items()},
        "round_trips": trips,
        "libraries": {},
        "library_seconds": library_seconds,
    }
    if libraries:
        measured = await asyncio.to_thread(
            library_latency, sizes, samples, budget, library_seconds, seed
        )
        results["libraries"] = {
            name: {str(s): t.summary() for s, t in by_size.items()}
            for name, by_size in measured.items()
        }
    results["targets"] = judge(results)
    results["seconds"] = time.perf_counter() - started
    return results


def table(results: dict[str, Any]) -> str:
    names = ["contextd", *(["bare stack"] if results.get("bare") else []), *results["libraries"]]
    sizes = sorted(int(s) for s in results["contextd"])
    lines = ["| stored messages | " + " | ".join(f"{n} p50 / p95 (ms)" for n in names) + " |"]
    lines.append("|---:|" + "---:|" * len(names))
    for size in sizes:
        cells = []
        for name in names:
            source = {"contextd": results["contextd"], "bare stack": results.get("bare", {})}
            row = (source[name] if name in source else results["libraries"][name]).get(str(size))
            if not row or row["median_ms"] is None:
                cells.append(row["note"] if row else "-")
            else:
                cell = f"{row['median_ms']:.2f} / {row['p95_ms']:.2f}"
                cells.append(cell + (f" ({row['note']})" if row["note"] else ""))
        lines.append(f"| {size:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int_list, default=[10, 100, 1000, 5000, 10000])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--library-seconds", type=float, default=30.0)
    parser.add_argument(
        "--database-url",
        default=DEFAULT_SERVER,
        help="Postgres server (a fresh database is made on it)",
    )
    parser.add_argument("--database-prefix", default="contextd_bench")
    parser.add_argument("--quick", action="store_true", help="sizes 10,100,1000, 15 samples")
    parser.add_argument(
        "--no-libraries", action="store_true", help="contextd and the bare stack only"
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.samples, args.warmup, args.library_seconds = [10, 100, 1000], 15, 3, 5.0
    results = asyncio.run(
        run(
            args.sizes,
            args.samples,
            args.warmup,
            args.database_url,
            args.database_prefix,
            args.library_seconds,
            libraries=not args.no_libraries,
        )
    )
    print(f"input budget {results['input_budget']} tokens ({MODEL})")  # noqa: T201
    print(table(results))  # noqa: T201
    for target in results["targets"]:
        print(f"  {'PASS' if target['pass'] else 'MISS'}  {target['target']}: {target['measured']}")  # noqa: T201


if __name__ == "__main__":
    main()
