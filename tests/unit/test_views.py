"""What the prompt shows of a message: capped tool results, cleared reasoning, and how
reasoning is counted."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.budget.decision import Message, PolicySettings, SessionBlocks, Snapshot, plan_assembly
from app.budget.policy import Budget, HistoryMessage
from app.budget.tokens import TiktokenCounter, count_message, reasoning_text
from app.budget.tool_images import image_placeholder
from app.budget.views import (
    SET_ASIDE_HEADROOM,
    cap_tool_text,
    capped_marker,
    capped_tool_result,
    images_set_aside,
    mark_views,
    previously_set_aside,
    previously_without_images,
    set_aside_older_results,
    set_aside_placeholder,
    without_reasoning,
)

COUNTER = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
THINKING = {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln/+=="}
REDACTED = {"type": "redacted_thinking", "data": "ZW5j"}


@dataclass(frozen=True)
class Characters:
    """One token per character: the cut can be checked to the token."""

    name: str = "chars"

    def count_text(self, text: str) -> int:
        return len(text)


def test_reasoning_is_counted_as_its_text_signature_and_data() -> None:
    message = {
        "role": "assistant",
        "content": [THINKING, REDACTED, {"type": "text", "text": "Sunny."}],
        "reasoning_content": "Also this.",
    }

    assert reasoning_text(message) == "Look it up.\nc2ln/+==\nZW5j\nAlso this."
    plain = count_message(COUNTER, {"role": "assistant", "content": "Sunny."})
    assert count_message(COUNTER, message) == plain + COUNTER.count_text(reasoning_text(message))


def test_without_reasoning_keeps_the_rest_of_the_message() -> None:
    message = Message(
        id=1,
        seq=2,
        turn_seq=1,
        role="assistant",
        content=[THINKING, {"type": "text", "text": "Sunny."}, REDACTED],
        reasoning_content="Also this.",
    )

    view, parts = without_reasoning(message)

    assert parts == 3
    assert view.content == [{"type": "text", "text": "Sunny."}]
    assert view.reasoning_content is None
    assert without_reasoning(view) == (view, 0)


def test_a_tool_result_within_its_cap_is_shown_whole() -> None:
    assert cap_tool_text("short", 100, Characters(), session_id="s", seq=3) == ("short", 0)


def test_a_capped_tool_result_keeps_head_and_tail_and_says_where_the_rest_is() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"

    shown, left_out = cap_tool_text(text, 1_000, Characters(), session_id="s1", seq=7)

    assert shown.startswith("HEAD")
    assert shown.endswith("TAIL")
    assert len(shown) <= 1_000
    assert f"{left_out} tokens of this tool result are left out" in shown
    assert "GET /v1/sessions/s1/messages?after_seq=6&limit=1" in shown
    marker = capped_marker(left_out, session_id="s1", seq=7)
    assert left_out == len(text) - (len(shown) - len(marker))


@given(
    st.text(min_size=1, max_size=3000),
    st.integers(80, 2000),
)
@settings(max_examples=200, deadline=None, database=None)
def test_capping_is_deterministic_and_within_the_cap(text: str, cap: int) -> None:
    message = Message(id=1, seq=5, turn_seq=1, role="tool", content=text, tool_call_id="c")
    tokens = count_message(COUNTER, message.chat())

    first = capped_tool_result(message, tokens, cap_tokens=cap, counter=COUNTER, session_id="s")
    again = capped_tool_result(message, tokens, cap_tokens=cap, counter=COUNTER, session_id="s")

    assert first == again
    view, view_tokens, left_out = first
    if left_out:
        assert view_tokens == count_message(COUNTER, view.chat())
        # The marker's allowance covers the marker and the message's own overhead.
        assert view_tokens <= cap + 16
    else:
        assert view is message


def _turn_of_steps(steps: int) -> tuple[list[HistoryMessage], dict[int, Message]]:
    """A user message, then ``steps`` steps of one call and one 100-word result."""
    shown: dict[int, Message] = {
        1: Message(id=1, seq=1, turn_seq=3, role="user", content="Read the logs.")
    }
    for step in range(steps):
        call_seq, result_seq = 2 + 2 * step, 3 + 2 * step
        call = {"id": f"c{step}", "type": "function", "function": {"name": "cat", "arguments": ""}}
        shown[call_seq] = Message(
            id=call_seq, seq=call_seq, turn_seq=3, role="assistant", content=None,
            tool_calls=[call],
        )  # fmt: skip
        shown[result_seq] = Message(
            id=result_seq, seq=result_seq, turn_seq=3, role="tool", content="word " * 100,
            tool_call_id=f"c{step}", answers_seq=call_seq,
        )  # fmt: skip
    history = [
        HistoryMessage(
            seq=m.seq,
            turn_seq=3,
            role=m.role,  # type: ignore[arg-type]
            tokens=count_message(COUNTER, m.chat()),
            calls_tools=bool(m.tool_calls),
            answers_seq=m.answers_seq,
        )
        for m in shown.values()
    ]
    return history, shown


def test_older_results_are_set_aside_oldest_first_leaving_headroom_for_the_next_steps() -> None:
    history, shown = _turn_of_steps(4)
    total = sum(m.tokens for m in history)
    room = total - 150

    aside = set_aside_older_results(
        history, shown, current_turn_seq=3, latest_seqs=frozenset({8, 9}),
        already=frozenset(), room=room, counter=COUNTER,
    )  # fmt: skip
    roomy = set_aside_older_results(
        history, shown, current_turn_seq=3, latest_seqs=frozenset({8, 9}),
        already=frozenset(), room=total, counter=COUNTER,
    )  # fmt: skip

    # Over the room, oldest first until its headroom is free or nothing more can give way;
    # within it, nothing.
    assert aside.seqs in ({3}, {3, 5}, {3, 5, 7})
    assert 3 in aside.seqs
    remaining = sum(m.tokens for m in aside.history)
    assert remaining <= room * (1 - SET_ASIDE_HEADROOM) or aside.seqs == {3, 5, 7}
    assert roomy.seqs == frozenset()
    assert aside.shown[3].content == set_aside_placeholder(3)
    assert aside.shown[3].tool_call_id == "c0"
    assert mark_views(["s:x", "q:1", "q:3", "q:5", "q:7"], frozenset({3, 5})) == [
        "s:x", "q:1", "p:3", "p:5", "q:7",
    ]  # fmt: skip


def test_the_set_aside_boundary_never_moves_back_nor_touches_the_latest_step() -> None:
    history, shown = _turn_of_steps(4)
    previous = previously_set_aside(["s:x", "q:1", "q:2", "p:3", "q:4", "p:5"])

    roomy = set_aside_older_results(
        history, shown, current_turn_seq=3, latest_seqs=frozenset({8, 9}),
        already=previous, room=10**6, counter=COUNTER,
    )  # fmt: skip
    cramped = set_aside_older_results(
        history, shown, current_turn_seq=3, latest_seqs=frozenset({8, 9}),
        already=frozenset(), room=0, counter=COUNTER,
    )  # fmt: skip

    assert previous == {3, 5}
    assert roomy.seqs == {3, 5}
    assert cramped.seqs == {3, 5, 7}


def _thinking_session(previous_fingerprint: list[str] | None, input_budget: int) -> Snapshot:
    """A completed turn whose answer carries thinking, and the next turn's user message."""
    answer = Message(
        id=2, seq=2, turn_seq=1, role="assistant",
        content=[THINKING, {"type": "text", "text": "Sunny."}],
    )  # fmt: skip
    stored = (Message(id=1, seq=1, turn_seq=1, role="user", content="Weather?"), answer)
    return Snapshot(
        settings=PolicySettings(),
        budget=Budget(input_budget * 2, 0, 0, input_budget),
        counter=COUNTER,
        blocks=SessionBlocks(),
        stored=stored,
        new=(Message(id=3, seq=3, turn_seq=2, role="user", content="And tomorrow?"),),
        turn_seq=2,
        step=0,
        previous_fingerprint=previous_fingerprint,
    )


