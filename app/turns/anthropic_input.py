"""Anthropic-shaped steps and answers, turned into the OpenAI chat shape contextd stores.

A Claude agent can post what the Messages API gave it and what its tools returned, as they
are: an ``assistant`` whose ``content`` holds ``text``, ``thinking``, ``redacted_thinking`` and
``tool_use`` blocks, and ``tool_results`` that are ``tool_result`` blocks. Each ``tool_use``
becomes a tool call whose ``arguments`` are ``json.dumps(input)``: JSON reads that text back
as the very same object (keys in the same order, numbers alike), so the Anthropic rendering
gives back exactly the ``input`` it was sent. Thinking blocks stay where they were, as parts.
Image blocks (base64 or url source) become ``image_url`` parts, which the Anthropic rendering
turns back into the same blocks.

The chat shape keeps an assistant's content and its tool calls apart. When the agent's blocks
interleave them (``text, tool_use, text, tool_use``), each call is stored with
``after_parts``, how many content parts came before it, so the Anthropic rendering puts it back
where it was (:func:`call_positions`).

Everything here is conversion of plain JSON values; a block that cannot be converted is
refused with a message naming it (``assistant.content[2] (tool_use): ...``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from app.budget.anthropic_blocks import DOCUMENT, SERVER_TOOL_BLOCKS
from app.budget.tokens import REASONING_PART_TYPES
from app.limits import json_depth

#: The blocks an assistant message may hold, a tool result's content and a user's.
_ASSISTANT_BLOCKS = (
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    *sorted(SERVER_TOOL_BLOCKS),
)
_RESULT_BLOCKS = ("text", "image", "image_url", DOCUMENT)
_USER_BLOCKS = ("text", "image", "image_url", DOCUMENT)
#: The longest tool call id and tool name stored.
MAX_TOOL_FIELD_CHARS = 128
#: The image types Anthropic's image blocks take (and OpenAI's image parts).
IMAGE_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")

#: Block fields an agent may send back from the API that contextd drops: ``cache_control``
#: (contextd places its own breakpoints) and ``citations`` (pointers into documents it does
#: not keep; the text they ground stays).
_DROPPED_FIELDS = frozenset({"cache_control", "citations"})


def _known(block: Any, where: str, kinds: tuple[str, ...]) -> None:
    if not isinstance(block, Mapping):
        raise ValueError(f"{where}: a block must be an object with a type")
    if block.get("type") not in kinds:
        raise ValueError(
            f"{where} ({block.get('type')}): not a block contextd takes here; "
            f"it takes {', '.join(kinds)}"
        )


def _non_finite(value: Any, path: str) -> str | None:
    """Where ``value`` first holds a number JSON cannot write (the request's ``1e999`` reads
    as an infinity), or None. A walk rather than recursion: tool input may nest deeply."""
    pending = [(value, path)]
    while pending:
        item, at = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return at
        if isinstance(item, Mapping):
            children = [(child, f"{at}.{key}") for key, child in item.items()]
        elif isinstance(item, list):
            children = [(child, f"{at}[{index}]") for index, child in enumerate(item)]
        else:
            continue
        pending.extend(reversed(children))
    return None


#: How deep a server tool's block may nest (a web fetch result holds a document: 5 levels).
MAX_SERVER_BLOCK_DEPTH = 64


def _server_block_problem(block: Mapping[str, Any], where: str) -> None:
    """A server tool's block is kept as sent: refuse what could not be stored as JSON."""
    kind = block.get("type")
    if json_depth(block) > MAX_SERVER_BLOCK_DEPTH:
        raise ValueError(f"{where} ({kind}): nests more than {MAX_SERVER_BLOCK_DEPTH} levels")
    out_of_range = _non_finite(block, kind or "block")
    if out_of_range is not None:
        raise ValueError(
            f"{where} ({kind}): {out_of_range} is a number out of JSON's range (infinite or NaN)"
        )


