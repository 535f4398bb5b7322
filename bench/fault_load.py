"""A bounded load run with database outages in the middle: is any message lost or stored twice?

Starts ``--workers`` real ``contextd serve`` processes on a fresh Postgres database reached
through a proxy that this script owns, runs ``--agents`` agents concurrently (each: a session,
``--turns`` turns of ``--steps`` tool steps), and cuts the proxy (every connection dropped, new
ones refused) ``--outages`` times for ``--outage-seconds`` while they run. Agents do what a
well-behaved client does: every POST carries an Idempotency-Key, and a 503 or a lost answer is
retried with the same key after Retry-After. At the end every expected message is looked up.

    python -m bench.fault_load [--agents 8] [--turns 6] [--steps 2] [--workers 2]
        [--outages 2] [--outage-seconds 3] [--server-url postgresql+asyncpg://…/postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from app.db import create_engine, migrate
from bench.common import machine
from tests.processes import ServerProcess
from tests.proxy import CuttableProxy

DEFAULT_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
GIVE_UP_AFTER_SECONDS = 120


@dataclass
class Tally:
    attempts: int = 0
    unavailable: int = 0  # 503 database_unavailable
    connection_errors: int = 0  # no answer at all
    retried_requests: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)


class Agent:
    def __init__(self, number: int, workers: list[httpx.AsyncClient], tally: Tally) -> None:
        self.number = number
        self.workers = itertools.cycle(workers)
        self.tally = tally
        self.session_id = f"agent-{number}"

    async def post(self, path: str, body: dict[str, Any], expect: int) -> dict[str, Any]:
        """POST until answered, with one Idempotency-Key for every attempt."""
        headers = {"Idempotency-Key": str(uuid.uuid4())}
        deadline = time.monotonic() + GIVE_UP_AFTER_SECONDS
        for attempt in itertools.count():
            if attempt:
                self.tally.retried_requests += attempt == 1
            self.tally.attempts += 1
            try:
                response = await next(self.workers).post(path, json=body, headers=headers)
            except httpx.TransportError:
                self.tally.connection_errors += 1
                await asyncio.sleep(0.2)
            else:
                self.tally.statuses[response.status_code] += 1
                if response.status_code == expect:
                    answer: dict[str, Any] = response.json()
                    return answer
                if response.status_code != 503:
                    raise RuntimeError(f"{path}: {response.status_code} {response.text}")
                self.tally.unavailable += 1
                await asyncio.sleep(min(float(response.headers.get("retry-after", 1)), 0.5))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path}: no answer after {GIVE_UP_AFTER_SECONDS} s")
        raise AssertionError("unreachable")

    async def run(self, turns: int, steps: int) -> list[str]:
        """The agent's conversation; returns the marks of every message it had stored."""
        base = f"/v1/sessions/{self.session_id}"
        await self.post("/v1/sessions", {"id": self.session_id, "model": "gpt-4o"}, 201)
        marks: list[str] = []
        for turn_number in range(turns):
            mark = f"{self.session_id}-t{turn_number}"
            turn = await self.post(f"{base}/turns", {"message": {"content": mark}}, 201)
            marks.append(mark)
            for step_number in range(steps):
                call = f"{mark}-s{step_number}"
                body = {
                    "assistant": {
                        "tool_calls": [{"id": call, "function": {"name": "f", "arguments": "{}"}}]
                    },
                    "tool_results": [{"tool_call_id": call, "content": f"{call}-result"}],
                }
                await self.post(f"{base}/turns/{turn['turn_id']}/steps", body, 200)
                marks += [call, f"{call}-result"]
            answer = f"{mark}-answer"
            await self.post(
                f"{base}/turns/{turn['turn_id']}/complete", {"assistant": {"content": answer}}, 200
            )
            marks.append(answer)
        return marks


def message_mark(message: dict[str, Any]) -> str:
    if message["tool_calls"]:
        return str(message["tool_calls"][0]["id"])
    return str(message["content"])


