from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from app.limits import shallow_json
from app.shapes import tool_call_shape, tool_definition_shape

#: A tool definition or call as the agent sent it, checked for shape and kept as it came.
ToolDefinitionIn = Annotated[dict[str, Any], AfterValidator(tool_definition_shape)]
ToolCallIn = Annotated[dict[str, Any], AfterValidator(tool_call_shape)]


class ChatMessageIn(BaseModel):
    """An OpenAI chat message; fields beyond the common ones are passed through untouched."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[Annotated[dict[str, Any], AfterValidator(shallow_json)]] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def _extras_shallow(self) -> ChatMessageIn:
        shallow_json(self.model_extra)
        return self


class TrimRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessageIn] = Field(max_length=100_000)
    tools: list[ToolDefinitionIn] | None = None
    trimmed_up_to_message_index: int = Field(
        default=0, ge=0, description="The index a previous trim returned (0 the first time)."
    )
    threshold: float = Field(default=0.80, gt=0, le=1, description="Share of the input budget.")
    keep_last_n_assistant_messages: int = Field(default=10, ge=0)
    context_limit: int | None = Field(default=None, gt=0, le=100_000_000, strict=True)
    max_output_tokens: int | None = Field(default=None, gt=0, le=10_000_000)


class TrimResponse(BaseModel):
    messages: list[dict[str, Any]]
    trimmed_up_to_message_index: int
    estimated_tokens_before: int
    estimated_tokens_after: int
    threshold_tokens: int
    input_budget: int
    within_threshold: bool
    estimator: str


class TruncateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessageIn] = Field(max_length=100_000)
    keep: int = Field(default=10, ge=0)
    preserve_system: bool = True


class TruncateResponse(BaseModel):
    messages: list[dict[str, Any]]
    removed: int
