"""The provider's answer, read as it passes: a whole JSON body, or a stream of server-sent
events fed chunk by chunk (nothing is held back: the recorder only reads).

Wire formats read (openai-python ``types/chat/chat_completion_chunk.py`` and
``lib/streaming/chat/_completions.py``; anthropic-sdk-python ``lib/streaming/_messages.py``
``accumulate_event``):

* OpenAI: ``data: {chat.completion.chunk}`` events, ``choices[0].delta`` carrying ``content``,
  ``reasoning_content`` and ``tool_calls`` pieces by ``index`` (``id`` and ``function.name``
  on the first piece, ``function.arguments`` in fragments), ``finish_reason`` on the last;
  ``usage`` on a last chunk with no choices (``stream_options.include_usage``); ``data: [DONE]``.
* Anthropic: ``message_start`` (usage with the input and cache figures),
  ``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``,
  ``thinking_delta``, ``signature_delta``) / ``content_block_stop``, ``message_delta``
  (``stop_reason``, output usage), ``message_stop``; ``error`` events mid-stream.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.proxy.conversation import Protocol
from app.turns.schemas import Usage

#: Anthropic blocks of an answer that contextd stores; others (server tool use and its
#: results) are the provider's to keep.
_STORED_ANTHROPIC_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")


@dataclass
class Answer:
    """What the provider answered, in the shape the turns API takes."""

    #: OpenAI: ``{"content", "tool_calls", "reasoning_content"}``; Anthropic: ``{"role",
    #: "content": [blocks]}``.
    message: dict[str, Any]
    calls_tools: bool
    usage: Usage | None
    #: The provider said it was done (``finish_reason``, ``message_stop``, a whole body).
    finished: bool


def usage_of(protocol: Protocol, raw: Any) -> Usage | None:
    """The provider's usage in contextd's terms (Anthropic's prompt is input plus cache
    reads plus cache writes)."""
    if not isinstance(raw, dict):
        return None
    if protocol == "openai":
        try:
            return Usage.model_validate(raw)
        except ValueError:
            return None
    numbers = {
        key: raw.get(key)
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    }
    if not all(isinstance(v, int) or v is None for v in numbers.values()):
        return None
    read = numbers["cache_read_input_tokens"] or 0
    written = numbers["cache_creation_input_tokens"] or 0
    prompt = numbers["input_tokens"]
    return Usage(
        prompt_tokens=prompt + read + written if prompt is not None else None,
        completion_tokens=numbers["output_tokens"],
        cache_read_input_tokens=numbers["cache_read_input_tokens"],
        cache_creation_input_tokens=numbers["cache_creation_input_tokens"],
    )


def answer_of_body(protocol: Protocol, body: Any) -> Answer | None:
    """A whole (non-streamed) response body's answer; None when it is not one."""
    if not isinstance(body, dict):
        return None
    if protocol == "openai":
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return None
        message = choices[0].get("message")
        if not isinstance(message, dict):
            return None
        carried = {
            key: message[key]
            for key in ("content", "tool_calls", "reasoning_content")
            if message.get(key) is not None
        }
        return Answer(
            carried,
            bool(carried.get("tool_calls")),
            usage_of(protocol, body.get("usage")),
            finished=True,
        )
    content = body.get("content")
    if body.get("type") != "message" or not isinstance(content, list):
        return None
    blocks = [_stored_block(b) for b in content if isinstance(b, dict)]
    kept = [b for b in blocks if b is not None]
    return Answer(
        {"role": "assistant", "content": kept},
        any(b.get("type") == "tool_use" for b in kept),
        usage_of(protocol, body.get("usage")),
        finished=True,
    )


