"""Which index of the audit table earns its cost: every audit query's plan at volume, and
what each set of indexes costs a write.

Creates a Postgres database of its own, migrates it, fills ``turn_context_audit`` with
``--rows`` synthetic rows over ``--tenants`` tenants of skewed sizes (``bench/audit_data.py``:
the largest tenant holds about 29% of the rows, the smallest under 1%), then, for each set
of indexes in turn (the table's other indexes dropped, the set's built, ``ANALYZE``):

- every statement the app runs on the table, as the app runs it (the audit list always
  scoped to the caller's tenant, as ``AuditService.list`` scopes it), for the largest and the
  smallest tenant: ``EXPLAIN (ANALYZE, BUFFERS)``, the indexes the plan reads, the buffers it
  touched and the median execution time of ``--repeat`` runs;
- the write: ``--writes`` audit rows inserted one statement each (as a turn inserts its
  row), the CPU of the database backend that ran them read from ``/proc/<pid>/stat``,
  per row; each set ``--rounds`` times, the sets alternating, the rows deleted after.

The sets: ``0014`` (the indexes up to migration 0014), ``0015`` (the migration that
followed), and ``primary key only`` (what a write costs with no index to keep but the
primary key: the floor).

    python -m bench audit-indexes [--rows 200000] [--tenants 40] [--repeat 15]
        [--writes 4000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import asyncpg
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.audit.repository import AuditRepository
from app.audit.schemas import AuditFilter
from app.db import create_engine, migrate
from app.models import AuditRecord
from app.models.base import utcnow
from bench.audit_data import MODELS, fill_audit_rows
from bench.common import DEFAULT_SERVER, fresh_database, machine

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)
#: Each set: index name -> (columns, partial predicate or None). The primary key stays.
INDEX_SETS: dict[str, dict[str, tuple[str, str | None]]] = {
    "0014": {
        "ix_turn_context_audit_session_id_id": ("session_id, id", None),
        "ix_turn_context_audit_created_at": ("created_at", None),
        "ix_turn_context_audit_tenant_id_id": ("tenant_id, id", None),
        "ix_turn_context_audit_model_alias_id": ("model_alias, id", None),
        "ix_turn_context_audit_turn_id": ("turn_id", None),
        **{f"ix_turn_context_audit_{flag}": ("id", flag) for flag in FLAGS},
    },
    "0015": {
        "ix_turn_context_audit_tenant_id_session_id_id": ("tenant_id, session_id, id", None),
        "ix_turn_context_audit_created_at": ("created_at", None),
        "ix_turn_context_audit_tenant_id_id": ("tenant_id, id", None),
        "ix_turn_context_audit_tenant_id_model_alias_id": ("tenant_id, model_alias, id", None),
        "ix_turn_context_audit_turn_id": ("turn_id", None),
        **{f"ix_turn_context_audit_tenant_id_{flag}": ("tenant_id, id", flag) for flag in FLAGS},
        **{
            f"ix_turn_context_audit_{flag}": ("id", flag)
            for flag in ("summary_triggered", "prune_triggered")
        },
    },
    "primary key only": {},
}


@dataclass
class Plan:
    indexes: list[str]
    buffers: int
    #: Postgres's execution time (EXPLAIN ANALYZE), and the statement run as the app runs
    #: it (SQLAlchemy, rows made into records), ms.
    times: list[float] = field(default_factory=list)
    app_times: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times)

    @property
    def app_median_ms(self) -> float:
        return statistics.median(self.app_times)


def _plan_of(lines: list[str]) -> tuple[list[str], int, float]:
    """The indexes a textual ``EXPLAIN (ANALYZE, BUFFERS)`` reads, the buffers its top node
    touched, and its execution time (ms)."""
    body = "\n".join(lines)
    indexes = sorted(set(re.findall(r"(?:Index|Index Only) Scan(?: Backward)? using (\w+)", body)))
    indexes += ["seq scan"] if "Seq Scan" in body else []
    indexes += sorted(set(re.findall(r"Bitmap Index Scan on (\w+)", body)))
    buffers = 0
    for line in lines:
        if "Buffers:" in line:
            buffers = sum(int(n) for n in re.findall(r"(?:hit|read)=(\d+)", line))
            break
    executed = re.search(r"Execution Time: ([\d.]+) ms", body)
    return indexes, buffers, float(executed.group(1)) if executed else float("nan")


async def _explain(db: AsyncSession, statement: Any) -> list[str]:
    compiled = statement.compile(
        dialect=db.get_bind().dialect, compile_kwargs={"literal_binds": True}
    )
    rows = await db.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {compiled}"))
    return [str(row[0]) for row in rows]


def _statements(big: str, small: str, session: str, turn: str, audit_id: int) -> dict[str, Any]:
    """Every statement the app runs on the audit table, named, with the values it would
    have: the list scoped to a tenant (``AuditService.list``), the one-row reads, the
    roll-up's aggregate, the usage report's lookup and retention's range."""
    now = utcnow()
    lists: dict[str, AuditFilter] = {}
    for size, tenant in (("large", big), ("small", small)):
        scoped = {"tenant_id": tenant}
        lists |= {
            f"{size} tenant, no filter": AuditFilter(**scoped),
            f"{size} tenant, model": AuditFilter(**scoped, model=MODELS[2]),
            f"{size} tenant, last hour": AuditFilter(**scoped, since=now - timedelta(hours=1)),
            f"{size} tenant, one day 10 days ago": AuditFilter(
                **scoped, since=now - timedelta(days=11), until=now - timedelta(days=10)
            ),
            **{f"{size} tenant, {flag}": AuditFilter(**scoped, **{flag: True}) for flag in FLAGS},
            f"{size} tenant, model + pruned, last 24 hours": AuditFilter(
                **scoped, model=MODELS[0], prune_triggered=True, since=now - timedelta(days=1)
            ),
        }
    lists["session"] = AuditFilter(tenant_id=big, session_id=session)
    lists["turn"] = AuditFilter(tenant_id=big, turn_id=turn)
    statements: dict[str, Any] = {
        f"list: {name}": AuditRepository.list_statement(filters, before_id=None, limit=51)
        for name, filters in lists.items()
    }
    statements["one row by id (GET /v1/audit/{id}, the drop-in's note)"] = select(
        AuditRecord
    ).where(AuditRecord.id == audit_id, AuditRecord.tenant_id == big)
    statements["the accepted assembly of a step (a usage report)"] = (
        select(AuditRecord)
        .where(
            AuditRecord.tenant_id == big,
            AuditRecord.session_id == session,
            AuditRecord.turn_id == turn,
            AuditRecord.step == 0,
            AuditRecord.overflow_rejected.is_(False),
        )
        .order_by(AuditRecord.id.desc())
        .limit(1)
    )
    statements["roll-up of a session"] = select(
        func.count(), func.max(AuditRecord.latency_ms), func.max(AuditRecord.id)
    ).where(AuditRecord.tenant_id == big, AuditRecord.session_id == session)
    statements["retention's range (rows older than 20 days)"] = select(
        func.count(), func.min(AuditRecord.id), func.max(AuditRecord.id)
    ).where(AuditRecord.created_at < now - timedelta(days=20))
    return statements


