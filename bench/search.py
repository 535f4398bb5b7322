"""Full-text search of one long session on Postgres: GET /v1/sessions/{id}/search latency.

One session of 10,000 messages (the synthetic tool-using conversation of bench/synth.py, most
of it summarised), next to two other sessions of the same size so that the index holds more
than the one session, loaded straight into a fresh database. Then each query is asked
``--rounds`` times through the real app (in-process over ASGI, so the figures include the
HTTP stack, auth and the session check, not a network), and the p50/p95 are printed, with
how many hits each kind of query had.

    python -m bench.search [--messages 10000] [--rounds 200] [--database-url postgresql+asyncpg://…]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import asyncpg
from sqlalchemy import make_url

from bench.common import DEFAULT_SERVER, fresh_database, machine, percentile, running_app
from bench.synth import with_messages

#: (kind, query): a rare marker, a person's words, common words matching thousands of rows.
QUERIES = (
    ("planted marker", "{marker}"),
    ("two rare words", "loyalty number"),
    ("phrase of a fact", "budget there {city}"),
    ("common words", "hotel booking"),
    ("one very common word", "price"),
)


async def load(database_url: str, sessions: int, messages: int) -> tuple[str, dict[str, str]]:
    """``sessions`` sessions of ``messages`` messages each; returns the first session's id and
    what its planted facts say (for the queries)."""
    conversation = with_messages(messages)
    chat = conversation.messages()[:messages]
    dsn = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    connection = await asyncpg.connect(dsn)
    now = datetime.now(UTC)
    try:
        for number in range(sessions):
            sid = f"search-{number}"
            await connection.execute(
                "INSERT INTO sessions (tenant_id, id, model, metadata, turn_count, message_count,"
                " created_at, updated_at) VALUES ('default', $1, 'gpt-4', '{}', $2, $3, $4, $4)",
                sid,
                len(conversation.turns),
                len(chat),
                now,
            )
            turn_ids = [f"{sid}-t{index + 1}" for index in range(len(conversation.turns))]
            await connection.copy_records_to_table(
                "turns",
                columns=["id", "tenant_id", "session_id", "seq", "status", "steps", "started_at"],
                records=[
                    (turn_id, "default", sid, index + 1, "completed", 0, now)
                    for index, turn_id in enumerate(turn_ids)
                ],
            )
            rows: list[tuple[Any, ...]] = []
            for turn_index, turn in enumerate(conversation.turns):
                for message in turn.messages():
                    seq = len(rows) + 1
                    if seq > len(chat):
                        break
                    # The newest tenth is still in the prompt; the rest was summarised.
                    state = "active" if seq > 0.9 * len(chat) else "summarised"
                    rows.append(
                        (
                            "default",
                            sid,
                            turn_ids[turn_index],
                            seq,
                            turn_index + 1,
                            0,
                            message["role"],
                            json.dumps(message.get("content")),
                            json.dumps(message["tool_calls"]) if "tool_calls" in message else None,
                            message.get("tool_call_id"),
                            10,
                            "tiktoken:cl100k_base",
                            state,
                            now,
                        )
                    )
            await connection.copy_records_to_table(
                "messages",
                columns=[
                    "tenant_id",
                    "session_id",
                    "turn_id",
                    "seq",
                    "turn_seq",
                    "step",
                    "role",
                    "content",
                    "tool_calls",
                    "tool_call_id",
                    "token_count",
                    "token_encoding",
                    "state",
                    "created_at",
                ],
                records=rows,
            )
        await connection.execute("ANALYZE")
    finally:
        await connection.close()
    fact = next(p for p in conversation.planted if p.kind == "fact")
    city = fact.text.split(" bookings")[0].rsplit(" ", 1)[-1]
    return "search-0", {"marker": fact.marker, "city": city}


async def run(messages: int, rounds: int, server_url: str) -> dict[str, Any]:
    results: dict[str, Any] = {"messages": messages, "rounds": rounds, "queries": {}}
    async with fresh_database(server_url, "contextd_bench_search") as database_url:
        async with running_app(database_url):
            pass  # migrates the fresh database
        sid, values = await load(database_url, 3, messages)
        async with running_app(database_url) as client:
            # The floor: a read of the same session that searches nothing.
            floor: list[float] = []
            for _ in range(rounds):
                started = time.perf_counter()
                response = await client.get(f"/v1/sessions/{sid}/messages", params={"limit": 10})
                floor.append((time.perf_counter() - started) * 1000)
            results["floor_p50_ms"] = round(percentile(floor[5:], 0.5), 2)
            for kind, template in QUERIES:
                query = template.format(**values)
                latencies: list[float] = []
                hits = 0
                for _ in range(rounds):
                    started = time.perf_counter()
                    response = await client.get(
                        f"/v1/sessions/{sid}/search", params={"q": query, "limit": 10}
                    )
                    latencies.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, response.text
                    hits = len(response.json()["hits"])
                warm = latencies[min(5, rounds // 10) :]
                results["queries"][kind] = {
                    "query": query,
                    "hits": hits,
                    "p50_ms": round(percentile(warm, 0.5), 2),
                    "p95_ms": round(percentile(warm, 0.95), 2),
                }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    args = parser.parse_args()
    results = asyncio.run(run(args.messages, args.rounds, args.database_url))
    lines = [
        f"search of one {results['messages']}-message session on Postgres; {machine()}",
        f"floor (GET /messages?limit=10, no search): p50 {results['floor_p50_ms']} ms",
        f"{'query':<22} {'hits':>5} {'p50 ms':>8} {'p95 ms':>8}  q",
        *(
            f"{kind:<22} {row['hits']:>5} {row['p50_ms']:>8} {row['p95_ms']:>8}  {row['query']!r}"
            for kind, row in results["queries"].items()
        ),
    ]
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
