"""Sixteen agents under wrk: contextd's turns per second next to the bare stack's, in the
same run, driven by a load generator written in C, with the servers' CPU per turn.

bench/throughput.py drives the servers with a Python load generator, which on a small
machine spends a good share of the cores it measures. Here wrk (apt-get install wrk) drives
16 connections, one thread each, with bench/wrk/agent_turns.lua: each connection is an agent
with its own session (prepared beforehand, a new one every 40 turns as bench/loadgen.py
does), looping a turn start and its completion with the synthetic conversation's bodies
(bench/synth.py), as fast as the answers come. Every status is checked; a run with a non-2xx
answer or a socket error is reported and is not a figure.

Per worker count, contextd (``contextd serve``) and the bare stack (bench/bare_stack.py,
the same round trips) each run on a fresh Postgres database, both started once, and the
measured runs alternate (contextd, bare, contextd, bare, …) so that both see the machine's
noise; each run has its own warm-up and its own sessions. Beside turns/s and wrk's latency
distribution (one request: a start or a completion), the CPU each turn cost: user + system
ticks from /proc/<pid>/stat before and after the run, of the server's processes (the
supervisor and its workers), of the Postgres backends serving the run's database and of wrk,
divided by the turns served; the CPU the rest of the machine used meanwhile; and how much of
a core the server got. CPU per turn is the figure a shared machine disturbs least: turns/s
follows the CPU the scheduler gives each server, and on a machine busy with other work a
server that asks for little gets all it asks while one that asks for much gets a fair share.

    python -m bench.wrk_load [--workers 1,2] [--rounds 2] [--duration 20] [--warmup 4]
                             [--connections 16] [--wrk-cpus 1] [--profile 10]

``--profile S``: after the figures, one more contextd run (1 worker) with py-spy sampling
the worker for S seconds, bucketed by layer (bench/profile_layers.py). That run is not a
figure: the sampler shares the cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import make_url

from bench import profile_layers, synth
from bench.common import DEFAULT_SERVER, fresh_database, int_list
from bench.throughput import BareServer, count_round_trips, serving
from bench.wire import Connection
from tests.processes import ServerProcess

MODEL = "gpt-4o"
SCRIPT = Path(__file__).resolve().parent / "wrk" / "agent_turns.lua"
TURNS_PER_SESSION = 40
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
STACKS = ("contextd", "bare")
#: How long each server may take to migrate its database and start (a loaded machine is slow).
STARTUP_SECONDS = 300.0


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit(
            "wrk is not installed; it drives this benchmark's load. On Debian or Ubuntu: "
            "apt-get install wrk (https://github.com/wg/wrk)"
        )
    return found


# --- CPU from /proc ------------------------------------------------------------------------


def ticks(pid: int) -> int | None:
    """User + system clock ticks a process has used, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15


def descendants(root: int) -> list[int]:
    """``root`` and every process under it (uvicorn's supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def machine_ticks() -> tuple[int, int]:
    """Busy and total clock ticks of every core (the first line of /proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


async def backends(server_url: str, database_url: str) -> list[int]:
    """The Postgres backends connected to the run's database."""
    database = make_url(database_url).database
    admin = await asyncpg.connect(
        make_url(server_url).set(drivername="postgresql").render_as_string(hide_password=False)
    )
    try:
        rows = await admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            database,
        )
    finally:
        await admin.close()
    return [row["pid"] for row in rows]


@dataclass
class Meter:
    """Ticks of a set of processes, read before a run and again after it."""

    before: dict[int, int] = field(default_factory=dict)
    vanished: int = 0

    def start(self, pids: list[int]) -> None:
        self.before = {pid: t for pid in pids if (t := ticks(pid)) is not None}

    def spent(self, pids: list[int]) -> int:
        """Ticks used since ``start`` by the processes then and now (one that appeared
        during the run counts from zero; one that ended during it is counted as lost)."""
        total = 0
        for pid in set(self.before) | set(pids):
            now = ticks(pid)
            if now is None:
                self.vanished += 1
                continue
            total += now - self.before.get(pid, 0)
        return total


