"""What an audit row tells the rest of the service.

- Once committed, it is counted in the by-model metrics and names the request's tenant,
  session and turn in the request's log line. Counting at commit, from the row itself, is
  what keeps those counters equal to the audit table: a rolled-back row is never counted.
- While the assembly runs, the budget telemetry of seed 000 §6 (tokens per block before and
  after the policy) goes to the ``contextd.budget`` logger at debug level.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session, UOWTransaction

from app.logs import bind_request
from app.metrics import Metrics
from app.models import AuditRecord

budget_logger = logging.getLogger("contextd.budget")

_FLUSHED = "contextd.flushed_audit_rows"


def log_budget_telemetry(
    audit: Mapping[str, Any], *, blocks_before: Mapping[str, int], fits: bool
) -> None:
    """Debug-level: tokens per block before and after summarising and pruning, the totals
    at each stage, what the policy did, and whether the estimator fell back."""
    if not budget_logger.isEnabledFor(logging.DEBUG):
        return
    blocks_after: Mapping[str, int] = audit["blocks"]
    names = [*blocks_before, *(name for name in blocks_after if name not in blocks_before)]
    budget_logger.debug(
        "budget telemetry",
        extra={
            "session": audit["session_id"],
            "turn_seq": audit["turn_seq"],
            "step": audit["step"],
            "budget": {
                "model": audit["model_alias"],
                "input_budget": audit["input_budget"],
                "tokens_before": audit["estimated_input_tokens_before"],
                "tokens_after_summary": audit["estimated_input_tokens_after_summary"],
                "tokens_after_prune": audit["estimated_input_tokens_after_prune"],
                "blocks": {
                    name: {
                        "before": blocks_before.get(name, 0),
                        "after": blocks_after.get(name, 0),
                    }
                    for name in names
                },
                "summary_triggered": audit["summary_triggered"],
                "summary_reason": audit["summary_reason"],
                "summary_fallback": audit["summary_fallback"],
                "prune_triggered": audit["prune_triggered"],
                "fits": fits,
                "estimator": audit["estimator"],
                "estimator_fallback": audit["estimator_fallback"],
            },
        },
    )


#: What publishing an audit row reads of it.
_PUBLISHED = (
    "id",
    "tenant_id",
    "session_id",
    "turn_id",
    "turn_seq",
    "step",
    "model_alias",
    "overflow_rejected",
    "summary_triggered",
    "prune_triggered",
    "summary_fallback",
    "estimator_fallback",
)


def note_audit_row(session: Session, row: Mapping[str, Any]) -> None:
    """An audit row written in ``session``'s transaction, to publish when it commits."""
    session.info.setdefault(_FLUSHED, []).append(row)


def watch_audit_rows(session_class: type[Session], metrics: Metrics) -> None:
    """Count and name every audit row committed through sessions of ``session_class``."""

    def collect(session: Session, _flush: UOWTransaction) -> None:
        # after_flush still shows what was new before the flush.
        for item in session.new:
            if isinstance(item, AuditRecord):
                note_audit_row(session, {name: getattr(item, name) for name in _PUBLISHED})

    def publish(session: Session) -> None:
        rows: list[Mapping[str, Any]] = session.info.pop(_FLUSHED, [])
        for row in rows:
            metrics.observe_audit_row(
                model_alias=row["model_alias"],
                overflow_rejected=row["overflow_rejected"],
                summary_triggered=row["summary_triggered"],
                prune_triggered=row["prune_triggered"],
                summary_fallback=row["summary_fallback"],
                estimator_fallback=row["estimator_fallback"],
            )
        if rows:
            newest = rows[-1]
            bind_request(
                tenant=newest["tenant_id"],
                session=newest["session_id"],
                turn=newest["turn_id"],
                turn_seq=newest["turn_seq"],
                step=newest["step"],
                audit_id=newest["id"],
            )

    def forget(session: Session) -> None:
        session.info.pop(_FLUSHED, None)

    event.listen(session_class, "after_flush", collect)
    event.listen(session_class, "after_commit", publish)
    event.listen(session_class, "after_rollback", forget)
