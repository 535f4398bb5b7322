"""Long turns fold their older steps into a digest when placeholders are not enough.

Setting a step's results aside (:mod:`app.budget.views`) leaves its calls, their ids and
arguments, and a placeholder per result: about 60-100 tokens a step with real ids and
arguments, so a 60-step turn at an 8k window still outgrows the prompt. The next thing that
gives way is the step itself: the open turn's older steps (an assistant message that made
tool calls, and the results answering it) leave the prompt together and one short user-role
note takes their place, saying what was called, with which arguments cut to a bound, and at
which seq each result is stored whole.

- **Pairs stay whole.** A step leaves with all of its results, so every tool call left in
  the prompt is answered, in the OpenAI and the Anthropic shape alike (the note is a user
  message: in Anthropic's shape it joins the user turn before it).
- **Oldest first, in batches, forward only.** When setting results aside cannot free a
  quarter of the room, steps fold from the oldest until the open turn leaves half of the
  room free, so that the next steps fit without another fold
  (each fold rewrites the prompt from the note on); what a prompt folded stays folded in
  every later prompt (the fingerprint keeps the range as ``d:<first>-<last>``), completed
  turns' too.
- **The latest step never folds**, nor the user's message.
- **A fold frees room or is not made**: steps already short (a bare call, a result set
  aside) can cost less than their note's lines.
- **The note has a bound** (an eighth of the input budget): past it, its oldest lines collapse into
  one line that counts the calls per tool and names the range of seqs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.budget.assembly import marked_entries
from app.budget.policy import HistoryMessage
from app.budget.tokens import TokenCounter, count_message

#: A fingerprint entry of a note that stands for the steps ``first`` to ``last`` (seqs).
FOLDED_PREFIX = "d:"
#: Characters of a call's arguments the note shows.
ARGUMENTS_SHOWN = 64
#: The share of the room a fold leaves free for the steps that follow: each fold rewrites
#: the prompt from the note on, so a fold makes room for several steps at once.
FOLD_HEADROOM = 0.6
#: The share of the input budget (before calibration, so that it never moves within a
#: session) the note itself may take.
NOTE_SHARE = 0.125

#: A note's lines by (assistant seq, call index, seqs of the call's results).
LineCache = dict[tuple[int, int, tuple[int, ...]], str]


def folded_mark(first: int, last: int) -> str:
    return f"{FOLDED_PREFIX}{first}-{last}"


def previously_folded(fingerprint: Sequence[str] | None) -> tuple[tuple[int, int], ...]:
    """The seq ranges the previous prompt showed as notes."""
    ranges = []
    for item in marked_entries(fingerprint, FOLDED_PREFIX):
        first, _, last = item[len(FOLDED_PREFIX) :].partition("-")
        ranges.append((int(first), int(last)))
    return tuple(ranges)


@dataclass(frozen=True)
class Folded:
    """The prompt's history once older steps folded into notes."""

    history: list[HistoryMessage]
    #: What the prompt shows of each message (notes under their first step's seq).
    shown: dict[int, Any]
    #: Each note's first seq and the range it stands for.
    ranges: dict[int, tuple[int, int]]
    #: Every message a note stands for.
    seqs: frozenset[int]
    tokens_freed: int


def _steps(history: Sequence[HistoryMessage]) -> list[list[HistoryMessage]]:
    """The history's tool steps: an assistant message with calls and its results."""
    steps: dict[int, list[HistoryMessage]] = {}
    for message in history:
        if message.role == "assistant" and message.calls_tools:
            steps[message.seq] = [message]
        elif message.role == "tool" and message.answers_seq in steps:
            steps[message.answers_seq].append(message)
    return list(steps.values())


