from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticKnownError

from app.budget.anthropic import CALL_POSITION
from app.budget.openai_format import chat_call
from app.limits import shallow_json
from app.turns.anthropic_input import (
    assistant_input,
    call_positions,
    data_url_problem,
    tool_result_input,
    user_input,
)

MAX_CONTENT_CHARS = 2_000_000
MAX_CONTENT_PARTS = 256
#: Tool calls of one step, and their results.
MAX_TOOL_CALLS = 128


def _at_most(limit: int) -> BeforeValidator:
    """Refuse a list longer than ``limit`` before any of its items is validated, with the
    error ``max_length`` gives: pydantic checks that length only after validating every
    item, so a step of 10,000 calls cost hundreds of milliseconds to refuse."""

    def check(value: Any) -> Any:
        if isinstance(value, list) and len(value) > limit:
            raise PydanticKnownError(
                "too_long", {"field_type": "List", "max_length": limit, "actual_length": len(value)}
            )
        return value

    return BeforeValidator(check)


_AT_MOST_PARTS = _at_most(MAX_CONTENT_PARTS)
_AT_MOST_CALLS = _at_most(MAX_TOOL_CALLS)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageUrl(_Input):
    url: str = Field(min_length=1)
    #: Left out when not given: OpenAI takes the key absent or one of these, never null.
    detail: Literal["auto", "low", "high"] | None = Field(
        default=None, exclude_if=lambda detail: detail is None
    )

    @field_validator("url")
    @classmethod
    def _an_image(cls, url: str) -> str:
        # Stored as sent, a document in a data: URL would go out as an image block that
        # Anthropic refuses (and OpenAI too): refused here, where the agent can tell why.
        problem = data_url_problem(url)
        if problem is not None:
            raise ValueError(problem)
        return url


class TextPart(_Input):
    type: Literal["text"]
    text: str = Field(max_length=MAX_CONTENT_CHARS)


class ImagePart(_Input):
    type: Literal["image_url"]
    image_url: ImageUrl


def _absent_when_none(value: Any) -> bool:
    return value is None


class Base64PdfSource(_Input):
    type: Literal["base64"]
    media_type: Literal["application/pdf"]
    data: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)


class UrlPdfSource(_Input):
    type: Literal["url"]
    url: str = Field(min_length=1, max_length=8_192)


class PlainTextSource(_Input):
    type: Literal["text"]
    media_type: Literal["text/plain"]
    data: str = Field(max_length=MAX_CONTENT_CHARS)


class DocumentCitations(_Input):
    enabled: bool


class DocumentPart(_Input):
    """An Anthropic ``document`` block: a PDF (base64 or URL) or plain text, kept as sent
    (:mod:`app.budget.anthropic_blocks`)."""

    type: Literal["document"]
    source: Annotated[Base64PdfSource | UrlPdfSource | PlainTextSource, Field(discriminator="type")]
    title: str | None = Field(default=None, max_length=500, exclude_if=_absent_when_none)
    context: str | None = Field(
        default=None, max_length=MAX_CONTENT_CHARS, exclude_if=_absent_when_none
    )
    citations: DocumentCitations | None = Field(default=None, exclude_if=_absent_when_none)


ContentPart = Annotated[TextPart | ImagePart | DocumentPart, Field(discriminator="type")]


class ServerToolUsePart(BaseModel):
    """Anthropic's ``server_tool_use`` block: a call of a tool Anthropic runs (web search,
    web fetch, code execution), kept as sent, fields the API adds later included."""

    model_config = ConfigDict(extra="allow")

    type: Literal["server_tool_use"]
    id: str = Field(min_length=1, max_length=128)
    name: str = Field(min_length=1, max_length=128)
    input: dict[str, Any]


class ServerToolResultPart(BaseModel):
    """A server tool's result block, as Anthropic put it in the answer, kept as sent."""

    model_config = ConfigDict(extra="allow")

    type: Literal[
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
    ]
    tool_use_id: str = Field(min_length=1, max_length=128)
    content: dict[str, Any] | list[dict[str, Any]]


class ThinkingPart(_Input):
    """An Anthropic extended-thinking block, sent back unchanged: the signature is opaque."""

    type: Literal["thinking"]
    thinking: str = Field(max_length=MAX_CONTENT_CHARS)
    signature: str = Field(max_length=MAX_CONTENT_CHARS)


class RedactedThinkingPart(_Input):
    """An Anthropic redacted-thinking block: encrypted reasoning, opaque to contextd."""

    type: Literal["redacted_thinking"]
    data: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)


AssistantPart = Annotated[
    TextPart | ThinkingPart | RedactedThinkingPart | ServerToolUsePart | ServerToolResultPart,
    Field(discriminator="type"),
]
AssistantContent = (
    Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
    | Annotated[
        list[AssistantPart], Field(min_length=1, max_length=MAX_CONTENT_PARTS), _AT_MOST_PARTS
    ]
    | None
)


