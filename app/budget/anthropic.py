"""The same prompt for Anthropic's Messages API: ``{system, messages}`` with content blocks.

Anthropic wants the system prompt apart, roles strictly alternating from a user message,
tool calls as ``tool_use`` blocks in the assistant message and their results as
``tool_result`` blocks in the very next user message, and no empty text blocks.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]
OPENING_PLACEHOLDER = "(The conversation so far is summarised in the system prompt.)"

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


@dataclass(frozen=True)
class AnthropicPrompt:
    system: str | None
    messages: list[dict[str, Any]]


def _text_blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[Block] = []
    for part in content or ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and str(part.get("text", "")).strip():
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            url = str(part.get("image_url", {}).get("url", ""))
            if url.startswith("data:") and ";base64," in url:
                media_type, data = url[5:].split(";base64,", 1)
                source = {"type": "base64", "media_type": media_type, "data": data}
            else:
                source = {"type": "url", "url": url}
            blocks.append({"type": "image", "source": source})
    return blocks


def _tool_input(arguments: Any) -> dict[str, Any]:
    """Anthropic wants the input as an object; arguments that are not a JSON object are
    passed under one key rather than dropped."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        parsed = json.loads(arguments) if arguments else {}
    except (TypeError, ValueError):
        parsed = None
    return parsed if isinstance(parsed, dict) else {"arguments": arguments}


def _blocks(message: Mapping[str, Any]) -> tuple[str, list[Block]]:
    role = message["role"]
    if role == "tool":
        text = message.get("content")
        if not isinstance(text, str):
            text = "\n".join(b["text"] for b in _text_blocks(text) if b["type"] == "text")
        return "user", [
            {
                "type": "tool_result",
                "tool_use_id": anthropic_tool_id(message["tool_call_id"]),
                "content": text,
            }
        ]
    blocks = _text_blocks(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        blocks.append(
            {
                "type": "tool_use",
                "id": anthropic_tool_id(call["id"]),
                "name": function.get("name", ""),
                "input": _tool_input(function.get("arguments")),
            }
        )
    return ("assistant" if role == "assistant" else "user"), blocks


def to_anthropic(messages: Sequence[Mapping[str, Any]]) -> AnthropicPrompt:
    """Convert an OpenAI chat prompt (as contextd assembles it) to Anthropic's shape."""
    system: str | None = None
    converted: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] in {"system", "developer"}:
            text = "\n\n".join(b["text"] for b in _text_blocks(message.get("content")))
            system = f"{system}\n\n{text}" if system else text
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
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
        # tool_result blocks must open the user message that answers the calls.
        message["content"].sort(key=lambda block: block["type"] != "tool_result")
    return AnthropicPrompt(system or None, converted)


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
        used_ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if len(set(used_ids)) != len(used_ids):
            problems.append(f"[{index}] two tool_use blocks share an id")
    if pending:
        problems.append(f"tool_use {sorted(pending)} unanswered at the end")
    if messages and messages[-1]["role"] != "user":
        problems.append("the prompt does not end on a user message")
    return problems
