"""The same prompt for Anthropic's Messages API: ``{system, messages}`` with content blocks.

Anthropic wants the system prompt apart, roles strictly alternating from a user message,
tool calls as ``tool_use`` blocks in the assistant message and their results as
``tool_result`` blocks in the very next user message, and no empty text blocks.

An assistant's ``thinking`` and ``redacted_thinking`` blocks go back exactly as the model
produced them (their signatures are checked by the API) and first in their message, as the
API requires. An OpenAI-shaped ``reasoning_content`` has no signature and no place in this
format: it is left out here, and kept in the OpenAI rendering.

The chat shape keeps an assistant's text and its tool calls apart; a call stored with
``after_parts`` (how many of the message's content parts came before it) goes back to that
place among the text, so blocks sent as ``text, tool_use, text, tool_use`` come back so. A call
without it (the OpenAI shape, and calls whose blocks all followed the text) follows the text.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.budget.anthropic_blocks import DOCUMENT, is_document, is_server_tool_block
from app.budget.tokens import REASONING_PART_TYPES, is_reasoning_part

Block = dict[str, Any]
#: Blocks that must open their message: results answering the previous message's calls, and
#: the thinking that led to an assistant's answer.
_LEADING_BLOCKS = frozenset({"tool_result", *REASONING_PART_TYPES})
OPENING_PLACEHOLDER = "(The conversation so far is summarised in the system prompt.)"
#: A stored tool call's key: how many of its message's content parts (thinking aside) the
#: agent sent before it. Only this rendering reads it; the OpenAI rendering leaves it out.
CALL_POSITION = "after_parts"

#: The tool_use ids Anthropic accepts.
_VALID_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_INVALID_ID_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]")


def anthropic_tool_id(tool_call_id: str) -> str:
    """The id as Anthropic accepts it: kept when valid, otherwise every other character
    becomes ``_`` and a digest of the original follows, so that two ids that differ only in
    such characters stay apart. A call and its result map alike, and so does every render."""
    if _VALID_TOOL_ID.match(tool_call_id):
        return tool_call_id
    digest = hashlib.sha256(tool_call_id.encode()).hexdigest()[:12]
    return f"{_INVALID_ID_CHARACTERS.sub('_', tool_call_id)}_{digest}"


#: The API's limit on ``cache_control`` breakpoints in one request.
MAX_CACHE_BREAKPOINTS = 4
CACHE_CONTROL = {"type": "ephemeral"}


@dataclass(frozen=True)
class AnthropicPrompt:
    #: Text, or (with cache breakpoints) text blocks.
    system: str | list[Block] | None
    messages: list[dict[str, Any]]


def _part_block(part: Any) -> Block | None:
    """A content part as a block; None for empty text, which Anthropic refuses."""
    if not isinstance(part, Mapping):
        return None
    if part.get("type") in REASONING_PART_TYPES or is_document(part) or is_server_tool_block(part):
        # Kept as the agent sent them: the API checks signatures and server-tool ids.
        return dict(part)
    if part.get("type") == "text" and str(part.get("text", "")).strip():
        return {"type": "text", "text": part["text"]}
    if part.get("type") == "image_url":
        url = str(part.get("image_url", {}).get("url", ""))
        if url[:5].lower() == "data:" and ";base64," in url:
            media_type, data = url[5:].split(";base64,", 1)
            source = {"type": "base64", "media_type": media_type, "data": data}
        else:
            source = {"type": "url", "url": url}
        return {"type": "image", "source": source}
    return None


def _text_blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return [block for block in map(_part_block, content or ()) if block is not None]


def _finite(number: str) -> float:
    value = float(number)
    if not math.isfinite(value):
        raise ValueError(f"{number} is out of JSON's range")
    return value


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _tool_input(arguments: Any) -> dict[str, Any]:
    """Anthropic wants the input as an object; arguments that are not a JSON object are
    passed under one key rather than dropped, and so are arguments with a number JSON cannot
    write back (``1e999``, ``NaN``): read as a float, it would come out as null."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        parsed = (
            json.loads(arguments, parse_float=_finite, parse_constant=_not_json)
            if arguments
            else {}
        )
    except (TypeError, ValueError):
        parsed = None
    return parsed if isinstance(parsed, dict) else {"arguments": arguments}


