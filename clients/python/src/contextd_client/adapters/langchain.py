"""contextd as a LangChain v1 agent middleware (``pip install "contextd-client[langchain]"``).

    from langchain.agents import create_agent
    from contextd_client import AsyncContextd
    from contextd_client.adapters.langchain import ContextdMiddleware

    middleware = ContextdMiddleware(AsyncContextd(), "trip-42", model="gpt-4o")
    agent = create_agent("openai:gpt-4o", tools=[...], middleware=[middleware])
    await agent.ainvoke({"messages": [{"role": "user", "content": "Find a hotel"}]})

Around every model call the middleware tells contextd what happened since the last one (a
new user message starts a turn; tool results after the model's tool calls are a step) and
hands the model contextd's prompt instead of the agent's message list: the session's system
layers, goal, memory and latest summary, the budgeted history, the current turn. A final
answer (no tool calls) completes the turn. The agent's own system prompt, when it has one,
comes first in the system message.

Limits: one middleware instance is one contextd session (one conversation); use a new one per
thread. Use ``Contextd`` for ``invoke``/``stream`` and ``AsyncContextd`` for ``ainvoke``/
``astream``. Message content other than text (and image URLs from the user) is sent as text.
A structured-output model call that answers with a tool call to the output schema is recorded
as the final answer's tool call, not as a step.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from contextd_client._client import AsyncContextd, Contextd
from contextd_client.errors import SessionNotFound
from contextd_client.models import Prompt

__all__ = ["ContextdMiddleware"]


def _text(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, str) or part.get("type") == "text"
    )


def _user_content(message: HumanMessage) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, str):
            parts.append({"type": "text", "text": part})
        elif part.get("type") == "text":
            parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            image = part["image_url"]
            url = image["url"] if isinstance(image, dict) else image
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts or ""


def _tool_calls(message: AIMessage) -> list[dict[str, Any]]:
    return [
        {
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
        }
        for call in message.tool_calls
    ]


@dataclass(frozen=True)
class _Start:
    content: str | list[dict[str, Any]]


@dataclass(frozen=True)
class _Step:
    tool_calls: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    content: str | None


def _what_happened(messages: Sequence[AnyMessage]) -> _Start | _Step | None:
    """What the agent did since the model last answered: the user spoke, or tools ran."""
    if not messages:
        return None
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return _Start(_user_content(last))
    if not isinstance(last, ToolMessage):
        return None
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.append(message)
            continue
        if isinstance(message, AIMessage) and message.tool_calls:
            answered = {result.tool_call_id for result in results}
            calls = [call for call in _tool_calls(message) if call["id"] in answered]
            return _Step(
                tool_calls=calls,
                tool_results=[
                    {"tool_call_id": result.tool_call_id, "content": _text(result.content)}
                    for result in reversed(results)
                ],
                content=_text(message.content) or None,
            )
        break
    return None


def _final_answer(response: ModelResponse[Any]) -> AIMessage | None:
    answers = [m for m in response.result if isinstance(m, AIMessage)]
    if answers and not answers[-1].tool_calls:
        return answers[-1]
    return None


class ContextdMiddleware(AgentMiddleware):
    """Gives the agent's model contextd's prompt and records the turn in contextd.

    ``create`` fields (``model`` and the others of :meth:`Contextd.create_session`) make the
    contextd session on first use when it does not exist yet; without them it must."""

    def __init__(self, client: Contextd | AsyncContextd, session_id: str, **create: Any) -> None:
        super().__init__()
        self.client = client
        self.session_id = session_id
        self._create = create
        self._ready = False
        self._turn_id: str | None = None
        self._prompt: Prompt | None = None

    # What to send, and what to do with the answer: the same for both clients.

    def _request_with(self, request: ModelRequest[Any], prompt: Prompt) -> ModelRequest[Any]:
        messages: list[BaseMessage] = convert_to_messages(prompt["messages"])
        system = [m for m in messages if isinstance(m, SystemMessage)]
        conversation: list[AnyMessage] = [
            m for m in messages if isinstance(m, HumanMessage | AIMessage | ToolMessage)
        ]
        texts = [_text(m.content) for m in system]
        if request.system_message is not None:
            texts.insert(0, _text(request.system_message.content))
        system_message = SystemMessage("\n\n".join(t for t in texts if t)) if texts else None
        return request.override(messages=conversation, system_message=system_message)

    # Sync: invoke / stream.

    def _sync_client(self) -> Contextd:
        if not isinstance(self.client, Contextd):
            raise TypeError("invoke/stream need a Contextd client; ainvoke/astream AsyncContextd")
        return self.client

    def _ensure(self, client: Contextd) -> None:
        if self._ready:
            return
        try:
            self._turn_id = client.get_session(self.session_id)["open_turn_id"]
        except SessionNotFound:
            if not self._create:
                raise
            client.create_session(id=self.session_id, **self._create)
        self._ready = True

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """contextd's prompt in, the turn recorded."""
        client = self._sync_client()
        self._ensure(client)
        happened = _what_happened(request.messages)
        if isinstance(happened, _Start):
            if self._turn_id:
                client.complete_turn(self.session_id, self._turn_id, None, status="failed")
            self._prompt = client.start_turn(self.session_id, happened.content)
            self._turn_id = self._prompt["turn_id"]
        elif isinstance(happened, _Step) and self._turn_id and happened.tool_calls:
            self._prompt = client.post_step(
                self.session_id,
                self._turn_id,
                happened.tool_calls,
                happened.tool_results,
                content=happened.content,
            )
        if self._prompt is not None:
            request = self._request_with(request, self._prompt)
        response = handler(request)
        answer = _final_answer(response)
        if answer is not None and self._turn_id:
            client.complete_turn(self.session_id, self._turn_id, _text(answer.content))
            self._turn_id, self._prompt = None, None
        return response

    # Async: ainvoke / astream.

    def _async_client(self) -> AsyncContextd:
        if not isinstance(self.client, AsyncContextd):
            raise TypeError("ainvoke/astream need an AsyncContextd client; invoke/stream Contextd")
        return self.client

    async def _aensure(self, client: AsyncContextd) -> None:
        if self._ready:
            return
        try:
            self._turn_id = (await client.get_session(self.session_id))["open_turn_id"]
        except SessionNotFound:
            if not self._create:
                raise
            await client.create_session(id=self.session_id, **self._create)
        self._ready = True

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """contextd's prompt in, the turn recorded."""
        client = self._async_client()
        await self._aensure(client)
        happened = _what_happened(request.messages)
        if isinstance(happened, _Start):
            if self._turn_id:
                await client.complete_turn(self.session_id, self._turn_id, None, status="failed")
            self._prompt = await client.start_turn(self.session_id, happened.content)
            self._turn_id = self._prompt["turn_id"]
        elif isinstance(happened, _Step) and self._turn_id and happened.tool_calls:
            self._prompt = await client.post_step(
                self.session_id,
                self._turn_id,
                happened.tool_calls,
                happened.tool_results,
                content=happened.content,
            )
        if self._prompt is not None:
            request = self._request_with(request, self._prompt)
        response = await handler(request)
        answer = _final_answer(response)
        if answer is not None and self._turn_id:
            await client.complete_turn(self.session_id, self._turn_id, _text(answer.content))
            self._turn_id, self._prompt = None, None
        return response
