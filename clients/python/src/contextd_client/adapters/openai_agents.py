"""contextd as the OpenAI Agents SDK's ``Session``, and contextd's budget inside a run.

``pip install "contextd-client[openai-agents]"``, then:

    from agents import Agent, RunConfig, Runner
    from contextd_client import AsyncContextd
    from contextd_client.adapters.openai_agents import ContextdSession

    contextd = AsyncContextd("http://127.0.0.1:8080")
    session = ContextdSession("trip-42", contextd, model="gpt-4o", goal="Plan a trip")
    result = await Runner.run(
        agent,
        "Find a hotel in Lisbon",
        session=session,
        run_config=RunConfig(call_model_input_filter=session.call_model_input_filter),
    )

**The conversation.** What the agent's runs add to the session becomes contextd turns: the
user's input starts a turn, each batch of function calls with their outputs is a step, the
final message completes the turn; contextd stores, budgets, summarises and audits them. What
the session hands back (``get_items``) is the history contextd keeps for the next turn: the
latest summary, then the messages still active (not summarised or pruned), in the Responses
API's item format. Items this session object added come back exactly as they were added (ids,
status, every field); older ones (another process, before a restart) are rebuilt from
contextd's messages, without ids.

**pop_item.** The newest item goes, as with the SDK's own sessions. An item not yet sent to
contextd (a function call waiting for its output, an answer waiting for the turn's end) is
simply dropped; one contextd stored is hidden from this session's history (the hidden list is
kept in the contextd session's ``metadata``, so every process sees it) while contextd keeps the
message itself, as it keeps every message, for the audit and search.

**The model calls inside a run** (``call_model_input_filter``, the SDK's hook before every
model call, passed in ``RunConfig``): the session's system layers, goal, mode, memory and
latest summary, as contextd renders them for the turn, are appended to the agent's
instructions; the whole input is then fitted to the session model's budget by contextd's
stateless trim (``/v1/context/trim``, with the agent's tool definitions counted): older
function outputs and assistant text give up their content to a placeholder, oldest first,
calls and ids kept, behind a boundary that only moves forward within the turn so the prompt's
prefix stays cacheable. Without the filter, the SDK grows the prompt with its own items and
contextd's budget applies from the next run only, and the goal and system layers do not reach
the model (the SDK's input is the agent's instructions and the session's items).

Limits: only function tools are recorded in contextd; hosted tools (web search, file search,
computer use) and reasoning items stay in this object's record of the turn, not in contextd.
The client may be an ``AsyncContextd`` or a ``Contextd`` (its calls then run in a worker thread).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from contextd_client._client import AsyncContextd, Contextd, _Api
from contextd_client._exchange import Exchange, arun, call, fail_turn
from contextd_client.errors import SessionNotFound, TurnInProgress
from contextd_client.models import Prompt, Session, StoredMessage

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.run_config import CallModelData, ModelInputData

__all__ = ["ContextdSession", "items_from_messages"]

#: Where the hidden (popped) items are listed in the contextd session's metadata.
HIDDEN_METADATA_KEY = "openai_agents_hidden"
#: The fields a cleared session is made again with.
_SESSION_FIELDS = (
    "model", "system", "goal", "mode", "metadata", "memory", "tools", "max_output_tokens",
    "context_limit", "block_caps", "recall",
)  # fmt: skip

Item = dict[str, Any]


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


def _message_items(message: Mapping[str, Any]) -> list[Item]:
    """One stored contextd message as the Responses API input items it stands for."""
    role = message["role"]
    if role == "user":
        return [{"role": "user", "content": _input_content(message["content"])}]
    if role == "tool":
        output = _text_of(message["content"])
        return [
            {"type": "function_call_output", "call_id": message["tool_call_id"], "output": output}
        ]
    if role == "system":
        return (
            [{"role": "system", "content": _text_of(message["content"])}]
            if message.get("content")
            else []
        )
    items: list[Item] = []
    if message.get("content"):
        items.append({"role": "assistant", "content": _text_of(message["content"])})
    for tool_call in message.get("tool_calls") or []:
        items.append(
            {
                "type": "function_call",
                "call_id": tool_call["id"],
                "name": tool_call["function"]["name"],
                "arguments": tool_call["function"]["arguments"],
            }
        )
    return items


def items_from_messages(
    messages: Sequence[Mapping[str, Any]], summary: str | None = None
) -> list[Item]:
    """contextd's stored messages (and the latest summary) as Responses API input items."""
    items: list[Item] = [{"role": "system", "content": summary}] if summary else []
    for message in messages:
        items.extend(_message_items(message))
    return items