def test_reasoning_once_cleared_stays_cleared_while_there_is_room() -> None:
    roomy = plan_assembly(_thinking_session(["q:1", "q:2"], input_budget=10_000))
    cramped = plan_assembly(_thinking_session(["q:1", "q:2"], input_budget=40))
    remembered = plan_assembly(_thinking_session(["q:1", "r:2"], input_budget=10_000))

    assert roomy.views.reasoning_cleared_seqs == frozenset()
    assert roomy.by_seq[2].content[0] == THINKING
    assert cramped.views.reasoning_cleared_seqs == {2}
    assert remembered.views.reasoning_cleared_seqs == {2}
    assert remembered.by_seq[2].content == [{"type": "text", "text": "Sunny."}]
    assert mark_views(["q:1", "q:2", "q:3"], frozenset(), frozenset({2})) == ["q:1", "r:2", "q:3"]


def test_a_recall_block_in_the_previous_fingerprint_is_not_read_as_a_message() -> None:
    from app.budget.recall import RECALL_PREFIX
    from app.budget.views import (
        IMAGES_SET_ASIDE_PREFIX,
        REASONING_CLEARED_PREFIX,
        SET_ASIDE_PREFIX,
        previously_cleared,
        previously_set_aside,
    )

    prefixes = [
        "s:",
        "q:",
        SET_ASIDE_PREFIX,
        REASONING_CLEARED_PREFIX,
        IMAGES_SET_ASIDE_PREFIX,
        RECALL_PREFIX,
    ]
    previous = ["s:ab12", "q:1", "r:2", "p:3", RECALL_PREFIX + "3ff4d47b6bbd2e28", "q:4"]

    assert len(set(prefixes)) == len(prefixes)
    assert previously_cleared(previous) == {2}
    assert previously_set_aside(previous) == {3}


