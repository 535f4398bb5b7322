"""contextd as the OpenAI Agents SDK's ``Session``.

``pip install "contextd-client[openai-agents]"``, then:

    from agents import Agent, Runner
    from contextd_client import AsyncContextd
    from contextd_client.adapters.openai_agents import ContextdSession

    contextd = AsyncContextd("http://127.0.0.1:8080")
    session = ContextdSession("trip-42", contextd, model="gpt-4o", goal="Plan a trip")
    result = await Runner.run(agent, "Find a hotel in Lisbon", session=session)

What the agent's runs add to the session becomes contextd turns: the user's input starts a
turn, each batch of function calls with their outputs is a step, the final message completes
the turn; contextd stores, budgets, summarises and audits them. What the session hands back
(``get_items``) is the history contextd keeps for the next turn: the latest summary, then the
messages still active (not summarised or pruned), in the Responses API's item format.

Limits: contextd keeps every message for good, so ``pop_item`` raises (the SDK only uses it
for best-effort rewinds). Inside one run the SDK grows the prompt with its own items; contextd's
budget applies from the next run (a ``BudgetExceeded`` from the turn start reaches the caller
of ``Runner.run``). Only function tools are recorded; hosted tools (web search, file search,
computer use) and reasoning items are left out of the stored conversation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from contextd_client._client import AsyncContextd
from contextd_client.errors import SessionNotFound

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

__all__ = ["ContextdSession", "items_from_messages"]


def _text_of(content: Any) -> str:
    """The text of a Responses message content (a string, or parts with text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            str(part.get("text") or part.get("refusal") or "")
            for part in content
            if isinstance(part, Mapping)
        )
    return ""


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    """A Responses user content as contextd's: text, or text and image parts."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content or []:
        kind = part.get("type")
        if kind == "input_text":
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and part.get("image_url"):
            image: dict[str, Any] = {"url": part["image_url"]}
            if part.get("detail") in {"auto", "low", "high"}:
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
    return parts or ""


def _input_content(content: Any) -> str | list[dict[str, Any]]:
    """contextd's user content as the Responses API's."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if part.get("type") == "text":
            parts.append({"type": "input_text", "text": part["text"]})
        elif part.get("type") == "image_url":
            url = part["image_url"]["url"]
            detail = part["image_url"].get("detail") or "auto"
            parts.append({"type": "input_image", "image_url": url, "detail": detail})
    return parts


def items_from_messages(
    messages: Sequence[Mapping[str, Any]], summary: str | None = None
) -> list[dict[str, Any]]:
    """contextd's stored messages (and the latest summary) as Responses API input items."""
    items: list[dict[str, Any]] = []
    if summary:
        items.append({"role": "system", "content": summary})
    for message in messages:
        role = message["role"]
        if role == "user":
            items.append({"role": "user", "content": _input_content(message["content"])})
        elif role == "assistant":
            if message.get("content"):
                items.append({"role": "assistant", "content": _text_of(message["content"])})
            for call in message.get("tool_calls") or []:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call["id"],
                        "name": call["function"]["name"],
                        "arguments": call["function"]["arguments"],
                    }
                )
        elif role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": _text_of(message["content"]),
                }
            )
        elif role == "system" and message.get("content"):
            items.append({"role": "system", "content": _text_of(message["content"])})
    return items


class ContextdSession:
    """An Agents SDK session whose history lives in contextd (the ``Session`` protocol).

    ``create`` fields (``model`` and the others of :meth:`AsyncContextd.create_session`) make
    the contextd session on first use when it does not exist yet; without them it must."""

    def __init__(
        self,
        session_id: str,
        client: AsyncContextd,
        *,
        session_settings: SessionSettings | None = None,
        **create: Any,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self._client = client
        self._create = create
        self._ready = False
        self._lock = asyncio.Lock()
        self._turn_id: str | None = None
        self._text: list[str] = []
        self._calls: list[dict[str, Any]] = []
        self._results: dict[str, dict[str, Any]] = {}

    async def _ensure_session(self) -> None:
        if self._ready:
            return
        try:
            session = await self._client.get_session(self.session_id)
            self._turn_id = session["open_turn_id"]
        except SessionNotFound:
            if not self._create:
                raise
            await self._client.create_session(id=self.session_id, **self._create)
        self._ready = True

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history contextd keeps: the latest summary, then the active messages."""
        async with self._lock:
            await self._ensure_session()
            messages: list[Mapping[str, Any]] = []
            after_seq = 0
            while True:
                page = await self._client.messages(
                    self.session_id, after_seq=after_seq, limit=1000, state="active"
                )
                messages.extend(page["messages"])
                if page["next_after_seq"] is None:
                    break
                after_seq = page["next_after_seq"]
            summaries = (await self._client.summaries(self.session_id))["summaries"]
            summary = summaries[0]["rendered"] if summaries else None
            items = items_from_messages(messages, summary)
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record the run's items as contextd turns: input starts one, function calls with
        their outputs are steps, the final message completes it."""
        async with self._lock:
            await self._ensure_session()
            for item in cast("list[dict[str, Any]]", items):
                await self._add(item)
            if self._turn_id and self._text and not self._calls:
                await self._client.complete_turn(
                    self.session_id, self._turn_id, "".join(self._text)
                )
                self._turn_id = None
                self._text = []

    async def _add(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role == "user":
            await self._start_turn(_user_content(item.get("content")))
        elif kind == "message" and role == "assistant":
            self._text.append(_text_of(item.get("content")))
        elif kind == "function_call":
            self._calls.append(
                {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {"name": item["name"], "arguments": item.get("arguments") or ""},
                }
            )
        elif kind == "function_call_output":
            output = item.get("output")
            content = output if isinstance(output, str) else _text_of(output) or json.dumps(output)
            self._results[item["call_id"]] = {"tool_call_id": item["call_id"], "content": content}
            if self._turn_id and all(call["id"] in self._results for call in self._calls):
                await self._client.post_step(
                    self.session_id,
                    self._turn_id,
                    self._calls,
                    [self._results[call["id"]] for call in self._calls],
                    content="".join(self._text) or None,
                )
                self._calls, self._results, self._text = [], {}, []

    async def _start_turn(self, content: str | list[dict[str, Any]]) -> None:
        if self._turn_id:
            # The previous run stopped before its final answer (max turns, an error).
            await self._client.complete_turn(
                self.session_id, self._turn_id, "".join(self._text) or None, status="failed"
            )
        self._calls, self._results, self._text = [], {}, []
        prompt = await self._client.start_turn(self.session_id, content)
        self._turn_id = prompt["turn_id"]

    async def pop_item(self) -> TResponseInputItem | None:
        """contextd never forgets a message, so nothing can be popped."""
        raise NotImplementedError("contextd keeps every message; items cannot be popped")

    async def clear_session(self) -> None:
        """Start over: the contextd session is deleted and made again with the same settings."""
        async with self._lock:
            try:
                session = await self._client.get_session(self.session_id)
            except SessionNotFound:
                return
            await self._client.delete_session(self.session_id)
            fields = {
                name: session[name]
                for name in (
                    "model",
                    "system",
                    "goal",
                    "mode",
                    "metadata",
                    "memory",
                    "tools",
                    "max_output_tokens",
                    "context_limit",
                    "block_caps",
                )
                if session.get(name) is not None
            }
            await self._client.create_session(id=self.session_id, **fields)
            self._turn_id = None
            self._calls, self._results, self._text = [], {}, []