def _tool_use(call: Mapping[str, Any]) -> Block:
    function = call.get("function", {})
    return {
        "type": "tool_use",
        "id": anthropic_tool_id(call["id"]),
        "name": function.get("name", ""),
        "input": _tool_input(function.get("arguments")),
    }


def _content_blocks(message: Mapping[str, Any]) -> list[Block]:
    """A user's or an assistant's blocks: its parts, and its calls each where it was sent.

    A part after ``n`` others (thinking aside) sorts at ``n + 0.5``, a call sent after ``n``
    parts at ``n``: just before that part. A call without a position sorts after them all."""
    content = message.get("content")
    parts = content if isinstance(content, list) else _text_blocks(content)
    placed: list[tuple[float, Block]] = []
    before = 0
    for part in parts:
        block = _part_block(part)
        if block is not None:
            placed.append((before + 0.5, block))
        if not is_reasoning_part(part):
            before += 1
    for call in message.get("tool_calls") or ():
        position = call.get(CALL_POSITION)
        placed.append((position if isinstance(position, int) else math.inf, _tool_use(call)))
    placed.sort(key=lambda item: item[0])
    return [block for _, block in placed]


def _blocks(message: Mapping[str, Any]) -> tuple[str, list[Block]]:
    role = message["role"]
    if role == "tool":
        # A result's parts (text and images, a screenshot say) go as blocks of its own.
        content = message.get("content")
        result: str | list[Block] = content if isinstance(content, str) else ""
        if not isinstance(content, str):
            result = [b for b in _text_blocks(content) if b["type"] in {"text", "image", DOCUMENT}]
        block: Block = {
            "type": "tool_result",
            "tool_use_id": anthropic_tool_id(message["tool_call_id"]),
            "content": result or "",
        }
        if message.get("is_error"):
            block["is_error"] = True
        return "user", [block]
    return ("assistant" if role == "assistant" else "user"), _content_blocks(message)


def _leading_block_order(block: Block) -> bool:
    return block["type"] not in _LEADING_BLOCKS


def to_anthropic(
    messages: Sequence[Mapping[str, Any]], *, stable_messages: int | None = None
) -> AnthropicPrompt:
    """Convert an OpenAI chat prompt (as contextd assembles it) to Anthropic's shape.

    With ``stable_messages`` (how many leading messages the session's previous prompt also
    had), the prompt carries cache breakpoints: on the system block; on the last block of the
    stable prefix, where the previous prompt's cache entry ends (the read); and on the last
    block of the prompt, so that the next prompt reads everything up to here (the write).
    Thinking blocks cannot carry one: a message's last other block does."""
    system: str | None = None
    converted: list[dict[str, Any]] = []
    stable_end: Block | None = None
    prompt_end: Block | None = None
    for index, message in enumerate(messages):
        if message["role"] in {"system", "developer"}:
            text = "\n\n".join(b["text"] for b in _text_blocks(message.get("content")))
            system = f"{system}\n\n{text}" if system else text
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
        markable = [b for b in blocks if b["type"] not in REASONING_PART_TYPES]
        if markable:
            prompt_end = markable[-1]
            if stable_messages is not None and index < stable_messages:
                stable_end = prompt_end
        if converted and converted[-1]["role"] == role:
            # Tool results join the user turn; a same-role run becomes one message.
            converted[-1]["content"].extend(blocks)
        else:
            converted.append({"role": role, "content": blocks})
    if converted and converted[0]["role"] != "user":
        converted.insert(
            0, {"role": "user", "content": [{"type": "text", "text": OPENING_PLACEHOLDER}]}
        )
    for message in converted:
        # tool_result blocks must open the user message that answers the calls, and thinking
        # blocks the assistant message they belong to.
        message["content"].sort(key=_leading_block_order)
    if stable_messages is None:
        return AnthropicPrompt(system or None, converted)
    for block in {id(b): b for b in (stable_end, prompt_end) if b is not None}.values():
        block["cache_control"] = dict(CACHE_CONTROL)
    system_blocks: list[Block] | None = None
    if system:
        system_blocks = [{"type": "text", "text": system, "cache_control": dict(CACHE_CONTROL)}]
    return AnthropicPrompt(system_blocks, converted)


