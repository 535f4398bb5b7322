"""What one Postgres carries: the server's own CPU time and storage per agent call.

Runs turns through the real app (in-process, over ASGI) on a fresh Postgres database on this
machine, and reads the CPU time of the Postgres backends serving that database from
/proc/<pid>/stat before and after each phase (so other databases' work on the same server
does not count), with the database's size before and after. Background processes (WAL
writer, checkpointer, autovacuum) are left out: the figure is the per-call CPU of the
backends, a lower bound of the server's cost. From it, the turns per second one Postgres
core carries, which is what docs/scale-out.md sizes a cluster by.

    python -m bench.pg_capacity --sessions 8 --turns 40 --steps 2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from bench.common import DEFAULT_SERVER, _plain_dsn, fresh_database, running_app

_TICKS = os.sysconf("SC_CLK_TCK")


def _backend_cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime and stime are fields 14 and 15 of stat(5); after the ")" they are 12 and 13.
        total += int(fields[11]) + int(fields[12])
    return total / _TICKS


@dataclass
class Phase:
    name: str
    calls: int
    server_cpu_s: float
    app_cpu_s: float
    wall_s: float

    @property
    def server_ms(self) -> float:
        return 1000 * self.server_cpu_s / self.calls

    @property
    def app_ms(self) -> float:
        return 1000 * self.app_cpu_s / self.calls


def _words(count: int, seed: int) -> str:
    vocabulary = ("invoice", "deploy", "cache", "shard", "ticket", "retry", "vendor", "report")
    return " ".join(vocabulary[(seed * 7 + i) % len(vocabulary)] for i in range(count))


async def _measure(database: str, sessions: int, turns: int, steps: int) -> list[Phase]:
    async with running_app(database, settings={"database_pool_size": 4}) as client:
        ids = []
        for _ in range(sessions):
            created = await client.post(
                "/v1/sessions", json={"model": "gpt-4o", "context_limit": 16384, "goal": "g"}
            )
            created.raise_for_status()
            ids.append(created.json()["id"])
        admin = await asyncpg.connect(_plain_dsn(DEFAULT_SERVER))
        name = database.rsplit("/", 1)[1]
        phases = {"turn start": Phase("turn start", 0, 0, 0, 0)}
        phases["step"] = Phase("step", 0, 0, 0, 0)
        phases["completion"] = Phase("completion", 0, 0, 0, 0)
        size_before = await admin.fetchval("SELECT pg_database_size($1)", name)
        try:
            for turn in range(turns):
                await _one_round(client, admin, name, ids, turn, steps, phases)
            size_after = await admin.fetchval("SELECT pg_database_size($1)", name)
        finally:
            await admin.close()
        per_turn = (size_after - size_before) / (sessions * turns)
        kib = per_turn / 1024
        print(f"storage: {kib:.1f} KiB per turn of {2 + steps} calls (database size)")  # noqa: T201
        return list(phases.values())


async def _pids(admin: asyncpg.Connection, name: str) -> list[int]:
    rows = await admin.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1", name)
    return [int(row["pid"]) for row in rows]


async def _timed(
    admin: asyncpg.Connection,
    name: str,
    phase: Phase,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    client: httpx.AsyncClient,
) -> list[httpx.Response]:
    pids = await _pids(admin, name)
    server, app, wall = _backend_cpu_seconds(pids), time.process_time(), time.perf_counter()
    answers = [await client.post(path, json=body) for path, body in calls]
    phase.server_cpu_s += _backend_cpu_seconds(pids) - server
    phase.app_cpu_s += time.process_time() - app
    phase.wall_s += time.perf_counter() - wall
    phase.calls += len(calls)
    for answer in answers:
        answer.raise_for_status()
    return answers


async def _one_round(
    client: httpx.AsyncClient,
    admin: asyncpg.Connection,
    name: str,
    ids: list[str],
    turn: int,
    steps: int,
    phases: dict[str, Phase],
) -> None:
    starts = [
        (f"/v1/sessions/{s}/turns", {"message": {"content": _words(60, turn + i)}})
        for i, s in enumerate(ids)
    ]
    started = await _timed(admin, name, phases["turn start"], starts, client)
    turn_ids = [answer.json()["turn_id"] for answer in started]
    for step in range(steps):
        calls = []
        for session, turn_id in zip(ids, turn_ids, strict=True):
            call = f"call_{turn:04d}{step:02d}{session[:18]}"
            calls.append(
                (
                    f"/v1/sessions/{session}/turns/{turn_id}/steps",
                    {
                        "assistant": {
                            "tool_calls": [
                                {
                                    "id": call,
                                    "type": "function",
                                    "function": {
                                        "name": "lookup",
                                        "arguments": '{"ticket": "T-4821", "limit": 20}',
                                    },
                                }
                            ]
                        },
                        "tool_results": [{"tool_call_id": call, "content": _words(150, step)}],
                    },
                )
            )
        await _timed(admin, name, phases["step"], calls, client)
    completions = [
        (
            f"/v1/sessions/{s}/turns/{t}/complete",
            {"assistant": {"content": _words(80, turn)}},
        )
        for s, t in zip(ids, turn_ids, strict=True)
    ]
    await _timed(admin, name, phases["completion"], completions, client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--server", default=DEFAULT_SERVER)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--steps", type=int, default=2)
    arguments = parser.parse_args()

    async def run() -> list[Phase]:
        async with fresh_database(arguments.server, "contextd_capacity") as database:
            return await _measure(database, arguments.sessions, arguments.turns, arguments.steps)

    phases = asyncio.run(run())
    lines = [f"{'call':<12} {'calls':>6} {'Postgres CPU ms':>16} {'app CPU ms':>11}"]
    for phase in phases:
        lines.append(
            f"{phase.name:<12} {phase.calls:>6} {phase.server_ms:>16.2f} {phase.app_ms:>11.2f}"
        )
    per_turn = sum(p.server_cpu_s for p in phases) / phases[0].calls
    lines.append(
        f"Postgres CPU per turn of {2 + arguments.steps} calls: {1000 * per_turn:.2f} ms, "
        f"so one Postgres core carries about {1 / per_turn:.0f} such turns/s "
        f"({(2 + arguments.steps) / per_turn:.0f} calls/s)"
    )
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
