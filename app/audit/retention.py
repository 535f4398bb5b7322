"""Audit retention: rows older than a cutoff go, a short transaction per batch.

Turns only ever insert new audit rows, and a batch deletes a short range of old ids, so a
purge never holds a lock a turn waits for (on SQLite, turns wait at most one batch). Every
batch is its own unit of work; purges running at once in several workers are harmless (the
second finds the rows gone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.repository import AuditRepository
from app.models.base import utcnow

logger = logging.getLogger(__name__)

#: Called after each batch with (rows deleted so far, rows to delete in all).
Progress = Callable[[int, int], None]


async def purge_audit(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    cutoff: datetime,
    batch_size: int,
    on_progress: Progress | None = None,
) -> int:
    """Delete every audit row created before ``cutoff``, ``batch_size`` ids at a time;
    returns how many went."""
    async with sessionmaker() as db:
        span = await AuditRepository(db).purge_range(cutoff)
    if span is None:
        return 0
    deleted = 0
    for first_id in range(span.first_id, span.last_id + 1, batch_size):
        last_id = min(first_id + batch_size - 1, span.last_id)
        async with sessionmaker.begin() as db:
            deleted += await AuditRepository(db).delete_older_than(
                cutoff, first_id=first_id, last_id=last_id
            )
        if on_progress is not None:
            on_progress(deleted, span.rows)
    return deleted


def retention_cutoff(retention_days: int) -> datetime:
    return utcnow() - timedelta(days=retention_days)


async def purge_periodically(
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    retention_days: int,
    interval_seconds: float,
    batch_size: int,
) -> None:
    """Purge now, then every ``interval_seconds``, until cancelled. A failed pass is logged
    and retried at the next interval: retention must never take the service down."""
    while True:
        try:
            deleted = await purge_audit(
                sessionmaker, cutoff=retention_cutoff(retention_days), batch_size=batch_size
            )
        except Exception:
            logger.exception("audit purge failed; retrying in %.0f s", interval_seconds)
        else:
            if deleted:
                logger.info(
                    "purged audit rows older than the retention period",
                    extra={"deleted_rows": deleted, "retention_days": retention_days},
                )
        await asyncio.sleep(interval_seconds)
