"""The audit API as ops use it: filters, stable pages, a session's roll-up, and the plans
that keep the list fast on a big table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository, percentile
from app.audit.schemas import AuditFilter
from app.budget.summary import SummaryContent
from app.db import create_engine
from app.models.base import utcnow
from app.summarize import SummaryRequest
from app.tokens.registry import TokenizerRegistry
from bench.audit_data import MODELS, fill_audit_rows
from tests.conftest import RunningApp
from tests.support import audit_rows, complete_turn, create_session, start_turn
from tests.traffic import eventful_session

FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)


async def listed(client: httpx.AsyncClient, **params: Any) -> list[dict[str, Any]]:
    """Every row the list returns for ``params``, newest first, all pages."""
    rows: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, "limit": 500} if cursor is None else {**params, "before_id": cursor}
        response = await client.get("/v1/audit", params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        rows.extend(page["items"])
        cursor = page["next_before_id"]
        if cursor is None:
            return rows


async def one_turn(client: httpx.AsyncClient, session_id: str, content: str = "Hello") -> None:
    turn = await start_turn(client, session_id, content)
    await complete_turn(client, session_id, turn["turn_id"], "Hi")


async def test_the_list_filters_by_model(client: httpx.AsyncClient) -> None:
    small = (await create_session(client, model="gpt-4"))["id"]
    large = (await create_session(client, model="gpt-4o"))["id"]
    for session_id in (small, large, large):
        await one_turn(client, session_id)

    rows = await listed(client, model="gpt-4o")

    assert [r["session_id"] for r in rows] == [large, large]
    assert {r["model_alias"] for r in rows} == {"gpt-4o"}


async def test_the_list_filters_by_tenant(client: httpx.AsyncClient) -> None:
    session_id = (await create_session(client))["id"]
    await one_turn(client, session_id)

    assert [r["session_id"] for r in await listed(client, tenant_id="default")] == [session_id]
    assert await listed(client, tenant_id="someone-else") == []


async def test_the_list_filters_by_policy_flags(client: httpx.AsyncClient) -> None:
    session_id = await eventful_session(client)
    every = await listed(client, session_id=session_id)

    for flag in ("summary_triggered", "prune_triggered", "overflow_rejected"):
        flagged = await listed(client, session_id=session_id, **{flag: "true"})
        unflagged = await listed(client, session_id=session_id, **{flag: "false"})
        assert flagged, f"the scripted session sets {flag}"
        assert [r["id"] for r in flagged] == [r["id"] for r in every if r[flag]]
        assert [r["id"] for r in unflagged] == [r["id"] for r in every if not r[flag]]


class FailingSummarizer:
    name = "failing"

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        raise RuntimeError("the provider is down")


def _offline_loader(name: str) -> Any:
    raise OSError(f"cannot download {name}: no network")


async def test_the_list_filters_by_fallbacks(apps: RunningApp) -> None:
    # Summaries every 2 turns, by a summariser that always fails: each is a fallback.
    _, degraded = await apps.start(
        summarizer=FailingSummarizer(),
        mandatory_summary_turns=2,
        protected_window_turns=1,
    )
    _, offline = await apps.start(tokenizers=TokenizerRegistry(_offline_loader))
    degraded_session = (await create_session(degraded))["id"]
    offline_session = (await create_session(offline))["id"]
    for _ in range(4):
        await one_turn(degraded, degraded_session)
    await one_turn(offline, offline_session)

    summary_fallbacks = await listed(degraded, summary_fallback="true")
    estimator_fallbacks = await listed(degraded, estimator_fallback="true")

    assert summary_fallbacks
    assert {r["session_id"] for r in summary_fallbacks} == {degraded_session}
    assert all(r["summary_triggered"] and r["summary_id"] is None for r in summary_fallbacks)
    assert [r["session_id"] for r in estimator_fallbacks] == [offline_session]
    assert len(await listed(degraded, summary_fallback="false")) == 5 - len(summary_fallbacks)


async def test_the_list_filters_by_time_range_reading_naive_times_as_utc(
    client: httpx.AsyncClient,
) -> None:
    session_id = (await create_session(client))["id"]
    for index in range(4):
        await one_turn(client, session_id, f"Message {index}")
    every = await listed(client)
    boundary = datetime.fromisoformat(every[1]["created_at"])
    naive = boundary.replace(tzinfo=None).isoformat()

    since = await listed(client, since=boundary.isoformat())
    until = await listed(client, until=naive)

    assert [r["id"] for r in since] == [r["id"] for r in every[:2]]
    assert [r["id"] for r in until] == [r["id"] for r in every[2:]]
    later = (boundary + timedelta(days=1)).isoformat()
    assert await listed(client, since=later) == []


async def test_pages_stay_stable_while_new_rows_arrive(client: httpx.AsyncClient) -> None:
    session_id = (await create_session(client))["id"]
    for index in range(5):
        await one_turn(client, session_id, f"Before {index}")
    before = await listed(client)

    first = (await client.get("/v1/audit", params={"limit": 2})).json()
    for index in range(3):
        await one_turn(client, session_id, f"Between pages {index}")
    pages = [first]
    while pages[-1]["next_before_id"] is not None:
        params = {"limit": 2, "before_id": pages[-1]["next_before_id"]}
        pages.append((await client.get("/v1/audit", params=params)).json())
        await one_turn(client, session_id, "While paging")

    paged = [row["id"] for page in pages for row in page["items"]]
    assert paged == [row["id"] for row in before]
    assert len(await listed(client)) == len(before) + 3 + (len(pages) - 1)


async def test_the_rollup_sums_up_a_session(client: httpx.AsyncClient) -> None:
    session_id = await eventful_session(client)
    other = (await create_session(client))["id"]
    await one_turn(client, other)
    rows = await audit_rows(client, session_id)
    accepted = [r["estimated_input_tokens_after_prune"] for r in rows if not r["overflow_rejected"]]
    latencies = sorted(r["latency_ms"] for r in rows)

    response = await client.get("/v1/audit/rollup", params={"session_id": session_id})

    assert response.status_code == 200, response.text
    rollup = response.json()
    assert rollup == {
        "session_id": session_id,
        "tenant_id": "default",
        "model_alias": "gpt-4",
        "first_at": rows[0]["created_at"],
        "last_at": rows[-1]["created_at"],
        "assemblies": len(rows),
        "turns": 11,
        "rejections": 1,
        "summaries": sum(r["summary_id"] is not None for r in rows),
        "summary_triggers": sum(r["summary_triggered"] for r in rows),
        "prunes": sum(r["prune_triggered"] for r in rows),
        "summary_fallbacks": 0,
        "estimator_fallbacks": 0,
        "prompt_tokens": {
            "min": min(accepted),
            "avg": pytest.approx(sum(accepted) / len(accepted)),
            "max": max(accepted),
        },
        "latency_ms": {
            "p50": pytest.approx(percentile(latencies, 0.5)),
            "p95": pytest.approx(percentile(latencies, 0.95)),
            "max": pytest.approx(latencies[-1]),
        },
        "last_rejection_id": rows[-1]["id"],
    }
    assert rollup["summaries"] > 0
    assert rollup["prunes"] > 0


async def test_the_rollup_of_a_session_without_audit_rows_is_not_found(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/v1/audit/rollup", params={"session_id": "never-seen"})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "audit_not_found"


def test_percentile_interpolates_between_ranks_like_percentile_cont() -> None:
    assert percentile([1.0], 0.95) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([10.0, 20.0, 30.0, 40.0, 50.0], 0.95) == pytest.approx(48.0)


POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@POSTGRES_ONLY
async def test_the_filtered_list_reads_through_indexes_on_a_big_table(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await fill_audit_rows(connection, 40_000, rows_per_session=200)
            await connection.execute(text("ANALYZE turn_context_audit"))
        now = utcnow()
        queries = {
            "newest": AuditFilter(),
            "session": AuditFilter(session_id="bench-17"),
            "tenant": AuditFilter(tenant_id="tenant-3"),
            "model": AuditFilter(model=MODELS[2]),
            "turn": AuditFilter(turn_id="turn-4242"),
            "last hour": AuditFilter(since=now - timedelta(hours=1)),
            "a day, ten days ago": AuditFilter(
                since=now - timedelta(days=11), until=now - timedelta(days=10)
            ),
            "tenant and rejected": AuditFilter(tenant_id="tenant-1", overflow_rejected=True),
            **{flag: AuditFilter(**{flag: True}) for flag in FLAGS},
        }
        plans: dict[str, str] = {}
        async with AsyncSession(engine) as db:
            repository = AuditRepository(db)
            for name, filters in queries.items():
                lines = await repository.explain_list(filters, before_id=None, limit=51)
                plans[name] = "\n".join(lines)
            second_page = await repository.explain_list(
                AuditFilter(session_id="bench-17"), before_id=3_500, limit=51
            )
            plans["session, second page"] = "\n".join(second_page)
    finally:
        await engine.dispose()

    for name, plan in plans.items():
        assert "Seq Scan" not in plan, f"{name}:\n{plan}"
        assert "Index" in plan, f"{name}:\n{plan}"


@POSTGRES_ONLY
async def test_a_small_tenants_filtered_page_reads_only_its_own_rows(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            # 40 tenants of skewed sizes: the largest holds ~29% of the rows, the smallest <1%.
            await fill_audit_rows(connection, 40_000, rows_per_session=200, tenants=40)
            await connection.execute(text("ANALYZE turn_context_audit"))
            smallest, session = (
                await connection.execute(
                    text(
                        "SELECT tenant_id, min(session_id) FROM turn_context_audit "
                        "GROUP BY tenant_id ORDER BY count(*) LIMIT 1"
                    )
                )
            ).one()
        # As the audit service asks: every list is scoped to the caller's tenant.
        queries = {
            "no filter": AuditFilter(tenant_id=smallest),
            "session": AuditFilter(tenant_id=smallest, session_id=session),
            "model": AuditFilter(tenant_id=smallest, model=MODELS[2]),
            **{flag: AuditFilter(tenant_id=smallest, **{flag: True}) for flag in FLAGS},
        }
        buffers: dict[str, int] = {}
        async with AsyncSession(engine) as db:
            repository = AuditRepository(db)
            for name, filters in queries.items():
                plan = await repository.explain_list(
                    filters, before_id=None, limit=51, analyze=True
                )
                assert "Seq Scan" not in "\n".join(plan), f"{name}:\n" + "\n".join(plan)
                buffers[name] = root_buffers(plan)
    finally:
        await engine.dispose()

    # A page of 51 rows at most: an index led by the tenant reads about that many pages; a
    # walk through every tenant's flagged rows read hundreds to thousands.
    assert max(buffers.values()) <= 100, buffers


def root_buffers(plan: Sequence[str]) -> int:
    """The shared buffers the whole plan touched: its top node's ``Buffers:`` line."""
    for line in plan:
        if "Buffers:" in line:
            return sum(int(n) for n in re.findall(r"(?:hit|read)=(\d+)", line))
    raise AssertionError("no buffers in the plan:\n" + "\n".join(plan))
