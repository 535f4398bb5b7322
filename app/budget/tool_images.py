"""Images in tool results: how each format carries them, and their placeholder.

A tool result's content may hold ``image_url`` parts (a browser's or a computer-use tool's
screenshot). Anthropic's ``tool_result`` block carries images itself. OpenAI's chat format
does not: a ``role: tool`` message holds text only. Anthropic ``document`` blocks of a result
travel the same way. As LiteLLM and the OpenAI Agents SDK do,
the OpenAI rendering keeps the result's text in the tool message, with a note, and puts its
images in a user message right after the step's run of tool results, so every tool call is
still answered by the message that follows it. The count of a tool result with images is the
count of both messages, so the budget holds in either format (it errs high for Anthropic by
the second message's framing).

Images of completed turns beyond the newest few give way to a placeholder that names the
stored message when room is needed (:func:`app.budget.decision.prompt_views`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.budget.anthropic_blocks import is_document


def is_image_part(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == "image_url"


def image_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if is_image_part(part))


def image_placeholder(seq: int) -> str:
    return f"[image set aside for room; stored whole in message seq {seq}]"


def without_images(content: Any, seq: int) -> Any:
    """The content with every image part replaced by a text part naming the stored original."""
    if not image_count(content):
        return content
    return [
        {"type": "text", "text": image_placeholder(seq)} if is_image_part(part) else part
        for part in content
    ]


def images_note(count: int) -> str:
    noun = "image" if count == 1 else "images"
    return f"[{count} {noun} of this result: in the user message after the tool results]"


def documents_note(count: int) -> str:
    noun = "document" if count == 1 else "documents"
    return f"[{count} {noun} of this result: in the user message after the tool results]"


def carrier_intro(tool_call_id: str) -> str:
    return f"Images returned by tool call {tool_call_id}:"


def split_tool_message(
    message: Mapping[str, Any],
) -> tuple[Mapping[str, Any], dict[str, Any] | None]:
    """A ``tool`` message as the OpenAI format carries it: its text (with a note) without
    Anthropic's ``is_error``, and a user message with its images (None when it has none)."""
    if message.get("role") != "tool":
        return message, None
    content = message.get("content")
    parts: list[Any] = content if isinstance(content, list) else []
    count = image_count(parts)
    documents = sum(1 for part in parts if is_document(part))
    tool = (
        {k: v for k, v in message.items() if k != "is_error"} if "is_error" in message else message
    )
    if not count and not documents:
        return tool, None
    texts = [
        str(part.get("text", ""))
        for part in parts
        if isinstance(part, Mapping) and part.get("type") == "text"
    ]
    call_id = str(message.get("tool_call_id", ""))
    text = "\n".join(texts)
    note = "\n".join(
        [
            *([images_note(count)] if count else []),
            *([documents_note(documents)] if documents else []),
        ]
    )
    carrier = {
        "role": "user",
        "content": [
            {"type": "text", "text": carrier_intro(call_id)},
            *(part for part in parts if is_image_part(part) or is_document(part)),
        ],
    }
    return {**tool, "content": f"{text}\n\n{note}" if text.strip() else note}, carrier


def openai_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The prompt with tool results' images moved to user messages after each run of tool
    results, and without Anthropic's ``is_error``."""
    converted: list[dict[str, Any]] = []
    carriers: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "tool" and carriers:
            converted.extend(carriers)
            carriers = []
        if message.get("role") != "tool" or (
            isinstance(message.get("content"), str) and "is_error" not in message
        ):
            # Most of a long turn: nothing to move, nothing to drop (split_tool_message's
            # answer, without its work for each of a thousand results on every step).
            converted.append(dict(message))
            continue
        tool, carrier = split_tool_message(message)
        converted.append(dict(tool))
        if carrier is not None:
            carriers.append(carrier)
    converted.extend(carriers)
    return converted
