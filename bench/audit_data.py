"""Synthetic audit rows, written by Postgres itself (``generate_series``): a million in
seconds, with the spread of a busy deployment.

Rows are ``days`` of history ending now, in id order; sessions of ``rows_per_session`` rows
each, spread over 5 tenants (or ``tenants``, of skewed sizes: see :func:`fill_audit_rows`)
and 6 models. Flags are rare, as they are in real traffic:
summaries 1 in 7 assemblies, prunes 1 in 13, rejections 1 in 211, summariser fallbacks
1 in 499, estimator fallbacks 1 in 997.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.models.base import utcnow

MODELS = ("gpt-4o", "gpt-4", "claude-3-5-sonnet", "llama-3.1-70b", "gpt-4.1", "mistral-large")
TENANTS = 5

_FILL = """
    INSERT INTO turn_context_audit (
        session_id, tenant_id, turn_id, turn_seq, step, model_alias,
        model_context_limit, input_budget, estimated_input_tokens_before,
        estimated_input_tokens_after_summary, estimated_input_tokens_after_prune,
        summary_triggered, summary_reason, summary_fallback, summary_id, prune_triggered,
        overflow_rejected, blocks, kept_message_ids, summarised_message_ids,
        pruned_message_ids, estimator, estimator_fallback, latency_ms, rejection, created_at)
    SELECT
        'bench-' || (g / :rows_per_session),
        {tenant},
        'turn-' || (g / 2),
        (g % :rows_per_session) / 2 + 1,
        g % 2,
        (CAST(:models AS text[]))[(g / :rows_per_session) % :model_count + 1],
        128000,
        119552,
        2000 + (g * 7919) % 110000,
        2000 + (g * 7919) % 90000,
        2000 + (g * 7919) % 80000,
        g % 7 = 0,
        CASE WHEN g % 7 = 0 THEN 'threshold' END,
        g % 499 = 0,
        CASE WHEN g % 7 = 0 AND g % 499 <> 0 THEN g END,
        g % 13 = 0,
        g % 211 = 0,
        '{"system": 40, "goal": 12, "history": 1800, "current": 90}'::json,
        '[1, 2, 3]'::json,
        '[]'::json,
        '[]'::json,
        'tiktoken:o200k_base',
        g % 997 = 0,
        3 + (g * 31) % 400 / 10.0,
        CASE WHEN g % 211 = 0
             THEN '{"estimated_input_tokens": 130000, "input_budget": 119552}'::json END,
        CAST(:start AS timestamptz) + (g * CAST(:step AS interval))
    FROM generate_series(CAST(:first AS bigint), CAST(:last AS bigint)) AS g
    """
#: Sessions dealt to the tenants in turn: every tenant the same size.
_EVEN = text(_FILL.replace("{tenant}", "'tenant-' || ((g / :rows_per_session) % :tenants)"))
#: A session's tenant drawn from a power law by a hash of the session: with 40 tenants,
#: tenant-0 holds about 29% of the rows and tenant-39 under 1%, as a few large customers
#: and many small ones would.
_SKEWED = text(
    _FILL.replace(
        "{tenant}",
        "'tenant-' || floor(:tenants * power("
        "((g / :rows_per_session) * 2654435761 % 1000003) / 1000003.0, 3))::int",
    )
)


async def fill_audit_rows(
    connection: AsyncConnection,
    rows: int,
    *,
    days: float = 30,
    rows_per_session: int = 200,
    batch: int = 250_000,
    tenants: int | None = None,
) -> None:
    """Insert ``rows`` synthetic audit rows (Postgres only), in batches of ``batch``; with
    ``tenants``, over that many tenants of skewed sizes instead of 5 of the same size."""
    start = utcnow() - timedelta(days=days)
    step = timedelta(days=days) / rows
    for first in range(1, rows + 1, batch):
        await connection.execute(
            _EVEN if tenants is None else _SKEWED,
            {
                "first": first,
                "last": min(rows, first + batch - 1),
                "rows_per_session": rows_per_session,
                "tenants": TENANTS if tenants is None else tenants,
                "models": list(MODELS),
                "model_count": len(MODELS),
                "start": start,
                "step": step,
            },
        )
