"""Turns per second and latency under concurrent agents, next to the bare stack's ceiling.

contextd: ``contextd serve`` (1 and 2 workers) on a fresh Postgres database. The bare stack:
bench/bare_stack.py under uvicorn with the same worker counts, on its own fresh database,
making per request as many database round trips as contextd makes (counted first, from
contextd running in-process with SQLAlchemy events: statements, BEGIN, COMMIT and ROLLBACK;
contextd's pool makes no ping round trip on checkout, it asks asyncpg whether the socket is
closed). The same load generator (bench/loadgen.py, its own process)
drives both: N virtual agents, each its own session and connection, looping start + complete.

    python -m bench.throughput [--concurrency 1,16,64] [--workers 1,2] [--duration 20] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

from bench import synth
from bench.common import DEFAULT_SERVER, fresh_database, int_list, running_app
from bench.wire import Connection
from tests import processes
from tests.processes import REPO, ServerProcess, stop_process

MODEL = "gpt-4o"


class RoundTrips:
    """Counts what goes to the database while it listens."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {"statements": 0, "begin": 0, "commit": 0, "rollback": 0}

    def total(self) -> int:
        return sum(self.counts.values())

    def snapshot(self) -> dict[str, int]:
        return dict(self.counts)

    def _bump(self, name: str) -> Any:
        def bump(*_: Any, **__: Any) -> None:
            self.counts[name] += 1

        return bump

    @contextmanager
    def listening(self) -> Iterator[RoundTrips]:
        hooks = [
            (Engine, "before_cursor_execute", self._bump("statements")),
            (Engine, "begin", self._bump("begin")),
            (Engine, "commit", self._bump("commit")),
            (Engine, "rollback", self._bump("rollback")),
        ]
        for target, name, hook in hooks:
            event.listen(target, name, hook)
        try:
            yield self
        finally:
            for target, name, hook in hooks:
                event.remove(target, name, hook)


async def count_round_trips(server_url: str, prefix: str, turns: int = 8) -> dict[str, Any]:
    """Round trips of contextd's start-turn and complete requests (medians over ``turns``
    turns after two warm-up turns), on Postgres, in-process."""
    conversation = synth.generate(turns + 2, seed=1)
    per_request: dict[str, list[dict[str, int]]] = {"start": [], "complete": []}
    async with fresh_database(server_url, prefix) as url, running_app(url) as client:
        session = (
            await client.post("/v1/sessions", json={"model": MODEL, "system": {"global": "Hi."}})
        ).json()
        path = f"/v1/sessions/{session['id']}/turns"
        counter = RoundTrips()
        with counter.listening():
            for number, turn in enumerate(conversation.turns):
                before = counter.snapshot()
                started = await client.post(path, json=turn.start_body())
                middle = counter.snapshot()
                done = await client.post(
                    f"{path}/{started.json()['turn_id']}/complete", json=turn.complete_body()
                )
                after = counter.snapshot()
                assert started.status_code == 201, started.text
                assert done.status_code == 200, done.text
                if number >= 2:
                    per_request["start"].append({k: middle[k] - before[k] for k in before})
                    per_request["complete"].append({k: after[k] - middle[k] for k in before})
    result: dict[str, Any] = {}
    for name, rows in per_request.items():
        result[name] = round(statistics.median(sum(r.values()) for r in rows))
        result[f"{name}_breakdown"] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    return result


def free_port() -> int:
    port = processes.free_port()
    if port:
        return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        given: int = probe.getsockname()[1]
        return given


class BareServer:
    def __init__(self, database_url: str, workers: int, trips: dict[str, Any], log: Path) -> None:
        self.port = free_port()
        environment = {
            **os.environ,
            "BARE_DATABASE_URL": database_url,
            "BARE_START_ROUND_TRIPS": str(trips["start"]),
            "BARE_COMPLETE_ROUND_TRIPS": str(trips["complete"]),
        }
        with log.open("wb") as output:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "bench.bare_stack:create_app",
                    "--factory",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--workers",
                    str(workers),
                    "--no-access-log",
                    "--log-level",
                    "warning",
                ],
                env=environment,
                cwd=REPO,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"

    def ready(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self.url
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"bare stack did not start:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        stop_process(self.process)


async def serving(url: str, within: float = 60.0) -> None:
    """Wait until /readyz answers 200 on ten fresh connections in a row (every worker up)."""
    deadline = time.monotonic() + within
    in_a_row = 0
    while in_a_row < 10:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} is not ready")
        connection = Connection(url)
        try:
            response = await connection.request("GET", "/readyz")
            in_a_row = in_a_row + 1 if response.status == 200 else 0
        except OSError:
            in_a_row = 0
        finally:
            await connection.close()
        if in_a_row == 0:
            await asyncio.sleep(0.2)


def drive(url: str, agents: int, duration: float, warmup: float) -> dict[str, Any]:
    """Run the load generator in its own process; its figures."""
    command = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--url",
        url,
        "--agents",
        str(agents),
        "--duration",
        str(duration),
        "--warmup",
        str(warmup),
        "--model",
        MODEL,
    ]
    done = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, check=True, timeout=duration + 120
    )
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


