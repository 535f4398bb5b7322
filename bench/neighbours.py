"""Does one session slow another on the same worker?

One ``contextd serve`` worker on a fresh Postgres database. A "normal" session starts a turn
(timed: the POST that returns the prompt) and completes it (not timed), at a steady pace, in
rounds of three windows: on the bare stack, on contextd alone, and on contextd beside two
neighbours on the same worker (paused, their requests in flight finished, outside their
windows):

- a session posting 128-call steps into one open turn until it holds about 1,100 calls, then
  completing it and starting the next such turn;
- a client posting bodies of 8 MiB: a step whose tool results fill the body up to the size
  limit (allowed: parsed, counted and folded), then one a little over it (refused).

Printed: the normal session's turn start p50 / p99 / max on the bare stack (bench/bare_stack.py:
FastAPI + asyncpg, as many round trips as contextd's turn start), on contextd alone and with
neighbours; what the neighbours got done meanwhile; and, on a quiet worker, the time of one
128-call step posted into an open turn that already holds 10, 100, 500 and 1,000 calls
(median over fresh turns, timed in rounds through every size).

With ``--loop-profile``, py-spy samples the worker's main thread while the windows run and
what held the event loop is printed too (bench/loop_blocks.py; the samples are written
beside ``--json``, as ``*.speedscope.json``). ``--checkout`` serves another
checkout's code (main's, for before/after) with this benchmark.

    python -m bench.neighbours [--seconds 40] [--rounds 4] [--pace-ms 50] [--repeats 3]
                               [--loop-profile] [--checkout DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import loop_blocks
from bench.common import DEFAULT_SERVER, fresh_database, machine, percentile
from bench.throughput import BareServer, count_round_trips, serving
from bench.wire import Connection
from tests.processes import REPO, ServerProcess

MODEL = "gpt-4o"
CALLS_PER_STEP = 128
#: The open turn of the growing neighbour is completed past this many calls.
GROWN_CALLS = 1_100
#: The turn lengths at which a step is timed.
STEP_POINTS = (10, 100, 500, 1_000)
BODY_LIMIT = 8 * 1024 * 1024
RESULT_TEXT = (
    "src/billing/invoice.py:{n}: total = sum(line.amount for line in lines)  # rounding "
    "happens per line here, not on the total; the tax table at row {n} says 0.2 for EU "
    "and the currency has two decimals, so the cents drift by one on long invoices. "
)


def step_body(first: int, calls: int, tag: str) -> dict[str, Any]:
    """A step of ``calls`` parallel calls, ids from ``first`` on."""
    ids = [f"call_{tag}_{first + index:06d}" for index in range(calls)]
    return {
        "assistant": {
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "arguments": json.dumps({"path": f"src/billing/f{first + i}.py"}),
                    },
                }
                for i, call_id in enumerate(ids)
            ],
        },
        "tool_results": [
            {"tool_call_id": call_id, "content": RESULT_TEXT.format(n=first + i)}
            for i, call_id in enumerate(ids)
        ],
    }


def big_body(size: int, tag: str, number: int) -> bytes:
    """A step whose six tool results make the JSON body ``size`` bytes long (a result may
    hold 2 million characters)."""
    ids = [f"call_{tag}_{number}_{index}" for index in range(6)]
    results: list[dict[str, str]] = [{"tool_call_id": i, "content": ""} for i in ids]
    calls = [
        {"id": i, "type": "function", "function": {"name": "dump", "arguments": "{}"}} for i in ids
    ]
    skeleton = {"assistant": {"content": None, "tool_calls": calls}, "tool_results": results}
    room = size - len(json.dumps(skeleton).encode())
    words = ("lorem ipsum dolor sit amet " * (room // 27 + 8))[: room // 6]
    for index, result in enumerate(results):
        result["content"] = words if index < 5 else words[: room - 5 * len(words)]
    return json.dumps(skeleton).encode()


async def expect(connection: Connection, method: str, path: str, body: Any, status: int) -> Any:
    response = await connection.request(method, path, body)
    if response.status != status:
        raise RuntimeError(f"{method} {path}: {response.status} {response.body[:300]!r}")
    return response.json()


async def new_session(connection: Connection) -> str:
    body = {"model": MODEL, "system": {"global": "You are a coding agent."}}
    session = await expect(connection, "POST", "/v1/sessions", body, 201)
    return str(session["id"])


async def timed_turn(connection: Connection, session_id: str, number: int) -> float:
    """Milliseconds of a turn start; then complete the turn (not timed)."""
    path = f"/v1/sessions/{session_id}/turns"
    body = {"message": {"content": f"Round {number}: what is left to check?"}}
    started = time.perf_counter()
    response = await connection.request("POST", path, body)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != 201:
        raise RuntimeError(f"start turn: {response.status} {response.body[:300]!r}")
    turn_id = response.json()["turn_id"]
    await expect(
        connection, "POST", f"{path}/{turn_id}/complete", {"assistant": {"content": "Ok"}}, 200
    )
    return elapsed


class Normal:
    """The normal session: a turn start every ``pace_ms`` (or as soon as the last ended)."""

    def __init__(self, url: str, pace_ms: float) -> None:
        self.connection = Connection(url)
        self.pace_ms = pace_ms
        self.session_id = ""
        self.number = 0

    async def warm_up(self) -> None:
        self.session_id = await new_session(self.connection)
        for _ in range(3):
            await self.turn()

    async def turn(self) -> float:
        self.number += 1
        return await timed_turn(self.connection, self.session_id, self.number)

    async def for_seconds(self, seconds: float) -> list[float]:
        # A new connection, opened by an untimed turn: the last one idled past the server's
        # keep-alive while other windows ran.
        await self.connection.close()
        await self.turn()
        timings: list[float] = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            began = time.perf_counter()
            timings.append(await self.turn())
            await asyncio.sleep(max(0.0, self.pace_ms / 1000 - (time.perf_counter() - began)))
        return timings


class Crowd:
    """The neighbours run while ``running`` is set, each finishing its request in flight when
    it is cleared; ``idle()`` waits until none has one."""

    def __init__(self, neighbours: int) -> None:
        self.running = asyncio.Event()
        self.stop = False
        self.busy = neighbours
        self.quiet = asyncio.Event()
        self.done: dict[str, Any] = {"turns": 0, "step_ms": [], "statuses": {}}

    async def go_on(self, connection: Connection | None = None) -> bool:
        """Wait while paused; whether to go on at all. Call between two requests. After a
        pause ``connection`` is closed, to be opened anew: it idled past the keep-alive."""
        self.leave()
        if not self.running.is_set():
            await self.running.wait()
            if connection is not None:
                await connection.close()
        self.busy += 1
        self.quiet.clear()
        return not self.stop

    def leave(self) -> None:
        self.busy -= 1
        if not self.busy:
            self.quiet.set()

    async def idle(self) -> None:
        await self.quiet.wait()


async def growing_turns(url: str, crowd: Crowd) -> None:
    """Open turns grown by 128-call steps to ``GROWN_CALLS`` calls, one after another."""
    connection = Connection(url)
    session_id = await new_session(connection)
    path = f"/v1/sessions/{session_id}/turns"
    call = 0
    while await crowd.go_on(connection):
        turn = await expect(connection, "POST", path, {"message": {"content": "Audit it."}}, 201)
        calls = 0
        while calls < GROWN_CALLS and await crowd.go_on(connection):
            started = time.perf_counter()
            await expect(
                connection,
                "POST",
                f"{path}/{turn['turn_id']}/steps",
                step_body(call, CALLS_PER_STEP, "g"),
                200,
            )
            crowd.done["step_ms"].append((calls, (time.perf_counter() - started) * 1000))
            calls += CALLS_PER_STEP
            call += CALLS_PER_STEP
        await expect(
            connection, "POST", f"{path}/{turn['turn_id']}/complete",
            {"assistant": {"content": "Done."}}, 200,
        )  # fmt: skip
        crowd.done["turns"] += 1
    crowd.leave()
    await connection.close()


async def raw_post(url: str, path: str, body: bytes) -> str:
    """POST ``body`` as it is, on a connection of its own; the status."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode())
        writer.write(body)
        try:
            await writer.drain()
            status_line = await reader.readline()
            await reader.read()
        except ConnectionError:
            # Refused before the whole body went out: the server closed with bytes unread,
            # and the reset can overtake its answer.
            return "413 or reset"
        return status_line.split()[1].decode()
    finally:
        writer.close()


