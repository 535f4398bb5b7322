"""A bounded load generator: a fixed number of virtual agents, each with its own session and
its own keep-alive connection, each looping turns (POST /turns, then POST .../complete) as
fast as the server answers. Run in its own process so that it does not share an event loop
with anything it measures. Prints one JSON object.

The same generator drives contextd and the bare stack (bench/bare_stack.py): both answer
POST /v1/sessions, POST /v1/sessions/{id}/turns and POST /v1/sessions/{id}/turns/{t}/complete.

    python -m bench.loadgen --url http://127.0.0.1:8080 --agents 16 --duration 20 --warmup 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any

from bench import synth
from bench.wire import Connection


class Load:
    def __init__(self, url: str, model: str, turns_per_session: int) -> None:
        self.url = url
        self.model = model
        self.turns_per_session = turns_per_session
        self.turns = synth.generate(60, seed=1).turns
        self.measuring = False
        self.stopping = False
        self.start_ms: list[float] = []
        self.complete_ms: list[float] = []
        self.turn_ms: list[float] = []
        self.completed_turns = 0
        self.statuses: Counter[str] = Counter()
        self.errors: list[str] = []

    def note(self, what: str, status: int, body: bytes) -> None:
        key = f"{what} {status}"
        self.statuses[key] += 1
        if len(self.errors) < 10:
            self.errors.append(f"{key}: {body[:300].decode(errors='replace')}")

    async def agent(self, number: int) -> None:
        connection = Connection(self.url)
        session_id: str | None = None
        made = 0
        turn_number = number
        while not self.stopping:
            if session_id is None or made >= self.turns_per_session:
                response = await connection.request(
                    "POST",
                    "/v1/sessions",
                    {"model": self.model, "system": {"global": synth.SYSTEM}},
                )
                if response.status != 201:
                    self.note("create session", response.status, response.body)
                    await asyncio.sleep(0.05)
                    continue
                session_id, made = response.json()["id"], 0
            turn = self.turns[turn_number % len(self.turns)]
            turn_number += 1
            path = f"/v1/sessions/{session_id}/turns"
            measured = self.measuring
            began = time.perf_counter()
            response = await connection.request("POST", path, turn.start_body())
            started = time.perf_counter()
            if response.status != 201:
                self.note("start", response.status, response.body)
                session_id = None  # a fresh session rather than a stuck one
                continue
            turn_id = response.json()["turn_id"]
            between = time.perf_counter()
            response = await connection.request(
                "POST", f"{path}/{turn_id}/complete", turn.complete_body()
            )
            ended = time.perf_counter()
            made += 1
            if response.status != 200:
                self.note("complete", response.status, response.body)
                session_id = None
                continue
            self.statuses["ok"] += 1
            if measured and self.measuring:
                self.start_ms.append((started - began) * 1000)
                self.complete_ms.append((ended - between) * 1000)
                self.turn_ms.append((started - began + ended - between) * 1000)
                self.completed_turns += 1
        await connection.close()

    async def run(self, agents: int, duration: float, warmup: float) -> dict[str, Any]:
        tasks = [asyncio.create_task(self.agent(n)) for n in range(agents)]
        await asyncio.sleep(warmup)
        self.measuring = True
        began = time.perf_counter()
        await asyncio.sleep(duration)
        self.measuring = False
        elapsed = time.perf_counter() - began
        self.stopping = True
        await asyncio.wait(tasks, timeout=30)
        requests = sorted(self.start_ms + self.complete_ms)
        return {
            "agents": agents,
            "seconds": elapsed,
            "turns": self.completed_turns,
            "turns_per_second": self.completed_turns / elapsed,
            "request_ms": quantiles(requests),
            "start_ms": quantiles(self.start_ms),
            "complete_ms": quantiles(self.complete_ms),
            "turn_ms": quantiles(self.turn_ms),
            "statuses": dict(self.statuses),
            "errors": self.errors,
        }


def quantiles(values: list[float]) -> dict[str, float | None]:
    ordered = sorted(values)

    def at(share: float) -> float | None:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else None

    return {
        "p50": at(0.50),
        "p95": at(0.95),
        "p99": at(0.99),
        "max": ordered[-1] if ordered else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--turns-per-session", type=int, default=40)
    parser.add_argument("--model", default="gpt-4o")
    args = parser.parse_args()
    load = Load(args.url, args.model, args.turns_per_session)
    figures = asyncio.run(load.run(args.agents, args.duration, args.warmup))
    json.dump(figures, sys.stdout)


if __name__ == "__main__":
    main()