async def _use_index_set(connection: AsyncConnection, name: str) -> None:
    existing = (
        await connection.execute(
            text(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'turn_context_audit' "
                "AND indexname <> 'pk_turn_context_audit'"
            )
        )
    ).scalars()
    for index in list(existing):
        await connection.execute(text(f"DROP INDEX {index}"))
    for index, (columns, predicate) in INDEX_SETS[name].items():
        where = f" WHERE {predicate}" if predicate else ""
        await connection.execute(
            text(f"CREATE INDEX {index} ON turn_context_audit ({columns}){where}")
        )
    await connection.execute(text("ANALYZE turn_context_audit"))


def _backend_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


async def _write_cost(dsn: str, first_id: int, writes: int) -> float:
    """Backend CPU per audit row inserted one statement at a time, in microseconds."""
    connection = await asyncpg.connect(dsn)
    try:
        pid = await connection.fetchval("SELECT pg_backend_pid()")
        # The fill's own row, one at a time: generate_series of one value.
        insert = await connection.prepare(_ONE_ROW)
        start = utcnow() - timedelta(minutes=5)
        await insert.fetch(first_id, start)  # planned and cached before the count starts
        before = _backend_ticks(pid)
        async with connection.transaction():
            for offset in range(1, writes + 1):
                await insert.fetch(first_id + offset, start)
        spent = _backend_ticks(pid) - before
        await connection.execute(f"DELETE FROM turn_context_audit WHERE id >= {first_id}")
        await connection.execute("VACUUM turn_context_audit")
    finally:
        await connection.close()
    return spent / TICKS_PER_SECOND * 1e6 / writes


# One row like a turn start's: the fill's shape, a session of 200 rows, flags as in traffic.
_ONE_ROW = """
INSERT INTO turn_context_audit (
    id, session_id, tenant_id, turn_id, turn_seq, step, model_alias, model_context_limit,
    input_budget, estimated_input_tokens_before, estimated_input_tokens_after_summary,
    estimated_input_tokens_after_prune, summary_triggered, summary_reason, summary_fallback,
    summary_id, prune_triggered, overflow_rejected, blocks, kept_message_ids,
    summarised_message_ids, pruned_message_ids, estimator, estimator_fallback, latency_ms,
    rejection, created_at)
SELECT g, 'write-' || (g / 200), 'tenant-' || (g / 200 % 40), 'turn-' || (g / 2),
    (g % 200) / 2 + 1, g % 2, 'gpt-4o', 128000, 119552, 2000, 2000, 2000, g % 7 = 0,
    CASE WHEN g % 7 = 0 THEN 'threshold' END, false, NULL, g % 13 = 0, g % 211 = 0,
    '{"system": 40, "goal": 12, "history": 1800, "current": 90}'::json,
    '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]'::json,
    '[]'::json, '[]'::json, 'tiktoken:o200k_base', false, 4.2, NULL,
    start + g * interval '1 millisecond'
FROM (SELECT $1::bigint AS g, $2::timestamptz AS start) AS one_row
"""


