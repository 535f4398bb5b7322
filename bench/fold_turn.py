"""What does the turn start that crosses the turn count cost, folded between turns or inline?

One process, one Postgres database (or a SQLite file), two apps on it: one folds the
turn-count summary between turns (the default, ``fold_between_turns``), the other on the turn
start itself. Each gets a session filled through the API with the latency benchmark's
conversation (bench/synth.py), then the same short turns (start, complete) are sent to both,
alternating, each call timed: wall time and the process's CPU (``time.process_time``: every
thread, the in-process client's share included). After each completion the agent pauses
(``--pause-ms``, an agent's time between turns, shorter than any real one), which is when a
fold made between turns runs; the CPU of that completion and pause is reported beside the
turn start's, so that what moved is seen to move rather than vanish.

A fold turn is one whose start made a summary (``summary_reason`` ``turn_count``): one in
nine. Reported per app: the fold turn starts' and the other turn starts' medians, and their
ratio, in wall and CPU milliseconds.

    python -m bench fold-turn [--stored 2000] [--turns 54] [--pause-ms 100] [--sqlite]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench import synth
from bench.common import DEFAULT_SERVER, fresh_database, machine, running_app

MODEL = "gpt-4o"
WAYS = {"between turns": True, "inline": False}


@dataclass
class Calls:
    """One app's timed calls: (wall ms, CPU ms) per call, by kind."""

    fold_starts: list[tuple[float, float]] = field(default_factory=list)
    other_starts: list[tuple[float, float]] = field(default_factory=list)
    #: A completion and the pause after it: where a fold made between turns goes.
    before_fold: list[tuple[float, float]] = field(default_factory=list)
    before_other: list[tuple[float, float]] = field(default_factory=list)
    #: Each fold turn's ``block_telemetry.summary_made`` (timed turns and filling alike).
    made: list[str] = field(default_factory=list)


async def _post(client: httpx.AsyncClient, path: str, body: Any, status: int) -> Any:
    response = await client.post(path, json=body)
    if response.status_code != status:
        raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
    return response.json()


async def _fill(client: httpx.AsyncClient, stored: int) -> str:
    body = {"model": MODEL, "system": {"global": synth.SYSTEM}}
    session = await _post(client, "/v1/sessions", body, 201)
    base = f"/v1/sessions/{session['id']}/turns"
    for turn in synth.with_messages(stored).turns:
        started = await _post(client, base, turn.start_body(), 201)
        for step in turn.steps:
            await _post(client, f"{base}/{started['turn_id']}/steps", step.body(), 200)
        await _post(client, f"{base}/{started['turn_id']}/complete", turn.complete_body(), 200)
    return str(session["id"])


async def _timed(call: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = await call
    return result, (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


async def run(stored: int, turns: int, pause_ms: float, database_url: str | None) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        url = database_url
        if url is not None:
            url = await stack.enter_async_context(fresh_database(url, "contextd_fold_turn"))
        clients = {
            way: await stack.enter_async_context(
                running_app(url, settings={"fold_between_turns": ahead})
            )
            for way, ahead in WAYS.items()
        }
        sessions = {way: await _fill(client, stored) for way, client in clients.items()}
        calls = {way: Calls() for way in WAYS}
        pending: dict[str, tuple[float, float]] = {}
        for number in range(turns):
            for way, client in clients.items() if number % 2 else reversed(clients.items()):
                base = f"/v1/sessions/{sessions[way]}/turns"
                body = {"message": {"content": f"Round {number}: which option now, and why?"}}
                started, wall, cpu = await _timed(_post(client, base, body, 201))
                fold = started["actions"]["summary_reason"] == "turn_count"
                record = calls[way]
                (record.fold_starts if fold else record.other_starts).append((wall, cpu))
                if way in pending:
                    (record.before_fold if fold else record.before_other).append(pending[way])
                path = f"{base}/{started['turn_id']}/complete"
                done = _post(client, path, {"assistant": {"content": "Ok."}}, 200)

                async def completed_and_paused(done: Any = done) -> None:
                    await done
                    await asyncio.sleep(pause_ms / 1000)

                _, wall, cpu = await _timed(completed_and_paused())
                pending[way] = (wall - pause_ms, cpu)
        for way, client in clients.items():
            rows = (
                await client.get("/v1/audit", params={"session_id": sessions[way], "limit": 500})
            ).json()["items"]
            calls[way].made = [
                " ".join(
                    f"{k}={v}"
                    for k, v in r["block_telemetry"]["summary_made"].items()
                    if k != "made_at"
                )
                for r in rows
                if r["summary_reason"] == "turn_count" and "summary_made" in r["block_telemetry"]
            ]
    return {"stored": stored, "turns": turns, "pause_ms": pause_ms, "calls": calls}


def _median(pairs: list[tuple[float, float]], index: int) -> float:
    return statistics.median(p[index] for p in pairs) if pairs else float("nan")


def table(results: dict[str, Any]) -> str:
    lines = [
        "| fold made | fold turn starts | fold turn start wall / CPU (ms) | other turn starts "
        "wall / CPU (ms) | fold / other, wall / CPU | completion + pause before a fold turn, "
        "CPU (ms) | before another turn, CPU (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for way, calls in results["calls"].items():
        fold_wall, fold_cpu = _median(calls.fold_starts, 0), _median(calls.fold_starts, 1)
        other_wall, other_cpu = _median(calls.other_starts, 0), _median(calls.other_starts, 1)
        lines.append(
            f"| {way} | {len(calls.fold_starts)} | {fold_wall:.1f} / {fold_cpu:.1f} | "
            f"{other_wall:.1f} / {other_cpu:.1f} | {fold_wall / other_wall:.2f}x / "
            f"{fold_cpu / other_cpu:.2f}x | {_median(calls.before_fold, 1):.1f} | "
            f"{_median(calls.before_other, 1):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stored", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=54)
    parser.add_argument("--pause-ms", type=float, default=100.0)
    parser.add_argument("--database-url", default=DEFAULT_SERVER, help="Postgres server")
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file instead")
    args = parser.parse_args()
    results = asyncio.run(
        run(args.stored, args.turns, args.pause_ms, None if args.sqlite else args.database_url)
    )
    print(f"{machine()}; {args.stored} stored messages, {args.turns} timed turns each")  # noqa: T201
    print(table(results))  # noqa: T201
    for way, calls in results["calls"].items():
        print(f"  {way}: the last timed fold turns' summary_made:")  # noqa: T201
        for made in calls.made[: len(calls.fold_starts)]:
            print(f"    {made}")  # noqa: T201


if __name__ == "__main__":
    main()
