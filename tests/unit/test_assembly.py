"""Assembly: the system message's sections, its exact cost, and chat-list validity."""

from __future__ import annotations

from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.budget.assembly import (
    GOAL_BLOCK,
    MEMORY_BLOCK,
    SUMMARY_BLOCK,
    SYSTEM_BLOCK,
    ContextBlocks,
    chat_message,
    chat_problems,
    fixed_cost,
    system_message,
)
from app.budget.tokens import (
    FallbackCounter,
    ScaledCounter,
    TiktokenCounter,
    TokenCounter,
    count_prompt,
)

O200K = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
COUNTERS: dict[str, TokenCounter] = {
    "o200k": O200K,
    "cl100k": TiktokenCounter("cl100k_base", tiktoken.get_encoding("cl100k_base")),
    "scaled": ScaledCounter(O200K, 1.25),
    "fallback": FallbackCounter(),
}

FULL = ContextBlocks(
    system_layers=("GLOBAL rules.", "MODE rules.", "ROLE rules."),
    goal="Ship the release",
    mode="planning",
    memory="User prefers metric units.",
    summary="Key facts:\n- The deadline is 2025-03-01.",
)


# --------------------------------------------------------------------------- sections and order


def test_sections_follow_the_seed_order() -> None:
    assert FULL.sections() == [
        (SYSTEM_BLOCK, "GLOBAL rules."),
        (SYSTEM_BLOCK, "MODE rules."),
        (SYSTEM_BLOCK, "ROLE rules."),
        (GOAL_BLOCK, "## Session\nGoal: Ship the release\nMode: planning"),
        (MEMORY_BLOCK, "## Memory\nUser prefers metric units."),
        (
            SUMMARY_BLOCK,
            "## Summary of earlier conversation\nKey facts:\n- The deadline is 2025-03-01.",
        ),
    ]


def test_system_message_joins_sections_in_order_into_one_leading_message() -> None:
    message = system_message(FULL)
    assert message is not None
    assert message["role"] == "system"
    content = message["content"]
    order = [
        "GLOBAL rules.",
        "MODE rules.",
        "ROLE rules.",
        "## Session",
        "Goal: Ship the release",
        "Mode: planning",
        "## Memory",
        "## Summary of earlier conversation",
        "The deadline is 2025-03-01.",
    ]
    positions = [content.index(text) for text in order]
    assert positions == sorted(positions)
    assert content == "\n\n".join(text for _, text in FULL.sections())


def test_empty_blocks_are_left_out() -> None:
    blocks = ContextBlocks(
        system_layers=("", "   ", "Only layer."),
        goal=None,
        mode="",
        memory="  \n ",
        summary="\n",
    )
    assert blocks.sections() == [(SYSTEM_BLOCK, "Only layer.")]
    assert system_message(blocks) == {"role": "system", "content": "Only layer."}


def test_goal_and_mode_each_appear_alone() -> None:
    assert ContextBlocks(goal="Fix bug 42").sections() == [
        (GOAL_BLOCK, "## Session\nGoal: Fix bug 42")
    ]
    assert ContextBlocks(mode="review").sections() == [(GOAL_BLOCK, "## Session\nMode: review")]


def test_no_system_message_when_nothing_is_set() -> None:
    assert ContextBlocks().sections() == []
    assert system_message(ContextBlocks()) is None
    assert system_message(ContextBlocks(system_layers=("", " "), memory="", summary=" ")) is None


def test_with_summary_replaces_only_the_summary() -> None:
    replaced = FULL.with_summary("New summary.")
    assert replaced.summary == "New summary."
    assert replaced.sections()[:-1] == FULL.sections()[:-1]
    assert replaced.sections()[-1] == (
        SUMMARY_BLOCK,
        "## Summary of earlier conversation\nNew summary.",
    )
    assert SUMMARY_BLOCK not in dict(FULL.with_summary(None).sections())


def test_stable_prefix_when_only_the_summary_changes() -> None:
    # The layers, goal and memory form a cache prefix that a new summary does not disturb.
    before = system_message(FULL)
    after = system_message(FULL.with_summary("Another summary entirely."))
    assert before is not None
    assert after is not None
    prefix = before["content"].split("## Summary of earlier conversation")[0]
    assert after["content"].startswith(prefix)


# --------------------------------------------------------------------------- fixed cost


@pytest.mark.parametrize("counter_name", sorted(COUNTERS))
def test_fixed_cost_total_is_the_prompt_cost_of_the_system_message(counter_name: str) -> None:
    counter = COUNTERS[counter_name]
    message = system_message(FULL)
    assert message is not None
    cost = fixed_cost(counter, FULL)
    assert cost.tokens == count_prompt(counter, [message])


@pytest.mark.parametrize("counter_name", sorted(COUNTERS))
def test_fixed_cost_breakdown_sums_exactly_to_the_total(counter_name: str) -> None:
    counter = COUNTERS[counter_name]
    cost = fixed_cost(counter, FULL)
    assert set(cost.blocks) == {SYSTEM_BLOCK, GOAL_BLOCK, MEMORY_BLOCK, SUMMARY_BLOCK}
    assert sum(cost.blocks.values()) == cost.tokens
    sections = dict((block, text) for block, text in FULL.sections() if block != SYSTEM_BLOCK)
    for block, text in sections.items():
        assert cost.blocks[block] == counter.count_text(text)
    assert all(tokens > 0 for tokens in cost.blocks.values())


