"""What the LLM summariser accepts as a summary, and what it never does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from app.budget.summary import SummaryContent, SummaryItem
from app.budget.tokens import FallbackCounter
from app.summarize.base import SourceMessage, SummaryRequest
from app.summarize.llm import SYSTEM_PROMPT, parse_answer, request_prompt

GOOD = {
    "summary_text": "120 messages about the Lisbon trip folded in.",
    "key_facts": [{"text": "Passport P1234.", "source_message_ids": [3]}],
}


def test_a_contract_answer_is_accepted_even_inside_a_json_fence() -> None:
    contract = parse_answer("```json\n" + json.dumps(GOOD) + "\n```")

    assert contract.summary_text == GOOD["summary_text"]
    assert contract.key_facts[0].source_message_ids == [3]


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, but I can't help with that.",
        "Error: upstream model overloaded",
        "503 Service Unavailable",
        json.dumps({"summary_text": "I apologize, I cannot summarise this."}),
        json.dumps({"summary_text": "", "key_facts": []}),
        json.dumps({**GOOD, "decisions": [{"text": "An error occurred while reading."}]}),
        '{"summary_text": "Trip", "key_facts": [oops',
    ],
)
def test_error_text_refusals_and_broken_json_are_not_summaries(answer: str) -> None:
    with pytest.raises((ValueError, ValidationError)):
        parse_answer(answer)


@pytest.mark.parametrize(
    "item",
    [
        {"text": "Sorry, I can't do Tuesdays: Thursdays only.", "from_user": True},
        {"text": "I can't fly before noon.", "source_message_ids": [3]},
    ],
)
def test_a_users_apology_quoted_in_an_item_is_content_not_a_refusal(item: dict[str, Any]) -> None:
    contract = parse_answer(json.dumps({**GOOD, "key_facts": [item]}))

    assert contract.key_facts[0].text == item["text"]


def test_the_prompt_shows_the_users_statements_read_only_apart_from_the_models_part() -> None:
    assert "read-only" in SYSTEM_PROMPT
    assert "do not restate them" in SYSTEM_PROMPT
    previous = SummaryContent(
        summary_text="Trip. 2 user statement(s) left out for room (messages #1, #2).",
        key_facts=(
            SummaryItem("I live in Ljubljana.", (3,), from_user=True),
            SummaryItem("Hotel Miramar has free cancellation.", (4,)),
        ),
    )
    request = SummaryRequest(
        previous=previous,
        messages=(SourceMessage(5, "user", "Hi"),),
        target_tokens=100,
        counter=FallbackCounter(),
    )
    block = SummaryContent(
        summary_text="", key_facts=(SummaryItem("I live in Ljubljana.", (3,), from_user=True),)
    )

    shown = json.loads(request_prompt(request, block=block, room=40))

    assert shown["user_statements"] == [{"text": "I live in Ljubljana.", "source_message_ids": [3]}]
    assert shown["previous_summary"]["summary_text"] == "Trip."
    assert shown["previous_summary"]["key_facts"] == [
        {"text": "Hotel Miramar has free cancellation.", "source_message_ids": [4]}
    ]
    assert shown["max_tokens"] == 40
