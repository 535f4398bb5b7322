"""The stored chat shape as an OpenAI-compatible API takes it: what only the Anthropic
rendering reads, or what earlier releases stored, is left out."""

from __future__ import annotations

from typing import Any

from app.budget.assembly import chat_problems
from app.budget.openai_format import to_openai

CALL = {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
PNG = "data:image/png;base64,iVBO"


def test_a_call_leaves_its_place_among_the_text_behind() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
            "tool_calls": [{**CALL, "after_parts": 1}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "21C"},
    ]

    converted = to_openai(messages)

    assert converted[1]["tool_calls"] == [CALL]
    assert converted[1]["content"] == messages[1]["content"]
    assert messages[1]["tool_calls"][0]["after_parts"] == 1
    assert chat_problems(converted) == []


def test_a_null_detail_stored_by_an_earlier_release_is_left_out() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": PNG, "detail": None}},
                {"type": "image_url", "image_url": {"url": PNG, "detail": "high"}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {
            "role": "tool",
            "tool_call_id": "a",
            "content": [{"type": "image_url", "image_url": {"url": PNG, "detail": None}}],
        },
    ]

    converted = to_openai(messages)

    images = [
        part["image_url"]
        for message in converted
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    assert images == [{"url": PNG}, {"url": PNG, "detail": "high"}, {"url": PNG}]
    assert messages[0]["content"][0]["image_url"]["detail"] is None


def test_a_prompt_shares_no_list_or_message_with_what_it_was_made_from() -> None:
    # The rows a worker keeps between steps are what the prompt is made from: an edit of the
    # prompt must not reach them.
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "a", "content": "21C"},
        {"role": "tool", "tool_call_id": "b", "content": "err", "is_error": True},
    ]

    converted = to_openai(messages)
    converted[1]["tool_calls"].append(CALL)
    for message in converted:
        message["content"] = "changed"

    assert messages[1]["tool_calls"] == [CALL]
    assert [m["content"] for m in messages] == ["Weather?", None, "21C", "err"]
    assert "is_error" not in converted[3]
