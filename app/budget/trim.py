"""Stateless trimming for agents that keep their own history (seeds 002 and 004).

``trim_messages`` is seed 002's lazy, cache-preserving trim: nothing happens below the
threshold; above it, assistant and tool content older than a boundary is replaced by one
stable placeholder, the boundary (``trimmed_up_to_message_index``) only ever moves forward, and
the tool-call structure stays, so the prompt stays valid and its prefix stays cacheable.
``truncate_messages`` is seed 004's keep-the-last-N, which never starts on a tool result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PLACEHOLDER = "[trimmed]"
_CHECKPOINT_TAG = re.compile(r"<checkpoint_id>.*?</checkpoint_id>", re.DOTALL)

Message = dict[str, Any]


def _strip_tags(content: Any) -> Any:
    if isinstance(content, str):
        return _CHECKPOINT_TAG.sub("", content)
    if isinstance(content, list):
        return [
            {**part, "text": _CHECKPOINT_TAG.sub("", part["text"])}
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
            else part
            for part in content
        ]
    return content


def clean_checkpoint_tags(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Remove ``<checkpoint_id>…</checkpoint_id>`` markers an agent framework left in content."""
    return [{**m, "content": _strip_tags(m.get("content"))} for m in messages]


def _as_parts(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _merge_content(first: Any, second: Any) -> Any:
    if first is None or first == "":
        return second
    if second is None or second == "":
        return first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _as_parts(first) + _as_parts(second)


def merge_consecutive_same_role(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Join runs of same-role messages into one, for providers that require alternating roles.

    Tool results are never merged: each answers its own call id. An assistant message that
    follows a tool-calling one is not merged into it either, since its calls were answered
    in between (or it would carry unanswered calls forward).
    """
    merged: list[Message] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and previous["role"] == message["role"]
            and message["role"] != "tool"
            and not previous.get("tool_calls")
        ):
            combined = {
                **previous,
                "content": _merge_content(previous.get("content"), message.get("content")),
            }
            if message.get("tool_calls"):
                combined["tool_calls"] = list(message["tool_calls"])
            merged[-1] = combined
        else:
            merged.append(dict(message))
    return merged


def dedup_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Within one run of tool results, keep only the last result for each call id."""
    result: list[Message] = []
    run: list[Message] = []

    def flush() -> None:
        last_index = {m.get("tool_call_id"): i for i, m in enumerate(run)}
        result.extend(m for i, m in enumerate(run) if last_index[m.get("tool_call_id")] == i)
        run.clear()

    for message in messages:
        if message["role"] == "tool":
            run.append(dict(message))
        else:
            flush()
            result.append(dict(message))
    flush()
    return result


def normalise(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Seed 002's normalisation: tags stripped, same-role runs merged, duplicate results
    dropped. Deterministic, so indices into an append-only history stay stable."""
    return dedup_tool_results(merge_consecutive_same_role(clean_checkpoint_tags(messages)))


def trim_message(message: Mapping[str, Any]) -> Message:
    """Replace an assistant or tool message's text with the placeholder, keeping its structure
    (role, tool calls, tool call id, images). Other roles come back unchanged."""
    if message["role"] not in {"assistant", "tool"}:
        return dict(message)
    content = message.get("content")
    if isinstance(content, str):
        trimmed: Any = PLACEHOLDER if content else content
    elif isinstance(content, list):
        trimmed = [
            {**part, "text": PLACEHOLDER}
            if isinstance(part, Mapping) and part.get("type") == "text"
            else part
            for part in content
        ]
    else:
        trimmed = content
    return {**message, "content": trimmed}


@dataclass(frozen=True)
class TrimResult:
    messages: list[Message]
    trimmed_up_to_message_index: int
    tokens_before: int
    tokens_after: int
    threshold_tokens: int

    @property
    def within_threshold(self) -> bool:
        return self.tokens_after <= self.threshold_tokens


def _keep_boundary(messages: Sequence[Mapping[str, Any]], keep_last_n_assistant: int) -> int:
    """Index of the first message to keep so that the last N assistant messages stay whole."""
    if keep_last_n_assistant <= 0:
        return len(messages)
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "assistant":
            seen += 1
            if seen == keep_last_n_assistant:
                return index
    return 0


def trim_messages(
    messages: Sequence[Mapping[str, Any]],
    *,
    count_message: Callable[[Mapping[str, Any]], int],
    fixed_tokens: int,
    threshold_tokens: int,
    previous_index: int = 0,
    keep_last_n_assistant: int = 10,
) -> TrimResult:
    """Seed 002 §7.1 ``reduce_context_with_budget`` on already normalised messages.

    ``fixed_tokens`` is what the prompt costs besides its messages (reply priming, tool
    definitions). The budget is the hard constraint and ``keep_last_n_assistant`` best effort.
    """
    current = [dict(m) for m in messages]
    counts = [count_message(m) for m in current]
    before = fixed_tokens + sum(counts)
    previous = max(0, min(previous_index, len(current)))
    if previous == 0 and before <= threshold_tokens:
        return TrimResult(current, 0, before, before, threshold_tokens)

    def trim(index: int) -> None:
        trimmed = trim_message(current[index])
        if trimmed != current[index]:
            current[index] = trimmed
            counts[index] = count_message(trimmed)

    for index in range(previous):
        trim(index)
    boundary = previous
    if fixed_tokens + sum(counts) > threshold_tokens:
        boundary = max(previous, _keep_boundary(current, keep_last_n_assistant))
        for index in range(previous, boundary):
            trim(index)
        while fixed_tokens + sum(counts) > threshold_tokens and boundary < len(current):
            trim(boundary)
            boundary += 1
    return TrimResult(current, boundary, before, fixed_tokens + sum(counts), threshold_tokens)


def truncate_messages(
    messages: Sequence[Mapping[str, Any]], *, keep: int, preserve_system: bool = True
) -> list[Message]:
    """Seed 004: the system prompt (when first) and the last ``keep`` messages, except that the
    kept tail never opens with a tool result: the call it answers comes along."""
    head = (
        [dict(messages[0])]
        if preserve_system and messages and (messages[0]["role"] == "system")
        else []
    )
    rest = [dict(m) for m in messages[len(head) :]]
    start = max(0, len(rest) - keep)
    while 0 < start < len(rest) and rest[start]["role"] == "tool":
        start -= 1  # walk back to the assistant message that made the call
    while start < len(rest) and rest[start]["role"] == "tool":
        start += 1  # results whose call is not in the list at all cannot be sent
    return head + rest[start:]
