"""Blocks in priority order -> an OpenAI chat-completions message list.

Order (seed 003 §6): system layers, goal and mode, memory, latest summary, the recent raw
window, the current turn. Everything that is not a conversation message goes into one leading
``system`` message, in sections, so the prompt is accepted by strict chat templates (vLLM,
Llama, Mistral) that allow a single system message at the start, and so the unchanging layers
form a stable cache prefix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from app.budget.tokens import TokenCounter, count_message, count_tools, reply_priming

ChatMessage = dict[str, Any]

SYSTEM_BLOCK = "system"
GOAL_BLOCK = "goal"
MEMORY_BLOCK = "memory"
SUMMARY_BLOCK = "summary"
HISTORY_BLOCK = "history"
CURRENT_BLOCK = "current"
#: The session's tool definitions; in a report only when the session declares tools.
TOOLS_BLOCK = "tools"
BLOCKS = (
    SYSTEM_BLOCK,
    GOAL_BLOCK,
    MEMORY_BLOCK,
    SUMMARY_BLOCK,
    HISTORY_BLOCK,
    CURRENT_BLOCK,
    TOOLS_BLOCK,
)

SECTION_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class ContextBlocks:
    """The non-conversation blocks of a session's prompt."""

    system_layers: tuple[str, ...] = ()
    goal: str | None = None
    mode: str | None = None
    memory: str | None = None
    summary: str | None = None
    #: Tool definitions sent with every call: not in the messages, but billed as input.
    tools: tuple[Mapping[str, Any], ...] = ()

    def sections(self) -> list[tuple[str, str]]:
        """(block, text) pairs in prompt order, empty blocks left out."""
        sections = [(SYSTEM_BLOCK, layer) for layer in self.system_layers if layer.strip()]
        goal_lines = []
        if self.goal:
            goal_lines.append(f"Goal: {self.goal}")
        if self.mode:
            goal_lines.append(f"Mode: {self.mode}")
        if goal_lines:
            sections.append((GOAL_BLOCK, "## Session\n" + "\n".join(goal_lines)))
        if self.memory and self.memory.strip():
            sections.append((MEMORY_BLOCK, "## Memory\n" + self.memory.strip()))
        if self.summary and self.summary.strip():
            sections.append(
                (SUMMARY_BLOCK, "## Summary of earlier conversation\n" + self.summary.strip())
            )
        return sections

    def with_summary(self, summary: str | None) -> ContextBlocks:
        return replace(self, summary=summary)


def system_message(blocks: ContextBlocks) -> ChatMessage | None:
    sections = blocks.sections()
    if not sections:
        return None
    return {"role": "system", "content": SECTION_SEPARATOR.join(text for _, text in sections)}


@dataclass(frozen=True)
class FixedCost:
    """Tokens of the system message and reply priming, and their split by block."""

    tokens: int
    blocks: dict[str, int]


def fixed_cost(counter: TokenCounter, blocks: ContextBlocks) -> FixedCost:
    """Exact tokens of everything but the conversation, with a per-block breakdown that adds
    up to the total (message overhead and priming are booked to the system block).

    Measured every time: between two policy events every turn of a session has the same
    blocks, so the runtime remembers the result (``app.caches.FixedCostCache``)."""
    breakdown = dict.fromkeys((SYSTEM_BLOCK, GOAL_BLOCK, MEMORY_BLOCK, SUMMARY_BLOCK), 0)
    message = system_message(blocks)
    total = reply_priming(counter)
    if message is not None:
        total += count_message(counter, message)
        for block, text in blocks.sections():
            if block != SYSTEM_BLOCK:
                breakdown[block] += counter.count_text(text)
    breakdown[SYSTEM_BLOCK] = total - sum(breakdown.values())
    if blocks.tools:
        breakdown[TOOLS_BLOCK] = count_tools(counter, blocks.tools)
        total += breakdown[TOOLS_BLOCK]
    return FixedCost(total, breakdown)