def anthropic_problems(prompt: AnthropicPrompt) -> list[str]:
    """Why Anthropic's Messages API would refuse this prompt (empty when valid)."""
    problems: list[str] = []
    messages = prompt.messages
    if not messages or messages[0]["role"] != "user":
        problems.append("the first message must be from the user")
    pending: set[str] = set()
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"]:
            problems.append(f"[{index}] two {message['role']} messages in a row")
        answered = {b["tool_use_id"] for b in message["content"] if b["type"] == "tool_result"}
        if message["role"] == "user":
            if pending - answered:
                problems.append(f"[{index}] tool_use {sorted(pending - answered)} unanswered")
            if answered - pending:
                problems.append(
                    f"[{index}] tool_result {sorted(answered - pending)} answers "
                    "no tool_use of the previous message"
                )
            pending = set()
        else:
            if answered:
                problems.append(f"[{index}] tool_result in an assistant message")
            pending = {b["id"] for b in message["content"] if b["type"] == "tool_use"}
        for block in message["content"]:
            if block["type"] == "text" and not block["text"].strip():
                problems.append(f"[{index}] empty text block")
            tool_id = block.get("id") if block["type"] == "tool_use" else None
            if block["type"] == "tool_result":
                tool_id = block.get("tool_use_id")
            if tool_id is not None and not _VALID_TOOL_ID.match(str(tool_id)):
                problems.append(f"[{index}] {block['type']} id {tool_id!r} is not [A-Za-z0-9_-]+")
        problems.extend(_reasoning_problems(index, message))
        used_ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if len(set(used_ids)) != len(used_ids):
            problems.append(f"[{index}] two tool_use blocks share an id")
    if pending:
        problems.append(f"tool_use {sorted(pending)} unanswered at the end")
    if messages and messages[-1]["role"] != "user":
        problems.append("the prompt does not end on a user message")
    system_blocks = prompt.system if isinstance(prompt.system, list) else []
    marked = [
        block
        for block in (*system_blocks, *(b for m in messages for b in m["content"]))
        if "cache_control" in block
    ]
    if len(marked) > MAX_CACHE_BREAKPOINTS:
        problems.append(f"{len(marked)} cache breakpoints, over {MAX_CACHE_BREAKPOINTS}")
    if any(block["type"] in REASONING_PART_TYPES for block in marked):
        problems.append("a thinking block carries cache_control")
    return problems


def _reasoning_problems(index: int, message: Mapping[str, Any]) -> list[str]:
    """Thinking blocks only in an assistant message, before its other blocks, each with
    what the API checks (a signature, or the redacted data)."""
    problems: list[str] = []
    seen_other = False
    for block in message["content"]:
        kind = block["type"]
        if kind not in REASONING_PART_TYPES:
            seen_other = True
            continue
        if message["role"] != "assistant":
            problems.append(f"[{index}] {kind} block in a {message['role']} message")
        elif seen_other:
            problems.append(f"[{index}] {kind} block after another block")
        field = "signature" if kind == "thinking" else "data"
        if not isinstance(block.get(field), str) or (kind != "thinking" and not block[field]):
            problems.append(f"[{index}] {kind} block without its {field}")
    return problems
