"""How long does it take to get the next prompt, as the stored history grows?

contextd: a real ``contextd serve`` (uvicorn, one worker, open mode on 127.0.0.1) on its own
Postgres database. Sessions are filled with the synthetic conversation (bench/synth.py)
through the API, turn by turn (start, tool steps, complete), so the database holds what the
policy left (summaries, pruned and active messages), not a hand-made state. Then, in rounds
that go through every size, one turn is started, takes one tool step and is completed, each
call timed (the turn start and the step return a prompt; the completion stores the answer).
Sizes up to 100 messages use 10 sessions in rotation, so that the timed turns themselves do
not grow a small history much.

Filling once, timing on copies. A session of 10,000 messages is ~2,000 turns and ~6,700
calls, one after another (a session's calls serialise): minutes on a quiet machine, over
25 on a loaded one. So the sessions are filled once, into a database of their own, by a
server that is then stopped, and every contextd timed gets a copy of that database
(``CREATE DATABASE … TEMPLATE``, a file copy on the Postgres server: seconds). Writing rows
directly would be faster still, but what a turn costs at 10,000 messages depends on what the
policy left there (the summary's size, which messages are active), which only the policy's
own run produces. ``--keep-filled`` keeps the filled database for later runs (named by the
schema's revision, the seed and the sizes; a fill that did not finish is never reused) and
``--refill`` makes it again; without it the filled database is dropped at the end.

``--compare DIR``: another checkout of contextd (its code served with ``PYTHONPATH=DIR``)
timed in the same rounds, on its own copy of the same sessions, so before and after alternate
call for call on one machine; each round changes which stack goes first.

Server CPU per call: the CPU time of each server's threads and of the Postgres backends
connected to its database (``/proc/<pid>/task/*/schedstat``, in nanoseconds), read before
and after each timed call; the median call and the mean per kind of call. At concurrency 1
nothing else runs on those processes between the two reads (a thread the call started and
left running, such as a summary folded between turns, counts only while the call lasts);
CPU is far steadier than wall time on a loaded machine.

The bare stack (bench/bare_stack.py, FastAPI + asyncpg, one worker, its own fresh database):
a session per size holding as many stored messages, making as many round trips per call as
contextd does (counted at run time; a step as many as a turn start, which contextd's step
makes too). Its turns are timed in the same rounds as contextd's, call for call, so both see
the same machine; the ratio of their medians is the figure, for each kind of call.

The libraries: the same conversation (system message, the history, the new user message),
the same input budget, a tiktoken counter that counts like OpenAI. Timed: LangChain's
``trim_messages`` call; LlamaIndex's ``ChatMemoryBuffer.get()`` and ``Memory.get()`` after
the history was ``put``. Each library size has a time budget; a size whose one run is
expected to exceed it is not run.

    python -m bench.latency [--sizes 10,100,1000,5000,10000] [--samples 50] [--quick]
                            [--no-libraries] [--keep-filled] [--refill] [--compare DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from bench import synth
from bench.common import DEFAULT_SERVER, int_list, percentile
from bench.throughput import BareServer, count_round_trips, serving
from bench.wire import Connection
from bench.wrk_load import backends, descendants
from tests.processes import REPO, ServerProcess

MODEL = "gpt-4o"
QUESTION = "Round {n}: given all that, which option should I book now, and why?"
RESULT = "Found 3 options: the 07:10 (2h05, 148 EUR), the 09:40 (2h20, 121 EUR), the 13:15."
#: How long each server may take to migrate its database and start (a loaded machine is slow).
STARTUP_SECONDS = 300.0
#: The calls of a turn that are timed, in the order an agent makes them.
CALLS = ("start", "step", "complete")


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


def cpu_ns(pid: int) -> int:
    """Nanoseconds of CPU every thread of ``pid`` has run (``/proc/<pid>/task/*/schedstat``,
    whose first field is the time on a core): a call's few milliseconds measured to the
    nanosecond, where ``/proc/<pid>/stat`` counts 10 ms ticks. 0 for a process gone."""
    total = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass
class Stack:
    """One server timed: its sessions per size, and the processes whose CPU it is charged."""

    name: str
    url: str
    sessions: dict[int, list[str]]
    server_pid: int
    database_url: str
    timings: CallTimings = field(default_factory=dict)
    #: Per call, per size: nanoseconds of CPU of each call, the server's and its backends'.
    cpu: dict[str, dict[int, list[tuple[int, int]]]] = field(default_factory=dict)
    pids: list[int] = field(default_factory=list)
    #: Per size, whether each timed turn start folded a summary.
    folded: dict[int, list[bool]] = field(default_factory=dict)
    backend_pids: list[int] = field(default_factory=list)

    async def find_processes(self, server_url: str) -> None:
        """The server's processes and the backends of its database's pool (read after a
        warm-up, when the pool holds its connections)."""
        self.pids = descendants(self.server_pid)
        self.backend_pids = await backends(server_url, self.database_url)

    def cpu_now(self) -> tuple[int, int]:
        server = sum(cpu_ns(pid) for pid in self.pids)
        return server, sum(cpu_ns(pid) for pid in self.backend_pids)


async def timed_turn(
    connection: Connection,
    session_id: str,
    number: int,
    meter: Callable[[], tuple[int, int]] | None = None,
) -> tuple[dict[str, float], dict[str, tuple[int, int]]]:
    """Milliseconds of each call of one turn (its start, one tool step, its completion), and
    what ``meter`` counted across each call (read outside the timed part)."""
    base = f"/v1/sessions/{session_id}/turns"
    call_id = f"bench_{number}"
    step = {
        "assistant": {
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "search_flights", "arguments": '{"to": "LIS"}'},
                }
            ],
        },
        "tool_results": [{"tool_call_id": call_id, "content": RESULT}],
    }
    calls = (
        ("start", base, {"message": {"content": QUESTION.format(n=number)}}, 201),
        ("step", "{base}/{turn}/steps", step, 200),
        ("complete", "{base}/{turn}/complete", {"assistant": {"content": "Ok."}}, 200),
    )
    elapsed: dict[str, float] = {}
    spent: dict[str, tuple[int, int]] = {}
    turn = ""
    for name, path, body, status in calls:
        path = path.format(base=base, turn=turn)
        before = meter() if meter else (0, 0)
        started = time.perf_counter()
        response = await connection.request("POST", path, body)
        elapsed[name] = (time.perf_counter() - started) * 1000
        after = meter() if meter else (0, 0)
        spent[name] = (after[0] - before[0], after[1] - before[1])
        if response.status != status:
            raise RuntimeError(f"{name}: {response.status} {response.body[:300]!r}")
        if not turn:
            started_turn = response.json()
            turn = started_turn["turn_id"]
            # Whether this turn start folded a summary (the bare stack never does).
            reason = started_turn.get("actions", {}).get("summary_reason")
            elapsed["start_folded"] = 1.0 if reason else 0.0
    return elapsed, spent


#: Timings of one implementation: per kind of call, per size.
CallTimings = dict[str, dict[int, Timings]]


async def fill_sessions(
    base_url: str, sizes: list[int], seed: int
) -> tuple[dict[int, list[str]], dict[int, dict[str, Any]], int]:
    """Sessions per size filled through the API, what each size holds, the input budget."""
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
    return sessions, held, budget


def filled_name(prefix: str, sizes: list[int], seed: int) -> str:
    """The filled database's name: what makes its content (the schema's migrations, the
    conversation's generator, the model, the seed and the sizes), hashed."""
    versions = sorted(path.name for path in (REPO / "migrations" / "versions").glob("*.py"))
    made_of = [
        *versions,
        (REPO / "bench" / "synth.py").read_text(),
        MODEL,
        str(seed),
        *map(str, sizes),
    ]
    digest = hashlib.sha256("\n".join(made_of).encode()).hexdigest()[:12]
    return f"{prefix}_filled_{digest}"


async def admin_connection(server_url: str) -> asyncpg.Connection:
    dsn = make_url(server_url).set(drivername="postgresql")
    return await asyncpg.connect(dsn.render_as_string(hide_password=False))


def database_url(server_url: str, name: str) -> str:
    url = make_url(server_url).set(drivername="postgresql+asyncpg", database=name)
    return url.render_as_string(hide_password=False)


async def filled_database(
    server_url: str, prefix: str, sizes: list[int], seed: int, folder: Path, refill: bool
) -> tuple[str, dict[str, Any]]:
    """The name of a database holding the filled sessions, and what it holds (kept as the
    database's comment): reused when a finished fill of the same content exists."""
    name = filled_name(prefix, sizes, seed)
    admin = await admin_connection(server_url)
    try:
        found = await admin.fetchval(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
            name,
        )
        if found and not refill:
            return name, json.loads(found)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        # Filled under a name of its own, renamed once complete: a fill that died is never
        # taken for a finished one.
        partial = f"{prefix}_filling_{uuid.uuid4().hex[:10]}"
        await admin.execute(f'CREATE DATABASE "{partial}"')
    finally:
        await admin.close()
    try:
        server = ServerProcess(
            database_url(server_url, partial), folder / "fill.log", auto_migrate="true"
        )
        try:
            base_url = await asyncio.to_thread(server.ready, STARTUP_SECONDS)
            sessions, held, budget = await fill_sessions(base_url, sizes, seed)
        finally:
            server.stop()
        contents = {
            "sessions": {str(size): ids for size, ids in sessions.items()},
            "held": {str(size): facts for size, facts in held.items()},
            "input_budget": budget,
        }
        admin = await admin_connection(server_url)
        try:
            await admin.execute(f"COMMENT ON DATABASE \"{partial}\" IS '{json.dumps(contents)}'")
            await admin.execute(f'ALTER DATABASE "{partial}" RENAME TO "{name}"')
        finally:
            await admin.close()
    except BaseException:
        admin = await admin_connection(server_url)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{partial}" WITH (FORCE)')
        finally:
            await admin.close()
        raise
    return name, contents


async def copy_database(server_url: str, template: str, prefix: str) -> str:
    """A new database copied from ``template`` (which must have no connections)."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = await admin_connection(server_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    finally:
        await admin.close()
    return name


async def drop_database(server_url: str, name: str) -> None:
    admin = await admin_connection(server_url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def time_stacks(
    server_url: str, stacks: list[Stack], sizes: list[int], samples: int, warmup: int
) -> None:
    """Time every stack's turns in the same rounds, call for call; each round rotates which
    stack goes first. Each stack's timings and CPU are kept on it."""
    connections = {stack.name: Connection(stack.url) for stack in stacks}
    for stack in stacks:
        stack.timings = {call: {size: Timings() for size in sizes} for call in CALLS}
        stack.cpu = {call: {size: [] for size in sizes} for call in CALLS}
    try:
        for number in range(warmup + samples):
            if number == warmup:
                for stack in stacks:
                    await stack.find_processes(server_url)
            for size in sizes if number % 2 else sizes[::-1]:
                shift = number % len(stacks)
                for stack in stacks[shift:] + stacks[:shift]:
                    ids = stack.sessions[size]
                    # The other stacks' turns ran since this connection's last call.
                    await connections[stack.name].reconnect()
                    measured, spent = await timed_turn(
                        connections[stack.name],
                        ids[number % len(ids)],
                        number,
                        stack.cpu_now if number >= warmup else None,
                    )
                    if number < warmup:
                        continue
                    for call in CALLS:
                        stack.timings[call][size].runs.append(measured[call])
                        stack.cpu[call][size].append(spent[call])
                    stack.folded.setdefault(size, []).append(bool(measured.get("start_folded")))
    finally:
        for connection in connections.values():
            await connection.close()


def cpu_summary(stack: Stack) -> dict[str, dict[str, dict[str, float]]]:
    """Milliseconds of CPU per call, the server's processes and its Postgres backends: the
    median call, and the mean (which carries the rare heavy call: a fold on the turn start)."""

    def figures(spent: list[tuple[int, int]]) -> dict[str, float]:
        if not spent:
            return {"server_ms": 0.0, "postgres_ms": 0.0, "server_mean_ms": 0.0, "calls": 0}
        return {
            "server_ms": statistics.median(s for s, _ in spent) / 1e6,
            "postgres_ms": statistics.median(p for _, p in spent) / 1e6,
            "server_mean_ms": statistics.fmean(s for s, _ in spent) / 1e6,
            "server_max_ms": max(s for s, _ in spent) / 1e6,
            "postgres_mean_ms": statistics.fmean(p for _, p in spent) / 1e6,
            "calls": len(spent),
        }

    return {
        call: {str(size): figures(spent) for size, spent in by_size.items()}
        for call, by_size in stack.cpu.items()
    }


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


CALL_NAMES = {"start": "turn-start", "step": "step", "complete": "completion"}


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
    for call in ("step", "complete"):
        ours, theirs = results.get(f"contextd_{call}", {}), results.get(f"bare_{call}", {})
        for size in (10, 10_000):
            key = str(size)
            if ours.get(key, {}).get("median_ms") and theirs.get(key, {}).get("median_ms"):
                p50, bare_p50 = ours[key]["median_ms"], theirs[key]["median_ms"]
                targets.append(
                    {
                        "target": f"{CALL_NAMES[call]} p50 ≤ 2x the bare stack's at {size:,} "
                        "messages (concurrency 1)",
                        "measured": f"{p50 / bare_p50:.2f}x ({p50:.2f} vs {bare_p50:.2f} ms)",
                        "pass": p50 / bare_p50 <= 2,
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
    *,
    keep_filled: bool = False,
    refill: bool = False,
    compare: list[Path] | None = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    trips = await count_round_trips(server_url, prefix)
    # The bare stack's step makes as many round trips as its turn start: so does contextd's
    # (tests/integration/test_round_trips.py). Read from the environment BareServer passes on.
    os.environ["BARE_STEP_ROUND_TRIPS"] = str(trips["start"])
    checkouts = [("contextd", REPO), *((str(path), path) for path in compare or [])]
    made: list[str] = []
    servers: list[ServerProcess | BareServer] = []
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        fill_started = time.perf_counter()
        filled, contents = await filled_database(server_url, prefix, sizes, seed, folder, refill)
        fill_seconds = time.perf_counter() - fill_started
        try:
            stacks: list[Stack] = []
            sessions = {int(size): ids for size, ids in contents["sessions"].items()}
            for number, (name, checkout) in enumerate(checkouts):
                copy = await copy_database(server_url, filled, prefix)
                made.append(copy)
                url = database_url(server_url, copy)
                server = ServerProcess(
                    url, folder / f"serve{number}.log", checkout=checkout, auto_migrate="true"
                )
                servers.append(server)
                base_url = await asyncio.to_thread(server.ready, STARTUP_SECONDS)
                stacks.append(Stack(name, base_url, sessions, server.process.pid, url))
            bare_name = await copy_database(server_url, "template0", prefix)
            made.append(bare_name)
            bare_database_url = database_url(server_url, bare_name)
            bare = BareServer(bare_database_url, 1, trips, folder / "bare.log")
            servers.append(bare)
            bare_url = await asyncio.to_thread(bare.ready, STARTUP_SECONDS)
            await serving(bare_url)
            bare_ids = await bare_sessions(bare_url, bare_database_url, sizes)
            bare_stack = Stack(
                "bare",
                bare_url,
                {size: [id_] for size, id_ in bare_ids.items()},
                bare.process.pid,
                bare_database_url,
            )
            await time_stacks(server_url, [*stacks, bare_stack], sizes, samples, warmup)
            connection = Connection(stacks[0].url)
            held = {int(size): dict(facts) for size, facts in contents["held"].items()}
            for size in sizes:
                last = await expect(
                    connection, "GET", f"/v1/sessions/{sessions[size][0]}", None, 200
                )
                held[size]["stored_after"] = last["message_count"]
            await connection.close()
        finally:
            for running in servers:
                running.stop()
            for name in made:
                await drop_database(server_url, name)
            if not keep_filled:
                await drop_database(server_url, filled)
    ours = stacks[0]

    def by_call(stack: Stack, call: str) -> dict[str, Any]:
        return {str(s): t.summary() for s, t in stack.timings[call].items()}

    results: dict[str, Any] = {
        "model": MODEL,
        "input_budget": contents["input_budget"],
        "samples": samples,
        "warmup": warmup,
        "fill_seconds": fill_seconds,
        "sessions": {str(s): v for s, v in held.items()},
        "contextd": by_call(ours, "start"),
        "contextd_runs": {str(s): t.runs for s, t in ours.timings["start"].items()},
        "bare": by_call(bare_stack, "start"),
        **{
            f"{name}_{call}": by_call(stack, call)
            for name, stack in (("contextd", ours), ("bare", bare_stack))
            for call in ("step", "complete")
        },
        "stacks": {
            stack.name: {
                "calls": {call: by_call(stack, call) for call in CALLS},
                "cpu": cpu_summary(stack),
            }
            for stack in [*stacks, bare_stack]
        },
        "fold_turns": {stack.name: fold_turns(stack) for stack in stacks},
        "round_trips": trips,
        "libraries": {},
        "library_seconds": library_seconds,
    }
    if libraries:
        measured = await asyncio.to_thread(
            library_latency, sizes, samples, contents["input_budget"], library_seconds, seed
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


def fold_turns(stack: Stack) -> dict[str, dict[str, float]]:
    """Per size: the turn starts that folded a summary against the others (count, medians,
    the others' p95), so that a tail can be told apart from the folds."""
    out: dict[str, dict[str, float]] = {}
    for size, folded in stack.folded.items():
        runs = stack.timings["start"][size].runs
        folds = [ms for ms, fold in zip(runs, folded, strict=True) if fold]
        others = sorted(ms for ms, fold in zip(runs, folded, strict=True) if not fold)
        if not folds or not others:
            continue
        out[str(size)] = {
            "folds": len(folds),
            "fold_median_ms": statistics.median(folds),
            "fold_max_ms": max(folds),
            "other_median_ms": statistics.median(others),
            "other_p95_ms": others[min(len(others) - 1, round(0.95 * (len(others) - 1)))],
        }
    return out


def fold_table(results: dict[str, Any]) -> str:
    """The fold turns' share of the turn start's tail, per stack and size."""
    lines = [
        "| stack | stored messages | fold turns | fold turns' median / max (ms) | others' median"
        " / p95 (ms) | fold median ÷ others' median |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, by_size in results.get("fold_turns", {}).items():
        for size, row in sorted(by_size.items(), key=lambda item: int(item[0])):
            lines.append(
                f"| {name} | {int(size):,} | {row['folds']:.0f} | {row['fold_median_ms']:.2f} / "
                f"{row['fold_max_ms']:.2f} | {row['other_median_ms']:.2f} / "
                f"{row['other_p95_ms']:.2f} | "
                f"{row['fold_median_ms'] / row['other_median_ms']:.2f}x |"
            )
    return "\n".join(lines) if len(lines) > 2 else ""


def tails(results: dict[str, Any]) -> str:
    """Each stack's p95 against its own p50, per call (the tail target), and the most CPU one
    call of the server took (a fold made on the turn start, or a worker's first)."""
    stacks = results.get("stacks")
    if not stacks:
        return ""
    names = list(stacks)
    lines = [
        "| stored messages | call | "
        + " | ".join(f"{name} p50 / p95 (ms) | p95 ÷ p50 | server CPU max (ms)" for name in names)
        + " |",
        "|---:|---|" + "---:|---:|---:|" * len(names),
    ]
    for size in sorted(int(s) for s in results["contextd"]):
        for call in CALLS:
            cells = []
            for name in names:
                row = stacks[name]["calls"][call][str(size)]
                cpu = stacks[name]["cpu"][call][str(size)]
                cells.append(
                    f"{row['median_ms']:.2f} / {row['p95_ms']:.2f} | "
                    f"{row['p95_ms'] / row['median_ms']:.2f}x | "
                    f"{cpu.get('server_max_ms', 0.0):.2f}"
                )
            lines.append(f"| {size:,} | {CALL_NAMES[call]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratios(results: dict[str, Any]) -> str:
    """Each call's p50 against the bare stack's, measured in the same rounds, and the CPU
    each call cost the server's processes and its Postgres backends."""
    stacks = results.get("stacks")
    if not stacks or "bare" not in stacks:
        return ""
    bare = stacks["bare"]
    names = [name for name in stacks if name != "bare"]
    header = "| stored messages | call | " + " | ".join(
        f"{name} p50 (ms) | ratio | CPU server / Postgres (ms) | server ÷ bare | server mean (ms)"
        for name in names
    )
    lines = [
        header + " | bare p50 (ms) | bare CPU server / Postgres (ms) |",
        "|---:|---|" + "---:|---:|---:|---:|---:|" * len(names) + "---:|---:|",
    ]
    for size in sorted(int(s) for s in results["contextd"]):
        for call in CALLS:
            theirs = bare["calls"][call][str(size)]["median_ms"]
            their_cpu = bare["cpu"][call][str(size)]
            cells = []
            for name in names:
                ours = stacks[name]["calls"][call][str(size)]["median_ms"]
                cpu = stacks[name]["cpu"][call][str(size)]
                share = (
                    f"{cpu['server_ms'] / their_cpu['server_ms']:.2f}x"
                    if their_cpu["server_ms"]
                    else "-"
                )
                cells.append(
                    f"{ours:.2f} | {ours / theirs:.2f}x | "
                    f"{cpu['server_ms']:.2f} / {cpu['postgres_ms']:.2f} | {share} | "
                    f"{cpu['server_mean_ms']:.2f}"
                )
            lines.append(
                f"| {size:,} | {CALL_NAMES[call]} | "
                + " | ".join(cells)
                + f" | {theirs:.2f} | {their_cpu['server_ms']:.2f} / "
                f"{their_cpu['postgres_ms']:.2f} |"
            )
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
        "--no-libraries", action="store_true", help="time contextd and the bare stack only"
    )
    parser.add_argument(
        "--keep-filled",
        action="store_true",
        help="keep the database of filled sessions for the next run with the same content",
    )
    parser.add_argument(
        "--refill", action="store_true", help="fill the sessions again even if kept"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="another checkout of contextd, timed in the same rounds (repeatable)",
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
            keep_filled=args.keep_filled,
            refill=args.refill,
            compare=[path.resolve() for path in args.compare],
        )
    )
    print(  # noqa: T201
        f"input budget {results['input_budget']} tokens ({MODEL}); sessions ready in "
        f"{results['fill_seconds']:.0f} s; held: {results['sessions']}"
    )
    print(table(results))  # noqa: T201
    print(ratios(results))  # noqa: T201
    print(tails(results))  # noqa: T201
    print(fold_table(results))  # noqa: T201
    for target in results["targets"]:
        print(f"  {'PASS' if target['pass'] else 'MISS'}  {target['target']}: {target['measured']}")  # noqa: T201


if __name__ == "__main__":
    main()