def _stored_block(block: dict[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind not in _STORED_ANTHROPIC_BLOCKS:
        return None
    if kind == "text":
        return {"type": "text", "text": block.get("text", "")}
    if kind == "tool_use":
        return {k: block.get(k) for k in ("type", "id", "name", "input")}
    return dict(block)


@dataclass
class StreamRecorder:
    """Reads a server-sent event stream as its bytes pass, and builds the answer."""

    protocol: Protocol
    _pending: bytes = b""
    _event: str | None = None
    _data: list[str] = field(default_factory=list)
    # OpenAI
    _text: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
    _calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Anthropic
    _blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    _json: dict[int, list[str]] = field(default_factory=dict)
    _usage: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    #: The stream said something went wrong (an ``error`` event, or data that is not JSON).
    broken: bool = False

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8", errors="replace")
            if not line:
                self._dispatch()
            elif line.startswith("event:"):
                self._event = line[6:].strip()
            elif line.startswith("data:"):
                self._data.append(line[5:].removeprefix(" "))

    def _dispatch(self) -> None:
        data = "\n".join(self._data)
        event, self._event, self._data = self._event, None, []
        if not data:
            return
        if data == "[DONE]":
            self.finished = True
            return
        try:
            payload = json.loads(data)
        except ValueError:
            self.broken = True
            return
        if not isinstance(payload, dict):
            self.broken = True
            return
        if self.protocol == "openai":
            self._openai(payload)
        else:
            self._anthropic(event or str(payload.get("type")), payload)

    def _openai(self, chunk: dict[str, Any]) -> None:
        if "error" in chunk:
            self.broken = True
            return
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                # Servers that leave out ``data: [DONE]`` still end the choice.
                self.finished = True
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            if isinstance(delta.get("reasoning_content"), str):
                self._reasoning.append(delta["reasoning_content"])
            for piece in delta.get("tool_calls") or ():
                if not isinstance(piece, dict):
                    continue
                call = self._calls.setdefault(
                    int(piece.get("index", 0)),
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if piece.get("id"):
                    call["id"] = piece["id"]
                function = piece.get("function") or {}
                if function.get("name"):
                    call["function"]["name"] = function["name"]
                if isinstance(function.get("arguments"), str):
                    call["function"]["arguments"] += function["arguments"]

    def _anthropic(self, event: str, payload: dict[str, Any]) -> None:
        if event == "message_start":
            message = payload.get("message") or {}
            self._usage.update(message.get("usage") or {})
        elif event == "content_block_start":
            block = payload.get("content_block")
            if isinstance(block, dict):
                self._blocks[int(payload.get("index", 0))] = dict(block)
        elif event == "content_block_delta":
            index = int(payload.get("index", 0))
            block = self._blocks.get(index)
            delta = payload.get("delta") or {}
            if block is None:
                return
            kind = delta.get("type")
            if kind == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif kind == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif kind == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif kind == "input_json_delta":
                self._json.setdefault(index, []).append(delta.get("partial_json", ""))
        elif event == "content_block_stop":
            index = int(payload.get("index", 0))
            pieces = self._json.pop(index, None)
            block = self._blocks.get(index)
            if block is not None and block.get("type") == "tool_use" and pieces is not None:
                text = "".join(pieces)
                try:
                    block["input"] = json.loads(text) if text else {}
                except ValueError:
                    self.broken = True
        elif event == "message_delta":
            self._usage.update(payload.get("usage") or {})
        elif event == "message_stop":
            self.finished = True
        elif event == "error":
            self.broken = True

    def answer(self) -> Answer | None:
        """The answer, once the stream ended as the provider ends one; None otherwise."""
        self._dispatch()
        if not self.finished or self.broken:
            return None
        if self.protocol == "openai":
            message: dict[str, Any] = {}
            if self._text:
                message["content"] = "".join(self._text)
            if self._reasoning:
                message["reasoning_content"] = "".join(self._reasoning)
            if self._calls:
                message["tool_calls"] = [self._calls[i] for i in sorted(self._calls)]
            return Answer(
                message,
                bool(self._calls),
                usage_of("openai", self._usage or None),
                finished=True,
            )
        blocks = [_stored_block(self._blocks[i]) for i in sorted(self._blocks)]
        kept = [b for b in blocks if b is not None]
        return Answer(
            {"role": "assistant", "content": kept},
            any(b.get("type") == "tool_use" for b in kept),
            usage_of("anthropic", self._usage or None),
            finished=True,
        )
