from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.budget.tokens import CountingMethod, ModelSource
from app.shapes import tool_parameters_shape
from app.turns.schemas import MAX_CONTENT_CHARS, ContentPart, ToolCall


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FunctionDefinition(_Input):
    name: str = Field(min_length=1, max_length=128)
    description: str | None = Field(default=None, max_length=100_000)
    #: A JSON Schema object, as the chat-completions API takes it.
    parameters: Annotated[dict[str, Any] | None, AfterValidator(tool_parameters_shape)] = None
    strict: bool | None = None


class ToolDefinition(_Input):
    """One entry of a chat request's ``tools``."""

    type: Literal["function"] = "function"
    function: FunctionDefinition


class CountMessage(_Input):
    """A chat-completions message, any role."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = Field(default=None, max_length=MAX_CONTENT_CHARS)
    name: str | None = Field(default=None, max_length=64)
    tool_calls: list[ToolCall] | None = Field(default=None, max_length=128)
    tool_call_id: str | None = Field(default=None, max_length=128)


class CountRequest(_Input):
    model: str = Field(min_length=1, max_length=200)
    messages: list[CountMessage] = Field(max_length=100_000)
    tools: list[ToolDefinition] = Field(default_factory=list, max_length=1024)


class CalibrationOut(BaseModel):
    """What has been learnt from usage reports for a model (this tenant, this estimator)."""

    #: The ratio budgets use now: provider tokens per contextd token (1.0: none).
    ratio: float
    #: The smoothed ratio as learnt; a ratio below 1 applies only in part (docs/counting.md).
    learnt_ratio: float | None
    #: Reports taken into the ratio, and reports ignored (invalid or outliers).
    samples: int
    rejected: int
    updated_at: datetime | None


class CountBreakdown(BaseModel):
    #: The messages, their overhead and the reply priming.
    messages: int
    #: The tool definitions.
    tools: int


class CountOut(BaseModel):
    """A request's input tokens, counted the way a turn counts its prompt."""

    model: str
    input_tokens: int
    #: exact (the model's own tokenizer), tokenizer (an operator's tokenizer.json), proxy
    #: (another encoding times a safety factor) or fallback (chars/4 * 1.25).
    method: CountingMethod
    #: The estimator, as audit rows name it.
    encoding: str
    calibration: CalibrationOut
    #: ``input_tokens`` times the ratio in force: what the provider is expected to count.
    calibrated_input_tokens: int
    breakdown: CountBreakdown
    #: Where the count is an upper bound rather than exact, and why.
    notes: list[str]


class ModelOut(BaseModel):
    name: str
    family: str
    source: ModelSource
    context_limit: int
    max_output_tokens: int | None
    method: CountingMethod
    encoding: str
    safety_factor: float
    calibration: CalibrationOut


class ModelList(BaseModel):
    models: list[ModelOut]
