from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class AuditFilter(BaseModel):
    """Which audit rows to read. Every condition is optional; given ones all apply."""

    session_id: str | None = None
    tenant_id: str | None = None
    model: str | None = Field(default=None, description="the session's model alias, exactly")
    turn_id: str | None = None
    since: datetime | None = Field(default=None, description="created_at ≥ since (UTC if no zone)")
    until: datetime | None = Field(default=None, description="created_at < until (UTC if no zone)")
    summary_triggered: bool | None = None
    prune_triggered: bool | None = None
    overflow_rejected: bool | None = None
    summary_fallback: bool | None = Field(
        default=None, description="the summariser failed and truncation stood in"
    )
    estimator_fallback: bool | None = Field(
        default=None, description="counted with the chars/4 fallback, no tokenizer loaded"
    )

    @field_validator("since", "until")
    @classmethod
    def _utc_when_naive(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        try:
            # Compared with UTC timestamps: a bound whose UTC instant falls outside the
            # calendar (year 0 or 10000) cannot be compared, so it is refused here.
            return value.astimezone(UTC)
        except OverflowError:
            raise ValueError("the time, moved to UTC, falls outside years 1 to 9999") from None


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
    #: Prompt tokens of this prompt the provider's cache served, as the agent reported them
    #: with its next call (null until then, or when it reports none).
    cache_read_tokens: int | None = None
    rejection: dict[str, Any] | None
    created_at: datetime


class AuditPage(BaseModel):
    items: list[AuditOut]
    #: Pass as ``before_id`` for the next (older) page; null at the end.
    next_before_id: int | None


class TokenStats(BaseModel):
    """Estimated input tokens of the session's accepted prompts (null: none accepted)."""

    min: int | None
    avg: float | None
    max: int | None


class LatencyStats(BaseModel):
    """Assembly latency in milliseconds, over every assembly of the session."""

    p50: float
    p95: float
    max: float


class AuditRollup(BaseModel):
    """A session's assemblies at a glance: how often the policy acted, and what it cost."""

    session_id: str
    tenant_id: str
    #: The model alias of the newest assembly.
    model_alias: str
    first_at: datetime
    last_at: datetime
    #: Every assembly (turn starts and steps), rejected ones included.
    assemblies: int
    #: Distinct turns that had at least one assembly (a rejected start counts).
    turns: int
    rejections: int
    #: Summaries stored, and assemblies whose summary trigger fired (stored or not).
    summaries: int
    summary_triggers: int
    prunes: int
    summary_fallbacks: int
    estimator_fallbacks: int
    prompt_tokens: TokenStats
    latency_ms: LatencyStats
    #: The newest rejection's audit row, to read why (``GET /v1/audit/{id}``).
    last_rejection_id: int | None
