"""``Message.stored`` makes the value the constructor makes, faster (an assembly makes one per
active row)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from app.budget.decision import Message

FIELDS: dict[str, Any] = {
    "id": 7,
    "seq": 12,
    "turn_seq": 3,
    "role": "tool",
    "content": [{"type": "text", "text": "rows: 3"}],
    "name": None,
    "tool_calls": None,
    "tool_call_id": "call_a",
    "reasoning_content": None,
    "is_error": True,
    "answers_seq": 11,
    "tokens": 21,
    "encoding": "tiktoken:o200k_base",
}


def test_a_stored_message_equals_the_one_the_constructor_makes() -> None:
    stored, built = Message.stored(**FIELDS), Message(**FIELDS)
    assert stored == built
    assert hash(repr(stored)) == hash(repr(built))
    assert dataclasses.asdict(stored) == dataclasses.asdict(built)
    assert dataclasses.replace(stored, seq=13) == dataclasses.replace(built, seq=13)


def test_a_stored_message_has_every_field_and_stays_frozen() -> None:
    stored = Message.stored(**FIELDS)
    assert {field.name for field in dataclasses.fields(Message)} == set(FIELDS)
    assert vars(stored) == FIELDS
    with pytest.raises(dataclasses.FrozenInstanceError):
        stored.seq = 1  # type: ignore[misc]
