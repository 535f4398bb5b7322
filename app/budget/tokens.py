"""Token counting: one entry point for every count the service makes.

A prompt is counted the way OpenAI's chat format costs it (the openai-cookbook "How to count
tokens with tiktoken" rules): 3 tokens per message plus its role and content, 1 more plus the
name's tokens for a named message, 3 to prime the reply. Beyond what the cookbook covers:

- a part-list content counts its text parts joined by newlines, and each image part by the
  model's published image rule (:mod:`app.budget.images`);
- Anthropic's documents and server-tool blocks by :mod:`app.budget.anthropic_blocks`;
- an assistant's reasoning counts as text: a ``thinking`` part its thinking and its signature,
  a ``redacted_thinking`` part its data, and an OpenAI-shaped ``reasoning_content`` its text.
  Signatures and redacted data are opaque to contextd; counting them with the tokenizer, as
  if they were text, errs high (base64 splits into short tokens);
- an assistant's ``tool_calls`` cost 8 tokens each plus the tokens of the call id, function
  name and JSON arguments, and a ``tool`` message's ``tool_call_id`` costs its tokens. OpenAI
  publishes no rule for these; this one is an upper bound of what the provider renders;
- tool definitions (``tools``) follow the cookbook's function-schema rule: per function a
  fixed start, ``name:description`` (one trailing period dropped), per property a fixed cost
  and ``key:type:description``, per enum item a fixed cost and its tokens, and a fixed end.
  Schema parts the rule does not cover (nested objects, array items, formats, defaults) are
  counted as their compact JSON, which errs high.

Models whose tokenizer is not public are counted with a proxy encoding times a safety factor
that errs high; an operator may give a model its own Hugging Face ``tokenizer.json``. When an
encoding cannot be loaded, counting falls back to ``ceil(chars / 4 * 1.25)`` (seed 003 §9) and
says so, so the caller can log and count it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from app.budget.anthropic_blocks import special_parts_tokens
from app.budget.images import DEFAULT_IMAGE_RULES, ImageRules, image_part_cost
from app.budget.margins import ContentMargins
from app.budget.templates import Rendered, TemplateName, render_message, render_tools
from app.budget.templates import reply_priming as template_priming
from app.budget.tool_images import split_tool_message

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3
# A tool call costs its function name and JSON arguments plus framing the provider does not
# publish; this allowance keeps the estimate on the high side.
TOKENS_PER_TOOL_CALL = 8

FALLBACK_ESTIMATOR = "fallback:chars/4*1.25"

CountingMethod = Literal["exact", "tokenizer", "proxy", "fallback"]


# -- the chat format a model is counted by ----------------------------------------------------


@dataclass(frozen=True)
class ToolDefinitionRules:
    """The cookbook's function-schema constants (``num_tokens_for_tools``)."""

    function_init: int = 7
    property_init: int = 3
    property_key: int = 3
    enum_init: int = -3
    enum_item: int = 3
    functions_end: int = 12


#: GPT-4o and later (o200k_base).
O200K_TOOL_RULES = ToolDefinitionRules()
#: GPT-4 and GPT-3.5 (cl100k_base): a dearer function start.
CL100K_TOOL_RULES = ToolDefinitionRules(function_init=10)


@dataclass(frozen=True)
class ChatRules:
    """What a model's chat format adds around the text: message framing, tools, images."""

    tokens_per_message: int = TOKENS_PER_MESSAGE
    tokens_per_name: int = TOKENS_PER_NAME
    reply_priming: int = REPLY_PRIMING_TOKENS
    tokens_per_tool_call: int = TOKENS_PER_TOOL_CALL
    tools: ToolDefinitionRules = O200K_TOOL_RULES
    images: ImageRules = DEFAULT_IMAGE_RULES
    #: The family's chat template (:mod:`app.budget.templates`): when set, messages, tools
    #: and priming are counted as the template renders them instead of by the rules above.
    template: TemplateName | None = None
    #: The provider's own system prompt for tool use, added once when tools are declared.
    tools_prompt_tokens: int = 0

    @property
    def tag(self) -> str:
        """What sets a stored message's count apart from the default rules; empty when
        nothing does. Part of a counter's name, so a change of rules means a recount."""
        parts = []
        if self.tokens_per_message != TOKENS_PER_MESSAGE:
            parts.append(f"m{self.tokens_per_message}")
        if self.tokens_per_name != TOKENS_PER_NAME:
            parts.append(f"n{self.tokens_per_name}")
        if self.tokens_per_tool_call != TOKENS_PER_TOOL_CALL:
            parts.append(f"c{self.tokens_per_tool_call}")
        if self.images.tag:
            parts.append(self.images.tag)
        if self.template:
            parts.append(f"t:{self.template}")
        return "+".join(parts)


