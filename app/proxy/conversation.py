"""An agent's request, as the provider takes it, read as contextd's units: the system text,
then user messages, assistant messages and the tool results that answer them.

Both providers' shapes come out alike: a user message's content as chat parts, an assistant
message and its tool results in the shape the turns API takes (which reads Anthropic blocks
itself, :mod:`app.turns.anthropic_input`). Each unit also gives the fingerprints it is matched
by against stored messages (:func:`fingerprint`): content, never position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.budget.tokens import content_text
from app.turns.anthropic_input import image_part

Protocol = Literal["openai", "anthropic"]

#: What a stored or sent message is matched by: its role and what identifies its content.
Fingerprint = tuple[str, ...]

#: Fields of an OpenAI assistant message the SDKs send back (``messages.append(message)``)
#: that say nothing when empty; any of them with a value cannot be carried by contextd.
_EMPTY_ASSISTANT_FIELDS = ("refusal", "annotations", "audio", "function_call", "name")


class ConversationError(ValueError):
    """The request's messages are not a conversation contextd can take (the provider's
    400 ``invalid_request_error``), with a message that says where."""


@dataclass(frozen=True)
class UserUnit:
    """A user message that is not tool results: it starts a turn."""

    #: Chat content: a string, or ``text`` and ``image_url`` parts.
    content: str | list[dict[str, Any]]
    name: str | None = None


@dataclass(frozen=True)
class AssistantUnit:
    """An assistant message as the turns API takes it (``content``, ``tool_calls``,
    ``reasoning_content``, or Anthropic blocks)."""

    message: dict[str, Any]
    call_ids: tuple[str, ...]


@dataclass(frozen=True)
class ResultsUnit:
    """The tool results that answer the assistant message before them."""

    results: tuple[dict[str, Any], ...]


Unit = UserUnit | AssistantUnit | ResultsUnit


@dataclass(frozen=True)
class Conversation:
    system: str | None
    units: tuple[Unit, ...]


def fingerprint(
    role: str, content: Any, *, call_ids: Sequence[str] = (), call_id: str = ""
) -> Fingerprint:
    """A message's identity for matching: a tool result by the call it answers, an assistant
    message that calls tools by its calls' ids, any other message by its text (and images)."""
    if role == "tool":
        return ("tool", call_id)
    if role == "assistant" and call_ids:
        return ("assistant", *call_ids)
    images = (
        sum(1 for part in content if isinstance(part, Mapping) and part.get("type") != "text")
        if isinstance(content, list)
        else 0
    )
    return (role, " ".join(content_text(content).split()), str(images))


