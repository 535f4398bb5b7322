"""Open-weight families counted with their real tokenizers and chat templates, checked
against each family's own library encoding the same request."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
import tiktoken

from app.budget.tokens import (
    ContentAwareCounter,
    TiktokenCounter,
    TokenCounter,
    count_request,
    lookup_model,
)
from app.tokens.families import FamilyUnavailable, load_family
from app.tokens.offline import family_statuses
from app.tokens.registry import TokenizerRegistry

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful assistant. Answer in English."},
    {"role": "user", "content": "Summarise this CSV:\nid,amount\n1,12345.678\n2,98765.4321"},
    {"role": "assistant", "content": "Two rows; the amounts total 111111.1101."},
    {"role": "user", "content": "日本語で説明してください 🎉 and show `def f(x): return x*2`"},
]

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

TOOL_SESSION: list[dict[str, Any]] = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "abcDEF123",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "abcDEF123", "content": '{"temp": 21.5, "sky": "clear"}'},
    {"role": "user", "content": "Thanks, and tomorrow?"},
]


@cache
def _counter(model: str) -> TokenCounter:
    counter, fell_back = TokenizerRegistry().counter_for(lookup_model(model))
    assert not fell_back
    return counter


@cache
def _mistral_tokenizer() -> Any:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from app.tokens.families import _package_file

    return MistralTokenizer.from_file(
        str(_package_file("mistral_common", "data", "tekken_240911.json"))
    )


def _mistral_request_tokens(messages: list[dict[str, Any]], tools: list[Any]) -> int:
    from mistral_common.protocol.instruct.request import ChatCompletionRequest

    tokenizer = _mistral_tokenizer()
    body = {"messages": messages, "tools": tools or None}
    request: Any = ChatCompletionRequest.model_validate(body)
    return len(tokenizer.encode_chat_completion(request).tokens)


def _llama_request_tokens(messages: list[dict[str, Any]]) -> int:
    from llama_models.datatypes import RawMessage
    from llama_models.llama3.chat_format import ChatFormat
    from llama_models.llama3.tokenizer import Tokenizer

    chat_format = ChatFormat(Tokenizer.get_instance())
    dialog = [RawMessage(role=m["role"], content=m["content"]) for m in messages]
    return len(chat_format.encode_dialog_prompt(dialog).tokens)


def _qwen_request_tokens(messages: list[dict[str, Any]], tools: list[Any]) -> int:
    # Qwen 2.5/3's chat template (ChatML, tools in the system turn), rendered as its
    # tokenizer_config.json's Jinja template renders it.
    rendered = ""
    if tools:
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        rendered += "<|im_start|>system\n" + system
        rendered += (
            "\n\n# Tools\n\nYou may call one or more functions to assist with the user query."
            "\n\nYou are provided with function signatures within <tools></tools> XML tags:"
            "\n<tools>"
        )
        rendered += "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
        rendered += (
            "\n</tools>\n\nFor each function call, return a json object with function name "
            "and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
            '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
            "<|im_end|>\n"
        )
        if messages[0]["role"] == "system":
            messages = messages[1:]
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "tool":
            rendered += (
                f"<|im_start|>user\n<tool_response>\n{content}\n</tool_response><|im_end|>\n"
            )
            continue
        rendered += f"<|im_start|>{role}\n{content}"
        for call in message.get("tool_calls") or ():
            function = call["function"]
            body = json.dumps(
                {"name": function["name"], "arguments": json.loads(function["arguments"])}
            )
            rendered += f"\n<tool_call>\n{body}\n</tool_call>"
        rendered += "<|im_end|>\n"
    rendered += "<|im_start|>assistant\n"
    encoding = load_family("qwen")
    assert isinstance(encoding, tiktoken.Encoding)
    return len(encoding.encode(rendered, allowed_special="all"))


# ------------------------------------------------------------------------------ exact families


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("mistral-small-2503", "mistral"),
        ("llama-3.1-8b-instruct", "llama3"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama3"),
        ("qwen2.5-72b-instruct", "qwen"),
        ("Qwen/Qwen3-8B", "qwen"),
        ("deepseek-chat", "deepseek"),
    ],
)
def test_families_with_their_package_installed_count_with_their_own_tokenizer(
    model: str, family: str
) -> None:
    counter = _counter(model)
    assert isinstance(counter, TiktokenCounter)
    text = "Paris 1234567 東京 🎉"
    assert counter.count_text(text) == len(load_family(family).encode(text, disallowed_special=()))


def test_a_family_is_loaded_once_per_process_and_shared_by_every_registry() -> None:
    first, second = TokenizerRegistry(), TokenizerRegistry()

    assert first.family_tokenizer("qwen") is second.family_tokenizer("qwen")
    # Mistral's models of either generation count with the one Tekken the process holds.
    tekken = first.family_tokenizer("mistral")
    either = second.family_tokenizer("mistral-any")
    assert tekken is not None
    assert tekken in getattr(either, "encodings", ())


def test_llama3_prompt_count_equals_llama_models_dialog_encoding() -> None:
    counted = count_request(_counter("llama-3.1-8b"), CONVERSATION).input_tokens
    assert counted == _llama_request_tokens(CONVERSATION)


def test_qwen_prompt_count_equals_its_chat_template_encoding() -> None:
    counted = count_request(_counter("qwen3-8b"), CONVERSATION[1:]).input_tokens
    assert counted == _qwen_request_tokens(CONVERSATION[1:], [])


def test_qwen_tools_and_tool_results_are_counted_as_the_template_renders_them() -> None:
    counted = count_request(_counter("qwen2.5-7b"), TOOL_SESSION, [WEATHER_TOOL]).input_tokens
    real = _qwen_request_tokens(TOOL_SESSION, [WEATHER_TOOL])
    # Pieces are counted apart (a merge across two pieces is lost): high by a few, never low.
    assert real <= counted <= real + 12


def test_mistral_prompt_count_never_below_mistral_commons_request_encoding() -> None:
    counted = count_request(_counter("mistral-small"), CONVERSATION).input_tokens
    real = _mistral_request_tokens(CONVERSATION, [])
    assert real <= counted <= real + 2 * len(CONVERSATION)


def test_mistral_user_and_assistant_turns_count_exactly() -> None:
    turns = CONVERSATION[1:]
    counted = count_request(_counter("ministral-8b"), turns).input_tokens
    assert counted == _mistral_request_tokens(turns, [])


def test_mistral_tools_calls_and_results_never_below_mistral_commons_encoding() -> None:
    counter = _counter("mistral-small")
    counted = count_request(counter, TOOL_SESSION, [WEATHER_TOOL])
    real = _mistral_request_tokens(TOOL_SESSION, [WEATHER_TOOL])
    assert real <= counted.input_tokens <= real + 2 * len(TOOL_SESSION)
    # The whole JSON schema is rendered, not OpenAI's compact rule.
    real_tools = real - _mistral_request_tokens(TOOL_SESSION, [])
    assert counted.tools_tokens == real_tools


@pytest.mark.parametrize("model", ["llama-3.1-8b", "qwen3-8b", "mistral-small", "deepseek-chat"])
def test_tool_definitions_cost_at_least_their_rendered_json(model: str) -> None:
    counter = _counter(model)
    tools = [WEATHER_TOOL] * 3
    schema_tokens = counter.count_text(json.dumps(WEATHER_TOOL["function"]["parameters"]))
    assert count_request(counter, [], tools).tools_tokens > 3 * schema_tokens


def test_claude_adds_anthropics_tool_system_prompt_once_tools_are_declared() -> None:
    counter, _ = TokenizerRegistry().counter_for(lookup_model("claude-sonnet-4-5"))
    without = count_request(counter, TOOL_SESSION).input_tokens
    with_tools = count_request(counter, TOOL_SESSION, [WEATHER_TOOL]).input_tokens
    assert with_tools - without >= 346 + 20


# -------------------------------------------------------------------------- families absent


def test_a_family_whose_package_is_missing_is_counted_with_its_proxy() -> None:
    def not_installed(family: str) -> Any:
        raise FamilyUnavailable(f"{family} is not installed")

    counter, fell_back = TokenizerRegistry(load_family=not_installed).counter_for(
        lookup_model("qwen3-8b")
    )
    assert not fell_back
    assert isinstance(counter, ContentAwareCounter)
    assert counter.count_text("1234567890") >= 10  # Qwen splits every digit
    # The template framing still applies to the proxy.
    assert count_request(counter, TOOL_SESSION, [WEATHER_TOOL]).tools_tokens > 100


def test_tokenizers_listing_names_each_family_and_its_extra() -> None:
    statuses = {s.name: s for s in family_statuses(TokenizerRegistry().models)}
    assert set(statuses) == {"mistral", "mistral-any", "llama3", "qwen", "deepseek"}
    assert all(status.available and status.optional for status in statuses.values())
    assert "contextd[mistral]" in statuses["mistral"].location
    assert "llama-3.1" in statuses["llama3"].models


# ------------------------------------------------------------ proxies err high, never low


@pytest.mark.parametrize(
    "model", ["mistral-small", "mistral-large", "llama-3.1", "qwen3", "deepseek-chat"]
)
def test_the_proxy_errs_high_on_sessions_that_mix_every_kind_of_content(model: str) -> None:
    from bench.tokenizers import session, tools

    def not_installed(family: str) -> Any:
        raise FamilyUnavailable(family)

    real = _counter(model)
    proxy, _ = TokenizerRegistry(load_family=not_installed).counter_for(lookup_model(model))
    assert isinstance(proxy, ContentAwareCounter)
    messages = [message for _, message in session(seed=7, steps=40)]
    for declared in ([], tools(20)):
        for end in range(10, len(messages) + 1, 10):
            prompt = [messages[0], *messages[max(1, end - 30) : end]]
            estimated = count_request(proxy, prompt, declared).input_tokens
            assert estimated >= count_request(real, prompt, declared).input_tokens


# ------------------------------------------------- Mistral names that span tokenizer versions

PARALLEL_TOOL_SESSION: list[dict[str, Any]] = [
    {"role": "system", "content": "You book trains. Prices are in EUR."},
    {"role": "user", "content": "Trains Lyon → Torino on 2026-03-14, under 120 €? 東京も"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
            for call_id, arguments in (
                ("Q7r2XkP9a", '{"city":"Lyon","unit":"celsius"}'),
                ("b3TmW81zc", '{"city":"Torino"}'),
            )
        ],
    },
    {"role": "tool", "tool_call_id": "Q7r2XkP9a", "content": '{"temp":4.5,"rows":[1,22,333]}'},
    {"role": "tool", "tool_call_id": "b3TmW81zc", "content": "0x7f3a9c21 ERR 503 retry=3"},
]


@cache
def _mistral_version(version: str) -> Any:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    if version == "v1":
        return MistralTokenizer.v1()
    if version == "v3-spm":
        return MistralTokenizer.v3()
    if version == "v7-spm":
        return MistralTokenizer.v7()
    return MistralTokenizer.v3(is_tekken=True)


def _mistral_version_tokens(version: str, messages: list[dict[str, Any]], tools: Any) -> int:
    from mistral_common.protocol.instruct.request import ChatCompletionRequest

    request: Any = ChatCompletionRequest.model_validate({"messages": messages, "tools": tools})
    return len(_mistral_version(version).encode_chat_completion(request).tokens)


@pytest.mark.parametrize(
    "model", ["mistral-large-latest", "codestral-2501", "open-mixtral-8x22b", "pixtral-large-2411"]
)
@pytest.mark.parametrize("version", ["v3-spm", "v7-spm", "v3-tekken"])
def test_mistral_names_across_versions_never_count_below_any_versions_request_encoding(
    model: str, version: str
) -> None:
    counted = count_request(_counter(model), PARALLEL_TOOL_SESSION, [WEATHER_TOOL]).input_tokens
    real = _mistral_version_tokens(version, PARALLEL_TOOL_SESSION, [WEATHER_TOOL])
    # The dearest version's framing and text, never far above any one of them.
    assert real <= counted <= real * 1.25


def test_mixtral_8x7b_user_turns_cost_v1s_written_out_inst_markers() -> None:
    counted = count_request(_counter("mixtral-8x7b"), CONVERSATION).input_tokens
    assert _mistral_version_tokens("v1", CONVERSATION, None) <= counted


def test_sentencepiece_counts_digits_one_by_one_where_the_flat_proxy_did_not() -> None:
    counter = _counter("mistral-large-latest")
    digits = "1234567890 " * 40
    spm = _mistral_version("v7-spm").instruct_tokenizer.tokenizer
    assert counter.count_text(digits) >= len(spm.encode(digits, bos=False, eos=False))
    assert counter.count_text(digits) > 1.2 * len(
        tiktoken.get_encoding("o200k_base").encode(digits)
    )
