"""contextd as a LangChain v1 agent middleware (``pip install "contextd-client[langchain]"``).

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from contextd_client import AsyncContextd
    from contextd_client.adapters.langchain import ContextdMiddleware

    middleware = ContextdMiddleware(AsyncContextd(), model="gpt-4o", goal="Plan a trip")
    agent = create_agent(
        "openai:gpt-4o", tools=[...], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "trip-42"}}
    await agent.ainvoke({"messages": [{"role": "user", "content": "Find a hotel"}]}, config)

**Which conversation.** One middleware serves every thread of the agent: each run's contextd
session is the run's thread, as LangChain names it (``config["configurable"]["thread_id"]``),
or the runtime context's ``contextd_session_id`` or ``thread_id`` (a dict or an object, as
memory integrations read their user id from ``runtime.context``), first found first;
``session_prefix`` namespaces them. A run with neither raises ``ValueError``.

**What it does.** Around every model call it tells contextd what happened since the last one
(a new user message starts a turn; tool results after the model's tool calls are a step) and
hands the model contextd's prompt instead of the agent's message list: the session's system
layers, goal, memory and latest summary, the budgeted history, the current turn. A final
answer (no tool calls) completes the turn. The agent's own system prompt, when it has one,
comes first in the system message. Usage the model reports goes to contextd's calibration.

**Where its state lives.** The open turn's id is in the agent state (``contextd_turn_id``, a
private field: checkpointed with the thread, never in the agent's input or output), not on the
middleware. Every write carries an idempotency key made from the LangChain message it records,
so a model call that is retried (a retry middleware, a resumed graph) replays contextd's first
answer instead of storing anything twice. A turn left open (the model call failed) is closed as
failed when the thread's next user message arrives.

**Sync or async.** ``invoke``/``stream`` and ``ainvoke``/``astream`` both work with either
client: a ``Contextd`` runs in a worker thread under ``ainvoke``; an ``AsyncContextd`` under
``invoke`` sends through a synchronous twin (same address, key, timeout and retries).

A structured output (``response_format``) completes the turn; the answer stored is the
model's text, or the output's JSON when the model answered with the schema's tool call only.

Limits: message content other than text (and image URLs from the user) is sent as text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    AgentState,
    ExtendedModelResponse,
    PrivateStateAttr,
)
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from contextd_client._client import AsyncContextd, Contextd, _Api
from contextd_client._exchange import Exchange, arun, call, fail_turn, run
from contextd_client.errors import (
    SessionExists,
    SessionNotFound,
    TurnInProgress,
)
from contextd_client.models import Prompt, Usage

__all__ = ["ContextdMiddleware", "ContextdState"]


class ContextdState(AgentState[Any]):
    """The agent state with the thread's open contextd turn (None between turns)."""

    contextd_turn_id: NotRequired[Annotated[str | None, PrivateStateAttr]]


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


def _usage(message: AIMessage) -> Usage | None:
    """What LangChain reports of the call's tokens, in the OpenAI shape contextd reads."""
    reported = message.usage_metadata
    if not reported:
        return None
    usage: Usage = {
        "prompt_tokens": reported["input_tokens"],
        "completion_tokens": reported["output_tokens"],
        "total_tokens": reported["total_tokens"],
    }
    cached = (reported.get("input_token_details") or {}).get("cache_read")
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def _key(session_id: str, message: BaseMessage, event: str) -> str | None:
    """The idempotency key of recording ``message`` (None when it has no id to make one)."""
    if not message.id:
        return None
    digest = hashlib.sha256(f"{session_id}\0{message.id}\0{event}".encode()).hexdigest()
    return f"langchain-{digest}"


@dataclass(frozen=True)
class _Start:
    message: HumanMessage


@dataclass(frozen=True)
class _Step:
    call: AIMessage
    results: list[ToolMessage]


def _what_happened(messages: Sequence[AnyMessage]) -> _Start | _Step | None:
    """What the agent did since the model last answered: the user spoke, or tools ran."""
    if not messages:
        return None
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return _Start(last)
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.append(message)
        elif isinstance(message, AIMessage) and message.tool_calls and results:
            return _Step(message, results[::-1])
        else:
            break
    return None


def _final_answer(response: ModelResponse[Any]) -> str | None:
    """The answer's text when the model's response ends the turn: no tool calls, or a
    structured output (its tool call's arguments, when it has no text); else None."""
    answers = [m for m in response.result if isinstance(m, AIMessage)]
    if not answers:
        return None
    answer = answers[-1]
    if not answer.tool_calls:
        return _text(answer.content)
    if response.structured_response is not None:
        return _text(answer.content) or json.dumps(answer.tool_calls[0]["args"])
    return None


def _request_with(request: ModelRequest[Any], prompt: Prompt) -> ModelRequest[Any]:
    """The model request with contextd's prompt: its system messages joined after the
    agent's own system prompt, then its conversation."""
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


def _context_value(context: Any, name: str) -> Any:
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