def chat_message(
    *,
    role: str,
    content: Any,
    name: str | None = None,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
    tool_call_id: str | None = None,
    reasoning_content: str | None = None,
    is_error: bool = False,
) -> ChatMessage:
    """A stored message as the chat-completions API wants it (an assistant's reasoning as it
    came: thinking parts in ``content``, OpenAI-shaped ``reasoning_content`` beside it). A
    failed tool result carries ``is_error`` for the Anthropic rendering; the OpenAI rendering
    leaves it out (:mod:`app.budget.tool_images`)."""
    message: ChatMessage = {"role": role, "content": content}
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    if name:
        message["name"] = name
    if tool_calls:
        # Copies, not the caller's dicts: a message's chat form is made once and kept
        # (``Message.chat``), so the copy is paid once a message, not once a step.
        message["tool_calls"] = [dict(call) for call in tool_calls]
    if tool_call_id:
        message["tool_call_id"] = tool_call_id
    if is_error:
        message["is_error"] = True
    return message


def chat_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why a message list would be refused by an OpenAI-compatible API (empty when valid).

    Checks what providers enforce: a system message only at the start, known roles, every
    ``tool`` message answering a call of the assistant message before its run of results,
    every call answered before the conversation moves on, and a prompt that ends on a user or
    tool message so the model has something to answer.
    """
    problems: list[str] = []
    pending: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in {"system", "user", "assistant", "tool"}:
            problems.append(f"[{index}] unknown role {role!r}")
            continue
        if role != "tool" and pending:
            problems.append(f"[{index}] tool calls {sorted(pending)} have no result")
            pending.clear()
        if role == "system" and index != 0:
            problems.append(f"[{index}] system message after the start")
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                call_id = call.get("id")
                if not call_id:
                    problems.append(f"[{index}] tool call without an id")
                else:
                    pending.add(str(call_id))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"[{index}] tool result {call_id!r} answers no pending call")
            pending.discard(str(call_id))
    if pending:
        problems.append(f"tool calls {sorted(pending)} have no result")
    if messages and messages[-1].get("role") not in {"user", "tool"}:
        problems.append("the prompt does not end on a user or tool message")
    return problems


@lru_cache(maxsize=32)
def _digest(text: str) -> str:
    """The system message's hash, remembered for the last few texts: between two policy
    events every call of a session shows the same one, and once its summary is long (~150 kB
    at 10,000 stored messages) encoding and hashing it took 0.1-0.2 ms a call, where finding
    it again costs a string hash and a comparison."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prompt_fingerprint(system: ChatMessage | None, message_seqs: Sequence[int]) -> list[str]:
    """A compact identity of a prompt, message by message: stored messages never change, so
    their place in the session (``seq``) stands for them; the system message is hashed.

    Seqs rather than row ids: they are known before the new messages are written, so the
    fingerprint goes out with the same write as the rest of the session's changes."""
    fingerprint = []
    if system is not None:
        fingerprint.append(f"s:{_digest(str(system['content']))}")
    fingerprint.extend(f"q:{seq}" for seq in message_seqs)
    return fingerprint


def marked_entries(fingerprint: Sequence[str] | None, prefix: str) -> list[str]:
    """The entries of a fingerprint that start with ``prefix``, in order.

    A long open turn's fingerprint holds thousands of plain entries ("q:<seq>") and few
    marked ones, and a step reads it for each kind of mark: one search of the joined text
    (in C) tells whether any entry starts with ``prefix`` before they are walked."""
    if not fingerprint or "\n" + prefix not in "\n" + "\n".join(fingerprint):
        return []
    return [item for item in fingerprint if item.startswith(prefix)]


def comparable_fingerprint(stored: Sequence[str] | None) -> Sequence[str] | None:
    """A stored fingerprint, or None if there is none to compare with: earlier releases
    named messages by row id ("m:…"), which a new fingerprint cannot be compared with."""
    if stored is None or marked_entries(stored, "m:"):
        return None
    return stored


def first_difference(previous: Sequence[str], current: Sequence[str]) -> int | None:
    """The index of the first message of ``previous`` that ``current`` does not repeat in
    place; None when ``current`` starts with the whole of ``previous`` (the provider's prefix
    cache still hits)."""
    for index, item in enumerate(previous):
        if index >= len(current) or current[index] != item:
            return index
    return None
