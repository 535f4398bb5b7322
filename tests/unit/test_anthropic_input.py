"""Anthropic-shaped input converted to the stored OpenAI shape, and back by the Anthropic
rendering, with nothing lost; tool results' images in the OpenAI shape."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest

from app.budget.anthropic import to_anthropic
from app.budget.assembly import chat_problems
from app.budget.tool_images import (
    image_placeholder,
    images_note,
    openai_tool_results,
    without_images,
)
from app.turns.anthropic_input import (
    assistant_input,
    call_positions,
    data_url_problem,
    tool_arguments,
    tool_result_input,
)

THINKING = {"type": "thinking", "thinking": "Hm.", "signature": "c2ln/+=="}
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
REMOTE = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}


@pytest.mark.parametrize(
    "tool_input",
    [
        {},
        {"z": 1, "a": 2, "m": [3, 2, 1]},
        {"text": 'naïve — 東京 \u2028 "quoted" \\ back', "none": None, "yes": True},
        {"floats": [0.1, 1e-7, 1.0, -0.0, 123456789.123456789, 1e300], "big": 2**70},
        {"deep": {"a": {"b": {"c": [{"d": []}]}}}},
    ],
)
def test_tool_arguments_read_back_as_the_same_input(tool_input: dict[str, Any]) -> None:
    back = json.loads(tool_arguments(tool_input))
    assert back == tool_input
    assert json.dumps(back) == json.dumps(tool_input)  # key order and number forms alike


def test_tool_use_blocks_become_tool_calls_and_other_blocks_stay_in_place() -> None:
    converted = assistant_input(
        {
            "role": "assistant",
            "content": [
                THINKING,
                {"type": "text", "text": "Checking.", "citations": None},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"c": "Rome"}},
            ],
        }
    )
    assert converted == {
        "content": [THINKING, {"type": "text", "text": "Checking."}],
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"c": "Rome"}'},
            }
        ],
    }


def test_an_openai_shaped_assistant_is_left_as_it_is() -> None:
    message = {"content": "Hi", "tool_calls": [{"id": "a"}]}
    assert assistant_input(message) == message


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"role": "user", "content": "Hi"}, "assistant.role must be 'assistant'"),
        (
            {"content": [{"type": "tool_use", "id": "", "name": "w", "input": {}}]},
            "assistant.content[0] (tool_use): id must be a string of 1 to 128 characters",
        ),
        (
            {"content": [{"type": "tool_use", "id": "t", "name": "w", "input": [1]}]},
            "assistant.content[0] (tool_use): input must be an object",
        ),
        (
            {
                "content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}],
                "tool_calls": [{"id": "u"}],
            },
            "not both",
        ),
        (
            {
                "content": [
                    {"type": "text", "text": "Plotting."},
                    {"type": "tool_use", "id": "t", "name": "w", "input": {"at": [0, -math.inf]}},
                ]
            },
            "assistant.content[1] (tool_use): input.at[1] is a number out of JSON's range",
        ),
        (
            {"content": [{"type": "tool_use", "id": "t", "name": "w", "input": {"x": math.nan}}]},
            "assistant.content[0] (tool_use): input.x is a number out of JSON's range",
        ),
    ],
)
def test_what_cannot_be_converted_is_named(message: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        assistant_input(message)


def test_an_answer_calls_no_tools() -> None:
    with pytest.raises(ValueError, match="calls no tools"):
        assistant_input(
            {"content": [{"type": "tool_use", "id": "t", "name": "w", "input": {}}]}, answer=True
        )


def test_a_tool_result_block_and_its_images_render_back_the_same() -> None:
    block = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "Screen:"}, IMAGE, REMOTE],
    }
    converted = tool_result_input(block, 0)
    assert converted == {
        "tool_call_id": "toolu_1",
        "content": [
            {"type": "text", "text": "Screen:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    call = {"id": "toolu_1", "type": "function", "function": {"name": "s", "arguments": "{}"}}
    prompt = to_anthropic(
        [
            {"role": "user", "content": "Look."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", **converted},
        ]
    )
    assert prompt.messages[-1]["content"] == [block]


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"type": "image"}, "needs a source"),
        ({"type": "image", "source": {"type": "file", "file_id": "f"}}, "base64 or url"),
        ({"type": "image", "source": {"type": "url", "url": ""}}, "source.url"),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml"}},
            "source.media_type must be one of image/png, image/jpeg, image/gif, image/webp",
        ),
    ],
)
def test_an_image_that_cannot_be_read_is_named(block: dict[str, Any], problem: str) -> None:
    with pytest.raises(
        ValueError, match=rf"tool_results\[2\]\.content\[0\] \(image\): .*{problem}"
    ):
        tool_result_input({"type": "tool_result", "tool_use_id": "t", "content": [block]}, 2)


def use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "w", "input": {}}


def test_a_call_between_texts_records_how_many_parts_came_before_it() -> None:
    text = {"type": "text", "text": "Hm."}
    assert call_positions({"content": [THINKING, text, use("a"), text, use("b")]}) == [1, 2]
    # Calls after all the text: the order the rendering gives anyway, nothing to record.
    assert call_positions({"content": [THINKING, text, use("a"), use("b")]}) is None
    assert call_positions({"content": "Hi", "tool_calls": [{"id": "a"}]}) is None


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("data:application/pdf;base64,JVBE", "'application/pdf' is not an image"),
        ("data:text/plain;base64,SGk=", "it takes image/png, image/jpeg, image/gif, image/webp"),
        ("data:,Hi", "'none' is not an image"),
        ("data:image/png,%89PNG", "must hold the image as base64"),
        ("data:image/png;base64,", "must hold the image as base64"),
    ],
)
def test_a_data_url_both_formats_cannot_show_is_named(url: str, problem: str) -> None:
    assert problem in str(data_url_problem(url))


@pytest.mark.parametrize(
    "url", ["data:image/webp;base64,UklG", "https://example.com/a.pdf", "http://x/y"]
)
def test_an_image_data_url_or_a_remote_url_is_taken(url: str) -> None:
    assert data_url_problem(url) is None


def test_the_openai_shape_moves_images_after_the_run_of_results() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    calls = [
        {"id": i, "type": "function", "function": {"name": "s", "arguments": "{}"}}
        for i in ("a", "b")
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Look."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "a", "content": [image]},
        {"role": "tool", "tool_call_id": "b", "content": "plain"},
    ]
    converted = openai_tool_results(messages)
    assert chat_problems(converted) == []
    assert [m["role"] for m in converted] == ["user", "assistant", "tool", "tool", "user"]
    assert converted[2]["content"] == images_note(1)
    assert converted[4]["content"][1] == image


def test_images_give_way_to_a_placeholder_naming_the_stored_message() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    text = {"type": "text", "text": "Screen:"}
    assert without_images([text, image], 12) == [
        text,
        {"type": "text", "text": image_placeholder(12)},
    ]
    assert without_images("plain", 12) == "plain"


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"type": "container_upload", "file_id": "file_011CNha8"}, "(container_upload)"),
        ("text", "a block must be an object"),
        ({"type": "tool_use", "id": "t", "name": "w" * 129, "input": {}}, "1 to 128 characters"),
    ],
)
def test_a_block_an_assistant_message_cannot_hold_is_named(block: Any, problem: str) -> None:
    with pytest.raises(
        ValueError, match=re.escape("assistant.content[0]") + ".*" + re.escape(problem)
    ):
        assistant_input({"role": "assistant", "content": [block]})


def test_a_block_a_tool_result_cannot_hold_is_named() -> None:
    document = {"type": "search_result", "source": "https://example.com", "title": "x"}
    with pytest.raises(ValueError, match=re.escape("tool_results[0].content[1] (search_result)")):
        tool_result_input(
            {
                "type": "tool_result",
                "tool_use_id": "t",
                "content": [{"type": "text", "text": "x"}, document],
            },
            0,
        )