def _without_orphans(entries: list[tuple[str, Item]]) -> list[tuple[str, Item]]:
    """Function calls and outputs that lost their other half (one was popped) are left out:
    neither API takes one without the other."""
    calls = {item["call_id"] for _, item in entries if item.get("type") == "function_call"}
    outputs = {item["call_id"] for _, item in entries if item.get("type") == "function_call_output"}
    return [
        (key, item)
        for key, item in entries
        if item.get("type") not in {"function_call", "function_call_output"}
        or item["call_id"] in calls & outputs
    ]


# The model input as chat messages, to count and trim it as contextd does.


def _chat_message(item: Mapping[str, Any]) -> Item:
    kind, role = item.get("type", "message"), item.get("role")
    if kind == "message" and role == "user":
        return {"role": "user", "content": _user_content(item.get("content"))}
    if kind == "message" and role in {"system", "developer"}:
        return {"role": "system", "content": _text_of(item.get("content"))}
    if kind == "message" and role == "assistant":
        return {"role": "assistant", "content": _text_of(item.get("content"))}
    if kind == "function_call":
        function = {"name": item["name"], "arguments": item.get("arguments") or ""}
        tool_call = {"id": item["call_id"], "type": "function", "function": function}
        return {"role": "assistant", "content": None, "tool_calls": [tool_call]}
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item["call_id"], "content": _output_text(item)}
    # Anything else the SDK sends (reasoning, hosted tool calls) is counted as its JSON.
    return {"role": "user", "content": json.dumps(item, default=str)}


def _as_chat(instructions: str | None, items: Sequence[Item]) -> tuple[list[Item], list[list[int]]]:
    """The chat messages the input stands for, and which items each came from. Same-role
    neighbours are joined and a call's repeated output kept once, as contextd's trim would
    join them itself, so that its answer lines up with these messages one for one."""
    messages: list[Item] = [{"role": "system", "content": instructions}] if instructions else []
    sources: list[list[int]] = [[]] if instructions else []
    for index, item in enumerate(items):
        message = _chat_message(item)
        previous = messages[-1] if messages else None
        if previous is not None and previous["role"] == message["role"] != "tool":
            if not previous.get("tool_calls") and not message.get("tool_calls"):
                previous["content"] = _joined(previous["content"], message["content"])
                sources[-1].append(index)
                continue
            if previous.get("tool_calls") and message.get("tool_calls"):
                previous["tool_calls"] = [*previous["tool_calls"], *message["tool_calls"]]
                sources[-1].append(index)
                continue
        if (
            previous is not None
            and message["role"] == previous["role"] == "tool"
            and message["tool_call_id"] == previous["tool_call_id"]
        ):
            messages[-1], sources[-1] = message, [*sources[-1], index]
            continue
        messages.append(message)
        sources.append([index])
    return messages, sources


def _joined(first: Any, second: Any) -> Any:
    if not first:
        return second
    if not second:
        return first
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    return _parts(first) + _parts(second)


