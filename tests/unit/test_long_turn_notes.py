"""Older steps of a long turn fold into a note (app/budget/long_turns.py): whole steps,
oldest first, forward only, the latest step never; the note names each call with its
arguments cut and where each result is stored, within its bound."""

from __future__ import annotations

import json

import pytest
import tiktoken

from app.budget.assembly import chat_problems
from app.budget.decision import Message
from app.budget.long_turns import (
    ARGUMENTS_SHOWN,
    _apply,
    fold_older_steps,
    folded_mark,
    note_text,
    previously_folded,
)
from app.budget.policy import HistoryMessage
from app.budget.tokens import TiktokenCounter, count_message

COUNTER = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
ARGUMENTS = json.dumps({"path": "services/billing/ledger_12.py", "start_line": 3, "end_line": 900})


def turn(steps: int, calls: int = 2) -> tuple[list[HistoryMessage], dict[int, Message]]:
    """A user message, then ``steps`` steps of ``calls`` parallel calls and their results."""
    shown = {1: Message(id=1, seq=1, turn_seq=5, role="user", content="Fix the rounding.")}
    seq = 1
    for step in range(steps):
        seq += 1
        call_seq = seq
        ids = [f"call_{step:02d}{index}abcdefghijklmnopqrstu" for index in range(calls)]
        shown[call_seq] = Message(
            id=call_seq, seq=call_seq, turn_seq=5, role="assistant", content=None,
            tool_calls=[
                {"id": i, "type": "function",
                 "function": {"name": "read_file", "arguments": ARGUMENTS}}
                for i in ids
            ],
            reasoning_content="thinking " * 20,
        )  # fmt: skip
        for call_id in ids:
            seq += 1
            shown[seq] = Message(
                id=seq, seq=seq, turn_seq=5, role="tool", content="line " * 300,
                tool_call_id=call_id, answers_seq=call_seq,
            )  # fmt: skip
    history = [
        HistoryMessage(
            seq=m.seq, turn_seq=5, role=m.role,  # type: ignore[arg-type]
            tokens=count_message(COUNTER, m.chat()), calls_tools=bool(m.tool_calls),
            answers_seq=m.answers_seq,
        )
        for m in shown.values()
    ]  # fmt: skip
    return history, shown


def fold(
    history: list[HistoryMessage],
    shown: dict[int, Message],
    *,
    room: int,
    already: tuple[tuple[int, int], ...] = (),
    extend: bool = True,
) -> object:
    latest = frozenset(m.seq for m in history[-3:])
    return fold_older_steps(
        history, shown, current_turn_seq=5, latest_seqs=latest, already=already,
        extend=extend, room=room, note_bound=400, counter=COUNTER, session_id="s1",
    )  # fmt: skip


def test_whole_steps_fold_oldest_first_into_one_note_and_every_call_left_is_answered() -> None:
    history, shown = turn(10)
    total = sum(m.tokens for m in history)

    folded = fold(history, shown, room=total // 2)

    assert isinstance(folded.history, list)  # type: ignore[attr-defined]
    seqs = [m.seq for m in folded.history]  # type: ignore[attr-defined]
    assert seqs[0] == 1  # the user's message stays first
    assert seqs[-3:] == [m.seq for m in history[-3:]]  # the latest step stays whole
    notes = folded.ranges  # type: ignore[attr-defined]
    assert len(notes) == 1
    first, last = next(iter(notes.values()))
    assert first == 2
    # Whole steps: every folded call's results folded too, nothing after the range.
    assert folded.seqs == set(range(first, last + 1))  # type: ignore[attr-defined]
    assert sum(m.tokens for m in folded.history) <= total // 2 * 0.4 + 1  # type: ignore[attr-defined]
    messages = [folded.shown[seq].chat() for seq in seqs]  # type: ignore[attr-defined]
    assert chat_problems(messages) == []
    assert messages[1]["role"] == "user"


def test_what_folded_stays_folded_and_nothing_more_folds_while_the_turn_fits() -> None:
    history, shown = turn(6)
    total = sum(m.tokens for m in history)
    first = fold(history, shown, room=total // 2)
    ranges = tuple(first.ranges.values())  # type: ignore[attr-defined]
    fingerprint = [folded_mark(*r) for r in ranges]

    again = fold(history, shown, room=10**6, already=previously_folded(fingerprint), extend=False)

    assert again.ranges == first.ranges  # type: ignore[attr-defined]
    assert again.shown[ranges[0][0]].content == first.shown[ranges[0][0]].content  # type: ignore[attr-defined]
    assert fold(history, shown, room=10**6, extend=False).ranges == {}  # type: ignore[attr-defined]


def test_the_note_cuts_arguments_names_stored_seqs_and_keeps_within_its_bound() -> None:
    _, shown = turn(40, calls=3)
    messages = [m for m in shown.values() if m.seq > 1]

    roomy = note_text(messages, "s1", COUNTER, bound=10**6)
    tight = note_text(messages, "s1", COUNTER, bound=300)

    line = roomy.splitlines()[1]
    assert line.startswith(f"- read_file {ARGUMENTS[: ARGUMENTS_SHOWN - 1]}…")
    assert line.endswith("→ result seq 3")
    assert len(roomy.splitlines()) == 1 + 40 * 3
    assert COUNTER.count_text(tight) <= 300 + 40
    assert "earlier calls (read_file x" in tight
    # The newest calls keep their own lines.
    assert tight.splitlines()[-1] == roomy.splitlines()[-1]


def fewest_steps_that_fit(
    history: list[HistoryMessage], shown: dict[int, Message], *, room: int
) -> frozenset[int]:
    """What folds, by the rule itself: the fewest older steps, oldest first, that bring the
    history to 40% of the room (all of them when none does)."""
    latest = {m.seq for m in history[-3:]}
    steps = [m.seq for m in history if m.calls_tools and m.seq not in latest]
    for count in range(1, len(steps) + 1):
        upto = steps[count] - 1 if count < len(steps) else min(latest) - 1
        folded = _apply(
            history, shown, [[
                [m for m in history if m.seq == s or m.answers_seq == s]
                for s in steps[:count]
            ]], COUNTER, "s1", 400,
        )  # fmt: skip
        if sum(m.tokens for m in folded.history) <= int(room * 0.4):
            return frozenset(range(steps[0], upto + 1))
    return folded.seqs


@pytest.mark.parametrize(
    ("steps", "calls", "share"),
    [(60, 1, 0.5), (60, 1, 0.8), (200, 1, 0.6), (12, 8, 0.5), (30, 3, 0.3), (5, 2, 0.1)],
)
def test_a_long_turn_folds_the_fewest_oldest_steps_that_leave_the_room_it_needs(
    steps: int, calls: int, share: float
) -> None:
    history, shown = turn(steps, calls=calls)
    room = int(sum(m.tokens for m in history) * share)

    folded = fold(history, shown, room=room)

    assert folded.seqs == fewest_steps_that_fit(history, shown, room=room)  # type: ignore[attr-defined]