def fold_older_steps(
    history: Sequence[HistoryMessage],
    shown: Mapping[int, Any],
    *,
    current_turn_seq: int,
    latest_seqs: frozenset[int],
    already: Sequence[tuple[int, int]],
    extend: bool,
    room: int,
    note_bound: int,
    counter: TokenCounter,
    session_id: str,
) -> Folded:
    """Fold the steps of each range earlier prompts folded into its own note, as it was;
    then, with ``extend``, the open turn's older steps not folded yet into one more note,
    oldest first, until the history leaves half of ``room`` free."""
    steps = [s for s in _steps(history) if not latest_seqs & {m.seq for m in s}]
    groups = [[s for s in steps if first <= s[0].seq <= last] for first, last in already]
    groups = [group for group in groups if group]
    folded = _apply(history, shown, groups, counter, session_id, note_bound)
    if not extend:
        return folded
    # The open turn's notes become one: its earlier notes and the steps folding now (the
    # prompt changes from the first note on, which a fold rewrites anyway), so that notes
    # never add up past their bound.
    kept = [g for g in groups if g[0][0].turn_seq != current_turn_seq]
    opened = [s for g in groups if g[0][0].turn_seq == current_turn_seq for s in g]
    in_groups = {s[0].seq for s in opened}
    candidates = [
        s for s in steps if s[0].turn_seq == current_turn_seq and s[0].seq not in in_groups
    ]
    target = int(room * (1 - FOLD_HEADROOM))
    if not candidates:
        return folded
    lines: LineCache = {}

    def fold_first(count: int) -> Folded:
        merged = sorted([*opened, *candidates[:count]], key=lambda step: step[0].seq)
        return _apply(history, shown, [*kept, merged], counter, session_id, note_bound, lines)

    def fits(result: Folded) -> bool:
        return sum(m.tokens for m in result.history) <= target

    # The fewest steps (oldest first) whose folding brings the history to the target. Each
    # fold renders and counts the whole note, so trying every count from one would cost the
    # square of the turn's steps; the count is estimated from the steps' own tokens and
    # their notes' lines, then checked, and moved one step at a time until it is the first
    # that fits.
    unfolded = folded
    count = _estimated_count(candidates, unfolded, target, note_bound, shown, counter, lines)
    folded = fold_first(count)
    if fits(folded):
        while count > 1:
            fewer = fold_first(count - 1)
            if not fits(fewer):
                break
            count, folded = count - 1, fewer
    else:
        while count < len(candidates):
            count += 1
            folded = fold_first(count)
            if fits(folded):
                break
    # Steps whose calls and results are already short (results set aside, tiny arguments)
    # can cost less than their note's lines: a fold that does not make the history smaller
    # would only rewrite the prompt and could turn a prompt that fits into a rejected one.
    if sum(m.tokens for m in folded.history) >= sum(m.tokens for m in unfolded.history):
        return unfolded
    return folded


def _estimated_count(
    candidates: Sequence[list[HistoryMessage]],
    unfolded: Folded,
    target: int,
    note_bound: int,
    shown: Mapping[int, Any],
    counter: TokenCounter,
    lines: LineCache,
) -> int:
    """The first count of ``candidates`` whose folding should bring the history (``unfolded``:
    as it is with none of them folded) within ``target``: each step's tokens leave, each of
    its calls adds a line to a note that holds at most ``note_bound`` tokens."""
    total = sum(m.tokens for m in unfolded.history)
    note = 0
    for count, step in enumerate(candidates, start=1):
        total -= sum(m.tokens for m in step)
        members = [shown[m.seq] for m in step]
        note += sum(counter.count_text(line) + 1 for line in _lines(members, lines)[0])
        if total + min(note, note_bound) <= target:
            return count
    return len(candidates)