def tool_arguments(tool_input: Mapping[str, Any]) -> str:
    """The tool call's ``arguments`` for an Anthropic ``input``; ``json.loads`` of it gives
    the same object back."""
    return json.dumps(tool_input, ensure_ascii=False)


def _plain(block: Mapping[str, Any]) -> dict[str, Any]:
    # Citations point into documents the request gave the model, which contextd does not
    # keep: the text they ground is kept, the pointers are not.
    return {key: value for key, value in block.items() if key not in _DROPPED_FIELDS}


def _document(block: Mapping[str, Any]) -> dict[str, Any]:
    # A document's own ``citations`` is its setting ({"enabled": true}), kept; contextd
    # places its own cache breakpoints.
    return {key: value for key, value in block.items() if key != "cache_control"}


def _content_blocks(content: list[Any], where: str, kinds: tuple[str, ...]) -> list[Any]:
    """Text, image and document blocks of a user message or a tool result: images as
    ``image_url`` parts, documents as sent."""
    parts: list[Any] = []
    for position, block in enumerate(content):
        block_where = f"{where}.content[{position}]"
        _known(block, block_where, kinds)
        if block.get("type") == "image":
            parts.append(image_part(block, block_where))
        elif block.get("type") == "text":
            parts.append(_plain(block))
        elif block.get("type") == DOCUMENT:
            parts.append(_document(block))
        else:
            parts.append(block)
    return parts


def user_input(data: Any) -> Any:
    """A user message in either shape, in the OpenAI shape: Anthropic ``image`` blocks as
    ``image_url`` parts, ``document`` blocks as sent."""
    if not isinstance(data, Mapping) or not isinstance(data.get("content"), list):
        return data
    return {**data, "content": _content_blocks(data["content"], "message", _USER_BLOCKS)}


def data_url_problem(url: str) -> str | None:
    """Why an image part's ``data:`` URL is not an image both formats take, or None (also
    for any other URL: a remote image is the provider's to fetch)."""
    if url[:5].lower() != "data:":
        return None
    header, _, data = url[5:].partition(",")
    media_type, *parameters = header.split(";")
    if media_type not in IMAGE_MEDIA_TYPES:
        return (
            f"a data: URL of type {media_type or 'none'!r} is not an image contextd takes; "
            f"it takes {', '.join(IMAGE_MEDIA_TYPES)}"
        )
    if parameters != ["base64"] or not data:
        return f"a data: URL must hold the image as base64: data:{media_type};base64,<data>"
    return None


