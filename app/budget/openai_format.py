"""The prompt for an OpenAI-compatible chat API, from the stored chat shape.

Anthropic's documents and server-tool blocks go out as their nearest equivalent
(:func:`app.budget.anthropic_blocks.openai_part`: a PDF as a file part, text as text). Three
things stored for the Anthropic rendering, or by earlier releases, do not go out here:
a tool result's images and ``is_error`` (:mod:`app.budget.tool_images` moves the one and drops
the other); a tool call's place among its message's text (``after_parts``: the chat shape has
content and tool calls apart, so that order cannot be kept); and an image's ``detail`` of
null, which rows stored before it was left out carry (OpenAI takes the key absent or one of
auto, low, high).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.budget.anthropic import CALL_POSITION
from app.budget.anthropic_blocks import openai_part
from app.budget.tool_images import is_image_part, openai_tool_results


def chat_call(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored tool call as the chat shape has it."""
    if CALL_POSITION not in call:
        return call
    return {key: value for key, value in call.items() if key != CALL_POSITION}


def _part(part: Any) -> Any:
    if not is_image_part(part):
        return openai_part(part)
    image = part.get("image_url")
    if not isinstance(image, Mapping) or "detail" not in image or image["detail"] is not None:
        return part
    return {**part, "image_url": {key: value for key, value in image.items() if key != "detail"}}


def _message(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [_part(part) for part in content]
    calls = message.get("tool_calls")
    if calls:
        # A list of its own either way; a call is rebuilt only when it has a key to drop.
        message["tool_calls"] = (
            [chat_call(call) for call in calls]
            if any(CALL_POSITION in call for call in calls)
            else list(calls)
        )
    return message


def to_openai(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The assembled prompt as an OpenAI-compatible chat API takes it."""
    return [_message(message) for message in openai_tool_results(messages)]
