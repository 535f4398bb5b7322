"""The API's request and response shapes, as typed dictionaries.

Answers are plain JSON objects, so they pass straight to an LLM SDK (``prompt["messages"]``)
and a field the service adds later never breaks an older client; the types give editors and
type checkers the keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict

PromptFormat = Literal["openai", "anthropic"]
TurnStatus = Literal["completed", "failed"]


class FunctionCall(TypedDict):
    name: str
    arguments: str


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class ToolResult(TypedDict):
    tool_call_id: str
    content: str | list[dict[str, Any]]


class Usage(TypedDict, total=False):
    """What the provider reported for the LLM call; other provider fields are kept."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    #: Anthropic: prompt tokens read from, and written to, the prompt cache.
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    #: OpenAI: ``{"cached_tokens": …}``.
    prompt_tokens_details: dict[str, Any]


#: An assistant's content: text, or parts (text, and thinking blocks sent back unchanged).
AssistantContent = str | Sequence[Mapping[str, Any]] | None


class BudgetReport(TypedDict):
    model_context_limit: int
    input_budget: int
    estimated_input_tokens: int
    blocks: dict[str, int]
    estimator: str
    calibration_ratio: float


class Actions(TypedDict):
    summary_triggered: bool
    summary_reason: str | None
    summary_fallback: bool
    summary_queued: bool
    prune_triggered: bool
    summarised_message_ids: list[int]
    pruned_message_ids: list[int]


class Prompt(TypedDict):
    """The next prompt: ``messages`` go to an OpenAI-compatible chat API as they are."""

    turn_id: str
    step: int
    format: PromptFormat
    #: With format "anthropic": the system prompt for Anthropic's Messages API, as text blocks
    #: (the last one marked as a cache breakpoint).
    system: str | list[dict[str, Any]] | None
    #: Chat messages (``role``, ``content``, ``tool_calls``, ``tool_call_id``). Typed loosely
    #: on purpose: each LLM SDK declares its own message types, and these pass to any of them.
    messages: list[Any]
    budget: BudgetReport
    actions: Actions
    audit_id: int


class SessionBudget(TypedDict):
    model_context_limit: int
    output_reserve: int
    overhead_reserve: int
    input_budget: int
    estimator: str
    calibration_ratio: float


class Session(TypedDict):
    id: str
    tenant_id: str
    model: str
    #: The instruction layers: "global", "mode", "role".
    system: dict[str, str | None]
    goal: str | None
    mode: str | None
    metadata: dict[str, Any]
    memory: str | None
    tools: list[dict[str, Any]] | None
    max_output_tokens: int | None
    context_limit: int | None
    block_caps: dict[str, Any] | None
    #: Automatic recall: {"enabled", "share", "max_hits", "ceiling"}; None when off.
    recall: dict[str, Any] | None
    budget: SessionBudget
    turn_count: int
    message_count: int
    open_turn_id: str | None
    created_at: str
    updated_at: str


class Turn(TypedDict):
    id: str
    session_id: str
    seq: int
    status: str
    steps: int
    assistant_output: str | None
    usage: dict[str, Any] | None
    started_at: str
    completed_at: str | None


class StoredMessage(TypedDict):
    id: int
    seq: int
    turn_id: str
    turn_seq: int
    step: int
    role: str
    content: Any
    name: str | None
    tool_calls: list[ToolCall] | None
    tool_call_id: str | None
    #: An OpenAI-shaped assistant's reasoning, as it was sent.
    reasoning_content: str | None
    token_count: int
    token_encoding: str
    #: "active", "summarised" or "pruned"
    state: str
    summary_id: int | None
    created_at: str


class MessagePage(TypedDict):
    messages: list[StoredMessage]
    #: Pass as ``after_seq`` to read the next page; None at the end.
    next_after_seq: int | None


class SearchHit(TypedDict):
    message_id: int
    seq: int
    turn_id: str
    turn_seq: int
    role: str
    #: "active", "summarised" or "pruned"
    state: str
    #: Higher is better; comparable within one answer only.
    score: float
    #: The matching passage, matched words between ``**``.
    snippet: str


class SearchResult(TypedDict):
    query: str
    #: "full_text", or "hybrid" when the service's embeddings ranked by meaning too.
    ranking: Literal["full_text", "hybrid"]
    hits: list[SearchHit]


class SummaryItem(TypedDict):
    text: str
    source_message_ids: list[int]
    #: The user's own words about themselves or their work (kept ahead of everything else).
    from_user: NotRequired[bool]