async def run(
    server_url: str,
    prefix: str,
    concurrency: list[int],
    workers: list[int],
    duration: float,
    warmup: float,
) -> dict[str, Any]:
    began = time.perf_counter()
    trips = await count_round_trips(server_url, prefix)
    print(f"  round trips per request: {trips}", flush=True)  # noqa: T201
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for count in workers:
            for stack in ("contextd", "bare"):
                async with fresh_database(server_url, prefix) as url:
                    log = Path(folder) / f"{stack}-{count}.log"
                    server: ServerProcess | BareServer
                    if stack == "contextd":
                        server = ServerProcess(url, log, auto_migrate="true", workers=str(count))
                    else:
                        server = BareServer(url, count, trips, log)
                    try:
                        base_url = await asyncio.to_thread(server.ready)
                        await serving(base_url)
                        for agents in concurrency:
                            figures = await asyncio.to_thread(
                                drive, base_url, agents, duration, warmup
                            )
                            figures.update(stack=stack, workers=count)
                            runs.append(figures)
                            print(  # noqa: T201
                                f"  {stack} workers={count} c={agents}: "
                                f"{figures['turns_per_second']:.1f} turns/s, request ms "
                                f"{figures['request_ms']}, statuses {figures['statuses']}",
                                flush=True,
                            )
                    finally:
                        server.stop()
                    server_errors = [
                        line
                        for line in log.read_text(errors="replace").splitlines()
                        if '"level": "error"' in line or "Traceback" in line or "ERROR" in line
                    ]
                    for figures in runs:
                        if figures["stack"] == stack and figures["workers"] == count:
                            figures["server_error_lines"] = len(server_errors)
                            figures["server_error_sample"] = server_errors[:3]
    results: dict[str, Any] = {
        "round_trips": trips,
        "duration": duration,
        "warmup": warmup,
        "runs": runs,
    }
    results["targets"] = judge(results)
    results["seconds"] = time.perf_counter() - began
    return results


def find(results: dict[str, Any], stack: str, workers: int, agents: int) -> dict[str, Any] | None:
    runs: list[dict[str, Any]] = results["runs"]
    for figures in runs:
        if (figures["stack"], figures["workers"], figures["agents"]) == (stack, workers, agents):
            return figures
    return None


def judge(results: dict[str, Any]) -> list[dict[str, Any]]:
    targets = []
    for workers in sorted({r["workers"] for r in results["runs"]}):
        mine, bare = find(results, "contextd", workers, 16), find(results, "bare", workers, 16)
        if mine is None or bare is None:
            continue
        share = mine["turns_per_second"] / max(bare["turns_per_second"], 1e-9)
        targets.append(
            {
                "target": f"c=16, {workers} worker(s): contextd ≥ 70% of the bare stack's turns/s",
                "measured": f"{share:.0%} ({mine['turns_per_second']:.0f} vs "
                f"{bare['turns_per_second']:.0f} turns/s)",
                "pass": share >= 0.70,
            }
        )
        p99 = mine["request_ms"]["p99"]
        targets.append(
            {
                "target": f"c=16, {workers} worker(s): contextd request p99 < 80 ms",
                "measured": "no turn completed" if p99 is None else f"{p99:.1f} ms",
                "pass": p99 is not None and p99 < 80,
            }
        )
    return targets


def table(results: dict[str, Any]) -> str:
    lines = [
        "| stack | workers | agents | turns/s | request p50 / p95 / p99 (ms) "
        "| turn p50 / p99 (ms) | non-2xx |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for figures in results["runs"]:
        request, turn = figures["request_ms"], figures["turn_ms"]
        failures = {k: v for k, v in figures["statuses"].items() if k != "ok"}

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f}"

        lines.append(
            f"| {figures['stack']} | {figures['workers']} | {figures['agents']} "
            f"| {figures['turns_per_second']:.1f} "
            f"| {ms(request['p50'])} / {ms(request['p95'])} / {ms(request['p99'])} "
            f"| {ms(turn['p50'])} / {ms(turn['p99'])} "
            f"| {', '.join(f'{k}: {v}' for k, v in failures.items()) or 'none'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--concurrency", type=int_list, default=[1, 16, 64])
    parser.add_argument("--workers", type=int_list, default=[1, 2])
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--database-prefix", default="contextd_bench")
    parser.add_argument("--quick", action="store_true", help="4 s runs after 1 s of warm-up")
    args = parser.parse_args()
    if args.quick:
        args.duration, args.warmup = 4.0, 1.0
    results = asyncio.run(
        run(
            args.database_url,
            args.database_prefix,
            args.concurrency,
            args.workers,
            args.duration,
            args.warmup,
        )
    )
    print(f"round trips per request: {results['round_trips']}")  # noqa: T201
    print(table(results))  # noqa: T201
    for target in results["targets"]:
        verdict = "PASS" if target["pass"] else "MISS"
        print(f"  {verdict}  {target['target']}: {target['measured']}")  # noqa: T201


if __name__ == "__main__":
    main()
