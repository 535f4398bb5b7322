"""The drop-in history rule, pure: the agent's messages against the stored tail."""

from __future__ import annotations

from typing import Any

import pytest

from app.proxy.conversation import (
    ConversationError,
    Fingerprint,
    read_conversation,
    stored_fingerprint,
    unit_fingerprints,
)
from app.proxy.history import plan


def _openai(*messages: dict[str, Any]) -> Any:
    return read_conversation("openai", {"messages": list(messages)}).units


def _stored(*messages: dict[str, Any]) -> list[Fingerprint]:
    return [
        stored_fingerprint(m["role"], m.get("content"), m.get("tool_calls"), m.get("tool_call_id"))
        for m in messages
    ]


USER = {"role": "user", "content": "Find flights"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "s", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "3 flights"}
ANSWER = {"role": "assistant", "content": "I found 3 flights."}
NEXT = {"role": "user", "content": "Book the first"}


def test_a_history_that_ends_with_the_stored_tail_extends_it() -> None:
    result = plan(_openai(USER, CALL, RESULT, ANSWER, NEXT), _stored(USER, CALL, RESULT, ANSWER))

    assert result.outcome == "extends"
    assert result.imported == ()
    assert len(result.new) == 1


def test_tool_results_after_their_call_are_the_new_step() -> None:
    result = plan(_openai(USER, CALL, RESULT), _stored(USER))

    assert result.outcome == "extends"
    assert [type(unit).__name__ for unit in result.new] == ["AssistantUnit", "ResultsUnit"]


def test_messages_after_the_stored_tail_are_imported_in_order() -> None:
    result = plan(_openai(USER, CALL, RESULT, ANSWER, NEXT), _stored(USER))

    assert result.outcome == "imported"
    assert [fp for unit in result.imported for fp in unit_fingerprints(unit)] == _stored(
        CALL, RESULT, ANSWER
    )


def test_an_agent_that_kept_only_its_last_messages_still_extends() -> None:
    older = [{"role": "user", "content": f"old {i}"} for i in range(20)]
    result = plan(_openai(ANSWER, NEXT), _stored(*older, USER, CALL, RESULT, ANSWER))

    assert result.outcome == "extends"


def test_an_agent_that_sends_only_its_new_message_extends() -> None:
    assert plan(_openai(NEXT), _stored(USER, ANSWER)).outcome == "extends"


def test_an_edited_message_makes_the_history_diverge() -> None:
    edited = {**ANSWER, "content": "I found 4 flights."}

    result = plan(_openai(USER, CALL, RESULT, edited, NEXT), _stored(USER, CALL, RESULT, ANSWER))

    assert result.outcome == "diverged"
    assert result.imported == ()
    assert result.note["unmatched_messages"] == 1


def test_whitespace_does_not_make_a_message_another() -> None:
    spaced = {**ANSWER, "content": "  I found 3\nflights. "}

    assert plan(_openai(USER, spaced, NEXT), _stored(USER, ANSWER)).outcome == "extends"


def test_anthropic_blocks_match_the_stored_chat_shape() -> None:
    units = read_conversation(
        "anthropic",
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Find flights"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "s"},
                        {"type": "tool_use", "id": "c1", "name": "s", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "3"}],
                },
                {"role": "assistant", "content": [{"type": "text", "text": "I found 3 flights."}]},
                {"role": "user", "content": "Book the first"},
            ]
        },
    ).units

    assert plan(units, _stored(USER, CALL, RESULT, ANSWER)).outcome == "extends"


@pytest.mark.parametrize(
    "messages",
    [
        [USER, ANSWER],  # ends with the assistant: a prefill
        [USER, RESULT],  # results that answer no call before them
    ],
)
def test_a_conversation_without_a_new_part_is_refused(messages: list[dict[str, Any]]) -> None:
    with pytest.raises(ConversationError):
        plan(_openai(*messages), [])


def test_a_system_message_after_the_start_is_refused() -> None:
    with pytest.raises(ConversationError, match=r"messages\[1\]"):
        _openai(USER, {"role": "system", "content": "late"})
