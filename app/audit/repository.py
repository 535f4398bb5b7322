"""Every query on the audit table."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ClauseElement,
    ColumnElement,
    Executable,
    ScalarSelect,
    Select,
    delete,
    func,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler

from app.audit.schemas import AuditFilter
from app.audit.telemetry import note_audit_row
from app.db import WriteBatch, insert_rows, update_row
from app.models import AuditRecord


class _Explain(Executable, ClauseElement):
    """``EXPLAIN`` of a statement, bound and compiled exactly as it would run."""

    inherit_cache = False

    def __init__(self, statement: Select[Any], *, analyze: bool) -> None:
        self.statement = statement
        self.analyze = analyze


@compiles(_Explain, "postgresql")
def _explain_postgresql(element: _Explain, compiler: SQLCompiler, **kw: Any) -> str:
    options = "ANALYZE, BUFFERS" if element.analyze else "COSTS"
    return f"EXPLAIN ({options}) {compiler.process(element.statement, **kw)}"


@compiles(_Explain, "sqlite")
def _explain_sqlite(element: _Explain, compiler: SQLCompiler, **kw: Any) -> str:
    return f"EXPLAIN QUERY PLAN {compiler.process(element.statement, **kw)}"


@dataclass(frozen=True)
class RollupFigures:
    """The aggregates of one session's audit rows, as the database computed them."""

    assemblies: int
    turns: int
    rejections: int
    summaries: int
    summary_triggers: int
    prunes: int
    summary_fallbacks: int
    estimator_fallbacks: int
    tokens_min: int | None
    tokens_avg: float | None
    tokens_max: int | None
    latency_p50: float
    latency_p95: float
    latency_max: float
    first_at: datetime
    last_at: datetime
    last_rejection_id: int | None
    newest: AuditRecord


@dataclass(frozen=True)
class PurgeRange:
    """The audit rows older than a cutoff: how many, and the id range that holds them."""

    rows: int
    first_id: int
    last_id: int


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks: what Postgres' ``percentile_cont`` does."""
    position = fraction * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    weight = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * weight


#: Above every id: the upper bound when no row is as recent as ``until``.
_NO_ID = 2**63 - 1


def _first_id_at_or_after(moment: datetime) -> ScalarSelect[int]:
    return (
        select(AuditRecord.id)
        .where(AuditRecord.created_at >= moment)
        .order_by(AuditRecord.created_at, AuditRecord.id)
        .limit(1)
        .correlate(None)  # a constant for the whole query, not a per-row lookup
        .scalar_subquery()
    )


class AuditRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    def add(self, record: AuditRecord) -> None:
        self.db.add(record)

    async def hand_over(self, from_tenant: str, to_tenant: str) -> None:
        """Every audit row of ``from_tenant``, deleted sessions' included, to ``to_tenant``."""
        await self.db.execute(
            update(AuditRecord)
            .where(AuditRecord.tenant_id == from_tenant)
            .values(tenant_id=to_tenant)
        )

    def insert(self, batch: WriteBatch, values: dict[str, Any]) -> None:
        """An assembly's audit row, with its reserved id; counted and logged once its
        transaction commits, like every audit row."""
        columns = tuple(values)
        batch.add(("insert_audit", columns), insert_rows(AuditRecord, columns), values)
        note_audit_row(self.db.sync_session, values)

    def record_cache_read(
        self,
        batch: WriteBatch,
        *,
        tenant_id: str,
        session_id: str,
        turn_id: str,
        step: int,
        tokens: int,
    ) -> None:
        """What the provider's cache served of the prompt of ``step`` of a turn, on that
        prompt's (accepted) audit row: the agent reports it with its next call."""
        batch.add(
            "audit_cache_read",
            update_row(
                AuditRecord,
                {
                    "tenant_id": "tenant_id",
                    "session_id": "session_id",
                    "turn_id": "turn_id",
                    "step": "step",
                    "overflow_rejected": "rejected",
                },
                ("cache_read_tokens",),
            ),
            {
                "tenant_id": tenant_id,
                "session_id": session_id,
                "turn_id": turn_id,
                "step": step,
                "rejected": False,
                "cache_read_tokens": tokens,
            },
        )

    async def get(self, audit_id: int, *, tenant_id: str) -> AuditRecord | None:
        query = select(AuditRecord).where(
            AuditRecord.id == audit_id, AuditRecord.tenant_id == tenant_id
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    async def accepted_assembly(
        self, tenant_id: str, session_id: str, turn_id: str, step: int
    ) -> AuditRecord | None:
        """The accepted assembly of one step of a turn: the prompt an agent's next report
        of usage is about."""
        query = (
            select(AuditRecord)
            .where(
                AuditRecord.tenant_id == tenant_id,
                AuditRecord.session_id == session_id,
                AuditRecord.turn_id == turn_id,
                AuditRecord.step == step,
                AuditRecord.overflow_rejected.is_(False),
            )
            .order_by(AuditRecord.id.desc())
            .limit(1)
        )
        return (await self.db.execute(query)).scalar_one_or_none()

    @staticmethod
    def list_statement(
        filters: AuditFilter, *, before_id: int | None, limit: int
    ) -> Select[AuditRecord]:
        """Newest first; ``before_id`` is the cursor. Ids only grow, so a page read after
        new rows arrived continues exactly where the previous one stopped.

        Every filter has an index that yields rows in id order (``0004_ops``), led by the
        tenant that the service scopes every list to (``0015_keys_by_session``):
        ``(tenant_id, id)``, ``(tenant_id, session_id, id)``, ``(tenant_id, model_alias,
        id)``, a partial ``(tenant_id, id)`` per flag (the flags are rare, so those stay
        small), ``turn_id`` (a turn has few rows) and ``created_at`` for the time bounds.
        A true flag is matched as the bare column so that the partial index's predicate is
        implied on both Postgres and SQLite.
        """
        query = select(AuditRecord).order_by(AuditRecord.id.desc()).limit(limit)
        if filters.session_id is not None:
            query = query.where(AuditRecord.session_id == filters.session_id)
        if filters.tenant_id is not None:
            query = query.where(AuditRecord.tenant_id == filters.tenant_id)
        if filters.model is not None:
            query = query.where(AuditRecord.model_alias == filters.model)
        if filters.turn_id is not None:
            query = query.where(AuditRecord.turn_id == filters.turn_id)
        # A time bound is also turned into an id bound (the first row written at or after
        # it, one probe of the created_at index), so that the scan in id order starts and
        # stops at the window's edges instead of filtering its way there: "one day, ten days
        # ago" would otherwise read every newer row first. Ids and times are written
        # together, so the two orders agree except for rows written within the same
        # milliseconds by racing workers, which may be left out at a bound.
        if filters.since is not None:
            query = query.where(
                AuditRecord.created_at >= filters.since,
                AuditRecord.id >= _first_id_at_or_after(filters.since),
            )
        if filters.until is not None:
            query = query.where(
                AuditRecord.created_at < filters.until,
                AuditRecord.id < func.coalesce(_first_id_at_or_after(filters.until), _NO_ID),
            )
        for flag, column in (
            (filters.summary_triggered, AuditRecord.summary_triggered),
            (filters.prune_triggered, AuditRecord.prune_triggered),
            (filters.overflow_rejected, AuditRecord.overflow_rejected),
            (filters.summary_fallback, AuditRecord.summary_fallback),
            (filters.estimator_fallback, AuditRecord.estimator_fallback),
        ):
            if flag is True:
                query = query.where(column)
            elif flag is False:
                query = query.where(~column)
        if before_id is not None:
            query = query.where(AuditRecord.id < before_id)
        return query

    async def list(
        self, filters: AuditFilter, *, before_id: int | None, limit: int
    ) -> Sequence[AuditRecord]:
        query = self.list_statement(filters, before_id=before_id, limit=limit)
        return (await self.db.execute(query)).scalars().all()

    async def explain_list(
        self, filters: AuditFilter, *, before_id: int | None, limit: int, analyze: bool = False
    ) -> Sequence[str]:
        """The database's plan for :meth:`list`, one line per row (``ANALYZE`` runs it)."""
        statement = _Explain(
            self.list_statement(filters, before_id=before_id, limit=limit), analyze=analyze
        )
        rows = (await self.db.execute(statement)).all()
        return [" | ".join(str(value) for value in row) for row in rows]

    @staticmethod
    def _of_session(tenant_id: str, session_id: str) -> tuple[ColumnElement[bool], ...]:
        return AuditRecord.tenant_id == tenant_id, AuditRecord.session_id == session_id

    async def rollup(self, tenant_id: str, session_id: str) -> RollupFigures | None:
        """Aggregates over one session's rows, read through its ``(tenant_id, session_id,
        id)`` index.
        Latency percentiles come from Postgres' ``percentile_cont``; on SQLite, which has
        none, from the same interpolation over the session's latencies."""
        accepted = ~AuditRecord.overflow_rejected
        # What the prompt handed out cost (after block caps too); rows written before that
        # column existed only have the after-prune figure.
        tokens = func.coalesce(
            AuditRecord.estimated_input_tokens, AuditRecord.estimated_input_tokens_after_prune
        )
        columns: list[Any] = [
            func.count().label("assemblies"),
            func.count(AuditRecord.turn_seq.distinct()).label("turns"),
            func.count().filter(AuditRecord.overflow_rejected).label("rejections"),
            func.count(AuditRecord.summary_id).label("summaries"),
            func.count().filter(AuditRecord.summary_triggered).label("summary_triggers"),
            func.count().filter(AuditRecord.prune_triggered).label("prunes"),
            func.count().filter(AuditRecord.summary_fallback).label("summary_fallbacks"),
            func.count().filter(AuditRecord.estimator_fallback).label("estimator_fallbacks"),
            func.min(tokens).filter(accepted).label("tokens_min"),
            func.avg(tokens).filter(accepted).label("tokens_avg"),
            func.max(tokens).filter(accepted).label("tokens_max"),
            func.max(AuditRecord.latency_ms).label("latency_max"),
            func.min(AuditRecord.created_at).label("first_at"),
            func.max(AuditRecord.created_at).label("last_at"),
            func.max(AuditRecord.id).filter(AuditRecord.overflow_rejected).label("last_rejection"),
            func.max(AuditRecord.id).label("newest_id"),
        ]
        in_database = self.db.get_bind().dialect.name == "postgresql"
        if in_database:
            columns += [
                func.percentile_cont(0.5).within_group(AuditRecord.latency_ms).label("p50"),
                func.percentile_cont(0.95).within_group(AuditRecord.latency_ms).label("p95"),
            ]
        figures = (
            (
                await self.db.execute(
                    select(*columns).where(*self._of_session(tenant_id, session_id))
                )
            )
            .one()
            ._mapping
        )
        if not figures["assemblies"]:
            return None
        if in_database:
            p50, p95 = float(figures["p50"]), float(figures["p95"])
        else:
            latencies = sorted(
                (
                    await self.db.execute(
                        select(AuditRecord.latency_ms).where(
                            *self._of_session(tenant_id, session_id)
                        )
                    )
                )
                .scalars()
                .all()
            )
            p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
        newest = await self.get(figures["newest_id"], tenant_id=tenant_id)
        assert newest is not None
        tokens_avg = figures["tokens_avg"]
        return RollupFigures(
            assemblies=figures["assemblies"],
            turns=figures["turns"],
            rejections=figures["rejections"],
            summaries=figures["summaries"],
            summary_triggers=figures["summary_triggers"],
            prunes=figures["prunes"],
            summary_fallbacks=figures["summary_fallbacks"],
            estimator_fallbacks=figures["estimator_fallbacks"],
            tokens_min=figures["tokens_min"],
            tokens_avg=None if tokens_avg is None else float(tokens_avg),
            tokens_max=figures["tokens_max"],
            latency_p50=p50,
            latency_p95=p95,
            latency_max=float(figures["latency_max"]),
            first_at=figures["first_at"],
            last_at=figures["last_at"],
            last_rejection_id=figures["last_rejection"],
            newest=newest,
        )

    async def purge_range(self, cutoff: datetime) -> PurgeRange | None:
        """How many rows are older than ``cutoff`` and between which ids (one scan of the
        ``created_at`` index)."""
        rows, first_id, last_id = (
            await self.db.execute(
                select(func.count(), func.min(AuditRecord.id), func.max(AuditRecord.id)).where(
                    AuditRecord.created_at < cutoff
                )
            )
        ).one()
        return PurgeRange(rows, first_id, last_id) if rows else None

    async def delete_older_than(self, cutoff: datetime, *, first_id: int, last_id: int) -> int:
        """Delete the rows older than ``cutoff`` among ids ``first_id..last_id``: a short
        primary-key range, so each batch holds few row locks for a short time, and never
        one that a turn (which only inserts new rows) waits for."""
        result = await self.db.execute(
            delete(AuditRecord).where(
                AuditRecord.id >= first_id,
                AuditRecord.id <= last_id,
                AuditRecord.created_at < cutoff,
            )
        )
        return int(result.rowcount)  # type: ignore[attr-defined]