async def stored_marks(client: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/sessions/{session_id}/messages", params={"limit": 1000})
    messages: list[dict[str, Any]] = response.json()["messages"]
    return messages


async def inject_outages(
    proxy: CuttableProxy,
    probe: httpx.AsyncClient,
    *,
    outages: int,
    seconds: float,
    every: float,
    readiness: list[int],
) -> None:
    for _ in range(outages):
        await asyncio.sleep(every)
        proxy.cut()
        await asyncio.sleep(seconds / 2)
        readiness.append((await probe.get("/readyz")).status_code)
        await asyncio.sleep(seconds / 2)
        proxy.restore()


async def _admin(server_url: str, statement: str) -> None:
    dsn = make_url(server_url).set(drivername="postgresql").render_as_string(hide_password=False)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    name = f"contextd_bench_{uuid.uuid4().hex[:12]}"
    server = make_url(args.server_url)
    await _admin(args.server_url, f'CREATE DATABASE "{name}"')
    proxy = CuttableProxy(server.host or "127.0.0.1", server.port or 5432)
    processes: list[ServerProcess] = []
    clients: list[httpx.AsyncClient] = []
    try:
        direct = server.set(database=name).render_as_string(hide_password=False)
        engine = create_engine(direct)
        await migrate(engine)
        await engine.dispose()
        await proxy.start()
        proxied = server.set(database=name, host="127.0.0.1", port=proxy.port).render_as_string(
            hide_password=False
        )
        with tempfile.TemporaryDirectory() as folder:
            processes = [
                ServerProcess(proxied, Path(folder) / f"worker-{i}.log")
                for i in range(args.workers)
            ]
            urls = [await asyncio.to_thread(p.ready) for p in processes]
            clients = [httpx.AsyncClient(base_url=url, timeout=30) for url in urls]
            tally = Tally()
            agents = [Agent(n, clients, tally) for n in range(args.agents)]
            readiness: list[int] = []
            started = time.perf_counter()
            faults = asyncio.create_task(
                inject_outages(
                    proxy,
                    clients[0],
                    outages=args.outages,
                    seconds=args.outage_seconds,
                    every=args.outage_every,
                    readiness=readiness,
                )
            )
            expected = await asyncio.gather(*(a.run(args.turns, args.steps) for a in agents))
            elapsed = time.perf_counter() - started
            await faults
            ready_after = (await clients[0].get("/readyz")).status_code
            lost = duplicated = gaps = 0
            stored_total = 0
            for agent, marks in zip(agents, expected, strict=True):
                messages = await stored_marks(clients[-1], agent.session_id)
                stored_total += len(messages)
                counts = collections.Counter(message_mark(m) for m in messages)
                lost += sum(1 for mark in marks if counts[mark] == 0)
                duplicated += sum(count - 1 for count in counts.values() if count > 1)
                gaps += [m["seq"] for m in messages] != list(range(1, len(messages) + 1))
    finally:
        for client in clients:
            await client.aclose()
        for process in processes:
            process.stop()
        await proxy.close()
        await _admin(args.server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return {
        "agents x turns x steps": f"{args.agents} x {args.turns} x {args.steps}",
        "worker processes": args.workers,
        "requests sent (attempts)": tally.attempts,
        "faults injected (outages)": proxy.cuts,
        "outage length (s)": args.outage_seconds,
        "answers 503 database_unavailable": tally.unavailable,
        "attempts with no answer": tally.connection_errors,
        "requests retried": tally.retried_requests,
        "readiness during outages": readiness,
        "readiness after": ready_after,
        "messages expected": sum(len(m) for m in expected),
        "messages stored": stored_total,
        "messages lost": lost,
        "messages duplicated": duplicated,
        "sessions with a seq gap": gaps,
        "elapsed (s)": elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--outages", type=int, default=2)
    parser.add_argument("--outage-seconds", type=float, default=3.0)
    parser.add_argument("--outage-every", type=float, default=2.0, help="seconds between outages")
    parser.add_argument("--server-url", default=DEFAULT_SERVER, help="a Postgres server URL")
    args = parser.parse_args()
    figures = asyncio.run(run(args))
    print(f"fault load on Postgres through a cuttable proxy — {machine()}")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        print(f"  {key:34} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
