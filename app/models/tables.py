from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    JSON,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, BigId, utcnow

# Python None stored as SQL NULL, not as the JSON text "null".
NullableJSON = JSON(none_as_null=True)


class TurnStatus(StrEnum):
    OPEN = "open"
    COMPLETED = "completed"
    FAILED = "failed"


class MessageState(StrEnum):
    ACTIVE = "active"
    SUMMARISED = "summarised"
    PRUNED = "pruned"


def _session_key(table: str) -> ForeignKeyConstraint:
    """A child row belongs to one session of one tenant and goes when the session goes."""
    return ForeignKeyConstraint(
        ["tenant_id", "session_id"],
        ["sessions.tenant_id", "sessions.id"],
        name=f"fk_{table}_session_sessions",
        ondelete="CASCADE",
    )


class SessionRecord(Base):
    """One conversation, owned by one tenant. Its id is the caller's choice and unique only
    within the tenant, so that no tenant can learn that another one uses an id."""

    __tablename__ = "sessions"

    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    model: Mapped[str] = mapped_column(String(200))
    system_global: Mapped[str | None] = mapped_column(Text)
    system_mode: Mapped[str | None] = mapped_column(Text)
    system_role: Mapped[str | None] = mapped_column(Text)
    goal: Mapped[str | None] = mapped_column(Text)
    mode: Mapped[str | None] = mapped_column(String(200))
    session_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    memory: Mapped[str | None] = mapped_column(Text)
    #: Budget overrides; NULL means the model's (or the service's) default.
    max_output_tokens: Mapped[int | None]
    context_limit: Mapped[int | None]
    #: Tool (function) definitions the agent sends with every call; counted in each budget.
    tools: Mapped[list[Any] | None] = mapped_column(NullableJSON)
    #: Number of turns started; the next turn's seq is ``turn_count + 1``.
    turn_count: Mapped[int] = mapped_column(default=0)
    #: Number of messages stored; the next message's seq is ``message_count + 1``.
    message_count: Mapped[int] = mapped_column(default=0)
    #: Optional per-block token caps: {memory, summary, history, total, min_recent_messages}.
    block_caps: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    #: Automatic recall (app.budget.recall): {enabled, share, max_hits}; NULL means off.
    recall: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    #: The last prompt handed out, message by message (see budget.assembly.prompt_fingerprint),
    #: to tell whether the next one keeps it as its prefix.
    prompt_fingerprint: Mapped[list[Any] | None] = mapped_column(NullableJSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class TurnRecord(Base):
    """A user message and everything until the assistant's answer."""

    __tablename__ = "turns"
    __table_args__ = (
        # The id is unique alone; the key holds the session too (0015_keys_by_session), so
        # that a message's one foreign key, to its turn, also names its session.
        PrimaryKeyConstraint("id", "tenant_id", "session_id", name="pk_turns"),
        UniqueConstraint("tenant_id", "session_id", "seq", name="uq_turns_session_seq"),
        # Every turn start asks for the session's open turn: one entry to look at, not a
        # scan of all the session's turns.
        Index(
            "ix_turns_open",
            "tenant_id",
            "session_id",
            postgresql_where=text("status = 'open'"),
            sqlite_where=text("status = 'open'"),
        ),
        _session_key("turns"),
    )

    id: Mapped[str] = mapped_column(String(64))
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(128))
    seq: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), default=TurnStatus.OPEN)
    #: Tool steps posted so far; the turn start is step 0.
    steps: Mapped[int] = mapped_column(default=0)
    assistant_output: Mapped[str | None] = mapped_column(Text)
    usage: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    completed_at: Mapped[datetime | None]


