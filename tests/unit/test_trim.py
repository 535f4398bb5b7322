"""Seed 002's lazy, cache-preserving trim and seed 004's truncation, as pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.budget.assembly import chat_problems
from app.budget.tokens import FallbackCounter, count_message
from app.budget.trim import (
    PLACEHOLDER,
    normalise,
    trim_messages,
    truncate_messages,
)

COUNTER = FallbackCounter()


def count(message: Mapping[str, Any]) -> int:
    return count_message(COUNTER, message)


def exchange(number: int, size: int = 400) -> list[dict[str, Any]]:
    call = f"call_{number}"
    return [
        {"role": "user", "content": f"question {number}"},
        {
            "role": "assistant",
            "content": f"looking up {number}",
            "tool_calls": [
                {"id": call, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": call, "content": "r" * size},
        {"role": "assistant", "content": f"answer {number} " + "a" * size},
    ]


def conversation(exchanges: int, size: int = 400) -> list[dict[str, Any]]:
    system = {"role": "system", "content": "You are terse."}
    return [system] + [m for n in range(exchanges) for m in exchange(n, size)]


def total(messages: list[dict[str, Any]]) -> int:
    return 3 + sum(count(m) for m in messages)


def test_under_the_threshold_nothing_changes() -> None:
    messages = conversation(2)

    result = trim_messages(messages, count_message=count, fixed_tokens=3, threshold_tokens=10_000)

    assert result.messages == messages
    assert result.trimmed_up_to_message_index == 0


def test_over_the_threshold_old_assistant_and_tool_content_becomes_the_placeholder() -> None:
    messages = conversation(10)

    result = trim_messages(
        messages,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=total(messages) // 2,
        keep_last_n_assistant=4,
    )

    assert result.within_threshold
    boundary = result.trimmed_up_to_message_index
    assert 0 < boundary < len(messages)
    for before, after in zip(messages[:boundary], result.messages[:boundary], strict=True):
        if before["role"] in {"assistant", "tool"}:
            assert after["content"] == PLACEHOLDER
            assert after.get("tool_calls") == before.get("tool_calls")
            assert after.get("tool_call_id") == before.get("tool_call_id")
        else:
            assert after == before
    assert result.messages[boundary:] == messages[boundary:]
    assert chat_problems(result.messages[:-1]) == []


def test_the_last_n_assistant_messages_stay_when_the_budget_allows() -> None:
    messages = conversation(10)

    result = trim_messages(
        messages,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=total(messages) // 2,
        keep_last_n_assistant=4,
    )

    assistants = [m for m in result.messages if m["role"] == "assistant"]
    assert all(m["content"] != PLACEHOLDER for m in assistants[-4:])


def test_the_budget_wins_over_keep_last_n() -> None:
    messages = conversation(6)

    result = trim_messages(
        messages,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=total(messages) // 4,
        keep_last_n_assistant=50,
    )

    assert result.within_threshold
    assert result.trimmed_up_to_message_index > 0


def test_the_index_never_decreases_and_the_old_trim_is_reapplied() -> None:
    messages = conversation(3, size=10)

    result = trim_messages(
        messages,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=10_000,
        previous_index=7,
    )

    assert result.trimmed_up_to_message_index == 7
    assert result.messages[2]["content"] == PLACEHOLDER  # assistant in [0, 7)
    assert result.messages[1] == messages[1]  # users are never trimmed


def test_appending_to_a_trimmed_history_keeps_the_prefix() -> None:
    first_history = conversation(8)
    first = trim_messages(
        first_history,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=int(total(first_history) * 0.7),
        keep_last_n_assistant=2,
    )
    longer = first_history + exchange(99, size=10)

    second = trim_messages(
        longer,
        count_message=count,
        fixed_tokens=3,
        threshold_tokens=int(total(first_history) * 0.7),
        previous_index=first.trimmed_up_to_message_index,
        keep_last_n_assistant=2,
    )

    assert second.trimmed_up_to_message_index >= first.trimmed_up_to_message_index
    if second.trimmed_up_to_message_index == first.trimmed_up_to_message_index:
        assert second.messages[: len(first.messages)] == first.messages


def test_normalise_strips_checkpoint_tags_merges_roles_and_drops_duplicate_results() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hello <checkpoint_id>ab-12</checkpoint_id>there"},
        {"role": "user", "content": "again"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "old"},
        {"role": "tool", "tool_call_id": "c1", "content": "new"},
    ]

    result = normalise(messages)

    assert result[0] == {"role": "user", "content": "hello there\n\nagain"}
    assert [m["role"] for m in result] == ["user", "assistant", "tool"]
    assert result[2]["content"] == "new"


def test_truncate_keeps_the_system_prompt_and_the_last_n() -> None:
    messages = conversation(5)

    kept = truncate_messages(messages, keep=4)

    assert kept == [messages[0], *messages[-4:]]


def test_truncate_never_starts_on_a_tool_result() -> None:
    messages = conversation(3)

    kept = truncate_messages(messages, keep=2)  # the last 2 are a tool result and an answer

    assert [m["role"] for m in kept] == ["system", "assistant", "tool", "assistant"]
    assert chat_problems([*kept, {"role": "user", "content": "next"}]) == []


def test_truncate_drops_results_whose_call_is_not_in_the_list() -> None:
    messages = [
        {"role": "tool", "tool_call_id": "gone", "content": "orphan"},
        {"role": "user", "content": "hi"},
    ]

    assert truncate_messages(messages, keep=5) == [messages[1]]