# -- images in tool results ----------------------------------------------------------------------

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/screen.png"}}


def _screenshot(seq: int, turn_seq: int, images: int = 1) -> tuple[Message, int]:
    message = Message(
        id=seq,
        seq=seq,
        turn_seq=turn_seq,
        role="tool",
        content=[{"type": "text", "text": "Screen:"}, *[IMAGE] * images],
        tool_call_id=f"call_{seq}",
    )
    return message, count_message(COUNTER, message.chat())


def test_images_beyond_the_newest_give_way_only_when_room_is_needed() -> None:
    shown = [_screenshot(1, 1), _screenshot(2, 2, images=2), _screenshot(3, 3), _screenshot(4, 4)]

    calm = images_set_aside(
        shown, turn_seq=4, keep=2, excess=0, already=frozenset(), counter=COUNTER
    )
    tight = images_set_aside(
        shown, turn_seq=4, keep=2, excess=10_000, already=frozenset(), counter=COUNTER
    )

    assert calm.shown == shown
    assert calm.seqs == frozenset()
    # Seq 3 keeps its image; seq 2 would make three, so it and seq 1 give way; the open
    # turn's (seq 4) always stays.
    assert tight.seqs == frozenset({1, 2})
    assert tight.images == 3
    assert tight.shown[1][0].content == [
        {"type": "text", "text": "Screen:"},
        {"type": "text", "text": image_placeholder(2)},
        {"type": "text", "text": image_placeholder(2)},
    ]
    assert tight.tokens_freed == sum(t for _, t in shown) - sum(t for _, t in tight.shown)
    assert tight.shown[2:] == shown[2:]


def test_images_once_set_aside_stay_so_and_the_boundary_only_moves_forward() -> None:
    shown = [_screenshot(1, 1), _screenshot(2, 2), _screenshot(3, 3), _screenshot(4, 4)]

    later = images_set_aside(
        shown, turn_seq=5, keep=3, excess=0, already=frozenset({2}), counter=COUNTER
    )

    assert later.seqs == frozenset({1, 2})
    fingerprint = mark_views(["q:1", "q:2", "q:3"], frozenset(), without_images=later.seqs)
    assert fingerprint == ["i:1", "i:2", "q:3"]
    assert previously_without_images(fingerprint) == frozenset({1, 2})


def test_a_capped_result_keeps_its_images_whole() -> None:
    message, tokens = _screenshot(7, 1)
    long = replace(message, content=[{"type": "text", "text": "word " * 3000}, IMAGE])
    long_tokens = count_message(COUNTER, long.chat())

    view, view_tokens, left_out = capped_tool_result(
        long, long_tokens, cap_tokens=1500, counter=COUNTER, session_id="s"
    )

    assert left_out > 0
    assert view.content[-1] == IMAGE
    assert "tokens of this tool result are left out" in view.content[0]["text"]
    assert view_tokens < long_tokens
    assert tokens < view_tokens


def _two_thinking_turns(previous_fingerprint: list[str], input_budget: int) -> Snapshot:
    def answer(seq: int, turn: int) -> Message:
        return Message(
            id=seq, seq=seq, turn_seq=turn, role="assistant",
            content=[THINKING, {"type": "text", "text": "Sunny."}],
        )  # fmt: skip

    stored = (
        Message(id=1, seq=1, turn_seq=1, role="user", content="Weather?"),
        answer(2, 1),
        Message(id=3, seq=3, turn_seq=2, role="user", content="And tomorrow?"),
        answer(4, 2),
    )
    return replace(
        _thinking_session(previous_fingerprint, input_budget),
        stored=stored,
        new=(Message(id=5, seq=5, turn_seq=3, role="user", content="And Sunday?"),),
        turn_seq=3,
    )


def test_reasoning_cleared_before_is_not_counted_when_judging_the_trigger() -> None:
    def usage(plan: Any) -> int:
        return int(plan.fixed.tokens + sum(m.tokens for m in plan.history))

    shown = ["q:1", "q:2", "q:3", "q:4"]
    remembered = ["q:1", "r:2", "q:3", "q:4"]
    with_both = usage(plan_assembly(_two_thinking_turns(shown, input_budget=100_000)))
    without_first = usage(plan_assembly(_two_thinking_turns(remembered, input_budget=100_000)))
    # Over the trigger only if the reasoning cleared before still counted.
    budget = int((with_both + without_first) / 2 / PolicySettings().budget.summary_trigger_ratio)

    plan = plan_assembly(_two_thinking_turns(remembered, input_budget=budget))

    assert without_first < with_both
    assert plan.views.reasoning_cleared_seqs == {2}
    assert plan.by_seq[4].content[0] == THINKING