DEFAULT_RULES = ChatRules()


def _named(base: str, rules: ChatRules) -> str:
    return f"{base}+{rules.tag}" if rules.tag else base


# -- counters ---------------------------------------------------------------------------------


class TokenCounter(Protocol):
    """Counts the tokens of a piece of text."""

    @property
    def name(self) -> str: ...

    def count_text(self, text: str) -> int: ...


class Encoding(Protocol):
    def encode(self, text: str, *, disallowed_special: Any = ...) -> list[int]: ...


class TextCounts(Protocol):
    """Remembered counts of texts (the runtime owns one per encoding)."""

    def get(self, key: str) -> int | None: ...

    def put(self, key: str, value: int) -> None: ...


#: Texts longer than this are not remembered: tool output is counted once, when stored.
MEMO_MAX_CHARS = 2_000
#: Encodings whose pre-tokeniser never lets a token span a line break followed by anything
#: but white space or "/" (their split patterns end a piece at such a break; checked against
#: the encodings themselves in tests/unit/test_line_counts.py). A long text then costs the sum
#: of its lines, and lines already counted (a summary's items, fold after fold) cost nothing.
LINE_ADDITIVE_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
_LINE_STARTS = re.compile(r"(?<=\n)(?=[^\s/])")
#: The same encodings never let a token span a space between a letter or digit and a letter
#: (" word" opens a piece of their split patterns; also checked in test_line_counts.py), so a
#: long text can be encoded in chunks cut there. Encoding a whole 2 MB text builds a list of
#: a million ints while holding the GIL, which stalls the event loop even from a worker
#: thread; a chunk's list is a few thousand.
CHUNK_CHARS = 16_384
_WORD_GAPS = re.compile(r"(?<=[A-Za-z0-9]) (?=[A-Za-z])")


def word_chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """``text`` in pieces of about ``size`` characters or more, each cut just before a space
    between a word and the next (the rest in one piece where there is no such space)."""
    start = 0
    while len(text) - start > size:
        gap = _WORD_GAPS.search(text, start + size)
        if gap is None:
            break
        yield text[start : gap.start()]
        start = gap.start()
    yield text[start:]


@dataclass(frozen=True)
class TiktokenCounter:
    """An OpenAI encoding. ``memo`` remembers the counts of short texts (and of the lines of
    long ones, where the encoding allows): summaries carry the same items from one summary
    to the next, and every fold counts them all again; remembered, a fold costs what its new
    items cost."""

    encoding_name: str
    encoding: Encoding
    rules: ChatRules = DEFAULT_RULES
    memo: TextCounts | None = field(default=None, compare=False, hash=False, repr=False)

    @property
    def name(self) -> str:
        return _named(f"tiktoken:{self.encoding_name}", self.rules)

    def count_text(self, text: str) -> int:
        memo = self.memo
        if memo is None:
            return self._encode_count(text)
        if len(text) <= MEMO_MAX_CHARS:
            return self._remembered(memo, text)
        if "\n" not in text or self.encoding_name not in LINE_ADDITIVE_ENCODINGS:
            return self._encode_count(text)
        return sum(
            self._remembered(memo, line)
            if len(line) <= MEMO_MAX_CHARS
            else self._encode_count(line)
            for line in _LINE_STARTS.split(text)
        )

    def _remembered(self, memo: TextCounts, text: str) -> int:
        count = memo.get(text)
        if count is None:
            count = self._encode_count(text)
            memo.put(text, count)
        return count

    def _encode_count(self, text: str) -> int:
        # Special-token text in user content is ordinary text to the provider.
        if len(text) > CHUNK_CHARS and self.encoding_name in LINE_ADDITIVE_ENCODINGS:
            return sum(
                len(self.encoding.encode(chunk, disallowed_special=()))
                for chunk in word_chunks(text)
            )
        return len(self.encoding.encode(text, disallowed_special=()))


