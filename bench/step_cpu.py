"""What a 128-call step costs the worker's CPU, as the open turn grows to 1,000 calls.

In-process (the app under httpx's ASGI transport) on a fresh Postgres database: a session
starts a turn and posts steps of 128 tool calls each (the neighbours' steps of
bench/neighbours.py) until the turn holds about 1,000 calls, several times over. The process
CPU of each step is timed (``time.process_time``: the app's work, the driver's and the
client's), and so is the CPU of the Postgres backends serving the database (user + system
ticks from ``/proc/<pid>/stat``, 10 ms each: read the median over runs), so that two versions
run side by side compare however loaded the machine is; the wall time is printed too. Each
step is also reported by the open turn's length before it (128, 256, … calls): a step's cost
should not grow with it, and the last over the first is the figure.

    python -m bench step-cpu [--runs 3] [--steps 8] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections import defaultdict
from typing import Any

import httpx

from app.main import create_app
from app.settings import Settings
from bench.common import DEFAULT_SERVER, fresh_database
from bench.neighbours import CALLS_PER_STEP, step_body
from bench.wrk_load import Meter, backends

#: Postgres's clock ticks a second (Linux: 100).
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


async def run(server_url: str, runs: int, steps: int) -> dict[str, Any]:
    cpu: list[float] = []
    wall: list[float] = []
    postgres: list[float] = []
    # By the open turn's calls before the step: process CPU, Postgres CPU.
    by_length: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    async with fresh_database(server_url, "contextd_bench_step") as database_url:
        app = create_app(Settings(_env_file=None, database_url=database_url, auto_migrate=True))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://contextd", timeout=600
            ) as client,
        ):
            for run_number in range(runs):
                body = {"model": "gpt-4o", "system": {"global": "You are a coding agent."}}
                session = (await client.post("/v1/sessions", json=body)).json()["id"]
                base = f"/v1/sessions/{session}/turns"
                started = await client.post(base, json={"message": {"content": "Audit it."}})
                turn = started.json()["turn_id"]
                for number in range(steps):
                    step = step_body(number * CALLS_PER_STEP, CALLS_PER_STEP, f"r{run_number}")
                    pids = await backends(server_url, database_url)
                    meter = Meter()
                    meter.start(pids)
                    cpu_before, wall_before = time.process_time(), time.perf_counter()
                    response = await client.post(f"{base}/{turn}/steps", json=step)
                    spent_cpu = (time.process_time() - cpu_before) * 1000
                    spent_wall = (time.perf_counter() - wall_before) * 1000
                    spent_postgres = meter.spent(pids) * 1000 / TICKS_PER_SECOND
                    if response.status_code != 200:
                        raise RuntimeError(f"step: {response.status_code} {response.text[:300]}")
                    if run_number or number:  # the very first step warms the process up
                        cpu.append(spent_cpu)
                        wall.append(spent_wall)
                        postgres.append(spent_postgres)
                        by_length[number * CALLS_PER_STEP][0].append(spent_cpu)
                        by_length[number * CALLS_PER_STEP][1].append(spent_postgres)
    lengths = sorted(by_length)
    return {
        "steps": len(cpu),
        "cpu_median_ms": statistics.median(cpu),
        "cpu_mean_ms": statistics.mean(cpu),
        "postgres_median_ms": statistics.median(postgres),
        "wall_median_ms": statistics.median(wall),
        "by_length": {
            length: (statistics.median(process), statistics.median(database))
            for length in lengths
            for process, database in [by_length[length]]
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--runs", type=int, default=3, help="turns grown to --steps steps")
    parser.add_argument("--steps", type=int, default=8, help="128-call steps per turn")
    args = parser.parse_args()
    results = asyncio.run(run(args.database_url, args.runs, args.steps))
    print(  # noqa: T201
        f"{results['steps']} steps of {CALLS_PER_STEP} calls: process CPU median "
        f"{results['cpu_median_ms']:.1f} ms, mean {results['cpu_mean_ms']:.1f} ms; "
        f"Postgres CPU median {results['postgres_median_ms']:.1f} ms; "
        f"wall median {results['wall_median_ms']:.1f} ms"
    )
    by_length = results["by_length"]
    print("| open turn's calls before the step | process CPU (ms) | Postgres CPU (ms) |")  # noqa: T201
    print("|---:|---:|---:|")  # noqa: T201
    for length, (process, database) in by_length.items():
        print(f"| {length:,} | {process:.1f} | {database:.1f} |")  # noqa: T201
    first, last = min(by_length), max(by_length)
    print(  # noqa: T201
        f"step into {last:,} calls / into {first:,}: process CPU "
        f"{by_length[last][0] / by_length[first][0]:.2f}x, Postgres CPU "
        f"{by_length[last][1] / max(by_length[first][1], 1e-9):.2f}x"
    )


if __name__ == "__main__":
    main()