class ContextdMiddleware(AgentMiddleware[ContextdState, Any, Any]):
    """Gives the agent's model contextd's prompt and records each thread's turns in contextd.

    ``create`` fields (``model`` and the others of :meth:`Contextd.create_session`) make a
    thread's contextd session on its first turn when it does not exist yet; without them it
    must exist."""

    state_schema = ContextdState

    def __init__(
        self, client: Contextd | AsyncContextd, *, session_prefix: str = "", **create: Any
    ) -> None:
        super().__init__()
        self.client = client
        self.session_prefix = session_prefix
        self._create = create

    def session_id(self, runtime: Runtime[Any]) -> str:
        """The contextd session of the run: its thread (see the module's documentation)."""
        for name in ("contextd_session_id", "thread_id"):
            value = _context_value(runtime.context, name)
            if value:
                return f"{self.session_prefix}{value}"
        try:
            thread = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # outside a graph run: no config to read
            thread = None
        if thread is None and runtime.execution_info is not None:
            thread = runtime.execution_info.thread_id
        if thread:
            return f"{self.session_prefix}{thread}"
        raise ValueError(
            "ContextdMiddleware needs the run's conversation: pass "
            'config={"configurable": {"thread_id": ...}} (with a checkpointer), or a context '
            "with contextd_session_id or thread_id"
        )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ExtendedModelResponse[Any]:
        """contextd's prompt in, the turn recorded (``invoke``, ``stream``)."""
        session_id = self.session_id(request.runtime)
        prompt, turn_id = run(self.client, self._before_call(session_id, request))
        response = handler(_request_with(request, prompt) if prompt else request)
        closed = run(self.client, self._after_call(session_id, turn_id, response))
        return _with_turn(response, None if closed else turn_id)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ExtendedModelResponse[Any]:
        """contextd's prompt in, the turn recorded (``ainvoke``, ``astream``)."""
        session_id = self.session_id(request.runtime)
        prompt, turn_id = await arun(self.client, self._before_call(session_id, request))
        response = await handler(_request_with(request, prompt) if prompt else request)
        closed = await arun(self.client, self._after_call(session_id, turn_id, response))
        return _with_turn(response, None if closed else turn_id)

    # What to tell contextd, written once for both: exchanges that ``run``/``arun`` drive.

    def _before_call(
        self, session_id: str, request: ModelRequest[Any]
    ) -> Exchange[tuple[Prompt | None, str | None]]:
        turn_id = cast("str | None", request.state.get("contextd_turn_id"))
        happened = _what_happened(request.messages)
        if isinstance(happened, _Start):
            prompt = yield from self._start(session_id, happened.message, turn_id)
            return prompt, prompt["turn_id"]
        if isinstance(happened, _Step):
            if turn_id is None:  # the state was not kept (no checkpointer, a new run)
                turn_id = (yield from call(_Api.get_session, session_id))["open_turn_id"]
            if turn_id is not None:
                answered = {result.tool_call_id for result in happened.results}
                prompt = yield from call(
                    _Api.post_step,
                    session_id,
                    turn_id,
                    [c for c in _tool_calls(happened.call) if c["id"] in answered],
                    [
                        {"tool_call_id": result.tool_call_id, "content": _text(result.content)}
                        for result in happened.results
                    ],
                    content=_text(happened.call.content) or None,
                    usage=_usage(happened.call),
                    idempotency_key=_key(session_id, happened.results[-1], "step"),
                )
                return prompt, turn_id
        return None, turn_id

    def _start(
        self, session_id: str, message: HumanMessage, open_turn: str | None
    ) -> Exchange[Prompt]:
        if open_turn is not None:  # this thread's last turn never got its answer
            yield from fail_turn(session_id, open_turn)
        content = _user_content(message)
        key = _key(session_id, message, "start")
        try:
            return (yield from call(_Api.start_turn, session_id, content, idempotency_key=key))
        except SessionNotFound:
            if not self._create:
                raise
            with contextlib.suppress(SessionExists):  # another run of the thread made it
                yield from call(_Api.create_session, id=session_id, **self._create)
        except TurnInProgress:  # opened by a run whose state was lost
            session = yield from call(_Api.get_session, session_id)
            if session["open_turn_id"]:
                yield from fail_turn(session_id, session["open_turn_id"])
        return (yield from call(_Api.start_turn, session_id, content, idempotency_key=key))

    def _after_call(
        self, session_id: str, turn_id: str | None, response: ModelResponse[Any]
    ) -> Exchange[bool]:
        """Completes the turn on a final answer; says whether it did."""
        text = _final_answer(response)
        if text is None or turn_id is None:
            return False
        answer = [m for m in response.result if isinstance(m, AIMessage)][-1]
        yield from call(
            _Api.complete_turn,
            session_id,
            turn_id,
            text,
            usage=_usage(answer),
            idempotency_key=_key(session_id, answer, "answer"),
        )
        return True


def _with_turn(response: ModelResponse[Any], turn_id: str | None) -> ExtendedModelResponse[Any]:
    """The model's response, and the thread's open turn written to the agent state."""
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"contextd_turn_id": turn_id})
    )