async def big_bodies(url: str, crowd: Crowd) -> None:
    """Steps of 8 MiB (allowed) and a little over (refused), one after the other. Each call
    on a connection of its own: one kept open would idle past the server's keep-alive."""
    creating = Connection(url)
    session_id = await new_session(creating)
    await creating.close()
    path = f"/v1/sessions/{session_id}/turns"
    number = 0
    while await crowd.go_on():
        opening = Connection(url)
        turn = await expect(opening, "POST", path, {"message": {"content": "Dump it."}}, 201)
        await opening.close()
        steps = f"{path}/{turn['turn_id']}/steps"
        for size in (BODY_LIMIT - 4096, BODY_LIMIT + 4096):
            if not await crowd.go_on():
                break
            status = await raw_post(url, steps, big_body(size, "b", number))
            number += 1
            crowd.done["statuses"][status] = crowd.done["statuses"].get(status, 0) + 1
        closing = Connection(url)
        await expect(
            closing, "POST", f"{path}/{turn['turn_id']}/complete",
            {"assistant": {"content": "Done."}}, 200,
        )  # fmt: skip
        await closing.close()
    crowd.leave()


NEIGHBOURS = {"growing": growing_turns, "bodies": big_bodies}


async def windows(
    url: str,
    bare_url: str,
    seconds: float,
    pace_ms: float,
    count: int,
    kinds: tuple[str, ...] = tuple(NEIGHBOURS),
) -> dict[str, Any]:
    """The normal session's turn starts in ``count`` rounds of three windows of ``seconds``:
    on the bare stack, on contextd alone, and on contextd beside its neighbours, so that
    whatever else the machine does weighs on all three alike."""
    normal, bare = Normal(url, pace_ms), Normal(bare_url, pace_ms)
    await normal.warm_up()
    await bare.warm_up()
    crowd = Crowd(neighbours=len(kinds))
    neighbours = [asyncio.create_task(NEIGHBOURS[kind](url, crowd)) for kind in kinds]
    timings: dict[str, list[float]] = {"bare_alone": [], "alone": [], "with_neighbours": []}
    try:
        await crowd.idle()
        for _ in range(count):
            timings["bare_alone"] += await bare.for_seconds(seconds)
            timings["alone"] += await normal.for_seconds(seconds)
            crowd.running.set()
            await asyncio.sleep(1.0)  # the neighbours under way first
            timings["with_neighbours"] += await normal.for_seconds(seconds)
            crowd.running.clear()
            await crowd.idle()
    finally:
        crowd.stop = True
        crowd.running.set()
        await asyncio.gather(*neighbours)
        await normal.connection.close()
        await bare.connection.close()
    return {**timings, **crowd.done}