class MessageRecord(Base):
    """A stored message. The policy never deletes one; it only changes its state."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("tenant_id", "session_id", "seq", name="uq_messages_session_seq"),
        # The one hot query: a session's active messages in order.
        Index("ix_messages_session_state_seq", "tenant_id", "session_id", "state", "seq"),
        # One parent checked per message written: its turn, which belongs to the session
        # (on SQLite, which keeps the keys it had before 0015_keys_by_session, the turn by
        # id and the session).
        ForeignKeyConstraint(
            ["turn_id", "tenant_id", "session_id"],
            ["turns.id", "turns.tenant_id", "turns.session_id"],
            name="fk_messages_turn_turns",
            ondelete="CASCADE",
            onupdate="CASCADE",
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(128))
    turn_id: Mapped[str] = mapped_column(String(64), index=True)
    #: Position in the session (1-based, gap-free).
    seq: Mapped[int]
    turn_seq: Mapped[int]
    #: The turn step that posted it (0: the turn start).
    step: Mapped[int] = mapped_column(default=0)
    role: Mapped[str] = mapped_column(String(16))
    #: A string, or a list of content parts, exactly as the agent sent it.
    content: Mapped[Any | None] = mapped_column(NullableJSON, nullable=True)
    name: Mapped[str | None] = mapped_column(String(64))
    tool_calls: Mapped[list[Any] | None] = mapped_column(NullableJSON)
    tool_call_id: Mapped[str | None] = mapped_column(String(128))
    #: An OpenAI-shaped assistant's ``reasoning_content``, exactly as sent.
    reasoning_content: Mapped[str | None] = mapped_column(Text)
    #: For a tool result: true when the tool reported a failure (Anthropic's ``is_error``).
    is_error: Mapped[bool | None]
    #: For a tool result: the seq of the assistant message whose call it answers.
    answers_seq: Mapped[int | None]
    #: Never loaded (``turn_id`` is what the code reads): it is here so that one flush
    #: writes a new turn before the messages that reference it.
    turn: Mapped[TurnRecord] = relationship(lazy="raise")
    #: Prompt tokens of this message (overhead included), counted once at write time.
    token_count: Mapped[int]
    #: The estimator that made ``token_count``; a different one means a recount.
    token_encoding: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), default=MessageState.ACTIVE)
    summary_id: Mapped[int | None] = mapped_column(
        ForeignKey("session_summaries.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MessageEmbeddingRecord(Base):
    """A message's vectors under one embedding model (see ``app.embeddings.vectors``): one per
    passage, each ``dims`` float32 of unit length, little-endian, one after the other. A
    message with no text to embed has a row with no vector, so that it is not asked for
    again. Erasing a session cascades through its messages to these."""

    __tablename__ = "message_embeddings"

    message_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(256), primary_key=True)
    dims: Mapped[int]
    vector: Mapped[bytes | None] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SummaryRecord(Base):
    """A summary covering a contiguous range of a session's messages (seed 003 §7)."""

    __tablename__ = "session_summaries"
    __table_args__ = (
        Index("ix_session_summaries_session_id_id", "tenant_id", "session_id", "id"),
        _session_key("session_summaries"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(128))
    #: The turn whose assembly made it, and that turn's number.
    turn_id: Mapped[str | None] = mapped_column(String(64))
    turn_seq: Mapped[int]
    from_message_id: Mapped[int | None] = mapped_column(BigId)
    to_message_id: Mapped[int] = mapped_column(BigId)
    from_seq: Mapped[int]
    to_seq: Mapped[int]
    summary_text: Mapped[str] = mapped_column(Text)
    #: Lists of {"text", "source_message_ids"} (and "from_user": true for the user's words).
    key_facts: Mapped[list[Any]] = mapped_column(JSON, default=list)
    open_questions: Mapped[list[Any]] = mapped_column(JSON, default=list)
    decisions: Mapped[list[Any]] = mapped_column(JSON, default=list)
    action_items: Mapped[list[Any]] = mapped_column(JSON, default=list)
    #: {"superseded": [[message id, replaced by message id], ...], "partly_held": [ids]}: the
    #: user's messages every statement of which a later one replaced (recall leaves them
    #: out), and those the summary holds only part of. NULL on summaries stored before it.
    revisions: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: The summary as it appears in prompts, and its token count.
    rendered: Mapped[str] = mapped_column(Text)
    token_count: Mapped[int]
    token_encoding: Mapped[str] = mapped_column(String(64))
    summarizer: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


#: The audit row's boolean outcomes, each with a partial index for the audit list.
AUDIT_FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)