def _parts(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _output_text(item: Mapping[str, Any]) -> str:
    output = item.get("output")
    if isinstance(output, str):
        return output
    return _text_of(output) or json.dumps(output, default=str)


def _trimmed_item(item: Item, content: Any) -> Item:
    """``item`` with the content contextd's trim gave its message (a placeholder)."""
    text = content if isinstance(content, str) else _text_of(content)
    if item.get("type") == "function_call_output":
        return {**item, "output": text}
    if item.get("role") == "assistant" and item.get("type", "message") == "message":
        if isinstance(item.get("content"), str):
            return {**item, "content": text}
        parts = [
            {**part, "text": text} if isinstance(part, Mapping) and "text" in part else part
            for part in item.get("content") or []
        ]
        return {**item, "content": parts}
    return item


def _tool_definition(tool: Any) -> Item | None:
    """A function tool as the chat-completions definition it is sent as (others: None)."""
    schema = getattr(tool, "params_json_schema", None)
    if not isinstance(schema, dict):
        return None
    function = {"name": tool.name, "description": tool.description or "", "parameters": schema}
    return {"type": "function", "function": function}


@dataclass
class _Turn:
    """What this session object knows of the open turn."""

    turn_id: str | None = None
    #: Items added since contextd last heard of the turn, in the SDK's order.
    pending: list[Item] = field(default_factory=list)
    #: contextd's leading system messages for the turn (layers, goal, memory, summary).
    preamble: str | None = None
    #: The stateless trim's boundary for the turn's model calls: it only moves forward.
    trim_boundary: int = 0
    #: The step of the turn's latest prompt (its final answer is stored at that step).
    step: int = 0


class ContextdSession:
    """An Agents SDK session whose history lives in contextd (the ``Session`` protocol).

    ``create`` fields (``model`` and the others of :meth:`AsyncContextd.create_session`) make
    the contextd session on first use when it does not exist yet; without them it must."""

    def __init__(
        self,
        session_id: str,
        client: AsyncContextd | Contextd,
        *,
        session_settings: SessionSettings | None = None,
        **create: Any,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self._client = client
        self._create = create
        self._lock = asyncio.Lock()
        self._turn = _Turn()
        self._session: Session | None = None
        #: The items as added, by the stored message they became: (turn, step, role, ordinal).
        self._added: dict[tuple[str, int, str, int], list[Item]] = {}
        #: The summary item ``get_items`` handed out last (the filter's preamble has it).
        self._summary_item: Item | None = None

    # The Session protocol.

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history contextd keeps (the latest summary, then the active messages), without
        what was popped, then what this object holds of the open turn."""
        async with self._lock:
            entries = await arun(self._client, self._history())
        items = [item for _, item in _without_orphans(entries)] + copy.deepcopy(self._turn.pending)
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record the run's items as contextd turns: input starts one, function calls with
        their outputs are steps, the final message completes it."""
        async with self._lock:
            await arun(self._client, self._add(cast("list[Item]", items)))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the newest item and return it (None when there is none): dropped if contextd
        has not had it yet, else hidden from this session's history."""
        async with self._lock:
            if self._turn.pending:
                return cast("TResponseInputItem", self._turn.pending.pop())
            entries = await arun(self._client, self._history())
            if not entries:
                return None
            key, item = entries[-1]
            await arun(self._client, self._hide(key))
        return cast("TResponseInputItem", item)

    async def clear_session(self) -> None:
        """Start over: the contextd session is deleted and made again with the same settings
        (popped items are forgotten with it)."""
        async with self._lock:
            await arun(self._client, self._clear())
            self._turn, self._added, self._session = _Turn(), {}, None

    # contextd's budget inside a run.

    async def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """For ``RunConfig(call_model_input_filter=...)``: the agent's instructions with the
        session's layers, goal, memory and summary, and the input fitted to the budget."""
        from agents.run_config import ModelInputData
        from agents.run_context import RunContextWrapper

        model_data = data.model_data
        items = [cast(Item, item) for item in model_data.input if item != self._summary_item]
        instructions = (
            "\n\n".join(text for text in (model_data.instructions, self._turn.preamble) if text)
            or None
        )
        tools = [
            definition
            for tool in await data.agent.get_all_tools(RunContextWrapper(data.context))
            if (definition := _tool_definition(tool)) is not None
        ]
        async with self._lock:
            trimmed = await arun(self._client, self._trim(instructions, items, tools))
        return ModelInputData(
            input=cast("list[TResponseInputItem]", trimmed), instructions=instructions
        )

    # The exchanges with contextd behind each method.

    def _ensure(self) -> Exchange[Session]:
        if self._session is not None:
            return self._session
        try:
            self._session = yield from call(_Api.get_session, self.session_id)
        except SessionNotFound:
            if not self._create:
                raise
            self._session = yield from call(_Api.create_session, id=self.session_id, **self._create)
        if self._turn.turn_id is None:
            self._turn.turn_id = self._session["open_turn_id"]
        return self._session

    def _history(self) -> Exchange[list[tuple[str, Item]]]:
        """(key, item) for each visible item of the stored history, oldest first."""
        yield from self._ensure()
        session = yield from call(_Api.get_session, self.session_id)
        self._session = session
        hidden = set(session["metadata"].get(HIDDEN_METADATA_KEY) or [])
        messages: list[StoredMessage] = []
        after_seq: int | None = 0
        while after_seq is not None:
            page = yield from call(
                _Api.messages, self.session_id, after_seq=after_seq, limit=1000, state="active"
            )
            messages.extend(page["messages"])
            after_seq = page["next_after_seq"]
        summaries = (yield from call(_Api.summaries, self.session_id))["summaries"]
        entries: list[tuple[str, Item]] = []
        self._summary_item = None
        if summaries:
            self._summary_item = {"role": "system", "content": summaries[0]["rendered"]}
            entries.append((f"summary:{summaries[0]['id']}", self._summary_item))
        ordinals: dict[tuple[str, int, str], int] = {}
        for message in messages:
            slot = (message["turn_id"], message["step"], message["role"])
            ordinal = ordinals[slot] = ordinals.get(slot, -1) + 1
            added = self._added.get((*slot, ordinal))
            items = copy.deepcopy(added) if added is not None else _message_items(message)
            entries.extend((f"{message['id']}:{index}", item) for index, item in enumerate(items))
        return [(key, item) for key, item in entries if key not in hidden]

    def _hide(self, key: str) -> Exchange[None]:
        session = yield from call(_Api.get_session, self.session_id)
        metadata = dict(session["metadata"])
        metadata[HIDDEN_METADATA_KEY] = [*(metadata.get(HIDDEN_METADATA_KEY) or []), key]
        self._session = yield from call(_Api.update_session, self.session_id, metadata=metadata)

    def _add(self, items: list[Item]) -> Exchange[None]:
        yield from self._ensure()
        for item in items:
            if item.get("type", "message") == "message" and item.get("role") == "user":
                yield from self._start_turn(item)
                continue
            self._turn.pending.append(item)
            if item.get("type") == "function_call_output":
                yield from self._post_step_when_answered()
        pending = self._turn.pending
        answers = [i for i in pending if i.get("role") == "assistant"]
        if self._turn.turn_id and answers and not _calls(pending):
            yield from self._complete(pending)

    def _start_turn(self, item: Item) -> Exchange[None]:
        if self._turn.turn_id:  # the previous run stopped before its answer (max turns, error)
            yield from self._fail_open_turn()
        try:
            prompt = yield from call(
                _Api.start_turn, self.session_id, _user_content(item.get("content"))
            )
        except TurnInProgress:  # opened elsewhere and never closed
            self._turn.turn_id = (yield from call(_Api.get_session, self.session_id))[
                "open_turn_id"
            ]
            yield from self._fail_open_turn()
            prompt = yield from call(
                _Api.start_turn, self.session_id, _user_content(item.get("content"))
            )
        self._turn = _Turn(turn_id=prompt["turn_id"])
        self._took(prompt)
        self._added[(prompt["turn_id"], 0, "user", 0)] = [copy.deepcopy(item)]

    def _post_step_when_answered(self) -> Exchange[None]:
        pending = self._turn.pending
        calls = _calls(pending)
        outputs = {i["call_id"]: i for i in pending if i.get("type") == "function_call_output"}
        if not self._turn.turn_id or any(c["call_id"] not in outputs for c in calls):
            return
        texts = [_text_of(i.get("content")) for i in pending if i.get("role") == "assistant"]
        prompt = yield from call(
            _Api.post_step,
            self.session_id,
            self._turn.turn_id,
            [_chat_message(c)["tool_calls"][0] for c in calls],
            [
                {"tool_call_id": c["call_id"], "content": _output_text(outputs[c["call_id"]])}
                for c in calls
            ],
            content="".join(texts) or None,
        )
        self._took(prompt)
        turn, step = self._turn.turn_id, prompt["step"]
        self._added[(turn, step, "assistant", 0)] = [
            copy.deepcopy(i) for i in pending if i.get("type") != "function_call_output"
        ]
        for ordinal, c in enumerate(calls):
            self._added[(turn, step, "tool", ordinal)] = [copy.deepcopy(outputs[c["call_id"]])]
        self._turn.pending = []

    def _complete(self, pending: list[Item]) -> Exchange[None]:
        assert self._turn.turn_id is not None
        texts = [_text_of(i.get("content")) for i in pending if i.get("role") == "assistant"]
        yield from call(_Api.complete_turn, self.session_id, self._turn.turn_id, "".join(texts))
        # Stored at the turn's last step, after that step's own assistant message if any.
        ordinal = 1 if self._turn.step > 0 else 0
        key = (self._turn.turn_id, self._turn.step, "assistant", ordinal)
        self._added[key] = copy.deepcopy(pending)
        self._turn = _Turn()

    def _fail_open_turn(self) -> Exchange[None]:
        if self._turn.turn_id is not None:
            pending = self._turn.pending
            texts = [_text_of(i.get("content")) for i in pending if i.get("role") == "assistant"]
            yield from fail_turn(self.session_id, self._turn.turn_id, "".join(texts) or None)
        self._turn = _Turn()

    def _took(self, prompt: Prompt) -> None:
        """Keep what the filter needs of a turn's prompt: contextd's system messages."""
        system = []
        for message in prompt["messages"]:
            if message["role"] != "system":
                break
            system.append(_text_of(message["content"]))
        self._turn.preamble = "\n\n".join(system) or None
        self._turn.step = prompt["step"]

    def _trim(
        self, instructions: str | None, items: list[Item], tools: list[Item]
    ) -> Exchange[list[Item]]:
        session = yield from self._ensure()
        messages, sources = _as_chat(instructions, items)
        options: dict[str, Any] = {"trimmed_up_to_message_index": self._turn.trim_boundary}
        if tools:
            options["tools"] = tools
        for name in ("context_limit", "max_output_tokens"):
            if session.get(name) is not None:
                options[name] = session[name]
        trimmed = yield from call(_Api.trim, session["model"], messages, **options)
        self._turn.trim_boundary = trimmed["trimmed_up_to_message_index"]
        result = list(items)
        for sent, got, origin in zip(messages, trimmed["messages"], sources, strict=True):
            if got.get("content") != sent.get("content"):
                for index in origin:
                    result[index] = _trimmed_item(result[index], got.get("content"))
        return result

    def _clear(self) -> Exchange[None]:
        try:
            session = yield from call(_Api.get_session, self.session_id)
        except SessionNotFound:
            return
        yield from call(_Api.delete_session, self.session_id)
        fields = {name: session[name] for name in _SESSION_FIELDS if session.get(name) is not None}  # type: ignore[literal-required]
        metadata = {k: v for k, v in session["metadata"].items() if k != HIDDEN_METADATA_KEY}
        fields["metadata"] = metadata
        yield from call(_Api.create_session, id=self.session_id, **fields)


def _calls(items: Sequence[Item]) -> list[Item]:
    return [item for item in items if item.get("type") == "function_call"]
