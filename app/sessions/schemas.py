from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.budget.recall import DEFAULT_CEILING, DEFAULT_MAX_HITS, DEFAULT_SHARE
from app.limits import shallow_json
from app.tokens.schemas import ToolDefinition

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"

#: Free-form metadata: any JSON object, not nested past the service's limit.
Metadata = Annotated[dict[str, Any], AfterValidator(shallow_json)]


class _Input(BaseModel):
    # An unknown field is a typo the agent wants to hear about, not to have ignored.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SystemLayers(_Input):
    """The layered system instructions, in the order they are shown."""

    global_: str | None = Field(default=None, alias="global", max_length=200_000)
    mode: str | None = Field(default=None, max_length=200_000)
    role: str | None = Field(default=None, max_length=200_000)


class BlockCaps(_Input):
    """Optional token caps per prompt block. Over the total, history goes first (oldest
    first, never the newest ``min_recent_messages``), then the summary, then memory."""

    memory: int | None = Field(default=None, gt=0)
    summary: int | None = Field(default=None, gt=0)
    history: int | None = Field(default=None, ge=0)
    total: int | None = Field(default=None, gt=0)
    min_recent_messages: int = Field(default=2, ge=0)
    #: One tool result's cap in the prompt, as a share of the input budget: a result over it
    #: shows its head and tail, the whole stays stored (default: the service's setting).
    tool_result_share: float | None = Field(default=None, gt=0, le=1)


class RecallSettings(_Input):
    """Automatic recall: on each turn, messages that left the prompt (summarised or pruned)
    and match the user's message come back in a ``recall`` block before the current turn."""

    enabled: bool = True
    #: The share of the input budget the block may take wherever the prompt stands (when
    #: the prompt leaves that much).
    share: float = Field(default=DEFAULT_SHARE, gt=0, le=0.5)
    #: How full the prompt with its block may be when that gives the block more than its
    #: share: after a summary or a prune the prompt often sits far below its budget. 0 keeps
    #: the block within its share.
    ceiling: float = Field(default=DEFAULT_CEILING, ge=0, le=0.9)
    #: The most messages it may bring back.
    max_hits: int = Field(default=DEFAULT_MAX_HITS, ge=1, le=100)


class MemoryUpdate(_Input):
    """The session's pinned memory, shown after the goal and before the summary."""

    memory: str | None = Field(max_length=200_000)


class SessionCreate(_Input):
    id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    model: str = Field(min_length=1, max_length=200)
    system: SystemLayers = Field(default_factory=SystemLayers)
    goal: str | None = Field(default=None, max_length=50_000)
    mode: str | None = Field(default=None, max_length=200)
    metadata: Metadata = Field(default_factory=dict)
    memory: str | None = Field(default=None, max_length=200_000)
    #: The tool definitions the agent sends with every LLM call, so that budgets count them.
    tools: list[ToolDefinition] | None = Field(default=None, max_length=1024)
    max_output_tokens: int | None = Field(default=None, gt=0, le=10_000_000, strict=True)
    context_limit: int | None = Field(default=None, gt=0, le=100_000_000, strict=True)
    block_caps: BlockCaps | None = None
    recall: RecallSettings | None = None


class SessionUpdate(_Input):
    """Fields to change; a field sent as null is cleared, a field left out is kept."""

    model: str | None = Field(default=None, min_length=1, max_length=200)
    system: SystemLayers | None = None
    goal: str | None = Field(default=None, max_length=50_000)
    mode: str | None = Field(default=None, max_length=200)
    metadata: Metadata | None = None
    memory: str | None = Field(default=None, max_length=200_000)
    tools: list[ToolDefinition] | None = Field(default=None, max_length=1024)
    max_output_tokens: int | None = Field(default=None, gt=0, le=10_000_000, strict=True)
    context_limit: int | None = Field(default=None, gt=0, le=100_000_000, strict=True)
    block_caps: BlockCaps | None = None
    recall: RecallSettings | None = None


class BudgetOut(BaseModel):
    model_context_limit: int
    output_reserve: int
    overhead_reserve: int
    input_budget: int
    estimator: str
    #: The calibration ratio in force; ``input_budget`` is already divided by it.
    calibration_ratio: float = 1.0


class SystemLayersOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    global_: str | None = Field(default=None, alias="global")
    mode: str | None = None
    role: str | None = None


class SessionOut(BaseModel):
    id: str
    tenant_id: str
    model: str
    system: SystemLayersOut
    goal: str | None
    mode: str | None
    metadata: dict[str, Any]
    memory: str | None
    tools: list[dict[str, Any]] | None
    max_output_tokens: int | None
    context_limit: int | None
    block_caps: BlockCaps | None
    recall: RecallSettings | None = None
    budget: BudgetOut
    turn_count: int
    message_count: int
    open_turn_id: str | None
    created_at: datetime
    updated_at: datetime