def image_part(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An Anthropic ``image`` block as an ``image_url`` part."""
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise ValueError(f"{where} (image): needs a source: base64 data or a url")
    kind = source.get("type")
    if kind == "base64":
        media_type, data = source.get("media_type"), source.get("data")
        if media_type not in IMAGE_MEDIA_TYPES:
            raise ValueError(
                f"{where} (image): source.media_type must be one of "
                f"{', '.join(IMAGE_MEDIA_TYPES)}, not {media_type!r}"
            )
        if not isinstance(data, str) or not data:
            raise ValueError(f"{where} (image): source.data must be the base64 image")
        return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}
    if kind == "url":
        url = source.get("url")
        if not isinstance(url, str) or not url:
            raise ValueError(f"{where} (image): source.url must be a non-empty string")
        return {"type": "image_url", "image_url": {"url": url}}
    raise ValueError(f"{where} (image): source.type must be base64 or url, not {kind!r}")


def _tool_call(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    call_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
    for field, value in (("id", call_id), ("name", name)):
        if not isinstance(value, str) or not value or len(value) > MAX_TOOL_FIELD_CHARS:
            raise ValueError(
                f"{where} (tool_use): {field} must be a string of 1 to "
                f"{MAX_TOOL_FIELD_CHARS} characters"
            )
    if not isinstance(tool_input, Mapping):
        raise ValueError(f"{where} (tool_use): input must be an object")
    # JSON has no infinity: stored, it would come back as null. Anthropic refuses it too.
    out_of_range = _non_finite(tool_input, "input")
    if out_of_range is not None:
        raise ValueError(
            f"{where} (tool_use): {out_of_range} is a number out of JSON's range "
            "(infinite or NaN); send a finite number, or the value as a string"
        )
    unknown = sorted(set(block) - {"type", "id", "name", "input", *_DROPPED_FIELDS})
    if unknown:
        raise ValueError(f"{where} (tool_use): unknown fields {unknown}")
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": tool_arguments(tool_input)},
    }


def assistant_input(data: Any, *, answer: bool = False) -> Any:
    """An assistant message in either shape, in the OpenAI shape: ``role`` left out, its
    ``tool_use`` blocks as ``tool_calls``, the other blocks in place. ``answer``: the turn's
    final answer, which calls no tools."""
    if not isinstance(data, Mapping):
        return data
    message = dict(data)
    role = message.pop("role", "assistant")
    if role != "assistant":
        raise ValueError(f"assistant.role must be 'assistant', not {role!r}")
    content = message.get("content")
    if not isinstance(content, list):
        return message
    kept: list[Any] = []
    calls: list[dict[str, Any]] = []
    for index, block in enumerate(content):
        where = f"assistant.content[{index}]"
        _known(block, where, _ASSISTANT_BLOCKS)
        if block.get("type") in SERVER_TOOL_BLOCKS:
            _server_block_problem(block, where)
        if block.get("type") == "tool_use":
            if answer:
                raise ValueError(
                    f"{where} (tool_use): a turn's answer calls no tools; post the tool calls "
                    "and their results as a step, then complete the turn"
                )
            calls.append(_tool_call(block, where))
        else:
            kept.append(_plain(block))
    if calls:
        if message.get("tool_calls"):
            raise ValueError(
                "assistant: give the tool calls as tool_use blocks or as tool_calls, not both"
            )
        message["tool_calls"] = calls
    message["content"] = kept or None
    return message


def call_positions(data: Any) -> list[int] | None:
    """For an Anthropic assistant message, how many content parts came before each of its
    ``tool_use`` blocks (thinking blocks aside: the rendering puts them first anyway); None
    when the calls all follow the parts, the order the rendering gives without positions.
    Read after :func:`assistant_input` took the message."""
    content = data.get("content") if isinstance(data, Mapping) else None
    if not isinstance(content, list):
        return None
    positions: list[int] = []
    parts = 0
    for block in content:
        if block.get("type") == "tool_use":
            positions.append(parts)
        elif block.get("type") not in REASONING_PART_TYPES:
            parts += 1
    return positions if any(position < parts for position in positions) else None


def tool_result_input(data: Any, index: int) -> Any:
    """One tool result in either shape, in the OpenAI shape: a ``tool_result`` block's
    ``tool_use_id`` as ``tool_call_id``; image blocks of its content as ``image_url`` parts."""
    if not isinstance(data, Mapping):
        return data
    where = f"tool_results[{index}]"
    result = dict(data)
    if result.get("type") == "tool_result":
        unknown = sorted(
            set(result) - {"type", "tool_use_id", "content", "is_error", *_DROPPED_FIELDS}
        )
        if unknown:
            raise ValueError(f"{where} (tool_result): unknown fields {unknown}")
        if not isinstance(result.get("tool_use_id"), str) or not result["tool_use_id"]:
            raise ValueError(f"{where} (tool_result): tool_use_id must be a non-empty string")
        if not isinstance(result.get("is_error", False), bool):
            raise ValueError(f"{where} (tool_result): is_error must be true or false")
        result = {
            "tool_call_id": result["tool_use_id"],
            "content": result.get("content", ""),
            **({"is_error": True} if result.get("is_error") else {}),
        }
    content = result.get("content")
    if isinstance(content, list):
        result["content"] = _content_blocks(content, where, _RESULT_BLOCKS)
    return result
