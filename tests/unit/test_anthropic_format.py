"""The OpenAI-shaped prompt converted for Anthropic's Messages API."""

from __future__ import annotations

from typing import Any

from app.budget.anthropic import AnthropicPrompt, anthropic_problems, to_anthropic


def call(call_id: str, arguments: str = '{"city": "Lisbon"}') -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "weather", "arguments": arguments},
    }


def test_system_goes_apart_and_tool_exchanges_become_blocks() -> None:
    prompt = to_anthropic(
        [
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "21C"},
            {"role": "tool", "tool_call_id": "b", "content": "17C"},
        ]
    )

    assert prompt.system == "Be terse."
    assert [m["role"] for m in prompt.messages] == ["user", "assistant", "user"]
    assistant = prompt.messages[1]["content"]
    assert assistant[0] == {"type": "text", "text": "Checking."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "a",
        "name": "weather",
        "input": {"city": "Lisbon"},
    }
    assert [b["tool_use_id"] for b in prompt.messages[2]["content"]] == ["a", "b"]
    assert anthropic_problems(prompt) == []


def test_consecutive_user_messages_merge_and_empty_text_is_dropped() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "second"},
        ]
    )

    assert prompt.messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]
    assert anthropic_problems(prompt) == []


def test_a_prompt_opening_on_an_assistant_message_gets_a_user_opening() -> None:
    prompt = to_anthropic(
        [
            {"role": "system", "content": "Summary: …"},
            {"role": "assistant", "content": "Earlier answer."},
            {"role": "user", "content": "Go on."},
        ]
    )

    assert prompt.messages[0]["role"] == "user"
    assert anthropic_problems(prompt) == []


def test_arguments_that_are_not_a_json_object_are_kept() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [call("a", "not json")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
        ]
    )

    assert prompt.messages[1]["content"][0]["input"] == {"arguments": "not json"}


def test_images_become_image_blocks() -> None:
    prompt = to_anthropic(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
                ],
            }
        ]
    )

    blocks = prompt.messages[0]["content"]
    assert blocks[1]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.com/a.png"}


def test_the_validator_catches_what_anthropic_refuses() -> None:
    unanswered = AnthropicPrompt(
        None,
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "text", "text": "y"}]},
        ],
    )
    doubled = AnthropicPrompt(
        None,
        [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": [{"type": "text", "text": " "}]},
        ],
    )

    assert any("unanswered" in p for p in anthropic_problems(unanswered))
    problems = anthropic_problems(doubled)
    assert any("in a row" in p for p in problems)
    assert any("empty text" in p for p in problems)