class UserMessage(_Input):
    role: Literal["user"] = "user"
    content: (
        Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
        | Annotated[
            list[ContentPart], Field(min_length=1, max_length=MAX_CONTENT_PARTS), _AT_MOST_PARTS
        ]
    )
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")

    @model_validator(mode="before")
    @classmethod
    def _from_anthropic(cls, data: Any) -> Any:
        return user_input(data)

    @model_validator(mode="after")
    def _says_something(self) -> UserMessage:
        # An empty message starts a turn about nothing, and Anthropic's format has no way to
        # carry it (empty text blocks are refused), so the turn's prompt would change shape.
        if isinstance(self.content, str):
            empty = not self.content.strip()
        else:
            empty = all(
                isinstance(part, TextPart) and not part.text.strip() for part in self.content
            )
        if empty:
            raise ValueError("the user message is empty: send some text, an image or a document")
        return self


class PromptTokensDetails(BaseModel):
    model_config = ConfigDict(extra="allow")

    cached_tokens: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _extras_shallow(self) -> PromptTokensDetails:
        shallow_json(self.model_extra)
        return self


class Usage(BaseModel):
    """What the provider reported for the LLM call; other provider fields are kept."""

    model_config = ConfigDict(extra="allow")

    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    total_tokens: int | None = Field(default=None, ge=0)
    #: Anthropic: the prompt tokens after the last cache breakpoint, and those read from,
    #: and written to, the prompt cache; the prompt is the sum of the three.
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int | None = Field(default=None, ge=0)
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)
    #: OpenAI: ``{"cached_tokens": …}``, the prompt tokens its cache served.
    prompt_tokens_details: PromptTokensDetails | None = None

    @model_validator(mode="after")
    def _extras_shallow(self) -> Usage:
        shallow_json(self.model_extra)
        return self

    @property
    def prompt_total(self) -> int | None:
        """The whole prompt as the provider counted it: OpenAI's ``prompt_tokens``, or
        Anthropic's ``input_tokens`` plus its cache reads and writes (Messages API, "Prompt
        caching": ``total_input_tokens = cache_read_input_tokens +
        cache_creation_input_tokens + input_tokens``)."""
        if self.prompt_tokens is not None:
            return self.prompt_tokens
        if self.input_tokens is None:
            return None
        return (
            self.input_tokens
            + (self.cache_read_input_tokens or 0)
            + (self.cache_creation_input_tokens or 0)
        )

    @property
    def cache_read_tokens(self) -> int | None:
        """Prompt tokens the provider's cache served, in either provider's terms."""
        if self.cache_read_input_tokens is not None:
            return self.cache_read_input_tokens
        details = self.prompt_tokens_details
        return details.cached_tokens if details is not None else None


PromptFormat = Literal["openai", "anthropic"]


class TurnStart(_Input):
    message: UserMessage
    #: "anthropic": the prompt as {system, messages} for Anthropic's Messages API.
    format: PromptFormat = "openai"


class FunctionCall(_Input):
    name: str = Field(min_length=1, max_length=128)
    arguments: str = Field(max_length=MAX_CONTENT_CHARS)


class ToolCall(_Input):
    id: str = Field(min_length=1, max_length=128)
    type: Literal["function"] = "function"
    function: FunctionCall


class StepAssistant(_Input):
    """The OpenAI chat shape, or an Anthropic assistant message whose ``tool_use`` blocks
    are its tool calls (:mod:`app.turns.anthropic_input`)."""

    #: Text, or parts: text and the model's thinking blocks, kept byte-exact.
    content: AssistantContent = None
    #: An OpenAI-shaped model's reasoning (DeepSeek, vLLM, OpenRouter), kept as sent.
    reasoning_content: str | None = Field(default=None, max_length=MAX_CONTENT_CHARS)
    tool_calls: Annotated[list[ToolCall], _AT_MOST_CALLS] = Field(
        min_length=1, max_length=MAX_TOOL_CALLS
    )
    #: Anthropic blocks that interleave text and calls: how many parts came before each call.
    _call_positions: list[int] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _from_anthropic(
        cls, data: Any, handler: ModelWrapValidatorHandler[StepAssistant]
    ) -> StepAssistant:
        assistant = handler(assistant_input(data))
        assistant._call_positions = call_positions(data)
        return assistant

    def stored_tool_calls(self) -> list[dict[str, Any]]:
        """The calls as stored: each with its place among the content parts when the agent's
        blocks put text after a call, so the Anthropic rendering gives that order back."""
        calls = [call.model_dump(mode="json") for call in self.tool_calls]
        if self._call_positions is None:
            return calls
        return [
            {**call, CALL_POSITION: position}
            for call, position in zip(calls, self._call_positions, strict=True)
        ]


class ToolResult(_Input):
    """``{tool_call_id, content}``, or an Anthropic ``tool_result`` block. The content may
    carry images (screenshots): ``image_url`` parts, or Anthropic ``image`` blocks."""

    tool_call_id: str = Field(min_length=1, max_length=128)
    content: (
        Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
        | Annotated[
            list[ContentPart], Field(min_length=1, max_length=MAX_CONTENT_PARTS), _AT_MOST_PARTS
        ]
    )
    #: The tool failed: the Anthropic rendering says so on the tool_result block.
    is_error: bool = False