class Summary(TypedDict):
    id: int
    session_id: str
    turn_id: str | None
    turn_seq: int
    from_message_id: int | None
    to_message_id: int
    summary_text: str
    key_facts: list[SummaryItem]
    decisions: list[SummaryItem]
    open_questions: list[SummaryItem]
    action_items: list[SummaryItem]
    rendered: str
    token_count: int
    summarizer: str
    created_at: str


class SummaryList(TypedDict):
    summaries: list[Summary]


class TrimResult(TypedDict):
    messages: list[dict[str, Any]]
    #: Pass back as ``trimmed_up_to_message_index`` on the next call: the cache-stable boundary.
    trimmed_up_to_message_index: int
    estimated_tokens_before: int
    estimated_tokens_after: int
    threshold_tokens: int
    input_budget: int
    within_threshold: bool
    estimator: str


class TruncateResult(TypedDict):
    messages: list[dict[str, Any]]
    removed: int


class SummaryJob(TypedDict):
    """An LLM summary made off the request path."""

    id: int
    session_id: str
    turn_id: str | None
    turn_seq: int
    reason: str
    from_seq: int
    to_seq: int
    #: "queued", "running", "done", "failed", …
    status: str
    attempts: int
    lease_expires_at: str | None
    heartbeat_at: str | None
    summary_id: int | None
    failure: str | None
    applied_at: str | None
    created_at: str
    finished_at: str | None


class SummaryJobList(TypedDict):
    jobs: list[SummaryJob]


class AuditEntry(TypedDict):
    """One context assembly (a turn's start or a step), rejected ones included."""

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
    #: The accepted prompt's tokens; None when the assembly was rejected.
    estimated_input_tokens: int | None
    summary_triggered: bool
    summary_reason: str | None
    summary_fallback: bool
    summary_id: int | None
    prune_triggered: bool
    overflow_rejected: bool
    #: Tokens per block of the prompt (system, goal, memory, summary, history, current, …).
    blocks: dict[str, int]
    block_telemetry: dict[str, Any] | None
    kept_message_ids: list[int]
    summarised_message_ids: list[int]
    pruned_message_ids: list[int]
    estimator: str
    estimator_fallback: bool
    calibration_ratio: float
    latency_ms: float
    prefix_kept: bool | None
    first_changed_index: int | None
    change_reason: str | None
    cache_read_tokens: int | None
    #: Why the assembly was rejected and what to do, when it was.
    rejection: dict[str, Any] | None
    created_at: str


class AuditPage(TypedDict):
    items: list[AuditEntry]
    #: Pass as ``before_id`` for the next (older) page; None at the end.
    next_before_id: int | None


class TokenStats(TypedDict):
    min: int | None
    avg: float | None
    max: int | None


class LatencyStats(TypedDict):
    p50: float
    p95: float
    max: float


class AuditRollup(TypedDict):
    """A session's assemblies at a glance."""

    session_id: str
    tenant_id: str
    model_alias: str
    first_at: str
    last_at: str
    assemblies: int
    turns: int
    rejections: int
    summaries: int
    summary_triggers: int
    prunes: int
    summary_fallbacks: int
    estimator_fallbacks: int
    prompt_tokens: TokenStats
    latency_ms: LatencyStats
    #: The newest rejection's audit id, to read why (``get_audit``).
    last_rejection_id: int | None


CountingMethod = Literal["exact", "tokenizer", "proxy", "fallback"]


class Calibration(TypedDict):
    """What usage reports have taught the service about a model's counts."""

    ratio: float
    learnt_ratio: float | None
    samples: int
    rejected: int
    updated_at: str | None


class CountBreakdown(TypedDict):
    messages: int
    tools: int


class TokenCount(TypedDict):
    model: str
    input_tokens: int
    method: CountingMethod
    encoding: str
    calibration: Calibration
    #: ``input_tokens`` times the calibration ratio: what the provider is expected to count.
    calibrated_input_tokens: int
    breakdown: CountBreakdown
    notes: list[str]


class ModelInfo(TypedDict):
    name: str
    family: str
    #: "builtin", "operator" or "default" (an unknown name).
    source: str
    context_limit: int
    max_output_tokens: int | None
    method: CountingMethod
    encoding: str
    safety_factor: float
    calibration: Calibration


class ModelList(TypedDict):
    models: list[ModelInfo]