async def steps_at(url: str, points: tuple[int, ...], repeats: int) -> dict[int, list[float]]:
    """Milliseconds of a 128-call step posted into an open turn holding each of ``points``
    calls: ``repeats`` turns per point, filled first, then their steps timed in rounds that
    go through every point, so that the machine's load weighs on every point alike."""
    connection = Connection(url)
    turns: dict[int, list[tuple[str, int]]] = {calls: [] for calls in points}
    for repeat in range(repeats):
        for calls in points:
            session_id = await new_session(connection)
            path = f"/v1/sessions/{session_id}/turns"
            body = {"message": {"content": "Audit it."}}
            turn = await expect(connection, "POST", path, body, 201)
            steps = f"{path}/{turn['turn_id']}/steps"
            held = 0
            while held < calls:
                size = min(CALLS_PER_STEP, calls - held)
                await expect(connection, "POST", steps, step_body(held, size, f"s{repeat}"), 200)
                held += size
            turns[calls].append((steps, repeat))
    timings: dict[int, list[float]] = {calls: [] for calls in points}
    for repeat in range(repeats):
        for calls in points if repeat % 2 else points[::-1]:
            steps, tag = turns[calls][repeat]
            body = step_body(calls, CALLS_PER_STEP, f"s{tag}")
            started = time.perf_counter()
            await expect(connection, "POST", steps, body, 200)
            timings[calls].append((time.perf_counter() - started) * 1000)
    await connection.close()
    return timings


def figures(timings: list[float]) -> dict[str, float]:
    return {
        "n": len(timings),
        "p50_ms": statistics.median(timings),
        "p99_ms": percentile(timings, 0.99),
        "max_ms": max(timings),
    }