class HuggingFaceTokenizer(Protocol):
    """The part of ``tokenizers.Tokenizer`` that counting needs."""

    def encode(self, sequence: str, *, add_special_tokens: bool = ...) -> Any: ...


@dataclass(frozen=True)
class HuggingFaceCounter:
    """A model's own ``tokenizer.json``: exact text counts, named by the file's digest so
    that a new file means a recount."""

    label: str
    tokenizer: HuggingFaceTokenizer
    rules: ChatRules = DEFAULT_RULES

    @property
    def name(self) -> str:
        return _named(f"hf:{self.label}", self.rules)

    def count_text(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


@dataclass(frozen=True)
class FallbackCounter:
    """Seed 003 §9: ``ceil(char_count / 4 * 1.25)``."""

    rules: ChatRules = DEFAULT_RULES

    @property
    def name(self) -> str:
        return _named(FALLBACK_ESTIMATOR, self.rules)

    def count_text(self, text: str) -> int:
        return math.ceil(len(text) / 4 * 1.25)


@dataclass(frozen=True)
class ScaledCounter:
    """A proxy encoding for a model whose tokenizer is not public, scaled up to err high."""

    inner: TokenCounter
    factor: float
    rules: ChatRules = DEFAULT_RULES

    @property
    def name(self) -> str:
        return _named(f"{self.inner.name}*{self.factor:g}", self.rules)

    def count_text(self, text: str) -> int:
        return math.ceil(self.inner.count_text(text) * self.factor)


@dataclass(frozen=True)
class ContentAwareCounter:
    """A proxy encoding with margins that follow what the text is made of (digits, CJK,
    emoji: :mod:`app.budget.margins`), measured against the family's real tokenizer."""

    inner: TokenCounter
    margins: ContentMargins
    rules: ChatRules = DEFAULT_RULES

    @property
    def name(self) -> str:
        return _named(f"{self.inner.name}*{self.margins.tag}", self.rules)

    def count_text(self, text: str) -> int:
        return self.margins.estimate(self.inner.count_text(text), text)


def rules_of(counter: TokenCounter) -> ChatRules:
    """The chat rules a counter carries (the defaults for a bare text counter)."""
    rules = getattr(counter, "rules", DEFAULT_RULES)
    return rules if isinstance(rules, ChatRules) else DEFAULT_RULES


# -- messages, prompts and tool definitions ------------------------------------------------------


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "text":
            parts.append(str(part.get("text", "")))
    return "\n".join(parts)


#: Content parts that carry a model's reasoning: kept byte-exact, never edited or summarised.
REASONING_PART_TYPES = frozenset({"thinking", "redacted_thinking"})


def is_reasoning_part(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") in REASONING_PART_TYPES


def reasoning_text(message: Mapping[str, Any]) -> str:
    """What a message's reasoning costs, as text: thinking and signatures, redacted data,
    ``reasoning_content``, each on a line of its own (empty when it has none)."""
    pieces: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if not is_reasoning_part(part):
                continue
            if part["type"] == "thinking":
                pieces.extend((str(part.get("thinking", "")), str(part.get("signature", ""))))
            else:
                pieces.append(str(part.get("data", "")))
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str):
        pieces.append(reasoning)
    return "\n".join(piece for piece in pieces if piece)


@dataclass(frozen=True)
class MessageCount:
    tokens: int
    #: Image parts whose size could not be read, costed at the rule's upper bound.
    images_of_unknown_size: int = 0


def measure_message(counter: TokenCounter, message: Mapping[str, Any]) -> MessageCount:
    """Tokens one chat message adds to a prompt, overhead included, and what was estimated.
    A tool result with images counts as the two messages the OpenAI format makes of it."""
    tool, carrier = split_tool_message(message)
    if carrier is not None:
        first, second = measure_message(counter, tool), measure_message(counter, carrier)
        return MessageCount(
            first.tokens + second.tokens,
            first.images_of_unknown_size + second.images_of_unknown_size,
        )
    rules = rules_of(counter)
    if rules.template:
        return _measure_templated(counter, rules, rules.template, message)
    tokens = rules.tokens_per_message + counter.count_text(str(message["role"]))
    content = message.get("content")
    text = content_text(content)
    if text:
        tokens += counter.count_text(text)
    reasoning = reasoning_text(message)
    if reasoning:
        tokens += counter.count_text(reasoning)
    tokens += special_parts_tokens(content, counter.count_text)
    unknown = 0
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "image_url":
                cost = image_part_cost(rules.images, part)
                tokens += cost.tokens
                unknown += cost.size_unknown
    if message.get("name"):
        tokens += rules.tokens_per_name + counter.count_text(str(message["name"]))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        tokens += rules.tokens_per_tool_call
        tokens += counter.count_text(str(call.get("id", "")))
        tokens += counter.count_text(str(function.get("name", "")))
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        tokens += counter.count_text(arguments)
    if message.get("tool_call_id"):
        tokens += counter.count_text(str(message["tool_call_id"]))
    return MessageCount(tokens, unknown)


def _count_rendered(counter: TokenCounter, rendered: Rendered) -> int:
    return rendered.special_tokens + sum(counter.count_text(t) for t in rendered.texts if t)


def _measure_templated(
    counter: TokenCounter, rules: ChatRules, template: TemplateName, message: Mapping[str, Any]
) -> MessageCount:
    content = message.get("content")
    tokens = _count_rendered(counter, render_message(template, message, content_text(content)))
    reasoning = reasoning_text(message)
    if reasoning:
        tokens += counter.count_text(reasoning)
    tokens += special_parts_tokens(content, counter.count_text)
    unknown = 0
    if isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "image_url":
                cost = image_part_cost(rules.images, part)
                tokens += cost.tokens
                unknown += cost.size_unknown
    return MessageCount(tokens, unknown)


def count_message(counter: TokenCounter, message: Mapping[str, Any]) -> int:
    """Tokens one chat message adds to a prompt, overhead included."""
    return measure_message(counter, message).tokens


def reply_priming(counter: TokenCounter) -> int:
    """Tokens the provider adds to prime the reply, once per prompt."""
    rules = rules_of(counter)
    if rules.template:
        return _count_rendered(counter, template_priming(rules.template))
    return rules.reply_priming


def count_prompt(counter: TokenCounter, messages: Iterable[Mapping[str, Any]]) -> int:
    """Tokens of a whole prompt: every message plus the reply priming."""
    return reply_priming(counter) + sum(count_message(counter, m) for m in messages)


def _without_final_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


def _schema_type(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type", "")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    return str(kind)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _readable_tool(tool: Any) -> bool:
    """The documented shape of a tool definition, as far as counting reads it."""
    if not isinstance(tool, Mapping) or is_anthropic_server_tool(tool):
        return False
    function = tool.get("function", tool)
    if not isinstance(function, Mapping):
        return False
    parameters = function.get("parameters")
    if parameters is None:
        return True
    if not isinstance(parameters, Mapping):
        return False
    properties = parameters.get("properties")
    if properties is None:
        return True
    return isinstance(properties, Mapping) and all(
        isinstance(schema, Mapping) and isinstance(schema.get("enum", []), list)
        for schema in properties.values()
    )


# Property keys the cookbook rule prices; anything else is costed as JSON.
_PRICED_PROPERTY_KEYS = frozenset({"type", "description", "enum"})


def is_anthropic_server_tool(tool: Any) -> bool:
    """An Anthropic server tool's definition (``{"type": "web_search_20250305", "name":
    "web_search", ...}``): a versioned type that names a tool Anthropic runs itself."""
    return (
        isinstance(tool, Mapping)
        and "function" not in tool
        and isinstance(tool.get("type"), str)
        and ANTHROPIC_SERVER_TOOL_TYPE.match(tool["type"]) is not None
    )


#: ``<tool>_<yyyymmdd>``: Anthropic's versioned tool types (web_search_20250305,
#: code_execution_20250825, web_fetch_20250910, bash_20250124, ...).
ANTHROPIC_SERVER_TOOL_TYPE = re.compile(r"^[a-z_]+_\d{8}$")


def chat_tool(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """A tool definition as the chat format has it: an Anthropic client tool (``name``,
    ``description``, ``input_schema``) as a function whose parameters are its input schema;
    any other shape as it is."""
    if "input_schema" not in tool or "function" in tool:
        return tool
    function: dict[str, Any] = {"name": tool.get("name", "")}
    if tool.get("description") is not None:
        function["description"] = tool["description"]
    function["parameters"] = tool["input_schema"]
    return {"type": "function", "function": function}


def count_tools(counter: TokenCounter, tools: Sequence[Mapping[str, Any]]) -> int:
    """Tokens the tool definitions of a request add to its prompt (0 for none).

    Accepts ``{"type": "function", "function": {...}}`` entries, bare function objects and
    Anthropic's definitions: a client tool counts as the function it describes, a server
    tool (which Anthropic defines itself) as its definition's JSON text.
    """
    if not tools:
        return 0
    tools = [chat_tool(tool) for tool in tools]
    chat = rules_of(counter)
    # Sessions stored before tool definitions were checked at entry may hold shapes the
    # rules below cannot read: those are priced as their JSON text, never refused here.
    readable = [tool for tool in tools if _readable_tool(tool)]
    odd = sum(
        chat.tools.function_init + counter.count_text(_json_text(tool))
        for tool in tools
        if not _readable_tool(tool)
    )
    if chat.template:
        return (
            chat.tools_prompt_tokens
            + odd
            + (_count_rendered(counter, render_tools(chat.template, readable)) if readable else 0)
        )
    rules = chat.tools
    total = chat.tools_prompt_tokens + odd
    for tool in readable:
        function = tool.get("function", tool)
        total += rules.function_init
        description = _without_final_period(str(function.get("description") or ""))
        total += counter.count_text(f"{function.get('name', '')}:{description}")
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        if not properties:
            continue
        total += rules.property_init
        for key, schema in properties.items():
            total += rules.property_key
            if "enum" in schema:
                total += rules.enum_init
                for item in schema["enum"]:
                    total += rules.enum_item + counter.count_text(str(item))
            description = _without_final_period(str(schema.get("description") or ""))
            total += counter.count_text(f"{key}:{_schema_type(schema)}:{description}")
            unpriced = {k: v for k, v in schema.items() if k not in _PRICED_PROPERTY_KEYS}
            if unpriced:
                total += counter.count_text(
                    json.dumps(unpriced, ensure_ascii=False, separators=(",", ":"))
                )
    return total + rules.functions_end


@dataclass(frozen=True)
class PromptCount:
    """A request's input tokens, split into its messages and its tool definitions."""

    input_tokens: int
    messages_tokens: int
    tools_tokens: int
    images_of_unknown_size: int


def count_request(
    counter: TokenCounter,
    messages: Iterable[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
) -> PromptCount:
    """Tokens of a chat request as the provider bills its input: messages, reply priming
    and tool definitions."""
    measured = [measure_message(counter, m) for m in messages]
    messages_tokens = reply_priming(counter) + sum(m.tokens for m in measured)
    tools_tokens = count_tools(counter, tools)
    return PromptCount(
        input_tokens=messages_tokens + tools_tokens,
        messages_tokens=messages_tokens,
        tools_tokens=tools_tokens,
        images_of_unknown_size=sum(m.images_of_unknown_size for m in measured),
    )


# -- models -----------------------------------------------------------------------------------

ModelSource = Literal["builtin", "operator", "default"]


@dataclass(frozen=True)
class ModelSpec:
    """What the budget needs to know about a model."""

    name: str
    context_limit: int
    max_output_tokens: int | None
    #: The tiktoken encoding that counts it: its own (``native_encoding``) or a proxy.
    encoding: str
    safety_factor: float = 1.0
    #: The encoding is the model's own tokenizer (OpenAI models), so counts are exact.
    native_encoding: bool = False
    #: An operator-supplied Hugging Face tokenizer.json that counts it exactly.
    tokenizer_file: str | None = None
    #: The family whose real tokenizer counts it when its package is installed
    #: (:mod:`app.tokens.families`); without it, the proxy above.
    tokenizer_family: str | None = None
    #: Content-aware proxy margins (used instead of ``safety_factor`` when set).
    margins: ContentMargins | None = None
    rules: ChatRules = DEFAULT_RULES
    #: The table entry the name resolved to; calibration is learnt per entry. None: unknown.
    entry: str | None = None
    family: str = "other"
    source: ModelSource = "default"

    @property
    def exact(self) -> bool:
        return self.safety_factor == 1.0

    @property
    def method(self) -> CountingMethod:
        """How its counts are made (before any fallback)."""
        if self.tokenizer_file:
            return "tokenizer"
        if self.native_encoding and self.exact:
            return "exact"
        return "proxy"

    @property
    def calibration_key(self) -> str:
        """What calibration is learnt under: the table entry, or the alias itself."""
        return self.entry or _normalise_model(self.name)


def _openai(
    name: str,
    context_limit: int,
    max_output: int,
    *,
    encoding: str = "o200k_base",
    images: ImageRules = DEFAULT_IMAGE_RULES,
) -> ModelSpec:
    tools = CL100K_TOOL_RULES if encoding == "cl100k_base" else O200K_TOOL_RULES
    return ModelSpec(
        name,
        context_limit,
        max_output,
        encoding,
        native_encoding=True,
        rules=ChatRules(tools=tools, images=images),
        family="openai",
    )


def _proxy(
    name: str,
    context_limit: int,
    max_output: int,
    factor: float,
    *,
    family: str,
    images: ImageRules = DEFAULT_IMAGE_RULES,
    tokenizer: str | None = None,
) -> ModelSpec:
    return ModelSpec(
        name,
        context_limit,
        max_output,
        "o200k_base",
        factor,
        tokenizer_family=tokenizer,
        margins=_FAMILY_MARGINS.get(tokenizer) if tokenizer else None,
        rules=ChatRules(
            images=images,
            template=_FAMILY_TEMPLATES.get(tokenizer or "") or _FAMILY_TEMPLATES.get(family),
            tools_prompt_tokens=ANTHROPIC_TOOL_PROMPT_TOKENS if family == "anthropic" else 0,
        ),
        family=family,
    )


#: The open-weight families counted as their chat template renders a request.
_FAMILY_TEMPLATES: dict[str, TemplateName] = {
    "llama": "llama3",
    "qwen": "qwen",
    "mistral": "mistral",
    # Names that span Mistral's instruct versions: the dearest framing of them all.
    "mistral-any": "mistral-any",
    "deepseek": "deepseek",
}
#: Proxy margins of the families with a real tokenizer, for installs without its extra:
#: o200k_base times a factor plus an allowance per digit, CJK character and emoji, fitted
#: with ``python -m bench.tokenizers --fit`` as the smallest that keeps every text of a
#: generated corpus (prose, code, JSON, CJK, emoji, digit tables, hex logs, a mix) at or
#: under the estimate; the factor is never below 1.05, for vocabulary the corpus lacks.
_FAMILY_MARGINS: dict[str, ContentMargins] = {
    "mistral": ContentMargins(1.05, per_digit=0.67, per_cjk=0.1, per_emoji=1.93),
    # SentencePiece splits prose finer than Tekken: a larger factor (fitted on seed 1).
    "mistral-any": ContentMargins(1.34, per_digit=0.63, per_cjk=0.54, per_emoji=1.19),
    "llama3": ContentMargins(1.05, per_digit=0.14, per_cjk=0.1, per_emoji=1.06),
    "qwen": ContentMargins(1.06, per_digit=0.64, per_cjk=0.02, per_emoji=0.11),
    "deepseek": ContentMargins(1.13, per_digit=0.02, per_cjk=0.02, per_emoji=0.02),
}
#: Anthropic's tool-use system prompt, added to every request that declares tools (its
#: documented size for Claude 4 and 3.7 Sonnet with tool_choice auto: the dearest current one).
ANTHROPIC_TOOL_PROMPT_TOKENS = 346


_GPT5_IMAGES = ImageRules("tiles", 70, 140)
_O_SERIES_IMAGES = ImageRules("tiles", 75, 150)
_GPT4O_MINI_IMAGES = ImageRules("tiles", 2833, 5667)
_ANTHROPIC_IMAGES = ImageRules("pixels")


def _patches(multiplier: float) -> ImageRules:
    return ImageRules("patches", patch_multiplier=multiplier)


# Current models. OpenAI models are counted exactly with their own encoding and their
# published image rules. The others use o200k_base as a proxy with a factor that errs high
# (their tokenizers split text into more pieces than o200k_base does, code and non-English
# text most); calibration from real usage corrects what remains.
_BUILTIN_MODELS: tuple[ModelSpec, ...] = (
    # OpenAI: GPT-5, GPT-4.1, GPT-4.5, GPT-4o, o-series.
    _openai("gpt-5", 400_000, 128_000, images=_GPT5_IMAGES),
    _openai("gpt-5-mini", 400_000, 128_000, images=_patches(1.62)),
    _openai("gpt-5-nano", 400_000, 128_000, images=_patches(2.46)),
    _openai("gpt-5-chat", 128_000, 16_384, images=_GPT5_IMAGES),
    _openai("gpt-4.1", 1_047_576, 32_768),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, images=_patches(1.62)),
    _openai("gpt-4.1-nano", 1_047_576, 32_768, images=_patches(2.46)),
    _openai("gpt-4.5", 128_000, 16_384),
    _openai("gpt-4o", 128_000, 16_384),
    _openai("gpt-4o-mini", 128_000, 16_384, images=_GPT4O_MINI_IMAGES),
    _openai("chatgpt-4o", 128_000, 16_384),
    _openai("o1", 200_000, 100_000, images=_O_SERIES_IMAGES),
    _openai("o1-mini", 128_000, 65_536),
    _openai("o1-pro", 200_000, 100_000, images=_O_SERIES_IMAGES),
    _openai("o3", 200_000, 100_000, images=_O_SERIES_IMAGES),
    _openai("o3-mini", 200_000, 100_000),
    _openai("o3-pro", 200_000, 100_000, images=_O_SERIES_IMAGES),
    _openai("o4-mini", 200_000, 100_000, images=_patches(1.72)),
    _openai("gpt-4-turbo", 128_000, 4_096, encoding="cl100k_base"),
    _openai("gpt-4-32k", 32_768, 4_096, encoding="cl100k_base"),
    _openai("gpt-4", 8_192, 4_096, encoding="cl100k_base"),
    _openai("gpt-3.5-turbo", 16_385, 4_096, encoding="cl100k_base"),
    # OpenAI's open-weight models use o200k_harmony, a superset of o200k_base.
    _proxy("gpt-oss", 131_072, 32_768, 1.05, family="openai-oss"),
    # Anthropic: Claude 3.5 to 4.x.
    _proxy("claude", 200_000, 8_192, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy("claude-3-5-sonnet", 200_000, 8_192, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy("claude-3-5-haiku", 200_000, 8_192, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy(
        "claude-3-7-sonnet", 200_000, 64_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES
    ),
    _proxy("claude-sonnet-4", 200_000, 64_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy("claude-opus-4", 200_000, 32_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy("claude-opus-4-1", 200_000, 32_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy(
        "claude-sonnet-4-5", 200_000, 64_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES
    ),
    _proxy("claude-haiku-4-5", 200_000, 64_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    _proxy("claude-opus-4-5", 200_000, 64_000, 1.25, family="anthropic", images=_ANTHROPIC_IMAGES),
    # Meta Llama 3.x.
    _proxy("llama", 128_000, 4_096, 1.15, family="llama", tokenizer="llama3"),
    _proxy("llama-3", 8_192, 2_048, 1.15, family="llama", tokenizer="llama3"),
    _proxy("llama-3.1", 128_000, 4_096, 1.15, family="llama", tokenizer="llama3"),
    _proxy("llama-3.2", 128_000, 4_096, 1.15, family="llama", tokenizer="llama3"),
    _proxy("llama-3.3", 128_000, 4_096, 1.15, family="llama", tokenizer="llama3"),
    # Qwen 2.5 and 3.
    _proxy("qwen", 131_072, 8_192, 1.15, family="qwen", tokenizer="qwen"),
    _proxy("qwen2.5", 131_072, 8_192, 1.15, family="qwen", tokenizer="qwen"),
    _proxy("qwen3", 131_072, 8_192, 1.15, family="qwen", tokenizer="qwen"),
    # Mistral.
    _proxy("mistral", 128_000, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    _proxy("mistral-large", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    _proxy("mistral-medium", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("mistral-small", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("ministral", 128_000, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("mistral-nemo", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("codestral", 256_000, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    _proxy("mixtral", 32_768, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    # The names Mistral's API gives its open-weight models (mistral-common's model table).
    _proxy("open-mistral", 32_768, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    _proxy("open-mixtral", 65_536, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    _proxy("open-mistral-nemo", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("pixtral", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral"),
    _proxy("pixtral-large", 131_072, 4_096, 1.20, family="mistral", tokenizer="mistral-any"),
    # Google Gemini.
    _proxy("gemini", 1_048_576, 8_192, 1.15, family="gemini"),
    _proxy("gemini-1.5-pro", 2_097_152, 8_192, 1.15, family="gemini"),
    _proxy("gemini-1.5-flash", 1_048_576, 8_192, 1.15, family="gemini"),
    _proxy("gemini-2.0-flash", 1_048_576, 8_192, 1.15, family="gemini"),
    _proxy("gemini-2.5-pro", 1_048_576, 65_536, 1.15, family="gemini"),
    _proxy("gemini-2.5-flash", 1_048_576, 65_536, 1.15, family="gemini"),
    # DeepSeek V3 / R1.
    _proxy("deepseek", 128_000, 8_192, 1.15, family="deepseek", tokenizer="deepseek"),
    _proxy("deepseek-chat", 128_000, 8_192, 1.15, family="deepseek", tokenizer="deepseek"),
    _proxy("deepseek-reasoner", 128_000, 65_536, 1.15, family="deepseek", tokenizer="deepseek"),
    _proxy("deepseek-v3", 128_000, 8_192, 1.15, family="deepseek", tokenizer="deepseek"),
    _proxy("deepseek-r1", 128_000, 65_536, 1.15, family="deepseek", tokenizer="deepseek"),
)

#: Models nobody told contextd about: o200k_base with a factor that errs high.
UNKNOWN_MODEL_ENCODING = "o200k_base"
UNKNOWN_MODEL_SAFETY_FACTOR = 1.25


def _normalise_model(name: str) -> str:
    # "openai/gpt-4o", "meta-llama/Llama-3.1-8B" -> the part after the provider prefix.
    return name.rsplit("/", 1)[-1].lower()


#: Model names whose lookup a registry keeps (see ``ModelRegistry.lookup``).
LOOKUPS_KEPT = 1024


class ModelRegistry:
    """The model table: the built-in entries, then an operator's, each by name."""

    def __init__(self, entries: Iterable[ModelSpec] = ()) -> None:
        self._entries: dict[str, ModelSpec] = {}
        for spec in _BUILTIN_MODELS:
            self._entries[spec.name.lower()] = replace(
                spec, entry=spec.name.lower(), source="builtin"
            )
        for spec in entries:
            self._entries[spec.name.lower()] = replace(spec, entry=spec.name.lower())
        # Every request looks its session's model up (its budget, its counter, the metrics'
        # label), and a lookup tries every entry of the table: the answers are kept, the table
        # never changing once built. Names are the agents' free text, hence the bound.
        self._found: dict[tuple[str, int], ModelSpec] = {}

    def entries(self) -> list[ModelSpec]:
        """Every entry, by name."""
        return [self._entries[name] for name in sorted(self._entries)]

    def entry(self, name: str) -> ModelSpec | None:
        return self._entries.get(name.lower())

    def lookup(self, name: str, *, default_context_limit: int = 8192) -> ModelSpec:
        """The spec of a model by exact name or longest known prefix ending at a dash;
        unknown models get the default context limit and a proxy count that errs high."""
        key = (name, default_context_limit)
        found = self._found.get(key)
        if found is None:
            if len(self._found) >= LOOKUPS_KEPT:
                self._found.clear()
            found = self._found[key] = self._lookup(name, default_context_limit)
        return found

    def _lookup(self, name: str, default_context_limit: int) -> ModelSpec:
        wanted = _normalise_model(name)
        best = ""
        for key in self._entries:
            if (wanted == key or wanted.startswith(key + "-")) and len(key) > len(best):
                best = key
        if best:
            return replace(self._entries[best], name=name)
        return ModelSpec(
            name,
            default_context_limit,
            None,
            UNKNOWN_MODEL_ENCODING,
            UNKNOWN_MODEL_SAFETY_FACTOR,
            source="default",
        )


BUILTIN_REGISTRY = ModelRegistry()


def lookup_model(name: str, *, default_context_limit: int = 8192) -> ModelSpec:
    """A model's spec from the built-in table (see :meth:`ModelRegistry.lookup`)."""
    return BUILTIN_REGISTRY.lookup(name, default_context_limit=default_context_limit)


def model_family(name: str) -> str | None:
    """The built-in table's entry a model name falls under ("gpt-4o", "claude", …), or None
    for a model the table does not know: a bounded name, fit for a metric label."""
    spec = BUILTIN_REGISTRY.lookup(name)
    return spec.entry if spec.source == "builtin" else None


def counting_method(
    spec: ModelSpec, *, fell_back: bool, counter: TokenCounter | None = None
) -> CountingMethod:
    """How a model's counts are made; with its counter, a family whose real tokenizer is
    installed says "tokenizer" rather than its proxy."""
    if fell_back:
        return "fallback"
    if spec.tokenizer_family and isinstance(counter, TiktokenCounter):
        return "tokenizer"
    return spec.method
