"""The OpenAI-shaped prompt converted for Anthropic's Messages API."""

from __future__ import annotations

from typing import Any

import pytest

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


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity"])
def test_arguments_with_a_number_json_cannot_write_are_kept_as_text(number: str) -> None:
    arguments = f'{{"range": [0, {number}]}}'
    prompt = to_anthropic(
        [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": [call("a", arguments)]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
        ]
    )

    assert prompt.messages[1]["content"][0]["input"] == {"arguments": arguments}


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


def test_ids_anthropic_would_refuse_are_mapped_alike_in_call_and_result() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "tool_calls": [call("call:hFkgDHiQY"), call("call.hFkgDHiQY")]},
            {"role": "tool", "tool_call_id": "call:hFkgDHiQY", "content": "21C"},
            {"role": "tool", "tool_call_id": "call.hFkgDHiQY", "content": "17C"},
        ]
    )

    used = [b["id"] for b in prompt.messages[1]["content"]]
    answered = [b["tool_use_id"] for b in prompt.messages[2]["content"]]
    assert used == answered
    assert len(set(used)) == 2
    assert all(i.startswith("call_hFkgDHiQY_") for i in used)
    assert anthropic_problems(prompt) == []


def test_a_valid_id_is_kept_and_mapping_is_the_same_on_every_render() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "tool_calls": [call("call_ok-1"), call("call/odd")]},
        {"role": "tool", "tool_call_id": "call_ok-1", "content": "21C"},
        {"role": "tool", "tool_call_id": "call/odd", "content": "17C"},
    ]

    first, second = to_anthropic(messages), to_anthropic(messages)

    assert first == second
    assert first.messages[1]["content"][0]["id"] == "call_ok-1"


def test_the_check_names_an_invalid_or_repeated_id() -> None:
    prompt = AnthropicPrompt(
        None,
        [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "a:1", "name": "w", "input": {}},
                    {"type": "tool_use", "id": "a:1", "name": "w", "input": {}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a:1"}]},
        ],
    )

    problems = anthropic_problems(prompt)

    assert any("'a:1' is not" in p for p in problems)
    assert any("share an id" in p for p in problems)


THINKING = {"type": "thinking", "thinking": "Check the weather.", "signature": "c2ln/+=="}
REDACTED = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}
EPHEMERAL = {"type": "ephemeral"}


def test_thinking_blocks_go_first_in_their_message_and_unchanged() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Checking."}, THINKING, REDACTED],
                "tool_calls": [call("a")],
            },
            {"role": "tool", "tool_call_id": "a", "content": "21C"},
        ]
    )

    blocks = prompt.messages[1]["content"]
    assert blocks[:2] == [THINKING, REDACTED]
    assert [b["type"] for b in blocks[2:]] == ["text", "tool_use"]
    assert anthropic_problems(prompt) == []


def test_reasoning_content_has_no_place_in_the_anthropic_prompt() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "Sunny.", "reasoning_content": "Easy."},
            {"role": "user", "content": "Thanks."},
        ]
    )

    assert prompt.messages[1]["content"] == [{"type": "text", "text": "Sunny."}]


def test_misplaced_or_unsigned_thinking_blocks_are_problems() -> None:
    unsigned = {"type": "thinking", "thinking": "hmm"}
    prompt = AnthropicPrompt(
        None,
        [
            {"role": "user", "content": [THINKING]},
            {"role": "assistant", "content": [{"type": "text", "text": "Hi."}, REDACTED]},
            {"role": "user", "content": [{"type": "text", "text": "Hello."}]},
            {"role": "assistant", "content": [unsigned, {"type": "text", "text": "Yes."}]},
            {"role": "user", "content": [{"type": "text", "text": "Bye."}]},
        ],
    )

    assert anthropic_problems(prompt) == [
        "[0] thinking block in a user message",
        "[1] redacted_thinking block after another block",
        "[3] thinking block without its signature",
    ]


def test_breakpoints_mark_the_system_the_stable_prefix_and_the_end() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [THINKING], "tool_calls": [call("a")]},
        {"role": "tool", "tool_call_id": "a", "content": "21C"},
        {"role": "user", "content": "Thanks."},
    ]

    prompt = to_anthropic(messages, stable_messages=3)

    assert prompt.system == [{"type": "text", "text": "Be terse.", "cache_control": EPHEMERAL}]
    marks = [
        (index, block["type"])
        for index, message in enumerate(prompt.messages)
        for block in message["content"]
        if "cache_control" in block
    ]
    # The stable prefix ends on the assistant's tool call, never on its thinking block.
    assert marks == [(1, "tool_use"), (2, "text")]
    assert anthropic_problems(prompt) == []
    assert to_anthropic(messages).system == "Be terse."


def test_more_than_four_breakpoints_is_a_problem() -> None:
    text = {"type": "text", "text": "Hi.", "cache_control": EPHEMERAL}
    prompt = AnthropicPrompt([text], [{"role": "user", "content": [text, text, text, text]}])

    assert anthropic_problems(prompt) == ["5 cache breakpoints, over 4"]


def test_calls_go_back_where_they_stood_among_the_text() -> None:
    """A stored call says how many content parts (thinking aside) came before it; one that
    does not (the OpenAI shape, older rows) follows the text."""
    text = [{"type": "text", "text": t} for t in ("First.", "", "Then.")]
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Go."},
            {
                "role": "assistant",
                "content": [THINKING, *text],
                "tool_calls": [
                    {**call("a"), "after_parts": 1},
                    {**call("b"), "after_parts": 3},
                    call("c"),
                ],
            },
            *({"role": "tool", "tool_call_id": i, "content": "ok"} for i in "abc"),
        ]
    )

    blocks = prompt.messages[1]["content"]
    assert [b.get("text", b.get("id")) for b in blocks[1:]] == ["First.", "a", "Then.", "b", "c"]
    assert blocks[0] == THINKING
    assert "after_parts" not in str(blocks)
    assert anthropic_problems(prompt) == []


def test_calls_keep_their_order_when_the_text_before_them_is_gone() -> None:
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Go."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{**call("a"), "after_parts": 1}, {**call("b"), "after_parts": 2}],
            },
            *({"role": "tool", "tool_call_id": i, "content": "ok"} for i in "ab"),
        ]
    )

    assert [b["id"] for b in prompt.messages[1]["content"]] == ["a", "b"]
