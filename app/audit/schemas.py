from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


class AuditOut(BaseModel):
    """One context assembly, as seed 003 §10 records it, plus what explains the outcome."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    session_id: str
    tenant_id: str
    turn_id: str | None
    turn_seq: int
    step: int
    model_alias: str
    model_context_limit: int
    input_budget: int
    estimated_input_tokens_before: int
    estimated_input_tokens_after_summary: int
    estimated_input_tokens_after_prune: int
    estimated_input_tokens: int | None
    summary_triggered: bool
    summary_reason: str | None
    summary_fallback: bool
    summary_id: int | None
    prune_triggered: bool
    overflow_rejected: bool
    blocks: dict[str, int]
    block_telemetry: dict[str, Any] | None
    kept_message_ids: list[int]
    summarised_message_ids: list[int]
    pruned_message_ids: list[int]
    estimator: str
    estimator_fallback: bool
    #: The calibration ratio in force (1.0: none); ``input_budget`` is already divided by it.
    calibration_ratio: float
    latency_ms: float
    prefix_kept: bool | None
    first_changed_index: int | None
    change_reason: str | None
    rejection: dict[str, Any] | None
    created_at: datetime


class AuditPage(BaseModel):
    items: list[AuditOut]
    #: Pass as ``before_id`` for the next (older) page; null at the end.
    next_before_id: int | None
