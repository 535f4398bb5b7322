"""The summary contract of seed 003 §7 and how a summary reads inside a prompt."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.budget.tokens import TokenCounter


@dataclass(frozen=True)
class SummaryItem:
    """One fact, decision, open question or action item, with the messages it came from.

    ``from_user``: the user's own words about themselves or their work (a name, a place, a
    preference, a constraint, a decision, a question). Summaries keep these ahead of what was
    read off tool output or narrated, summary after summary.
    """

    text: str
    source_message_ids: tuple[int, ...] = ()
    from_user: bool = False


@dataclass(frozen=True)
class SummaryContent:
    summary_text: str
    key_facts: tuple[SummaryItem, ...] = ()
    decisions: tuple[SummaryItem, ...] = ()
    open_questions: tuple[SummaryItem, ...] = ()
    action_items: tuple[SummaryItem, ...] = ()
    #: The user's statements this summary could not hold for room (counted and listed in its
    #: text, recorded in the audit row of the assembly that made it); not rendered.
    left_out: tuple[SummaryItem, ...] = ()
    #: The user's routine lines that left the block (a request said again and again, or one
    #: the previous summary held): no statements, so not in the notice, but recorded in the
    #: audit row all the same; not rendered.
    routine_left_out: tuple[SummaryItem, ...] = ()
    #: The user's messages every statement of which a later statement of the user's replaced
    #: (the fold's own decision, ``app.summarize.extractive``), each as (the message, the
    #: newest message of what replaced it), oldest first; carried summary after summary and
    #: stored with the summary. Recall does not bring these back as current. Not rendered.
    superseded: tuple[tuple[int, int], ...] = ()
    #: The user's messages some statement of which left the summary for room or as routine
    #: while another is still held: they say more than the summary shows, so a later revision
    #: of what it holds does not supersede the whole message. Dropped once nothing of the
    #: message is held. Not rendered.
    #: None for a summary stored before summaries kept this record: which messages it held
    #: only in part is unknown, so the next fold supersedes only messages of its own.
    partly_held: tuple[int, ...] | None = ()

    @cached_property
    def superseded_ids(self) -> frozenset[int]:
        """The superseded user messages' ids: one look-up per recalled candidate, worked out
        once per summary (a summary's content is cached per process)."""
        return frozenset(message for message, _ in self.superseded)

    def anchor_message_ids(self) -> frozenset[int]:
        """Messages that pruning must keep: what the facts, decisions and questions cite."""
        return self._anchors

    # Worked out once per summary: a summary's content is read from a per-process cache, so
    # the same object serves every assembly until the next summary.
    @cached_property
    def _anchors(self) -> frozenset[int]:
        return frozenset(
            message_id
            for item in (*self.key_facts, *self.decisions, *self.open_questions)
            for message_id in item.source_message_ids
        )

    def tokens(self, counter: TokenCounter) -> int:
        """Tokens of the rendered summary by ``counter``: counted once per way of counting
        (the counter's name), so that the summariser's check against its target and the
        assembly's acceptance of the summary count it once between them."""
        name = counter.name
        known = self._token_counts.get(name)
        if known is None:
            known = self._token_counts[name] = counter.count_text(self.rendered)
        return known

    @cached_property
    def _token_counts(self) -> dict[str, int]:
        return {}

    @cached_property
    def rendered(self) -> str:
        """The summary as one stable block of text (same content, same bytes)."""
        lines = [self.summary_text.strip()] if self.summary_text.strip() else []
        for name, title in SECTION_TITLES.items():
            items: tuple[SummaryItem, ...] = getattr(self, name)
            if items:
                lines.append(f"{title}:")
                lines.extend(f"- {item.text}" for item in items)
        return "\n".join(lines)


SECTION_TITLES = {
    "key_facts": "Key facts",
    "decisions": "Decisions",
    "open_questions": "Open questions",
    "action_items": "Action items",
}


def has_lines(content: SummaryContent) -> bool:
    return bool(
        content.summary_text.strip()
        or content.key_facts
        or content.decisions
        or content.open_questions
        or content.action_items
    )


def render_summary(content: SummaryContent) -> str:
    """The summary as one stable block of text (same content, same bytes)."""
    return content.rendered
