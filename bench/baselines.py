"""What an agent would do in-process instead of calling contextd: LangChain's
``trim_messages`` and LlamaIndex's ``ChatMemoryBuffer`` and ``Memory``, each given the same
input budget and a tiktoken counter that counts like OpenAI.

The libraries come with the ``bench`` extra (``pip install -e ".[bench]"``) and are imported
inside the functions below, so that the rest of ``bench`` (and mypy in CI) does without them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import tiktoken

from bench.synth import Message

#: tiktoken's encoding for each model the benchmarks use.
ENCODINGS = {"gpt-4": "cl100k_base", "gpt-4o": "o200k_base"}


def encoder(model: str) -> Callable[[str], list[int]]:
    encoding = tiktoken.get_encoding(ENCODINGS[model])

    def encode(text: str) -> list[int]:
        return encoding.encode(text, disallowed_special=())

    return encode


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("langchain-core", "llama-index-core"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


# LangChain ---------------------------------------------------------------------------------


def to_langchain(chat: Sequence[Message]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    converted: list[Any] = []
    for message in chat:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            converted.append(SystemMessage(content))
        elif role == "user":
            converted.append(HumanMessage(content))
        elif role == "tool":
            converted.append(ToolMessage(content, tool_call_id=message["tool_call_id"]))
        else:
            calls = [
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "args": json.loads(call["function"]["arguments"]),
                    "type": "tool_call",
                }
                for call in message.get("tool_calls") or ()
            ]
            converted.append(AIMessage(content, tool_calls=calls))
    return converted


def langchain_counter(model: str) -> Callable[[list[Any]], int]:
    """A ``token_counter`` for ``trim_messages`` that counts a message list as OpenAI does
    (3 tokens a message, 3 to prime the reply, the role and content with tiktoken, a tool
    call as its id, name and JSON arguments). LangChain's own ``count_tokens_approximately``
    is a characters-per-token guess, not this."""
    encode = encoder(model)
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}

    def count(messages: list[Any]) -> int:
        total = 3
        for message in messages:
            total += 3 + len(encode(roles.get(message.type, message.type)))
            if isinstance(message.content, str):
                total += len(encode(message.content))
            for call in getattr(message, "tool_calls", None) or ():
                total += len(encode(call["id"] + call["name"] + json.dumps(call["args"])))
            tool_call_id = getattr(message, "tool_call_id", None)
            if tool_call_id:
                total += len(encode(tool_call_id))
        return total

    return count


def trim(messages: list[Any], budget: int, counter: Callable[[list[Any]], int]) -> list[Any]:
    """Newest-first: the system message and the newest messages that fit, starting on a user
    message, no message cut."""
    from langchain_core.messages import trim_messages

    trimmed: list[Any] = trim_messages(
        messages,
        max_tokens=budget,
        token_counter=counter,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )
    return trimmed


def from_langchain(messages: list[Any]) -> list[Message]:
    from langchain_core.messages import convert_to_openai_messages

    converted: list[Message] = convert_to_openai_messages(messages)
    return converted


# LlamaIndex --------------------------------------------------------------------------------


def to_llama(chat: Sequence[Message]) -> list[Any]:
    from llama_index.core.llms import ChatMessage, MessageRole

    converted = []
    for message in chat:
        extra: dict[str, Any] = {}
        if message.get("tool_calls"):
            extra["tool_calls"] = message["tool_calls"]
        if message.get("tool_call_id"):
            extra["tool_call_id"] = message["tool_call_id"]
        converted.append(
            ChatMessage(
                role=MessageRole(message["role"]),
                content=message.get("content"),
                additional_kwargs=extra,
            )
        )
    return converted


def from_llama(messages: list[Any]) -> list[Message]:
    converted = []
    for message in messages:
        chat: Message = {"role": message.role.value, "content": message.content}
        chat.update(message.additional_kwargs)
        converted.append(chat)
    return converted


def chat_memory_buffer(messages: list[Any], budget: int, model: str) -> Any:
    """A ``ChatMemoryBuffer`` holding ``messages``; its ``get()`` is the newest that fit."""
    from llama_index.core.memory import ChatMemoryBuffer

    buffer = ChatMemoryBuffer.from_defaults(token_limit=budget, tokenizer_fn=encoder(model))
    for message in messages:
        buffer.put(message)
    return buffer


def memory(messages: list[Any], budget: int, model: str, session: str) -> Any:
    """LlamaIndex's newer ``Memory`` (its default: an in-memory SQLite store, no memory
    blocks, so no LLM or embedding model) holding ``messages``."""
    from llama_index.core.memory import Memory

    held = Memory.from_defaults(session_id=session, token_limit=budget, tokenizer_fn=encoder(model))
    held.put_messages(messages)
    return held