# --- Sessions and wrk ----------------------------------------------------------------------


async def create_sessions(url: str, connections: int, each: int) -> list[list[str]]:
    """``each`` fresh sessions for each of ``connections`` agents."""

    async def agent() -> list[str]:
        connection = Connection(url)
        made = []
        try:
            for _ in range(each):
                response = await connection.request(
                    "POST", "/v1/sessions", {"model": MODEL, "system": {"global": synth.SYSTEM}}
                )
                if response.status != 201:
                    raise RuntimeError(f"session not created: {response.status} {response.body!r}")
                made.append(response.json()["id"])
        finally:
            await connection.close()
        return made

    return list(await asyncio.gather(*(agent() for _ in range(connections))))


def write_script_data(folder: Path, sessions: list[list[str]]) -> None:
    """What agent_turns.lua reads: sessions per connection, and the request bodies."""
    folder.mkdir(parents=True, exist_ok=True)
    turns = synth.generate(60, seed=1).turns
    (folder / "sessions.txt").write_text("".join(" ".join(ids) + "\n" for ids in sessions))
    (folder / "starts.txt").write_text("".join(json.dumps(t.start_body()) + "\n" for t in turns))
    (folder / "completes.txt").write_text(
        "".join(json.dumps(t.complete_body()) + "\n" for t in turns)
    )


@dataclass
class WrkRun:
    figures: dict[str, Any]
    #: CPU ticks wrk itself used.
    ticks: int
    output: str