def unit_fingerprints(unit: Unit) -> list[Fingerprint]:
    """The fingerprints of the stored messages a unit becomes, in order."""
    if isinstance(unit, UserUnit):
        return [fingerprint("user", unit.content)]
    if isinstance(unit, AssistantUnit):
        content = unit.message.get("content")
        if isinstance(content, list):
            content = [p for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return [fingerprint("assistant", content, call_ids=unit.call_ids)]
    return [fingerprint("tool", None, call_id=_result_call_id(r)) for r in unit.results]


def _result_call_id(result: Mapping[str, Any]) -> str:
    return str(result.get("tool_call_id") or result.get("tool_use_id") or "")


def read_conversation(protocol: Protocol, body: Mapping[str, Any]) -> Conversation:
    """The request's system text and units; :class:`ConversationError` when its messages are
    not a list of messages of the provider's shape."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConversationError("messages: must be a non-empty array of messages")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ConversationError(f"messages[{index}]: must be an object")
    if protocol == "openai":
        return _openai(messages)
    return _anthropic(body.get("system"), messages)


def _openai(messages: list[Mapping[str, Any]]) -> Conversation:
    system: list[str] = []
    units: list[Unit] = []
    pending_results: list[dict[str, Any]] = []

    def flush() -> None:
        if pending_results:
            units.append(ResultsUnit(tuple(pending_results)))
            pending_results.clear()

    for index, message in enumerate(messages):
        role = message.get("role")
        where = f"messages[{index}]"
        if role in ("system", "developer"):
            if units or pending_results:
                raise ConversationError(
                    f"{where}: a {role} message after the conversation started; contextd keeps "
                    "the system instructions at the start (put them in the first messages)"
                )
            system.append(content_text(message.get("content")))
        elif role == "tool":
            pending_results.append(
                {"tool_call_id": message.get("tool_call_id"), "content": message.get("content")}
            )
        elif role == "user":
            flush()
            units.append(UserUnit(_chat_user_content(message.get("content"), where), None))
        elif role == "assistant":
            flush()
            units.append(_openai_assistant(message, where))
        else:
            raise ConversationError(f"{where}: unknown role {role!r}")
    flush()
    return Conversation("\n\n".join(system) or None, tuple(units))


def _chat_user_content(content: Any, where: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ConversationError(f"{where}.content: must be a string or an array of parts")
    parts: list[dict[str, Any]] = []
    for position, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in ("text", "image_url"):
            raise ConversationError(
                f"{where}.content[{position}] ({kind}): contextd takes text and image_url parts"
            )
        parts.append(dict(part))
    return parts


def _openai_assistant(message: Mapping[str, Any], where: str) -> AssistantUnit:
    carried = {}
    for field, value in message.items():
        if field in ("role", "content", "tool_calls", "reasoning_content"):
            if field != "role" and value is not None:
                carried[field] = value
        elif field in _EMPTY_ASSISTANT_FIELDS and not value:
            continue
        else:
            raise ConversationError(f"{where}.{field}: contextd cannot carry this field")
    calls = carried.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise ConversationError(f"{where}.tool_calls: must be an array")
        # The SDKs may send back fields of the response's calls that the request takes
        # without them; the call is its id, name and arguments.
        chat_calls = [_chat_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)]
        if chat_calls:
            carried["tool_calls"] = chat_calls
        else:
            del carried["tool_calls"]
    ids = tuple(str(call["id"]) for call in carried.get("tool_calls", ()))
    return AssistantUnit(carried, ids)


def _chat_call(call: Any, where: str) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(call.get("id"), str):
        raise ConversationError(f"{where}: a tool call needs an id and a function")
    return {
        "id": call["id"],
        "type": "function",
        "function": {"name": function.get("name"), "arguments": function.get("arguments")},
    }


def _anthropic(system: Any, messages: list[Mapping[str, Any]]) -> Conversation:
    if isinstance(system, list):
        system_text = content_text(system)
    elif system is None or isinstance(system, str):
        system_text = system or ""
    else:
        raise ConversationError("system: must be a string or an array of text blocks")
    units: list[Unit] = []
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        where = f"messages[{index}]"
        if role == "assistant":
            calls = content if isinstance(content, list) else []
            ids = tuple(
                str(block.get("id"))
                for block in calls
                if isinstance(block, Mapping) and block.get("type") == "tool_use"
            )
            units.append(AssistantUnit({"role": "assistant", "content": content}, ids))
        elif role == "user":
            units.append(_anthropic_user(content, where))
        else:
            raise ConversationError(f"{where}: role must be user or assistant, not {role!r}")
    return Conversation(system_text or None, tuple(units))


def _anthropic_user(content: Any, where: str) -> Unit:
    if isinstance(content, str):
        return UserUnit(content)
    if not isinstance(content, list) or not content:
        raise ConversationError(f"{where}.content: must be a string or a non-empty array")
    kinds = {block.get("type") if isinstance(block, Mapping) else None for block in content}
    if "tool_result" in kinds:
        if kinds != {"tool_result"}:
            raise ConversationError(
                f"{where}.content: contextd takes tool_result blocks in a message of their "
                "own; send the text of the user in the next user message"
            )
        return ResultsUnit(tuple(dict(block) for block in content))
    parts: list[dict[str, Any]] = []
    for position, block in enumerate(content):
        block_where = f"{where}.content[{position}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            parts.append({"type": "text", "text": block.get("text")})
        elif kind == "image":
            try:
                parts.append(image_part(block, block_where))
            except ValueError as error:
                raise ConversationError(str(error)) from error
        else:
            raise ConversationError(
                f"{block_where} ({kind}): contextd takes text, image and tool_result blocks"
            )
    return UserUnit(parts)


def stored_fingerprint(
    role: str, content: Any, tool_calls: Sequence[Any] | None, tool_call_id: str | None
) -> Fingerprint:
    """The fingerprint of a stored message (the chat shape contextd stores)."""
    ids = [str(call.get("id")) for call in tool_calls or () if isinstance(call, Mapping)]
    if role == "assistant" and isinstance(content, list):
        content = [p for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
    return fingerprint(role, content, call_ids=ids, call_id=tool_call_id or "")
