"""What tracing costs a turn: the same turns through the real app (SQLite), with tracing off
(no OTEL_* variables) and on (the SDK's batch processor into an in-memory exporter, so the
export itself is not measured). Prints the latency of a turn start and the spans per turn.

    python -m bench tracing-overhead --turns 300
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.main import create_app
from app.settings import Settings


@asynccontextmanager
async def _client(provider: TracerProvider | None) -> AsyncIterator[httpx.AsyncClient]:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{folder}/t.db")
        app = create_app(settings, tracer_provider=provider)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as c,
        ):
            yield c


async def _turn_starts(client: httpx.AsyncClient, turns: int) -> list[float]:
    session = (await client.post("/v1/sessions", json={"model": "gpt-4o"})).json()["id"]
    durations: list[float] = []
    for number in range(turns):
        started = time.perf_counter()
        response = await client.post(
            f"/v1/sessions/{session}/turns",
            json={"message": {"role": "user", "content": f"Question {number} about Lisbon."}},
        )
        durations.append((time.perf_counter() - started) * 1000)
        turn = response.json()["turn_id"]
        await client.post(
            f"/v1/sessions/{session}/turns/{turn}/complete",
            json={"assistant": {"content": f"Answer {number}."}},
        )
    return durations


async def measure(turns: int) -> None:
    async with _client(None) as client:
        await _turn_starts(client, 20)  # warm-up
        off = await _turn_starts(client, turns)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=1_000_000))
    async with _client(provider) as client:
        await _turn_starts(client, 20)
        provider.force_flush()
        exporter.clear()
        on = await _turn_starts(client, turns)
        provider.force_flush()
        spans = len(exporter.get_finished_spans())
    provider.shutdown()
    for name, values in (("off", off), ("on", on)):
        print(  # noqa: T201
            f"tracing {name:3}: turn start p50 {statistics.median(values):6.2f} ms, "
            f"mean {statistics.fmean(values):6.2f} ms over {turns} turns"
        )
    print(f"spans per turn (start + complete, on): {spans / turns:.1f}")  # noqa: T201


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    asyncio.run(measure(parser.parse_args().turns))


if __name__ == "__main__":
    main()
