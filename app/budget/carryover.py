"""Fact carry-over: a new summary keeps what the previous one established.

An abstractive summariser may drop a fact, a decision or an open question of the previous
summary while folding new messages in, or a statement of the user's in any section.
:func:`carry_over` merges every such item back, with its source message ids and its
``from_user`` mark, so that facts, their anchors and what the user said survive summary after
summary. When the merged summary is over its target, the narrative gives way first, then the
new summary's own items (action items first, newest first, the user's statements last);
carried items go last of all.
"""

from __future__ import annotations

import re
from dataclasses import replace

from app.budget.statements import supersedes
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TokenCounter

#: The sections whose items are anchors (seed 003 §8) and must survive a re-summary.
CARRIED_SECTIONS = ("key_facts", "decisions", "open_questions")
_SECTIONS = (*CARRIED_SECTIONS, "action_items")
_NORMALISE = re.compile(r"[\W_]+")


def _sections(content: SummaryContent, **changes: tuple[SummaryItem, ...]) -> SummaryContent:
    """``content`` with some sections replaced."""

    def section(name: str) -> tuple[SummaryItem, ...]:
        items: tuple[SummaryItem, ...] = changes.get(name, getattr(content, name))
        return items

    return SummaryContent(
        summary_text=content.summary_text,
        key_facts=section("key_facts"),
        decisions=section("decisions"),
        open_questions=section("open_questions"),
        action_items=section("action_items"),
    )


def _key(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def dropped_items(previous: SummaryContent, new: SummaryContent) -> dict[str, list[SummaryItem]]:
    """Items of the previous summary's carried sections, and the user's statements in any
    section, that the new one no longer states (compared by normalised text, in any
    section)."""
    present = {_key(item.text) for name in _SECTIONS for item in getattr(new, name)}
    dropped = {
        name: [item for item in getattr(previous, name) if _key(item.text) not in present]
        for name in CARRIED_SECTIONS
    }
    users = [i for i in previous.action_items if i.from_user and _key(i.text) not in present]
    if users:
        dropped["action_items"] = users
    return dropped


def _with_provenance(previous: SummaryContent, new: SummaryContent) -> SummaryContent:
    """The new summary's restated items keep the source ids the previous ones had."""
    sources: dict[str, tuple[int, ...]] = {}
    said: set[str] = set()
    for name in _SECTIONS:
        for item in getattr(previous, name):
            if name in CARRIED_SECTIONS:
                sources.setdefault(_key(item.text), item.source_message_ids)
            if item.from_user:
                said.add(_key(item.text))

    def merged(item: SummaryItem) -> SummaryItem:
        earlier = sources.get(_key(item.text), ())
        ids = tuple(dict.fromkeys((*earlier, *item.source_message_ids)))
        from_user = item.from_user or _key(item.text) in said
        if ids == item.source_message_ids and from_user == item.from_user:
            return item
        return replace(item, source_message_ids=ids, from_user=from_user)

    return _sections(
        new, **{name: tuple(merged(i) for i in getattr(new, name)) for name in _SECTIONS}
    )


def _newest(item: SummaryItem) -> int:
    return max(item.source_message_ids, default=-1)


def _user_items(content: SummaryContent | None) -> list[SummaryItem]:
    if content is None:
        return []
    return [i for name in _SECTIONS for i in getattr(content, name) if i.from_user]


def superseded(previous: SummaryContent | None, new: SummaryContent) -> set[str]:
    """The (normalised) texts of the user's statements that a statement new in ``new``
    revises (a marked correction or an unmarked restatement with a new value, as
    :func:`~app.budget.statements.supersedes` decides): whether the model kept them beside it
    or left them for carry-over to bring back, they are no longer current."""
    before = {_key(i.text) for i in _user_items(previous)}
    theirs = _user_items(new)
    earlier = theirs + _user_items(previous)
    gone: set[str] = set()
    for correction in theirs:
        if _key(correction.text) in before:
            continue
        ranked = [
            (supersedes(correction.text, item.text), _newest(item), item.text)
            for item in earlier
            if _newest(item) < _newest(correction) and _key(item.text) != _key(correction.text)
        ]
        strength, _, text = max(ranked, default=(0, 0, ""))
        if strength > 0:
            gone.add(_key(text))
    return gone


def _without(content: SummaryContent, texts: set[str]) -> SummaryContent:
    """``content`` without the items whose normalised text is one of ``texts``."""
    if not texts:
        return content
    return _sections(
        content,
        **{
            name: tuple(i for i in getattr(content, name) if _key(i.text) not in texts)
            for name in _SECTIONS
        },
    )


def carry_over(
    previous: SummaryContent | None,
    new: SummaryContent,
    *,
    target_tokens: int | None,
    counter: TokenCounter,
) -> SummaryContent:
    """``new`` with every fact, decision and open question of ``previous`` it dropped merged
    back (first in their section, as the oldest), except the user's statements a new
    correction revises (gone from both), within ``target_tokens`` where possible
    (None: no trimming; the caller asks for a shorter summary instead)."""
    revised = superseded(previous, new)
    new = _without(new, revised)
    if previous is None:
        return new
    new = _with_provenance(previous, new)
    missing = {
        name: [item for item in items if _key(item.text) not in revised]
        for name, items in dropped_items(previous, new).items()
    }
    carried = {id(item) for items in missing.values() for item in items}
    content = _sections(
        new, **{name: (*missing.get(name, ()), *getattr(new, name)) for name in _SECTIONS}
    )

    if target_tokens is None:
        return content
    limit = target_tokens

    def over(candidate: SummaryContent) -> bool:
        return counter.count_text(render_summary(candidate)) > limit

    # Over target: the narrative shrinks, then the new summary's own items go (action items
    # first, newest first), the user's statements after everything else. Carried items are
    # what this function exists to keep.
    while over(content) and content.summary_text:
        words = content.summary_text.split()
        content = replace(content, summary_text=" ".join(words[: len(words) // 2]))
    for users in (False, True):
        for name in ("action_items", "open_questions", "decisions", "key_facts"):
            items = list(getattr(content, name))
            index = len(items) - 1
            while over(content) and index >= 0:
                if id(items[index]) not in carried and items[index].from_user == users:
                    del items[index]
                    content = _sections(content, **{name: tuple(items)})
                index -= 1
    return content