async def run(
    server_url: str, rows: int, tenants: int, repeat: int, writes: int, rounds: int
) -> None:
    async with fresh_database(server_url, "contextd_bench_audit_indexes") as database_url:
        engine = create_engine(database_url)
        dsn = make_url(database_url).set(drivername="postgresql")
        plain = dsn.render_as_string(hide_password=False)
        try:
            await migrate(engine)
            started = time.perf_counter()
            async with engine.begin() as connection:
                await fill_audit_rows(connection, rows, tenants=tenants)
            async with engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.execute(text("VACUUM ANALYZE turn_context_audit"))
                sizes = (
                    await autocommit.execute(
                        text(
                            "SELECT tenant_id, count(*) FROM turn_context_audit "
                            "GROUP BY tenant_id ORDER BY count(*) DESC"
                        )
                    )
                ).all()
                top = await autocommit.scalar(text("SELECT max(id) FROM turn_context_audit"))
                session, turn = (
                    await autocommit.execute(
                        text(
                            "SELECT session_id, turn_id FROM turn_context_audit "
                            "WHERE tenant_id = :t ORDER BY id LIMIT 1 OFFSET :o"
                        ),
                        {"t": sizes[0][0], "o": sizes[0][1] // 2},
                    )
                ).one()
            big, small = sizes[0][0], sizes[-1][0]
            print(f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}")  # noqa: T201
            print(  # noqa: T201
                f"{rows:,} audit rows over {len(sizes)} tenants (largest {big}: "
                f"{sizes[0][1]:,} rows, smallest {small}: {sizes[-1][1]:,}), filled in "
                f"{time.perf_counter() - started:.0f} s\n"
            )
            statements = _statements(big, small, session, turn, top // 2)
            plans: dict[str, dict[str, Plan]] = {}
            write_cost: dict[str, list[float]] = {name: [] for name in INDEX_SETS}
            for round_number in range(rounds):
                for name in INDEX_SETS:
                    async with engine.begin() as connection:
                        await _use_index_set(connection, name)
                    if round_number == 0:
                        plans[name] = await _plans(engine, statements, repeat)
                    write_cost[name].append(await _write_cost(plain, top + 1_000_000, writes))
            _print(statements, plans, write_cost, writes)
        finally:
            await engine.dispose()


async def _plans(engine: Any, statements: dict[str, Any], repeat: int) -> dict[str, Plan]:
    plans: dict[str, Plan] = {}
    async with AsyncSession(engine) as db:
        for label, statement in statements.items():
            for _ in range(repeat):
                indexes, buffers, elapsed = _plan_of(await _explain(db, statement))
                plan = plans.setdefault(label, Plan(indexes, buffers))
                plan.times.append(elapsed)
                started = time.perf_counter()
                (await db.execute(statement)).all()
                plan.app_times.append((time.perf_counter() - started) * 1000)
                db.expunge_all()
    return plans


def _print(
    statements: dict[str, Any],
    plans: dict[str, dict[str, Plan]],
    write_cost: dict[str, list[float]],
    writes: int,
) -> None:
    names = list(INDEX_SETS)
    print(  # noqa: T201
        "Postgres's execution time (EXPLAIN ANALYZE, median) and the buffers the plan "
        "touched; then the statement as the app runs it (SQLAlchemy, rows made), median; ms\n"
    )
    print(  # noqa: T201
        "| statement | "
        + " | ".join(f"{name}: ms (buffers)" for name in names)
        + " | "
        + " | ".join(f"{name}: in the app" for name in names[:2])
        + " | "
        + " | ".join(f"{name}: indexes read" for name in names[:2])
        + " |\n|---|"
        + "---:|" * (len(names) + 2)
        + "---|" * 2
    )
    for label in statements:
        cells = [f"{plans[n][label].median_ms:.3f} ({plans[n][label].buffers})" for n in names]
        cells += [f"{plans[n][label].app_median_ms:.2f}" for n in names[:2]]
        reads = [", ".join(plans[n][label].indexes) or "-" for n in names[:2]]
        print(f"| {label} | " + " | ".join(cells + reads) + " |")  # noqa: T201
    print(  # noqa: T201
        f"\nbackend CPU per audit row written, µs ({writes:,} single-row INSERTs a round; "
        "ticks of 10 ms):\n\n| indexes | rounds | median |\n|---|---|---:|"
    )
    for name, costs in write_cost.items():
        print(  # noqa: T201
            f"| {name} | {', '.join(f'{c:.1f}' for c in costs)} | {statistics.median(costs):.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--server-url", default=DEFAULT_SERVER)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--tenants", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=15, help="EXPLAIN ANALYZE runs a plan")
    parser.add_argument("--writes", type=int, default=4_000, help="rows inserted a round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(
        run(args.server_url, args.rows, args.tenants, args.repeat, args.writes, args.rounds)
    )


if __name__ == "__main__":
    main()
