"""How fast is the filtered audit list on a million rows?

Creates a Postgres database of its own, migrates it, fills ``turn_context_audit`` with
synthetic rows (``bench/audit_data.py``: generate_series, a few seconds per 100k), then asks
the real app (in-process, over ASGI) for the first page and a deeper page of each filter,
and prints the latencies and Postgres' plans (``EXPLAIN ANALYZE``). The app lists a caller's
own rows only, so each filter is asked with an ops key of the tenant that owns the rows it
reads (the one it names, or the tenant of its session or turn, else ``tenant-0``), and the
query alone is timed and explained as the app scopes it: to that tenant. Finally it purges the
rows older than 20 days in batches, as ``contextd purge-audit`` does. The database is
dropped at the end.

    python -m bench.audit_list [--rows 1000000] [--repeat 30]
        [--server-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.audit.repository import AuditRepository
from app.audit.retention import purge_audit
from app.audit.schemas import AuditFilter
from app.auth.callers import Scope
from app.auth.service import KeyService
from app.db import create_engine, migrate
from app.models.base import utcnow
from bench.audit_data import MODELS, fill_audit_rows
from bench.common import machine, percentile, running_app


def _queries(rows: int) -> dict[str, dict[str, Any]]:
    now = utcnow()
    day_ago_iso = (now - timedelta(days=1)).isoformat()
    return {
        "newest, no filter": {},
        "session": {"session_id": _session(rows)},
        "tenant": {"tenant_id": "tenant-3"},
        "model": {"model": MODELS[2]},
        "turn": {"turn_id": f"turn-{rows // 3}"},
        "last hour": {"since": (now - timedelta(hours=1)).isoformat()},
        "last 24 hours": {"since": day_ago_iso},
        "one day, 10 days ago": {
            "since": (now - timedelta(days=11)).isoformat(),
            "until": (now - timedelta(days=10)).isoformat(),
        },
        "summary_triggered": {"summary_triggered": "true"},
        "prune_triggered": {"prune_triggered": "true"},
        "overflow_rejected": {"overflow_rejected": "true"},
        "summary_fallback": {"summary_fallback": "true"},
        "estimator_fallback": {"estimator_fallback": "true"},
        "tenant + rejected": {"tenant_id": "tenant-1", "overflow_rejected": "true"},
        "model + pruned, last 24 hours": {
            "model": MODELS[0],
            "prune_triggered": "true",
            "since": day_ago_iso,
        },
    }


#: The tenant a filter that names neither a tenant, a session nor a turn is asked as.
DEFAULT_OWNER = "tenant-0"


async def _owner(engine: AsyncEngine, params: dict[str, Any]) -> str:
    """The tenant whose rows a filter reads: the one it names, or its session's or turn's."""
    if "tenant_id" in params:
        return str(params["tenant_id"])
    for column in ("session_id", "turn_id"):
        if column in params:
            async with engine.connect() as connection:
                tenant = await connection.scalar(
                    text(
                        f"SELECT tenant_id FROM turn_context_audit WHERE {column} = :value LIMIT 1"
                    ),
                    {"value": params[column]},
                )
            return str(tenant)
    return DEFAULT_OWNER


async def _ops_keys(engine: AsyncEngine, tenants: set[str]) -> dict[str, dict[str, str]]:
    """An ops key for each tenant, as the header that sends it."""
    headers = {}
    async with AsyncSession(engine) as db, db.begin():
        for tenant in sorted(tenants):
            issued = await KeyService(db).create(tenant_id=tenant, scopes=[Scope.OPS])
            headers[tenant] = {"Authorization": f"Bearer {issued.key}"}
    return headers


def _session(rows: int) -> str:
    """A session from the middle of the data."""
    return f"bench-{rows // 200 // 2}"


async def _admin(server_url: str, statement: str) -> None:
    dsn = make_url(server_url).set(drivername="postgresql").render_as_string(hide_password=False)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def _timed_get(
    client: httpx.AsyncClient,
    path: str,
    params: dict[str, Any],
    repeat: int,
    headers: dict[str, str],
) -> tuple[list[float], dict[str, Any]]:
    timings: list[float] = []
    body: dict[str, Any] = {}
    for _ in range(repeat):
        started = time.perf_counter()
        response = await client.get(path, params=params, headers=headers)
        timings.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        body = response.json()
    return timings, body


async def _timed_query(engine: AsyncEngine, filters: AuditFilter, repeat: int) -> list[float]:
    timings: list[float] = []
    async with AsyncSession(engine) as db:
        repository = AuditRepository(db)
        for _ in range(repeat):
            started = time.perf_counter()
            await repository.list(filters, before_id=None, limit=51)
            timings.append((time.perf_counter() - started) * 1000)
            db.expunge_all()
    return timings


async def run(server_url: str, rows: int, repeat: int) -> None:
    name = f"contextd_bench_{uuid.uuid4().hex[:12]}"
    database_url = (
        make_url(server_url)
        .set(drivername="postgresql+asyncpg", database=name)
        .render_as_string(hide_password=False)
    )
    await _admin(server_url, f'CREATE DATABASE "{name}"')
    engine = create_engine(database_url)
    try:
        await migrate(engine)
        started = time.perf_counter()
        async with engine.begin() as connection:
            await fill_audit_rows(connection, rows)
        filled = time.perf_counter() - started
        async with engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(text("VACUUM ANALYZE turn_context_audit"))
            size = await connection.scalar(
                text("SELECT pg_size_pretty(pg_total_relation_size('turn_context_audit'))")
            )
        print(f"machine: {machine()}")  # noqa: T201
        print(  # noqa: T201
            f"filled {rows:,} audit rows in {filled:.1f} s "
            f"({rows / filled:,.0f} rows/s); table with indexes: {size}\n"
        )

        queries = _queries(rows)
        owners = {label: await _owner(engine, params) for label, params in queries.items()}
        rollup_owner = await _owner(engine, {"session_id": _session(rows)})
        keys = await _ops_keys(engine, {*owners.values(), rollup_owner})
        print(  # noqa: T201
            "page of 50, newest first; 'db' is the query alone (repository, ORM rows), 'http' "
            "the whole GET through the app (JSON included); milliseconds"
        )
        print(  # noqa: T201
            f"{'GET /v1/audit filter':<30} {'as':<9} {'rows':>5} {'db p50':>7} {'db p95':>7} "
            f"{'http p50':>9} {'http p95':>9} {'page 2 http p50':>16}"
        )
        async with running_app(database_url) as client:
            for label, params in queries.items():
                filters = AuditFilter.model_validate({**params, "tenant_id": owners[label]})
                database = await _timed_query(engine, filters, repeat)
                timings, body = await _timed_get(
                    client, "/v1/audit", {**params, "limit": 50}, repeat, keys[owners[label]]
                )
                second = "-"
                if body["next_before_id"] is not None:
                    page_two, _ = await _timed_get(
                        client,
                        "/v1/audit",
                        {**params, "limit": 50, "before_id": body["next_before_id"]},
                        repeat,
                        keys[owners[label]],
                    )
                    second = f"{statistics.median(page_two):.2f}"
                print(  # noqa: T201
                    f"{label:<30} {owners[label]:<9} {len(body['items']):>5} "
                    f"{statistics.median(database):>7.2f} "
                    f"{percentile(database, 0.95):>7.2f} {statistics.median(timings):>9.2f} "
                    f"{percentile(timings, 0.95):>9.2f} {second:>16}"
                )
            timings, rollup = await _timed_get(
                client,
                "/v1/audit/rollup",
                {"session_id": _session(rows)},
                repeat,
                keys[rollup_owner],
            )
            print(  # noqa: T201
                f"{'GET /v1/audit/rollup?session_id':<30} {rollup_owner:<9} "
                f"{rollup['assemblies']:>5} "
                f"{'':>7} {'':>7} {statistics.median(timings):>9.2f} "
                f"{percentile(timings, 0.95):>9.2f}"
            )

        print("\nEXPLAIN ANALYZE of each first page (limit 51: a page and the look-ahead)")  # noqa: T201
        async with AsyncSession(engine) as db:
            repository = AuditRepository(db)
            for label, params in queries.items():
                filters = AuditFilter.model_validate({**params, "tenant_id": owners[label]})
                plan = await repository.explain_list(
                    filters, before_id=None, limit=51, analyze=True
                )
                print(f"\n-- {label} (as {owners[label]})")  # noqa: T201
                print("\n".join(plan))  # noqa: T201

        cutoff = utcnow() - timedelta(days=20)
        started = time.perf_counter()
        purged = await purge_audit(
            async_sessionmaker(engine, expire_on_commit=False), cutoff=cutoff, batch_size=5000
        )
        elapsed = time.perf_counter() - started
        print(  # noqa: T201
            f"\npurged {purged:,} rows older than 20 days in {elapsed:.1f} s "
            f"({purged / elapsed:,.0f} rows/s, batches of 5,000)"
        )
    finally:
        await engine.dispose()
        await _admin(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument(
        "--server-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    args = parser.parse_args()
    asyncio.run(run(args.server_url, args.rows, args.repeat))


if __name__ == "__main__":
    main()
