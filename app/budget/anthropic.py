"""The same prompt for Anthropic's Messages API: ``{system, messages}`` with content blocks.

Anthropic wants the system prompt apart, roles strictly alternating from a user message,
tool calls as ``tool_use`` blocks in the assistant message and their results as
``tool_result`` blocks in the very next user message, and no empty text blocks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]
OPENING_PLACEHOLDER = "(The conversation so far is summarised in the system prompt.)"


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
            {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": text}
        ]
    blocks = _text_blocks(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
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
    if pending:
        problems.append(f"tool_use {sorted(pending)} unanswered at the end")
    if messages and messages[-1]["role"] != "user":
        problems.append("the prompt does not end on a user message")
    return problems