class StepRequest(_Input):
    """The LLM asked for tools; here are its calls and every call's result."""

    assistant: StepAssistant
    tool_results: Annotated[list[ToolResult], _AT_MOST_CALLS] = Field(
        min_length=1, max_length=MAX_TOOL_CALLS
    )
    usage: Usage | None = None
    format: PromptFormat = "openai"

    @model_validator(mode="before")
    @classmethod
    def _results_from_anthropic(cls, data: Any) -> Any:
        results = data.get("tool_results") if isinstance(data, dict) else None
        # An over-long list is refused as it is (the field's check), not converted first.
        if isinstance(results, list) and len(results) <= MAX_TOOL_CALLS:
            data = {
                **data,
                "tool_results": [tool_result_input(r, i) for i, r in enumerate(results)],
            }
        return data

    @model_validator(mode="after")
    def _every_call_answered_once(self) -> StepRequest:
        call_ids = [call.id for call in self.assistant.tool_calls]
        if len(set(call_ids)) != len(call_ids):
            raise ValueError("assistant.tool_calls has duplicate ids")
        result_ids = [result.tool_call_id for result in self.tool_results]
        if len(set(result_ids)) != len(result_ids):
            raise ValueError("tool_results answers a tool call more than once")
        # Each set made once: made for each id, 128 calls cost 32,768 insertions a step.
        answered, called = set(result_ids), set(call_ids)
        missing = [i for i in call_ids if i not in answered]
        unknown = [i for i in result_ids if i not in called]
        if missing or unknown:
            raise ValueError(
                f"every tool call needs exactly one result: unanswered {missing}, unknown {unknown}"
            )
        return self


class CompleteAssistant(_Input):
    """The answer, in the OpenAI chat shape or as an Anthropic assistant message."""

    content: AssistantContent = None
    reasoning_content: str | None = Field(default=None, max_length=MAX_CONTENT_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _from_anthropic(cls, data: Any) -> Any:
        return assistant_input(data, answer=True)


class CompleteRequest(_Input):
    assistant: CompleteAssistant = Field(default_factory=CompleteAssistant)
    status: Literal["completed", "failed"] = "completed"
    usage: Usage | None = None


class BudgetReport(BaseModel):
    model_context_limit: int
    input_budget: int
    estimated_input_tokens: int
    blocks: dict[str, int]
    estimator: str
    #: The calibration ratio in force; ``input_budget`` is the model's divided by it.
    calibration_ratio: float = 1.0


class Actions(BaseModel):
    summary_triggered: bool
    summary_reason: str | None
    summary_fallback: bool
    #: A summary job is queued or running for this session (the summariser is slow and this
    #: prompt still fits): a later assembly picks up its summary.
    summary_queued: bool = False
    prune_triggered: bool
    summarised_message_ids: list[int]
    pruned_message_ids: list[int]


class AssemblyOut(BaseModel):
    """The next prompt: hand ``messages`` to an OpenAI-compatible chat API as it is (or, with
    format "anthropic", ``system`` and ``messages`` to Anthropic's Messages API)."""

    turn_id: str
    step: int
    format: PromptFormat = "openai"
    #: With format "anthropic": text blocks, the last one a cache breakpoint.
    system: str | list[dict[str, Any]] | None = None
    messages: list[dict[str, Any]]
    budget: BudgetReport
    actions: Actions
    audit_id: int


class TurnOut(BaseModel):
    id: str
    session_id: str
    seq: int
    status: str
    steps: int
    assistant_output: str | None
    usage: dict[str, Any] | None
    started_at: datetime
    completed_at: datetime | None


class StoredMessage(BaseModel):
    id: int
    seq: int
    turn_id: str
    turn_seq: int
    step: int
    role: str
    content: Any
    name: str | None
    tool_calls: list[Any] | None
    tool_call_id: str | None
    reasoning_content: str | None = None
    is_error: bool | None = None
    token_count: int
    token_encoding: str
    state: str
    summary_id: int | None
    created_at: datetime

    @field_validator("tool_calls")
    @classmethod
    def _as_the_chat_shape_has_them(cls, calls: list[Any] | None) -> list[Any] | None:
        # A call's place among Anthropic blocks is the Anthropic rendering's to read; an
        # agent replaying this history to a chat API must not send it.
        return [chat_call(call) for call in calls] if calls else calls


class MessagePage(BaseModel):
    messages: list[StoredMessage]
    #: Pass as ``after_seq`` to read the next page; null at the end.
    next_after_seq: int | None


class SummaryItemOut(BaseModel):
    text: str
    source_message_ids: list[int]
    from_user: bool = Field(
        default=False,
        description="The user's own words about themselves or their work: kept first.",
    )


class SummaryOut(BaseModel):
    id: int
    session_id: str
    turn_id: str | None
    turn_seq: int
    from_message_id: int | None
    to_message_id: int
    summary_text: str
    key_facts: list[SummaryItemOut]
    decisions: list[SummaryItemOut]
    open_questions: list[SummaryItemOut]
    action_items: list[SummaryItemOut]
    rendered: str
    token_count: int
    summarizer: str
    created_at: datetime


class SummaryList(BaseModel):
    summaries: list[SummaryOut]
