"""Token counting: one entry point for every count the service makes.

Counts follow OpenAI's published chat rules (3 tokens per message, 1 per name, 3 to prime the
reply). Models without a public tokenizer are counted with a stated proxy encoding times a
safety factor that errs high. When an encoding cannot be loaded, counting falls back to
``ceil(chars / 4 * 1.25)`` (seed 003 §9) and says so, so the caller can log and count it.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

logger = logging.getLogger(__name__)

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3
# A tool call costs its function name and JSON arguments plus framing the provider does not
# publish; this allowance keeps the estimate on the high side.
TOKENS_PER_TOOL_CALL = 8
# Images are counted by detail: "low" is a flat 85 tokens; anything else is costed as a
# 1024x1024 "high" image (85 + 4 tiles x 170), an upper bound for most agent screenshots.
IMAGE_LOW_DETAIL_TOKENS = 85
IMAGE_DEFAULT_TOKENS = 765

FALLBACK_ESTIMATOR = "fallback:chars/4*1.25"


class TokenCounter(Protocol):
    """Counts the tokens of a piece of text."""

    @property
    def name(self) -> str: ...

    def count_text(self, text: str) -> int: ...


class Encoding(Protocol):
    def encode(self, text: str, *, disallowed_special: Any = ...) -> list[int]: ...


@dataclass(frozen=True)
class TiktokenCounter:
    encoding_name: str
    encoding: Encoding

    @property
    def name(self) -> str:
        return f"tiktoken:{self.encoding_name}"

    def count_text(self, text: str) -> int:
        # Special-token text in user content is ordinary text to the provider.
        return len(self.encoding.encode(text, disallowed_special=()))


@dataclass(frozen=True)
class FallbackCounter:
    """Seed 003 §9: ``ceil(char_count / 4 * 1.25)``."""

    @property
    def name(self) -> str:
        return FALLBACK_ESTIMATOR

    def count_text(self, text: str) -> int:
        return math.ceil(len(text) / 4 * 1.25)


@dataclass(frozen=True)
class ScaledCounter:
    """A proxy encoding for a model whose tokenizer is not public, scaled up to err high."""

    inner: TokenCounter
    factor: float

    @property
    def name(self) -> str:
        return f"{self.inner.name}*{self.factor:g}"

    def count_text(self, text: str) -> int:
        return math.ceil(self.inner.count_text(text) * self.factor)


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


def _image_tokens(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    total = 0
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            image = part.get("image_url")
            detail = image.get("detail") if isinstance(image, Mapping) else None
            total += IMAGE_LOW_DETAIL_TOKENS if detail == "low" else IMAGE_DEFAULT_TOKENS
    return total


def count_message(counter: TokenCounter, message: Mapping[str, Any]) -> int:
    """Tokens one chat message adds to a prompt, overhead included."""
    tokens = TOKENS_PER_MESSAGE + counter.count_text(str(message["role"]))
    content = message.get("content")
    text = content_text(content)
    if text:
        tokens += counter.count_text(text)
    tokens += _image_tokens(content)
    if message.get("name"):
        tokens += TOKENS_PER_NAME + counter.count_text(str(message["name"]))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        tokens += TOKENS_PER_TOOL_CALL
        tokens += counter.count_text(str(call.get("id", "")))
        tokens += counter.count_text(str(function.get("name", "")))
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        tokens += counter.count_text(arguments)
    if message.get("tool_call_id"):
        tokens += counter.count_text(str(message["tool_call_id"]))
    return tokens


def count_prompt(counter: TokenCounter, messages: Iterable[Mapping[str, Any]]) -> int:
    """Tokens of a whole prompt: every message plus the reply priming."""
    return REPLY_PRIMING_TOKENS + sum(count_message(counter, m) for m in messages)


@dataclass(frozen=True)
class ModelSpec:
    """What the budget needs to know about a model."""

    name: str
    context_limit: int
    max_output_tokens: int | None
    encoding: str
    safety_factor: float = 1.0

    @property
    def exact(self) -> bool:
        return self.safety_factor == 1.0


# A short table of well-known models. OpenAI models are counted exactly with their own
# encoding; the others use o200k_base as a proxy with a factor that errs high.
_BUILTIN_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("gpt-5", 400_000, 128_000, "o200k_base"),
    ModelSpec("gpt-4.1", 1_047_576, 32_768, "o200k_base"),
    ModelSpec("gpt-4o", 128_000, 16_384, "o200k_base"),
    ModelSpec("o1", 200_000, 100_000, "o200k_base"),
    ModelSpec("o3", 200_000, 100_000, "o200k_base"),
    ModelSpec("o4-mini", 200_000, 100_000, "o200k_base"),
    ModelSpec("gpt-4-turbo", 128_000, 4_096, "cl100k_base"),
    ModelSpec("gpt-4-32k", 32_768, 4_096, "cl100k_base"),
    ModelSpec("gpt-4", 8_192, 4_096, "cl100k_base"),
    ModelSpec("gpt-3.5-turbo", 16_385, 4_096, "cl100k_base"),
    ModelSpec("claude", 200_000, 8_192, "o200k_base", 1.25),
    ModelSpec("llama", 128_000, 4_096, "o200k_base", 1.15),
    ModelSpec("qwen", 131_072, 8_192, "o200k_base", 1.15),
    ModelSpec("mistral", 128_000, 4_096, "o200k_base", 1.20),
    ModelSpec("gemini", 1_048_576, 8_192, "o200k_base", 1.15),
    ModelSpec("deepseek", 128_000, 8_192, "o200k_base", 1.15),
)


def _normalise_model(name: str) -> str:
    # "openai/gpt-4o", "meta-llama/Llama-3.1-8B" -> the part after the provider prefix.
    return name.rsplit("/", 1)[-1].lower()


def _builtin_spec(name: str) -> ModelSpec | None:
    wanted = _normalise_model(name)
    best: ModelSpec | None = None
    for spec in _BUILTIN_MODELS:
        if (wanted == spec.name or wanted.startswith(spec.name + "-")) and (
            best is None or len(spec.name) > len(best.name)
        ):
            best = spec
    return best


def model_family(name: str) -> str | None:
    """The built-in table's entry a model name falls under ("gpt-4o", "claude", …), or None
    for a model the table does not know: a bounded name, fit for a metric label."""
    spec = _builtin_spec(name)
    return spec.name if spec is not None else None


def lookup_model(name: str, *, default_context_limit: int = 8192) -> ModelSpec:
    """The spec of a model by exact name or longest known prefix; unknown models get the
    default context limit and a proxy count that errs high."""
    best = _builtin_spec(name)
    if best is not None:
        return ModelSpec(
            name, best.context_limit, best.max_output_tokens, best.encoding, best.safety_factor
        )
    return ModelSpec(name, default_context_limit, None, "o200k_base", 1.25)


def load_tiktoken_encoding(name: str) -> Encoding:
    import tiktoken

    return tiktoken.get_encoding(name)


class TokenizerRegistry:
    """Loads each encoding once and hands out counters.

    A failed load is remembered (and logged once): every later request gets the fallback
    counter at once instead of retrying a download that cannot succeed.
    """

    def __init__(self, load_encoding: Callable[[str], Encoding] = load_tiktoken_encoding) -> None:
        self._load_encoding = load_encoding
        self._lock = threading.Lock()
        self._loaded: dict[str, TiktokenCounter | None] = {}

    def _load(self, encoding_name: str) -> TiktokenCounter | None:
        with self._lock:
            if encoding_name in self._loaded:
                return self._loaded[encoding_name]
            try:
                counter: TiktokenCounter | None = TiktokenCounter(
                    encoding_name, self._load_encoding(encoding_name)
                )
            except Exception:
                logger.warning(
                    "token encoding %s could not be loaded; counting with %s instead "
                    "(set TIKTOKEN_CACHE_DIR for offline installs)",
                    encoding_name,
                    FALLBACK_ESTIMATOR,
                    exc_info=True,
                )
                counter = None
            self._loaded[encoding_name] = counter
            return counter

    def counter_for(self, spec: ModelSpec) -> tuple[TokenCounter, bool]:
        """The counter for a model and whether it is the fallback estimator."""
        base = self._load(spec.encoding)
        if base is None:
            return FallbackCounter(), True
        if spec.exact:
            return base, False
        return ScaledCounter(base, spec.safety_factor), False
