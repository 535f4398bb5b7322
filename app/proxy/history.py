"""The agent's whole history against what the session stored: what is new, what to take in,
and whether the agent's history still extends contextd's. Pure: fingerprints in, a plan out.

The rule (docs/drop-in.md, "History matching"):

* The request ends with its **new part**: a user message (a turn starts), or an assistant
  message that called tools followed by their results (a step of the open turn).
* The messages before it are aligned with the stored ones **by content, from the end**: the
  last stored messages (up to :data:`ANCHOR`) must appear, in order, in the agent's history.
* Found at the end: the history **extends** the stored one. Found earlier: the messages after
  it are ones contextd never saw (a session that starts on an existing conversation, an
  answer contextd could not record): they are **imported**, in order, as turns and steps.
  An agent that dropped old messages of its own still extends: only the tail is compared.
* Not found: the agent edited or rewound its history. contextd keeps what it stored (it never
  deletes), does not take the edited copies in, and goes on with the new part; the request is
  marked **diverged**, in its audit row and its response headers, with where it differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from app.proxy.conversation import (
    AssistantUnit,
    ConversationError,
    Fingerprint,
    ResultsUnit,
    Unit,
    UserUnit,
    unit_fingerprints,
)

#: How many of the last stored messages anchor the alignment.
ANCHOR = 8

HistoryOutcome = Literal["new", "extends", "imported", "diverged"]


@dataclass(frozen=True)
class Plan:
    #: Units the agent sent that contextd never stored, to take in first, in order.
    imported: tuple[Unit, ...]
    #: The new part: one user message, or an assistant message and its tool results.
    new: tuple[Unit, ...]
    outcome: HistoryOutcome
    #: Diverged: how many sent messages (before the new part) matched no stored tail.
    unmatched_messages: int = 0
    #: What the audit row keeps of the outcome.
    note: dict[str, object] = field(default_factory=dict)


def split_new(units: Sequence[Unit]) -> tuple[tuple[Unit, ...], tuple[Unit, ...]]:
    """(what came before, the new part)."""
    if not units:
        raise ConversationError("messages: the conversation is empty")
    last = units[-1]
    if isinstance(last, UserUnit):
        return tuple(units[:-1]), (last,)
    if isinstance(last, ResultsUnit):
        if len(units) < 2 or not isinstance(units[-2], AssistantUnit) or not units[-2].call_ids:
            raise ConversationError(
                "messages: the last tool results answer no assistant message with tool calls "
                "right before them"
            )
        return tuple(units[:-2]), (units[-2], last)
    raise ConversationError(
        "messages: the last message is the assistant's; contextd stores a conversation that "
        "ends with a user message or tool results (no prefill)"
    )


def plan(units: Sequence[Unit], stored_tail: Sequence[Fingerprint]) -> Plan:
    """Match ``units`` (the request's, system aside) against ``stored_tail``, the session's
    last stored messages (oldest first, at most :data:`ANCHOR`)."""
    before, new = split_new(units)
    if stored_tail and _ends_with(before, stored_tail):
        # The usual call: answered without reading the agent's whole history.
        return Plan((), new, "extends", note={"history": "extends"})
    flat: list[Fingerprint] = []
    #: For each unit of ``before``, the index in ``flat`` just past its messages.
    ends: list[int] = []
    for unit in before:
        flat.extend(unit_fingerprints(unit))
        ends.append(len(flat))
    if not stored_tail:
        outcome: HistoryOutcome = "imported" if before else "new"
        return Plan(before, new, outcome, note={"history": outcome, "imported_messages": len(flat)})
    anchor = list(stored_tail[-min(len(stored_tail), ANCHOR, max(len(flat), 1)) :])
    if len(flat) < len(anchor):
        anchor = anchor[len(anchor) - len(flat) :]
    # Nothing before the new part: the agent keeps no history of its own (contextd does).
    end = _last_match(flat, anchor) if anchor else len(flat)
    if end == len(flat):
        return Plan((), new, "extends", note={"history": "extends"})
    if end is not None and end in ends:
        imported = before[ends.index(end) + 1 :]
        return Plan(
            imported,
            new,
            "imported",
            note={"history": "imported", "imported_messages": len(flat) - end},
        )
    unmatched = _unmatched(flat, stored_tail)
    return Plan(
        (),
        new,
        "diverged",
        unmatched_messages=unmatched,
        note={
            "history": "diverged",
            "sent_messages": len(flat),
            # Counted from the end of what the agent sent before the new part.
            "unmatched_messages": unmatched,
        },
    )


def _ends_with(before: Sequence[Unit], stored_tail: Sequence[Fingerprint]) -> bool:
    """Whether the last messages of ``before`` are the stored tail (all of it, or as much of
    it as the agent kept), reading only the units at the end."""
    tail: list[Fingerprint] = []
    for unit in reversed(before):
        tail[:0] = unit_fingerprints(unit)
        if len(tail) >= len(stored_tail):
            break
    size = min(len(tail), len(stored_tail))
    return size > 0 and tail[len(tail) - size :] == list(stored_tail[len(stored_tail) - size :])


def _last_match(flat: Sequence[Fingerprint], anchor: Sequence[Fingerprint]) -> int | None:
    """The end index of the last place ``anchor`` occurs in ``flat``, or None."""
    size = len(anchor)
    for end in range(len(flat), size - 1, -1):
        if list(flat[end - size : end]) == list(anchor):
            return end
    return None


def _unmatched(flat: Sequence[Fingerprint], stored_tail: Sequence[Fingerprint]) -> int:
    """How many of the agent's last messages differ from the stored ones at the same distance
    from the end, counting back until the first that agrees."""
    count = 0
    for sent, stored in zip(reversed(flat), reversed(stored_tail), strict=False):
        if sent == stored:
            break
        count += 1
    return count if count else len(flat)