def _apply(
    history: Sequence[HistoryMessage],
    shown: Mapping[int, Any],
    groups: Sequence[list[list[HistoryMessage]]],
    counter: TokenCounter,
    session_id: str,
    note_bound: int,
    lines: LineCache | None = None,
) -> Folded:
    views = dict(shown)
    notes: dict[int, HistoryMessage] = {}
    ranges: dict[int, tuple[int, int]] = {}
    folded: set[int] = set()
    for steps in groups:
        members = [m for step in steps for m in step]
        first, last = members[0].seq, max(m.seq for m in members)
        text = note_text(
            [shown[m.seq] for m in members], session_id, counter, note_bound, line_cache=lines
        )
        note = replace(
            shown[first],
            role="user",
            content=text,
            name=None,
            tool_calls=None,
            tool_call_id=None,
            reasoning_content=None,
            is_error=False,
        )
        views[first] = note
        notes[first] = replace(
            members[0],
            role="user",
            tokens=count_message(counter, note.chat()),
            calls_tools=False,
            answers_seq=None,
        )
        ranges[first] = (first, last)
        folded.update(m.seq for m in members)
    result: list[HistoryMessage] = []
    freed = 0
    for message in history:
        if message.seq in notes:
            result.append(notes[message.seq])
            freed += message.tokens - notes[message.seq].tokens
        elif message.seq in folded:
            freed += message.tokens
        else:
            result.append(message)
    return Folded(result, views, ranges, frozenset(folded), freed)


def _call_line(call: Mapping[str, Any], result_seqs: Sequence[int]) -> str:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    arguments = " ".join(arguments.split())
    if len(arguments) > ARGUMENTS_SHOWN:
        arguments = arguments[: ARGUMENTS_SHOWN - 1] + "…"
    stored = ", ".join(str(seq) for seq in result_seqs) or "none"
    return f"- {function.get('name', '?')} {arguments} → result seq {stored}"


def _lines(
    messages: Sequence[Any], cache: LineCache | None
) -> tuple[list[str], list[Mapping[str, Any]]]:
    """The note's line for each call of ``messages``, and the calls, in order. A line
    depends on its call and the seqs of its results among ``messages``: ``cache`` keeps
    lines by (assistant seq, call index, result seqs) across the notes of one fold."""
    results: dict[str, list[int]] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id:
            results.setdefault(message.tool_call_id, []).append(message.seq)
    lines: list[str] = []
    calls: list[Mapping[str, Any]] = []
    for message in messages:
        if message.role != "assistant":
            continue
        for index, call in enumerate(message.tool_calls or ()):
            stored = tuple(results.get(str(call.get("id")), ()))
            key = (message.seq, index, stored)
            line = cache.get(key) if cache is not None else None
            if line is None:
                line = _call_line(call, stored)
                if cache is not None:
                    cache[key] = line
            lines.append(line)
            calls.append(call)
    return lines, calls


def note_text(
    messages: Sequence[Any],
    session_id: str,
    counter: TokenCounter,
    bound: int,
    *,
    line_cache: LineCache | None = None,
) -> str:
    """The note for folded steps: one line per call, newest kept when over ``bound``
    (``line_cache``: lines already made, see :func:`_lines`)."""
    lines, calls = _lines(messages, line_cache)
    seqs = [m.seq for m in messages]
    head = (
        f"[Earlier steps of this turn, folded for room ({len(calls)} tool calls). Each result "
        f"is stored whole; read one with GET /v1/sessions/{session_id}/messages"
        f"?after_seq=<seq - 1>&limit=1]"
    )
    kept: list[str] = []
    used = counter.count_text(head)
    for index in range(len(lines) - 1, -1, -1):
        cost = counter.count_text(lines[index]) + 1
        if used + cost > bound and kept:
            names = Counter(
                str((call.get("function") or {}).get("name", "?")) for call in calls[: index + 1]
            )
            tools = ", ".join(f"{name} x{count}" for name, count in sorted(names.items()))
            summary = (
                f"- {index + 1} earlier calls ({tools}), results stored between seq "
                f"{min(seqs)} and {max(seqs)}"
            )
            return "\n".join([head, summary, *reversed(kept)])
        kept.append(lines[index])
        used += cost
    return "\n".join([head, *reversed(kept)])