class AuditRecord(Base):
    """One context assembly (a turn start or a step), accepted or rejected (seed 003 §10)."""

    __tablename__ = "turn_context_audit"
    __table_args__ = (
        # The audit list's filters, each in id order (migration 0004_ops explains them), led
        # by the tenant that every read is scoped to (0015_keys_by_session).
        Index("ix_turn_context_audit_tenant_id_session_id_id", "tenant_id", "session_id", "id"),
        Index("ix_turn_context_audit_created_at", "created_at"),
        Index("ix_turn_context_audit_tenant_id_id", "tenant_id", "id"),
        Index("ix_turn_context_audit_tenant_id_model_alias_id", "tenant_id", "model_alias", "id"),
        Index("ix_turn_context_audit_turn_id", "turn_id"),
        *(
            Index(
                f"ix_turn_context_audit_tenant_id_{flag}",
                "tenant_id",
                "id",
                postgresql_where=text(flag),
                sqlite_where=text(f"{flag} = 1"),
            )
            for flag in AUDIT_FLAGS
        ),
        # The flags that are not rare keep an index in id order across tenants too: for a
        # tenant holding much of the table, the planner walks the primary key instead of the
        # tenant's index, slower than this one.
        *(
            Index(
                f"ix_turn_context_audit_{flag}",
                "id",
                postgresql_where=text(flag),
                sqlite_where=text(f"{flag} = 1"),
            )
            for flag in ("summary_triggered", "prune_triggered")
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    #: Not a foreign key: the audit trail outlives a deleted session.
    session_id: Mapped[str] = mapped_column(String(128))
    tenant_id: Mapped[str] = mapped_column(String(128))
    #: NULL when a turn start was rejected: no turn came into being.
    turn_id: Mapped[str | None] = mapped_column(String(64))
    turn_seq: Mapped[int]
    step: Mapped[int]
    model_alias: Mapped[str] = mapped_column(String(200))
    model_context_limit: Mapped[int]
    input_budget: Mapped[int]
    estimated_input_tokens_before: Mapped[int]
    estimated_input_tokens_after_summary: Mapped[int]
    estimated_input_tokens_after_prune: Mapped[int]
    #: What the prompt handed out costs: after pruning and any per-block caps.
    estimated_input_tokens: Mapped[int | None]
    summary_triggered: Mapped[bool]
    #: "threshold" or "turn_count".
    summary_reason: Mapped[str | None] = mapped_column(String(16))
    #: The summariser failed and deterministic truncation stood in for it.
    summary_fallback: Mapped[bool] = mapped_column(default=False)
    summary_id: Mapped[int | None] = mapped_column(BigId)
    prune_triggered: Mapped[bool]
    overflow_rejected: Mapped[bool]
    #: Tokens per block of the assembled (or, when rejected, the best possible) prompt.
    blocks: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: What block shaping did: tokens before/after and lines or messages removed, per block.
    block_telemetry: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    kept_message_ids: Mapped[list[Any]] = mapped_column(JSON)
    summarised_message_ids: Mapped[list[Any]] = mapped_column(JSON)
    pruned_message_ids: Mapped[list[Any]] = mapped_column(JSON)
    #: The token estimator, e.g. "tiktoken:o200k_base" or "fallback:chars/4*1.25".
    estimator: Mapped[str] = mapped_column(String(64))
    estimator_fallback: Mapped[bool] = mapped_column(default=False)
    #: The calibration ratio in force (provider count / contextd's count, learnt from usage
    #: reports); the budget above is the model's input budget divided by it. 1.0: none.
    calibration_ratio: Mapped[float] = mapped_column(default=1.0)
    latency_ms: Mapped[float]
    #: Whether the prompt starts with the whole previous prompt of the session (the provider's
    #: prefix cache hits); NULL for the first prompt and for rejections.
    prefix_kept: Mapped[bool | None]
    #: When not kept: the index of the first message that changed, and why
    #: ("summary", "prune", "block_cap", "long_turn", "reasoning", "tool_images", "recall",
    #: "session_edit").
    first_changed_index: Mapped[int | None]
    change_reason: Mapped[str | None] = mapped_column(String(16))
    #: Prompt tokens of this prompt that the provider served from its cache, as the agent
    #: reported with its next call (``cache_read_input_tokens`` or ``cached_tokens``).
    cache_read_tokens: Mapped[int | None]
    #: Why it was rejected and what to do, when it was.
    rejection: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CalibrationRecord(Base):
    """How far a provider's prompt counts run from contextd's estimates, learnt from the
    usage agents report (see app.budget.calibration)."""

    __tablename__ = "token_calibration"

    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    #: The model table entry (or, for a model not in the table, its alias).
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    #: The estimator the ratio is relative to, e.g. "tiktoken:o200k_base*1.25".
    estimator: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: The smoothed ratio provider_tokens / estimated_tokens.
    ratio: Mapped[float] = mapped_column(default=1.0)
    #: Observations taken into the ratio, and observations ignored (invalid or outliers).
    samples: Mapped[int] = mapped_column(default=0)
    rejected: Mapped[int] = mapped_column(default=0)
    #: Consecutive outliers, signed by direction.
    outlier_streak: Mapped[int] = mapped_column(default=0)
    #: The latest report: its ratio and the two counts it compared.
    last_observed: Mapped[float | None]
    last_provider_tokens: Mapped[int | None]
    last_estimated_tokens: Mapped[int | None]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class SummaryJobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class SummaryJobRecord(Base):
    """A summary to make off the request path: a session's messages up to ``to_seq``.

    Durable: a job is a row before the turn that queued it returns, and a worker that dies
    while running one leaves a lease that expires, so another worker claims it again.
    """

    __tablename__ = "summary_jobs"
    __table_args__ = (
        Index("ix_summary_jobs_status_id", "status", "id"),
        Index("ix_summary_jobs_session_id_id", "tenant_id", "session_id", "id"),
        _session_key("summary_jobs"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_id: Mapped[str] = mapped_column(String(128))
    #: The turn whose assembly queued it, and that turn's number.
    turn_id: Mapped[str | None] = mapped_column(String(64))
    turn_seq: Mapped[int]
    #: "threshold" or "turn_count", as for an inline summary.
    reason: Mapped[str] = mapped_column(String(16))
    #: The covered messages: the session's eligible history from ``from_seq`` to ``to_seq``.
    from_seq: Mapped[int]
    to_seq: Mapped[int]
    status: Mapped[str] = mapped_column(String(16), default=SummaryJobStatus.QUEUED)
    #: Claims so far (a re-claim after an expired lease counts).
    attempts: Mapped[int] = mapped_column(default=0)
    #: Who holds the current claim: only that claim may finish the job.
    lease_token: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]
    #: The summary it wrote (done), or why it failed: an exception class, never error text.
    summary_id: Mapped[int | None] = mapped_column(BigId)
    failure: Mapped[str | None] = mapped_column(String(128))
    #: When an assembly took its outcome into the prompt (summary applied, or fallback made).
    applied_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class ApiKeyRecord(Base):
    """An API key: one tenant, some scopes. Only a hash of its secret is stored."""

    __tablename__ = "api_keys"

    #: The public part of the key (``ctxd_<id>_<secret>``), safe to show and log.
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128), index=True)
    #: "agent" (sessions and turns) and/or "ops" (audit and metrics).
    scopes: Mapped[list[Any]] = mapped_column(JSON)
    name: Mapped[str | None] = mapped_column(String(200))
    #: sha256 of the secret, hex.
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]


class IdempotencyRecord(Base):
    """The first answer to a request sent with an ``Idempotency-Key``, written in the same
    transaction as the request's work, so that a retry replays it instead of redoing it."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (
        Index("ix_idempotency_keys_session", "tenant_id", "session_id"),
        _session_key("idempotency_keys"),
    )

    tenant_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    #: sha256 of the method, path and body: the same key with another request is refused.
    request_hash: Mapped[str] = mapped_column(String(64))
    #: The session the request touched; erased with it (the response holds its content).
    session_id: Mapped[str] = mapped_column(String(128))
    status_code: Mapped[int]
    response: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
