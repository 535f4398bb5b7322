"""What a statement costs on SQLite: aiosqlite's cursors against one hand-off a statement.

The same transactions, shaped like a turn's (BEGIN IMMEDIATE, read the session row, insert a
message, read the newest 40, insert an audit row, COMMIT), on two engines over one database
file in one process: the app's engine (``app.db.create_engine``: its cursors run a statement
and fetch its rows in one call on the connection's thread) and the same engine with
aiosqlite's own cursors (four calls a statement: open, execute, fetch, close). Blocks
alternate (own, app, app, own, …) so that both see the same machine; each block's wall time
and process CPU (every thread's) per transaction are printed, then the medians and their
ratio.

    python -m bench sqlite-driver [--transactions 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.db import create_engine, migrate
from bench.common import machine


def say(line: str) -> None:
    print(line, flush=True)  # noqa: T201


SESSION = (
    "INSERT INTO sessions (id, tenant_id, model, metadata, turn_count, message_count,"
    " created_at, updated_at) VALUES ('s', 't', 'gpt-4o', '{}', 0, 0, :now, :now)"
)


def aiosqlite_cursors(url: str) -> AsyncEngine:
    """The app's SQLite engine as it was with aiosqlite's own cursors: the same pragmas,
    BEGIN IMMEDIATE and JSON codecs, no ``async_creator``."""
    engine = create_async_engine(url, connect_args={"timeout": 30})

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in ("foreign_keys=ON", "journal_mode=WAL", "synchronous=NORMAL"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


async def transactions(engine: AsyncEngine, count: int, start: int) -> tuple[float, float]:
    """Wall and CPU milliseconds per turn-shaped transaction, over ``count`` of them."""
    wall, cpu = time.perf_counter(), time.process_time()
    for n in range(start, start + count):
        async with engine.begin() as connection:
            await connection.execute(text("SELECT * FROM sessions WHERE id = 's'"))
            await connection.execute(
                text(
                    "INSERT INTO turns (id, tenant_id, session_id, seq, status, steps, started_at)"
                    " VALUES (:id, 't', 's', :seq, 'completed', 1, '2026-01-01')"
                ),
                {"id": f"turn-{n}", "seq": n},
            )
            newest = await connection.execute(
                text("SELECT id, seq FROM turns WHERE session_id = 's' ORDER BY seq DESC LIMIT 40")
            )
            newest.all()
            await connection.execute(
                text("UPDATE sessions SET turn_count = turn_count + 1 WHERE id = 's'")
            )
    return (
        (time.perf_counter() - wall) * 1000 / count,
        (time.process_time() - cpu) * 1000 / count,
    )


async def run(count: int, rounds: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="contextd-sqlite-driver-"))
    url = f"sqlite+aiosqlite:///{folder / 'contextd.db'}"
    app_engine = create_engine(url)
    await migrate(app_engine)
    async with app_engine.begin() as connection:
        await connection.execute(text(SESSION), {"now": "2026-01-01"})
    own_engine = aiosqlite_cursors(url)
    engines = {"aiosqlite's cursors": own_engine, "one call a statement": app_engine}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in engines}
    start = 0
    await transactions(own_engine, 50, start)  # both warm: connections, statement caches
    await transactions(app_engine, 50, start + 50)
    start += 100
    own_name, app_name = engines
    for round_ in range(rounds):
        for name in (own_name, app_name) if round_ % 2 == 0 else (app_name, own_name):
            figure = await transactions(engines[name], count, start)
            start += count
            figures[name].append(figure)
            say(f"  {name:22} {figure[0]:7.3f} ms wall  {figure[1]:7.3f} ms CPU a transaction")
    await own_engine.dispose()
    await app_engine.dispose()
    own = [statistics.median(value[i] for value in figures[own_name]) for i in (0, 1)]
    app = [statistics.median(value[i] for value in figures[app_name]) for i in (0, 1)]
    say(f"median, aiosqlite's cursors:  {own[0]:.3f} ms wall, {own[1]:.3f} ms CPU")
    say(f"median, one call a statement: {app[0]:.3f} ms wall, {app[1]:.3f} ms CPU")
    say(f"one call ÷ aiosqlite's: wall {app[0] / own[0]:.2f}x, CPU {app[1] / own[1]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    say(f"SQLite statement cost — {machine()}; BEGIN IMMEDIATE + 4 statements + COMMIT")
    asyncio.run(run(args.transactions, args.rounds))


if __name__ == "__main__":
    main()
