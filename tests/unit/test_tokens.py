"""Token counting: the fallback estimator, OpenAI's message rules, model lookup, the registry."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.budget.tokens import (
    FALLBACK_ESTIMATOR,
    LOOKUPS_KEPT,
    FallbackCounter,
    ModelRegistry,
    ModelSpec,
    ScaledCounter,
    TiktokenCounter,
    count_message,
    count_prompt,
    lookup_model,
)
from app.tokens.registry import TokenizerRegistry

# --------------------------------------------------------------------------- fallback estimator


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 1),  # ceil(0.3125)
        ("abcd", 2),  # ceil(1.25)
        ("abcdefgh", 3),  # ceil(2.5)
        ("x" * 16, 5),  # exactly 5.0: no rounding up past an integer
        ("x" * 17, 6),  # ceil(5.3125)
        ("x" * 100, 32),  # ceil(31.25)
        ("x" * 4000, 1250),
    ],
)
def test_fallback_estimator_is_ceil_chars_over_4_times_1_25(text: str, expected: int) -> None:
    assert FallbackCounter().count_text(text) == expected


@given(st.text(max_size=2000))
@settings(max_examples=200, deadline=None)
def test_fallback_estimator_formula_holds_for_any_text(text: str) -> None:
    assert FallbackCounter().count_text(text) == math.ceil(len(text) / 4 * 1.25)


def test_fallback_estimator_counts_characters_not_bytes() -> None:
    # Four emoji are 16 UTF-8 bytes but 4 characters.
    assert FallbackCounter().count_text("🙂🙂🙂🙂") == 2


def test_fallback_estimator_names_itself() -> None:
    assert FallbackCounter().name == FALLBACK_ESTIMATOR == "fallback:chars/4*1.25"


# --------------------------------------------------------------------------- OpenAI message rules

ENCODINGS = ("o200k_base", "cl100k_base")


def _encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def _openai_message_tokens(encoding: tiktoken.Encoding, message: Mapping[str, Any]) -> int:
    """OpenAI cookbook rule, written independently: 3 per message, then the tokens of every
    string value (role, content, name), plus 1 when a name is present. A part-list content is
    its text parts joined by newlines."""

    def enc(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    tokens = 3
    for key, value in message.items():
        if key == "content" and isinstance(value, list):
            value = "\n".join(part["text"] for part in value if part.get("type") == "text")
        tokens += enc(value)
        if key == "name":
            tokens += 1
    return tokens


MESSAGES: dict[str, dict[str, Any]] = {
    "plain": {"role": "user", "content": "What is the capital of France?"},
    "system": {"role": "system", "content": "You are a careful assistant. Answer briefly."},
    "assistant": {"role": "assistant", "content": "Paris is the capital of France."},
    "named": {"role": "user", "name": "alice_42", "content": "Please review PR #1289."},
    "code": {
        "role": "user",
        "content": (
            "def fib(n: int) -> int:\n"
            "    if n < 2:\n"
            "        return n\n"
            "    return fib(n - 1) + fib(n - 2)\n"
        ),
    },
    "json": {
        "role": "tool",
        "content": json.dumps(
            {"order_id": "A-1029", "items": [{"sku": "X1", "qty": 3}], "total": 19.99}
        ),
    },
    "emoji": {"role": "user", "content": "Ship it 🚀🚀 — great work 👍🏽 🎉"},
    "cjk": {
        "role": "user",
        "content": "请帮我总结这份文件。東京の天気はどうですか\uff1f한국어도 돼요",
    },
    "special_tokens_as_text": {"role": "user", "content": "ignore <|endoftext|> and <|im_start|>"},
    "whitespace": {"role": "user", "content": "  spaced\n\n\n\ttabs  "},
    "long": {"role": "user", "content": "The quick brown fox jumps over the lazy dog. " * 200},
}


@pytest.mark.parametrize("encoding_name", ENCODINGS)
@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_count_message_matches_openai_rule_computed_with_tiktoken(
    encoding_name: str, case: str
) -> None:
    encoding = _encoding(encoding_name)
    counter = TiktokenCounter(encoding_name, encoding)
    message = MESSAGES[case]
    assert count_message(counter, message) == _openai_message_tokens(encoding, message)


@pytest.mark.parametrize("encoding_name", ENCODINGS)
def test_count_message_with_name_adds_one_plus_the_name_tokens(encoding_name: str) -> None:
    encoding = _encoding(encoding_name)
    counter = TiktokenCounter(encoding_name, encoding)
    unnamed = {"role": "user", "content": "hello there"}
    named = {**unnamed, "name": "bob_the_builder"}
    name_tokens = len(encoding.encode("bob_the_builder"))
    assert count_message(counter, named) - count_message(counter, unnamed) == 1 + name_tokens


@pytest.mark.parametrize("encoding_name", ENCODINGS)
def test_count_message_multi_part_text_content(encoding_name: str) -> None:
    encoding = _encoding(encoding_name)
    counter = TiktokenCounter(encoding_name, encoding)
    parts = ["First part: the order is A-1029.", "Second part, with 日本語 and 🙂."]
    message: dict[str, Any] = {
        "role": "user",
        "content": [{"type": "text", "text": text} for text in parts],
    }
    assert count_message(counter, message) == _openai_message_tokens(encoding, message)
    # A part list costs at least what its parts cost on their own, plus the message overhead.
    separate = sum(len(encoding.encode(text)) for text in parts)
    assert count_message(counter, message) >= 3 + len(encoding.encode("user")) + separate


def test_count_message_counts_only_role_and_overhead_for_empty_content() -> None:
    encoding = _encoding("o200k_base")
    counter = TiktokenCounter("o200k_base", encoding)
    role_tokens = len(encoding.encode("assistant"))
    assert count_message(counter, {"role": "assistant", "content": ""}) == 3 + role_tokens
    assert count_message(counter, {"role": "assistant", "content": None}) == 3 + role_tokens


def test_count_message_costs_images_by_detail() -> None:
    encoding = _encoding("o200k_base")
    counter = TiktokenCounter("o200k_base", encoding)
    base = 3 + len(encoding.encode("user")) + len(encoding.encode("look"))

    def with_image(detail: str | None) -> dict[str, Any]:
        image: dict[str, Any] = {"url": "https://example.com/a.png"}
        if detail is not None:
            image["detail"] = detail
        return {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": image},
            ],
        }

    # A remote image's size is unknown: anything but "low" is costed at the most any size can
    # cost under the 512px tile rule (85 + 8 tiles x 170), so the count never errs low.
    assert count_message(counter, with_image("low")) == base + 85
    assert count_message(counter, with_image("high")) == base + 1445
    assert count_message(counter, with_image(None)) == base + 1445


def test_count_message_counts_tool_calls_and_tool_call_id() -> None:
    encoding = _encoding("o200k_base")
    counter = TiktokenCounter("o200k_base", encoding)

    def enc(text: str) -> int:
        return len(encoding.encode(text))

    arguments = '{"city": "Paris", "unit": "C"}'
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_abc",
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
        ],
    }
    expected = 3 + enc("assistant") + 8 + enc("call_abc") + enc("get_weather") + enc(arguments)
    assert count_message(counter, call) == expected
    result = {"role": "tool", "tool_call_id": "call_abc", "content": "18C, sunny"}
    assert count_message(counter, result) == 3 + enc("tool") + enc("18C, sunny") + enc("call_abc")


@pytest.mark.parametrize("encoding_name", ENCODINGS)
def test_count_prompt_adds_three_reply_priming_tokens(encoding_name: str) -> None:
    counter = TiktokenCounter(encoding_name, _encoding(encoding_name))
    messages = [MESSAGES["system"], MESSAGES["plain"], MESSAGES["assistant"], MESSAGES["named"]]
    assert count_prompt(counter, messages) == 3 + sum(count_message(counter, m) for m in messages)
    assert count_prompt(counter, []) == 3


def test_count_prompt_matches_the_cookbook_example() -> None:
    # The OpenAI cookbook's example conversation is 129 prompt tokens for gpt-4o-era encodings
    # and gpt-4 (cl100k_base); the rule here must reproduce what the API reports.
    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates "
            "corporate jargon into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on "
            "opportunities for increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the "
            "client deliverable.",
        },
    ]
    counter = TiktokenCounter("cl100k_base", _encoding("cl100k_base"))
    assert count_prompt(counter, messages) == 129
    o200k = TiktokenCounter("o200k_base", _encoding("o200k_base"))
    assert count_prompt(o200k, messages) == 124


# --------------------------------------------------------------------------- model lookup


@pytest.mark.parametrize(
    ("name", "limit", "max_output", "encoding"),
    [
        ("gpt-4o", 128_000, 16_384, "o200k_base"),
        ("gpt-4", 8192, 4096, "cl100k_base"),
        ("gpt-4-turbo", 128_000, 4096, "cl100k_base"),
        ("gpt-4-32k", 32_768, 4096, "cl100k_base"),
        ("gpt-3.5-turbo", 16_385, 4096, "cl100k_base"),
        ("gpt-4.1", 1_047_576, 32_768, "o200k_base"),
        ("o1", 200_000, 100_000, "o200k_base"),
    ],
)
def test_lookup_model_exact_names(name: str, limit: int, max_output: int, encoding: str) -> None:
    spec = lookup_model(name)
    assert spec.name == name
    assert (spec.context_limit, spec.max_output_tokens, spec.encoding) == (
        limit,
        max_output,
        encoding,
    )
    assert spec.safety_factor == 1.0
    assert spec.exact


@pytest.mark.parametrize(
    ("name", "like"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini", "gpt-4o"),
        ("gpt-4-0613", "gpt-4"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
        ("gpt-4-32k-0613", "gpt-4-32k"),
        ("gpt-3.5-turbo-0125", "gpt-3.5-turbo"),
        ("gpt-4.1-mini", "gpt-4.1"),
        ("o3-mini", "o3"),
    ],
)
def test_lookup_model_dated_and_suffixed_variants_get_the_base_limits(name: str, like: str) -> None:
    spec, base = lookup_model(name), lookup_model(like)
    assert spec.name == name
    assert (spec.context_limit, spec.max_output_tokens, spec.encoding, spec.safety_factor) == (
        base.context_limit,
        base.max_output_tokens,
        base.encoding,
        base.safety_factor,
    )


def test_lookup_model_strips_provider_prefix_and_case() -> None:
    for name in ("openai/gpt-4o", "OpenAI/GPT-4o", "azure/openai/gpt-4o-2024-08-06"):
        spec = lookup_model(name)
        assert spec.name == name  # the alias the caller used is kept
        assert spec.context_limit == 128_000
        assert spec.encoding == "o200k_base"
        assert spec.exact


def test_a_model_looked_up_again_gets_the_answer_for_its_own_name_and_default() -> None:
    # Lookups are kept per name and default limit: asking again, in another spelling or
    # with another default, is answered for what was asked.
    registry = ModelRegistry()
    unknown = [
        registry.lookup("house-model", default_context_limit=limit) for limit in (8192, 32_000)
    ]
    again = registry.lookup("house-model", default_context_limit=8192)
    spellings = [registry.lookup(name).name for name in ("gpt-4o", "GPT-4o", "gpt-4o")]
    for index in range(LOOKUPS_KEPT + 5):  # more names than are kept
        registry.lookup(f"agent-{index}")

    assert [spec.context_limit for spec in unknown] == [8192, 32_000]
    assert again == unknown[0]
    assert spellings == ["gpt-4o", "GPT-4o", "gpt-4o"]
    assert registry.lookup("GPT-4o") == lookup_model("GPT-4o")
    assert registry.lookup("house-model", default_context_limit=32_000) == unknown[1]


def test_lookup_model_longest_prefix_wins() -> None:
    assert lookup_model("gpt-4-turbo-preview").context_limit == 128_000  # not gpt-4's 8192
    assert lookup_model("gpt-4-32k").context_limit == 32_768
    assert lookup_model("gpt-4o-audio-preview").context_limit == 128_000  # gpt-4o, not gpt-4
    assert lookup_model("gpt-4o").encoding == "o200k_base"
    assert lookup_model("gpt-4-0314").encoding == "cl100k_base"


def test_lookup_model_prefix_must_end_at_a_dash() -> None:
    # "gpt-4x" is not a variant of "gpt-4" and "o10" is not "o1".
    for name in ("gpt-4x", "o10-preview", "claudette"):
        spec = lookup_model(name)
        assert spec.context_limit == 8192
        assert spec.max_output_tokens is None


@pytest.mark.parametrize(
    ("name", "limit"),
    [
        ("claude-3-5-sonnet-20241022", 200_000),
        ("anthropic/claude-opus-4", 200_000),
        ("meta-llama/Llama-3.1-8B-Instruct", 128_000),
        ("qwen-2.5-72b", 131_072),
    ],
)
def test_lookup_model_non_openai_models_err_high(name: str, limit: int) -> None:
    spec = lookup_model(name)
    assert spec.context_limit == limit
    assert spec.safety_factor > 1.0
    assert not spec.exact


def test_lookup_model_unknown_gets_8192_and_a_safety_factor() -> None:
    spec = lookup_model("my-private-model-v7")
    assert spec.name == "my-private-model-v7"
    assert spec.context_limit == 8192
    assert spec.max_output_tokens is None
    assert spec.safety_factor > 1.0
    assert not spec.exact


def test_lookup_model_unknown_uses_the_configured_default_limit() -> None:
    assert lookup_model("mystery", default_context_limit=32_000).context_limit == 32_000
    assert lookup_model("gpt-4o", default_context_limit=32_000).context_limit == 128_000


# --------------------------------------------------------------------------- scaled counter


@given(
    text=st.text(max_size=500),
    factor=st.floats(min_value=1.0, max_value=3.0, allow_nan=False, allow_infinity=False),
)
@settings(max_examples=150, deadline=None)
def test_scaled_counter_never_counts_lower_than_its_inner_counter(text: str, factor: float) -> None:
    inner = TiktokenCounter("o200k_base", _encoding("o200k_base"))
    scaled = ScaledCounter(inner, factor)
    assert scaled.count_text(text) >= inner.count_text(text)
    assert scaled.count_text(text) == math.ceil(inner.count_text(text) * factor)


def test_scaled_counter_rounds_up_and_names_its_factor() -> None:
    inner = FallbackCounter()
    scaled = ScaledCounter(inner, 1.15)
    assert inner.count_text("abcd") == 2
    assert scaled.count_text("abcd") == 3  # ceil(2.3)
    assert scaled.name == "fallback:chars/4*1.25*1.15"


# --------------------------------------------------------------------------- registry


def _spying_get_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> list[str]:
    calls: list[str] = []
    real: Callable[[str], tiktoken.Encoding] = tiktoken.get_encoding

    def spy(name: str) -> tiktoken.Encoding:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", spy)
    return calls


def test_registry_gives_exact_tiktoken_counter_for_openai_models() -> None:
    registry = TokenizerRegistry()
    counter, fallback = registry.counter_for(lookup_model("gpt-4o"))
    assert not fallback
    assert isinstance(counter, TiktokenCounter)
    assert counter.name == "tiktoken:o200k_base"
    text = "Exact counts for OpenAI models."
    assert counter.count_text(text) == len(_encoding("o200k_base").encode(text))


def test_registry_scales_proxy_counts_for_non_openai_models() -> None:
    registry = TokenizerRegistry()
    counter, fallback = registry.counter_for(lookup_model("claude-3-opus"))
    assert not fallback
    assert isinstance(counter, ScaledCounter)
    assert counter.factor == 1.25
    assert counter.name.startswith("tiktoken:o200k_base*1.25")


def test_registry_loads_each_encoding_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spying_get_encoding(monkeypatch)
    registry = TokenizerRegistry()
    for name in ("gpt-4o", "gpt-4o-mini", "claude-3", "gpt-4o"):
        registry.counter_for(lookup_model(name))
    assert calls == ["o200k_base"]


def test_registry_falls_back_for_an_unloadable_encoding_without_retrying(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spying_get_encoding(monkeypatch)
    registry = TokenizerRegistry()
    spec = ModelSpec("house-model", 8192, None, "no_such_encoding_base")

    counter, fallback = registry.counter_for(spec)
    assert fallback is True
    assert isinstance(counter, FallbackCounter)
    assert counter.name == FALLBACK_ESTIMATOR
    assert counter.count_text("x" * 17) == 6

    again, fallback_again = registry.counter_for(spec)
    assert fallback_again is True
    assert isinstance(again, FallbackCounter)
    assert calls == ["no_such_encoding_base"]  # the failed load was not retried

    # A good encoding in the same registry still loads.
    good, good_fallback = registry.counter_for(lookup_model("gpt-4"))
    assert not good_fallback
    assert good.name == "tiktoken:cl100k_base"


class _CountingEncoding:
    """One token per character; remembers how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        self.calls += 1
        return [ord(c) for c in text]


def test_short_texts_are_counted_once_per_encoding_and_long_ones_every_time() -> None:
    from app.budget.tokens import MEMO_MAX_CHARS

    encoding = _CountingEncoding()
    registry = TokenizerRegistry(lambda _name: encoding)
    counter, _ = registry.counter_for(lookup_model("gpt-4o"))
    # A new counter, as each request makes: the registry hands it its encoding's memo.
    again, _ = registry.counter_for(lookup_model("gpt-4o"))
    other = _CountingEncoding()  # another process's encoding
    elsewhere, _ = TokenizerRegistry(lambda _name: other).counter_for(lookup_model("gpt-4o"))
    long_text = "x" * (MEMO_MAX_CHARS + 1)

    counts = [counter.count_text("Key fact: room 12"), again.count_text("Key fact: room 12")]
    counts += [elsewhere.count_text("Key fact: room 12")]
    counts += [counter.count_text(long_text), counter.count_text(long_text)]

    assert counts == [17, 17, 17, MEMO_MAX_CHARS + 1, MEMO_MAX_CHARS + 1]
    assert (encoding.calls, other.calls) == (3, 1)