def run_wrk(url: str, folder: Path, connections: int, seconds: float, cpus: str | None) -> WrkRun:
    """One wrk run (blocking); what its done() printed, and its CPU."""
    command = [
        wrk_binary(),
        f"--threads={connections}",
        f"--connections={connections}",
        f"--duration={max(1, round(seconds))}s",
        "--timeout=10s",
        "--latency",
        f"--script={SCRIPT}",
        url,
        "--",
        str(folder),
        str(TURNS_PER_SESSION),
    ]
    if cpus:
        command = ["taskset", "--cpu-list", cpus, *command]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stdout.splitlines() if line.startswith("wrk-json: ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    figures: dict[str, Any] = json.loads(lines[-1].removeprefix("wrk-json: "))
    return WrkRun(figures, round(used * 1000 / TICK_MS), done.stdout)


@dataclass
class Stack:
    name: str
    workers: int
    server: ServerProcess | BareServer
    database_url: str
    url: str = ""


async def measure(
    stack: Stack,
    server_url: str,
    *,
    connections: int,
    duration: float,
    warmup: float,
    cpus: str | None,
    sampler_seconds: float = 0.0,
    keep_samples: Path | None = None,
) -> dict[str, Any]:
    """One warm-up and one measured wrk run against ``stack``; its figures."""
    with tempfile.TemporaryDirectory() as folder:
        # Warm-up: sessions enough for 1,000 turns/s, so that no agent runs out.
        each = max(1, int(1000 * warmup / connections / TURNS_PER_SESSION) + 1)
        write_script_data(
            Path(folder) / "warm", await create_sessions(stack.url, connections, each)
        )
        warm = await asyncio.to_thread(
            run_wrk, stack.url, Path(folder) / "warm", connections, warmup, cpus
        )
        rate = warm.figures["turns"] / max(warm.figures["seconds"], 1e-9)
        # Measured: sessions for twice the warm-up's rate, plus one each.
        each = int(2 * rate * duration / connections / TURNS_PER_SESSION) + 2
        sessions = await create_sessions(stack.url, connections, each)
        write_script_data(Path(folder) / "run", sessions)
        server_pids = descendants(stack.server.process.pid)
        database_pids = await backends(server_url, stack.database_url)
        server, database = Meter(), Meter()
        server.start(server_pids)
        database.start(database_pids)
        busy_before, total_before = machine_ticks()
        sampler = None
        samples = Path(folder) / "samples.txt"
        if sampler_seconds:
            sampler = profile_layers.record(stack.server.process.pid, sampler_seconds, samples)
        began = time.perf_counter()
        run = await asyncio.to_thread(
            run_wrk, stack.url, Path(folder) / "run", connections, duration, cpus
        )
        wall = time.perf_counter() - began
        busy_after, total_after = machine_ticks()
        server_ticks = server.spent(descendants(stack.server.process.pid))
        database_ticks = database.spent(await backends(server_url, stack.database_url))
        figures = dict(run.figures)
        if sampler is not None:
            raw = profile_layers.finish(sampler, samples)
            figures["profile"] = profile_layers.bucket(raw)
            if keep_samples is not None:
                await asyncio.to_thread(keep_samples.write_text, raw)
    turns = max(figures["turns"], 1)
    busy = busy_after - busy_before
    ours = server_ticks + database_ticks + run.ticks
    figures.update(
        stack=stack.name,
        workers=stack.workers,
        turns_per_second=figures["turns"] / figures["seconds"],
        # Little's law: how long a turn took its agent, on average (two requests).
        turn_wall_ms=connections * figures["seconds"] * 1000 / turns,
        cpu_ms={
            "server": server_ticks * TICK_MS / turns,
            "postgres": database_ticks * TICK_MS / turns,
            "wrk": run.ticks * TICK_MS / turns,
            "elsewhere": max(busy - ours, 0) * TICK_MS / turns,
        },
        machine_busy=busy / max(total_after - total_before, 1),
        # How much of a core the server got: on a machine busy with other work, a server
        # that wants little CPU gets what it asks and one that wants much gets a fair share.
        server_cores=server_ticks * TICK_MS / 1000 / figures["seconds"],
        wall_seconds=wall,
        sessions_per_agent=len(sessions[0]),
        processes_lost=server.vanished + database.vanished,
    )
    figures["errors"] = (
        figures["non2xx"] + figures["status_errors"] + sum(figures["socket_errors"].values())
    )
    return figures


def describe(figures: dict[str, Any]) -> str:
    cpu = figures["cpu_ms"]
    latency = figures["latency_ms"]
    text = (
        f"  {figures['stack']} workers={figures['workers']}: "
        f"{figures['turns_per_second']:.1f} turns/s, request p50 {latency['p50']:.1f} / "
        f"p99 {latency['p99']:.1f} ms, CPU/turn server {cpu['server']:.2f} + postgres "
        f"{cpu['postgres']:.2f} + wrk {cpu['wrk']:.2f} ms (elsewhere {cpu['elsewhere']:.2f}), "
        f"machine {figures['machine_busy']:.0%} busy, server {figures['server_cores']:.2f} cores"
    )
    if figures["processes_lost"]:
        # A process that ended during the run took its ticks with it: CPU is undercounted.
        text += f"; {figures['processes_lost']} process(es) ended mid-run, CPU undercounted"
    if figures["errors"]:
        text += f"; NOT A FIGURE: {figures['errors']} errors {figures['failures'][:2]}"
    return text


async def run(
    server_url: str,
    prefix: str,
    workers: list[int],
    rounds: int,
    duration: float,
    warmup: float,
    connections: int,
    cpus: str | None,
    profile: float,
    keep_samples: Path | None = None,
) -> dict[str, Any]:
    began = time.perf_counter()
    trips = await count_round_trips(server_url, prefix)
    print(f"  round trips per request: {trips}", file=sys.stderr, flush=True)  # noqa: T201
    runs: list[dict[str, Any]] = []
    profiled: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory() as folder:
        for count in workers:
            async with (
                fresh_database(server_url, prefix) as contextd_url,
                fresh_database(server_url, prefix) as bare_url,
            ):
                stacks = [
                    Stack(
                        "contextd",
                        count,
                        ServerProcess(
                            contextd_url,
                            Path(folder) / f"contextd-{count}.log",
                            auto_migrate="true",
                            workers=str(count),
                        ),
                        contextd_url,
                    ),
                    Stack(
                        "bare",
                        count,
                        BareServer(bare_url, count, trips, Path(folder) / f"bare-{count}.log"),
                        bare_url,
                    ),
                ]
                try:
                    for stack in stacks:
                        stack.url = await asyncio.to_thread(stack.server.ready, STARTUP_SECONDS)
                        await serving(stack.url)
                    for number in range(rounds):
                        for stack in stacks:
                            figures = await measure(
                                stack,
                                server_url,
                                connections=connections,
                                duration=duration,
                                warmup=warmup,
                                cpus=cpus,
                            )
                            figures["round"] = number + 1
                            runs.append(figures)
                            print(describe(figures), file=sys.stderr, flush=True)  # noqa: T201
                    if profile and count == 1:
                        profiled = await measure(
                            stacks[0],
                            server_url,
                            connections=connections,
                            duration=profile + 2,
                            warmup=warmup,
                            cpus=cpus,
                            sampler_seconds=profile,
                            keep_samples=keep_samples,
                        )
                        print(  # noqa: T201
                            describe(profiled) + " (profiled)", file=sys.stderr, flush=True
                        )
                finally:
                    for stack in stacks:
                        stack.server.stop()
    return {
        "round_trips": trips,
        "runs": runs,
        "profile": profiled,
        "seconds": time.perf_counter() - began,
    }


def ms(value: float) -> str:
    return f"{value:.1f}"


def runs_table(results: dict[str, Any]) -> str:
    lines = [
        "| workers | round | stack | turns/s | request p50 / p99 (ms) | turn, wall (ms) "
        "| CPU per turn: server + Postgres + wrk (ms) | elsewhere (ms) | machine busy "
        "| server's cores | errors |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for figures in results["runs"]:
        cpu, latency = figures["cpu_ms"], figures["latency_ms"]
        lines.append(
            f"| {figures['workers']} | {figures['round']} | {figures['stack']} "
            f"| {figures['turns_per_second']:.1f} "
            f"| {ms(latency['p50'])} / {ms(latency['p99'])} | {ms(figures['turn_wall_ms'])} "
            f"| {cpu['server']:.2f} + {cpu['postgres']:.2f} + {cpu['wrk']:.2f} "
            f"| {cpu['elsewhere']:.2f} | {figures['machine_busy']:.0%} "
            f"| {figures['server_cores']:.2f} | {figures['errors']} |"
        )
    return "\n".join(lines)


def summary_table(results: dict[str, Any]) -> str:
    """Medians over the rounds of the runs without errors, and contextd's share of the
    bare stack's turns/s round by round (a round's two runs saw the same machine)."""
    lines = [
        "| workers | contextd turns/s | bare turns/s | contextd / bare (per round) "
        "| contextd p50 / p99 (ms) | bare p50 / p99 (ms) "
        "| CPU per turn, contextd: server / Postgres (ms) | bare: server / Postgres (ms) "
        "| contextd / bare by CPU per turn |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    clean = [r for r in results["runs"] if not r["errors"]]
    for count in sorted({r["workers"] for r in results["runs"]}):
        mine = [r for r in clean if r["workers"] == count and r["stack"] == "contextd"]
        bare = [r for r in clean if r["workers"] == count and r["stack"] == "bare"]
        if not mine or not bare:
            lines.append(f"| {count} | no clean run of each stack |  |  |  |  |  |  |  |")
            continue
        shares = [
            m["turns_per_second"] / b["turns_per_second"]
            for m in mine
            for b in bare
            if m["round"] == b["round"]
        ]

        def median(rows: list[dict[str, Any]], *keys: str) -> float:
            values = []
            for row in rows:
                value: Any = row
                for key in keys:
                    value = value[key]
                values.append(float(value))
            return statistics.median(values)

        # What the share would be with the cores to themselves: turns/s in inverse proportion
        # to the CPU a turn takes of the server and Postgres (wrk's is left out: it is no
        # part of either stack).
        by_cpu = (median(bare, "cpu_ms", "server") + median(bare, "cpu_ms", "postgres")) / (
            median(mine, "cpu_ms", "server") + median(mine, "cpu_ms", "postgres")
        )
        lines.append(
            f"| {count} | {median(mine, 'turns_per_second'):.1f} "
            f"| {median(bare, 'turns_per_second'):.1f} "
            f"| {', '.join(f'{s:.0%}' for s in shares)} "
            f"| {ms(median(mine, 'latency_ms', 'p50'))} / {ms(median(mine, 'latency_ms', 'p99'))} "
            f"| {ms(median(bare, 'latency_ms', 'p50'))} / {ms(median(bare, 'latency_ms', 'p99'))} "
            f"| {median(mine, 'cpu_ms', 'server'):.2f} / {median(mine, 'cpu_ms', 'postgres'):.2f} "
            f"| {median(bare, 'cpu_ms', 'server'):.2f} / {median(bare, 'cpu_ms', 'postgres'):.2f} "
            f"| {by_cpu:.0%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int_list, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2, help="runs of each stack, alternating")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured a run")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds of warm-up a run")
    parser.add_argument("--connections", type=int, default=16, help="agents, one connection each")
    parser.add_argument(
        "--wrk-cpus",
        default="1",
        help="the cores wrk may run on (taskset --cpu-list); empty for no pinning",
    )
    parser.add_argument(
        "--profile", type=float, default=0.0, help="seconds of py-spy on a contextd worker"
    )
    parser.add_argument(
        "--profile-output",
        type=Path,
        help="keep py-spy's raw samples here (python -m bench.profile_layers --raw, flamegraph.pl)",
    )
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--database-prefix", default="contextd_wrk")
    parser.add_argument("--quick", action="store_true", help="5 s runs after 2 s of warm-up")
    args = parser.parse_args()
    wrk_binary()
    if args.profile:
        profile_layers.py_spy()
    if args.quick:
        args.duration, args.warmup = 5.0, 2.0
    results = asyncio.run(
        run(
            args.database_url,
            args.database_prefix,
            args.workers,
            args.rounds,
            args.duration,
            args.warmup,
            args.connections,
            args.wrk_cpus or None,
            args.profile,
            args.profile_output,
        )
    )
    print(  # noqa: T201
        f"{args.connections} agents under wrk ({args.connections} threads, on CPU(s) "
        f"{args.wrk_cpus or 'any'}), {args.duration:.0f} s a run after "
        f"{args.warmup:.0f} s of warm-up, {args.rounds} round(s); round trips per request: "
        f"start {results['round_trips']['start']}, complete {results['round_trips']['complete']}"
    )
    print(summary_table(results))  # noqa: T201
    print()  # noqa: T201
    print(runs_table(results))  # noqa: T201
    if results["profile"] is not None:
        print()  # noqa: T201
        print(  # noqa: T201
            f"contextd (1 worker) under the same load, py-spy for {args.profile:.0f} s "
            f"at 250 samples/s ({results['profile']['turns_per_second']:.1f} turns/s while "
            "sampled):"
        )
        print(profile_layers.table(results["profile"]["profile"]))  # noqa: T201
    failed = sum(r["errors"] for r in results["runs"])
    if failed:
        print(f"{failed} errors: the runs that had them are not figures")  # noqa: T201
    print(f"({results['seconds'] / 60:.1f} min)")  # noqa: T201


if __name__ == "__main__":
    main()