def test_fixed_cost_with_nothing_set_is_the_reply_priming() -> None:
    cost = fixed_cost(O200K, ContextBlocks())
    assert cost.tokens == 3 == count_prompt(O200K, [])
    assert cost.blocks == {SYSTEM_BLOCK: 3, GOAL_BLOCK: 0, MEMORY_BLOCK: 0, SUMMARY_BLOCK: 0}


def test_fixed_cost_grows_by_the_summary_when_one_is_added() -> None:
    without = fixed_cost(O200K, FULL.with_summary(None))
    with_summary = fixed_cost(O200K, FULL)
    assert without.blocks[SUMMARY_BLOCK] == 0
    assert with_summary.tokens > without.tokens
    assert with_summary.blocks[SUMMARY_BLOCK] > 0
    assert with_summary.blocks[GOAL_BLOCK] == without.blocks[GOAL_BLOCK]
    assert with_summary.blocks[MEMORY_BLOCK] == without.blocks[MEMORY_BLOCK]


block_text = st.one_of(st.none(), st.text(max_size=300))


@given(
    layers=st.lists(st.text(max_size=200), max_size=3),
    goal=block_text,
    mode=block_text,
    memory=block_text,
    summary=block_text,
    counter_name=st.sampled_from(sorted(COUNTERS)),
)
@settings(max_examples=150, deadline=None)
def test_fixed_cost_is_exact_and_non_negative_for_any_blocks(
    layers: list[str],
    goal: str | None,
    mode: str | None,
    memory: str | None,
    summary: str | None,
    counter_name: str,
) -> None:
    counter = COUNTERS[counter_name]
    blocks = ContextBlocks(tuple(layers), goal, mode, memory, summary)
    message = system_message(blocks)
    cost = fixed_cost(counter, blocks)
    assert cost.tokens == count_prompt(counter, [message] if message else [])
    assert sum(cost.blocks.values()) == cost.tokens
    assert all(tokens >= 0 for tokens in cost.blocks.values()), cost.blocks


# --------------------------------------------------------------------------- chat messages


def test_chat_message_leaves_out_empty_optional_fields() -> None:
    assert chat_message(role="user", content="hi") == {"role": "user", "content": "hi"}
    assert chat_message(role="user", content="hi", name="", tool_calls=[], tool_call_id="") == {
        "role": "user",
        "content": "hi",
    }


def test_chat_message_carries_name_tool_calls_and_tool_call_id() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assistant = chat_message(role="assistant", content=None, tool_calls=[call])
    assert assistant == {"role": "assistant", "content": None, "tool_calls": [call]}
    assert assistant["tool_calls"][0] is not call  # a copy, not the caller's dict
    assert chat_message(role="tool", content="ok", tool_call_id="call_1")["tool_call_id"] == (
        "call_1"
    )
    assert chat_message(role="user", content="hi", name="ann")["name"] == "ann"


# --------------------------------------------------------------------------- chat_problems


def call(*ids: str) -> dict[str, Any]:
    return chat_message(
        role="assistant",
        content=None,
        tool_calls=[
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    )


def result(call_id: str) -> dict[str, Any]:
    return chat_message(role="tool", content="done", tool_call_id=call_id)


SYSTEM = {"role": "system", "content": "rules"}
USER = {"role": "user", "content": "hi"}
ANSWER = {"role": "assistant", "content": "hello"}


def test_valid_tool_exchange_has_no_problems() -> None:
    messages = [
        SYSTEM,
        USER,
        call("a", "b"),
        result("a"),
        result("b"),
        ANSWER,
        USER,
        call("c"),
        result("c"),
    ]
    assert chat_problems(messages) == []


def test_plain_conversation_ending_on_user_has_no_problems() -> None:
    assert chat_problems([SYSTEM, USER, ANSWER, USER]) == []
    assert chat_problems([USER]) == []


def test_tool_message_without_a_preceding_call_is_rejected() -> None:
    problems = chat_problems([USER, result("x")])
    assert len(problems) == 1
    assert "answers no pending call" in problems[0]


def test_tool_message_answering_a_call_of_an_earlier_exchange_is_rejected() -> None:
    problems = chat_problems([USER, call("a"), result("a"), ANSWER, USER, result("a")])
    assert problems
    assert any("'a'" in p and "no pending call" in p for p in problems)


def test_duplicate_tool_result_is_rejected() -> None:
    assert chat_problems([USER, call("a"), result("a"), result("a")])


def test_call_without_result_is_rejected() -> None:
    problems = chat_problems([USER, call("a", "b"), result("a"), USER])
    assert problems == ["[3] tool calls ['b'] have no result"]


def test_call_without_result_at_the_end_is_rejected() -> None:
    problems = chat_problems([USER, call("a")])
    assert "tool calls ['a'] have no result" in problems
    assert "the prompt does not end on a user or tool message" in problems


def test_tool_call_without_an_id_is_rejected() -> None:
    no_id = {"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}
    assert any("without an id" in p for p in chat_problems([USER, no_id, USER]))


def test_system_message_not_first_is_rejected() -> None:
    problems = chat_problems([USER, SYSTEM, USER])
    assert problems == ["[1] system message after the start"]


def test_prompt_ending_on_assistant_is_rejected() -> None:
    problems = chat_problems([SYSTEM, USER, ANSWER])
    assert problems == ["the prompt does not end on a user or tool message"]


@pytest.mark.parametrize("role", ["bot", "human", "System", None, ""])
def test_unknown_roles_are_rejected(role: str | None) -> None:
    problems = chat_problems([USER, {"role": role, "content": "x"}, USER])
    assert len(problems) == 1
    assert "unknown role" in problems[0]
