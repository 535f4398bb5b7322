from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from app.budget.tokens import (
    ANTHROPIC_SERVER_TOOL_TYPE,
    CountingMethod,
    ModelSource,
    is_anthropic_server_tool,
)
from app.limits import shallow_json
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


class FunctionTool(_Input):
    """One entry of a chat request's ``tools``."""

    type: Literal["function"] = "function"
    function: FunctionDefinition


class AnthropicTool(_Input):
    """A client tool as Anthropic's Messages API takes it: its input schema must be an
    object schema (the API refuses any other)."""

    type: Literal["custom"] | None = None
    name: str = Field(min_length=1, max_length=128)
    description: str | None = Field(default=None, max_length=100_000)
    input_schema: Annotated[dict[str, Any], AfterValidator(tool_parameters_shape)]
    #: Sent back as given; contextd places its own breakpoints in prompts only.
    cache_control: dict[str, Any] | None = None
    strict: bool | None = None

    @field_validator("input_schema")
    @classmethod
    def _an_object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object":
            raise ValueError('input_schema must be a JSON Schema with "type": "object"')
        return schema


class AnthropicServerTool(BaseModel):
    """A tool Anthropic runs itself (web search, web fetch, code execution, ...): its
    versioned type and name, and the options its documentation lists, kept as sent."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(pattern=ANTHROPIC_SERVER_TOOL_TYPE.pattern, max_length=100)
    name: str = Field(min_length=1, max_length=128)

    @model_validator(mode="after")
    def _options_shallow(self) -> AnthropicServerTool:
        shallow_json(self.model_extra)
        return self


def _tool_shape(tool: Any) -> str:
    if isinstance(tool, dict) and "function" not in tool:
        if "input_schema" in tool:
            return "anthropic"
        if is_anthropic_server_tool(tool):
            return "anthropic_server"
    return "function"


#: A tool definition in the chat shape or in Anthropic's (client or server tool), stored
#: as it came and counted as the provider renders it (:func:`app.budget.tokens.count_tools`).
ToolDefinition = Annotated[
    Annotated[FunctionTool, Tag("function")]
    | Annotated[AnthropicTool, Tag("anthropic")]
    | Annotated[AnthropicServerTool, Tag("anthropic_server")],
    Discriminator(_tool_shape),
]


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