async def run(
    server_url: str,
    seconds: float,
    pace_ms: float,
    repeats: int,
    rounds: int,
    *,
    loop_profile: bool = False,
    checkout: Path = REPO,
    samples_to: Path | None = None,
    kinds: tuple[str, ...] = tuple(NEIGHBOURS),
) -> dict[str, Any]:
    trips = await count_round_trips(server_url, "contextd_bench_nb_trips")
    async with (
        fresh_database(server_url, "contextd_bench_nb") as database_url,
        fresh_database(server_url, "contextd_bench_nb_bare") as bare_url,
    ):
        with tempfile.TemporaryDirectory() as folder:
            server = ServerProcess(
                database_url, Path(folder) / "serve.log", checkout=checkout, auto_migrate="true"
            )
            bare = BareServer(bare_url, 1, trips, Path(folder) / "bare.log")
            try:
                # Generous: on a busy machine migrating a fresh database takes a while.
                url = await asyncio.to_thread(server.ready, 600)
                bare_base = await asyncio.to_thread(bare.ready)
                await serving(url, within=600)
                await serving(bare_base, within=600)
                loop: dict[str, Any] | None = None
                if loop_profile:
                    rate = 200
                    with loop_blocks.Recording(server.process.pid, rate, Path(folder)) as sampled:
                        crowded = await windows(
                            url, bare_base, seconds / rounds, pace_ms, rounds, kinds
                        )
                    loop = await asyncio.to_thread(loop_blocks.analyse, sampled.path, rate)
                    loop["scheduling"] = sampled.scheduling
                    if samples_to is not None:
                        await asyncio.to_thread(shutil.copyfile, sampled.path, samples_to)
                else:
                    crowded = await windows(
                        url, bare_base, seconds / rounds, pace_ms, rounds, kinds
                    )
                steps = await steps_at(url, STEP_POINTS, repeats)
            finally:
                server.stop()
                bare.stop()
    return {
        "seconds": seconds,
        "pace_ms": pace_ms,
        "rounds": rounds,
        "bare_alone": figures(crowded["bare_alone"]),
        "alone": figures(crowded["alone"]),
        "with_neighbours": figures(crowded["with_neighbours"]),
        "neighbour_steps": len(crowded["step_ms"]),
        "neighbours": list(kinds),
        "neighbour_step_ms_max": max((ms for _, ms in crowded["step_ms"]), default=None),
        "neighbour_turns": crowded["turns"],
        "big_body_statuses": crowded["statuses"],
        "step_ms": {str(calls): statistics.median(runs) for calls, runs in steps.items()},
        "step_runs_ms": {str(calls): runs for calls, runs in steps.items()},
        "loop": loop,
    }


def report(results: dict[str, Any]) -> str:
    lines = [
        f"neighbours on one worker, {machine()}; normal session: a turn start every "
        f"{results['pace_ms']:.0f} ms, {results['seconds']:.0f} s of each kind in "
        f"{results['rounds']} rounds",
        f"  {'turn start':28} {'n':>5} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}",
    ]
    for name, key in (
        ("bare stack, alone", "bare_alone"),
        ("contextd, alone", "alone"),
        ("contextd, with neighbours", "with_neighbours"),
    ):
        row = results[key]
        lines.append(
            f"  {name:28} {row['n']:>5} {row['p50_ms']:>8.1f} {row['p99_ms']:>8.1f} "
            f"{row['max_ms']:>8.1f}"
        )
    lines.append(
        f"  p50 ratio to the bare stack: alone "
        f"{results['alone']['p50_ms'] / results['bare_alone']['p50_ms']:.2f}x, with "
        f"neighbours {results['with_neighbours']['p50_ms'] / results['bare_alone']['p50_ms']:.2f}x"
    )
    lines.append(
        f"  neighbours meanwhile: {results['neighbour_steps']} steps of {CALLS_PER_STEP} calls "
        f"(slowest {results['neighbour_step_ms_max'] or 0:.0f} ms), "
        f"{results['neighbour_turns']} turns of {GROWN_CALLS}+ calls; 8 MiB bodies by status "
        f"{results['big_body_statuses']}"
    )
    steps = results["step_ms"]
    lines.append(f"  a {CALLS_PER_STEP}-call step into an open turn holding N calls (median ms):")
    lines.append("    " + "  ".join(f"N={calls}: {ms:.0f}" for calls, ms in steps.items()))
    first, last = str(STEP_POINTS[0]), str(STEP_POINTS[-1])
    lines.append(f"    at {last} / at {first}: {steps[last] / steps[first]:.2f}x")
    if results.get("loop"):
        lines.append(loop_blocks.report(results["loop"]))
        lines.append(loop_blocks.scheduling_report(results["loop"]["scheduling"]))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server-url", default=DEFAULT_SERVER)
    parser.add_argument("--seconds", type=float, default=40.0, help="of each kind of window")
    parser.add_argument("--pace-ms", type=float, default=50.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=4, help="windows of each kind")
    parser.add_argument(
        "--loop-profile", action="store_true", help="what held the event loop (py-spy)"
    )
    parser.add_argument("--checkout", type=Path, default=REPO, help="the code that serves")
    parser.add_argument(
        "--neighbours",
        default=",".join(NEIGHBOURS),
        help="which neighbours run: growing (128-call steps), bodies (8 MiB); comma-separated",
    )
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    args = parser.parse_args()
    results = asyncio.run(
        run(
            args.server_url,
            args.seconds,
            args.pace_ms,
            args.repeats,
            args.rounds,
            loop_profile=args.loop_profile,
            checkout=args.checkout.resolve(),
            kinds=tuple(kind for kind in args.neighbours.split(",") if kind),
            samples_to=args.json.with_suffix(".speedscope.json") if args.json else None,
        )
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(report(results))  # noqa: T201


if __name__ == "__main__":
    main()
