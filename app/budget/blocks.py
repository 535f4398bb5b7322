"""Per-block budgets and de-duplication (seed 000), as pure functions.

Everything here shapes one prompt at read time and changes nothing stored: memory and summary
lines, and history over its cap, are left out of the prompt but stay in the database (capped
history stays active, so a later summary still reads it). Shaping is deterministic: the same
inputs give the same bytes. A history cap slides with the conversation, so each prompt it
shortens breaks the provider's prefix cache; the audit row names it ("block_cap").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from app.budget.policy import HistoryMessage
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TokenCounter

_BULLET = re.compile(r"^(?:[-*•]\s*)+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class BlockCaps:
    """Optional token caps per block; None means no cap of its own."""

    memory: int | None = None
    summary: int | None = None
    history: int | None = None
    total: int | None = None
    #: History messages (outside the current turn) that caps never remove.
    min_recent_messages: int = 2
    #: One tool result's cap in the prompt, as a share of the input budget (None: the
    #: service's setting).
    tool_result_share: float | None = None


def normalise_line(line: str) -> str:
    """Seed 000 §3: trimmed, lower-cased, bullet markers stripped, whitespace collapsed."""
    return _SPACES.sub(" ", _BULLET.sub("", line.strip().lower())).strip()


def dedupe_summary(content: SummaryContent, memory: str | None) -> tuple[SummaryContent, int]:
    """Drop summary lines that repeat a memory line; returns the summary and lines removed."""
    if not memory:
        return content, 0
    known = {normalise_line(line) for line in memory.splitlines() if line.strip()}

    def keep(items: tuple[SummaryItem, ...]) -> tuple[SummaryItem, ...]:
        return tuple(i for i in items if normalise_line(i.text) not in known)

    narrative = "" if normalise_line(content.summary_text) in known else content.summary_text
    deduped = SummaryContent(
        summary_text=narrative,
        key_facts=keep(content.key_facts),
        decisions=keep(content.decisions),
        open_questions=keep(content.open_questions),
        action_items=keep(content.action_items),
    )
    removed = _line_count(content) - _line_count(deduped)
    return deduped, removed


def _line_count(content: SummaryContent) -> int:
    return (
        bool(content.summary_text.strip())
        + len(content.key_facts)
        + len(content.decisions)
        + len(content.open_questions)
        + len(content.action_items)
    )


def cap_summary(
    content: SummaryContent, cap: int | None, counter: TokenCounter
) -> tuple[SummaryContent, int]:
    """Drop items from the end (action items first, decisions last) until the rendered
    summary fits ``cap``; returns the summary and the lines removed."""
    if cap is None:
        return content, 0
    removed = 0
    order = ("action_items", "open_questions", "key_facts", "decisions")
    while counter.count_text(render_summary(content)) > cap:
        name = next((n for n in order if getattr(content, n)), None)
        if name is None:
            if not content.summary_text:
                break
            content, removed = replace(content, summary_text=""), removed + 1
            continue
        content = replace(content, **{name: getattr(content, name)[:-1]})
        removed += 1
    return content, removed


def cap_text(text: str | None, cap: int | None, counter: TokenCounter) -> tuple[str | None, int]:
    """Keep whole lines from the top while they fit ``cap``; returns the text and lines
    removed."""
    if text is None or cap is None or counter.count_text(text) <= cap:
        return text, 0
    lines = text.splitlines()
    kept: list[str] = []
    for line in lines:
        if counter.count_text("\n".join([*kept, line])) > cap:
            break
        kept.append(line)
    return ("\n".join(kept) or None), len(lines) - len(kept)


@dataclass
class BlockTelemetry:
    """What shaping did to one block, for the audit row (seed 000 §6)."""

    tokens_before: int = 0
    tokens_after: int = 0
    lines_removed: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "lines_removed": self.lines_removed,
            **self.extra,
        }


def history_over_cap(
    history: Sequence[HistoryMessage],
    *,
    current_turn_seq: int,
    limit: int,
    min_recent_messages: int,
    anchor_message_ids: frozenset[int] = frozenset(),
) -> tuple[int, ...]:
    """Seqs to leave out so that history (outside the current turn) fits ``limit``.

    Oldest units go first, a tool call with all its results at once; the newest
    ``min_recent_messages`` messages and anchored units always stay.
    """
    past = [m for m in history if m.turn_seq != current_turn_seq]
    total = sum(m.tokens for m in past)
    protected = (
        {m.seq for m in past[len(past) - min_recent_messages :]} if min_recent_messages else set()
    )
    units: dict[int, list[HistoryMessage]] = {}
    for message in past:
        units.setdefault(message.unit_key, []).append(message)
    chosen: list[int] = []
    for members in units.values():
        if total <= limit:
            break
        if any(m.seq in protected or m.message_id in anchor_message_ids for m in members):
            continue
        chosen.extend(m.seq for m in members)
        total -= sum(m.tokens for m in members)
    return tuple(chosen)
