"""A deterministic, offline summariser that keeps what an agent cannot afford to forget.

It does not paraphrase: it picks sentences. Decisions, open questions, action items and
sentences dense in specifics (numbers, dates, identifiers, names) become items, each citing
the message it came from. A new summary folds the previous one in: earlier items come first,
so facts stated at the start of a session survive every later summary while there is room.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.budget.summary import SECTION_TITLES, SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TokenCounter
from app.summarize.base import SourceMessage, SummaryRequest

MAX_ITEM_CHARS = 240
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(decided|decide|decision|agreed|agree to|we will|we'll|let's|going with|go with|"
    r"chose|chosen|settled on|approved|confirmed)\b",
    re.IGNORECASE,
)
_ACTION = re.compile(
    r"\b(todo|to-do|action item|next step|need to|needs to|must|remember to|follow up|"
    r"follow-up|deadline|by (monday|tuesday|wednesday|thursday|friday|tomorrow|eod))\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d")
_IDENTIFIER = re.compile(
    r"[A-Za-z]+[_/.:#-][A-Za-z0-9]|\b[a-z]+[A-Z][A-Za-z]+\b|\b[A-Z]{2,}[0-9]*\b|@|https?://"
)
_PROPER_NAME = re.compile(r"(?<=\s)[A-Z][a-z]+")
_NORMALISE = re.compile(r"[\W_]+")
_PER_MESSAGE_LIMIT = {"user": 6, "assistant": 4, "tool": 2}


def _normalise(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def _clip(sentence: str) -> str:
    sentence = " ".join(sentence.split())
    if len(sentence) <= MAX_ITEM_CHARS:
        return sentence
    return sentence[: MAX_ITEM_CHARS - 1].rstrip() + "…"


def _specificity(sentence: str) -> int:
    return (
        2 * bool(_NUMBER.search(sentence))
        + 2 * bool(_IDENTIFIER.search(sentence))
        + bool(_PROPER_NAME.search(sentence))
    )


@dataclass(frozen=True)
class _Candidate:
    kind: str  # "decision" | "question" | "action" | "fact"
    score: int
    item: SummaryItem


def _candidates(message: SourceMessage) -> list[_Candidate]:
    found: list[_Candidate] = []
    for raw in _SENTENCE_SPLIT.split(message.text):
        sentence = _clip(raw)
        if len(sentence) < 8:
            continue
        item = SummaryItem(sentence, (message.message_id,))
        specificity = _specificity(sentence)
        if message.role != "tool" and _DECISION.search(sentence):
            found.append(_Candidate("decision", specificity + 3, item))
        elif message.role != "tool" and sentence.endswith("?"):
            found.append(_Candidate("question", specificity + 2, item))
        elif message.role != "tool" and _ACTION.search(sentence):
            found.append(_Candidate("action", specificity + 1, item))
        elif specificity >= (3 if message.role == "tool" else 2):
            found.append(_Candidate("fact", specificity, item))
    found.sort(key=lambda candidate: -candidate.score)
    return found[: _PER_MESSAGE_LIMIT.get(message.role, 2)]


def _fit(text: str, limit: int, counter: TokenCounter) -> str:
    """``text`` cut short (at a word) until it counts at most ``limit`` tokens."""
    while text and counter.count_text(text) > limit:
        text = text[: int(len(text) * 0.8)].rsplit(" ", 1)[0] if " " in text else ""
    return text


def _narrative(messages: Iterable[SourceMessage], previous: SummaryContent | None) -> str:
    requests = [_clip(m.text)[:120] for m in messages if m.role == "user" and m.text.strip()]
    count = sum(1 for _ in requests)
    text = f"Earlier conversation: {count} user request(s) summarised"
    if previous is not None:
        text += ", on top of an earlier summary"
    if requests:
        text += ". Most recent: " + " | ".join(requests[-3:])
    return text + "."


class ExtractiveSummarizer:
    """The built-in summariser: deterministic, offline, and fast (no model call)."""

    @property
    def name(self) -> str:
        return "extractive"

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        return summarize_extractive(request)


def summarize_extractive(request: SummaryRequest) -> SummaryContent:
    previous = request.previous
    fresh: dict[str, list[SummaryItem]] = {"decision": [], "question": [], "action": [], "fact": []}
    ranked = sorted(
        (c for m in request.messages for c in _candidates(m)),
        key=lambda c: -c.score,
    )
    for candidate in ranked:
        fresh[candidate.kind].append(candidate.item)

    # Priority: what earlier summaries established, then what is new, action items last.
    ordered: list[tuple[str, SummaryItem]] = []
    if previous is not None:
        ordered += [("decisions", i) for i in previous.decisions]
        ordered += [("key_facts", i) for i in previous.key_facts]
        ordered += [("open_questions", i) for i in previous.open_questions]
    ordered += [("decisions", i) for i in fresh["decision"]]
    ordered += [("key_facts", i) for i in fresh["fact"]]
    ordered += [("open_questions", i) for i in fresh["question"]]
    if previous is not None:
        ordered += [("action_items", i) for i in previous.action_items]
    ordered += [("action_items", i) for i in fresh["action"]]

    chosen: dict[str, list[SummaryItem]] = {
        "key_facts": [],
        "decisions": [],
        "open_questions": [],
        "action_items": [],
    }
    seen: set[str] = set()
    counter = request.counter
    target = request.target_tokens
    # Items carry the facts; the narrative only says what was folded, so it never takes
    # more than a quarter of the target.
    narrative = _fit(_narrative(request.messages, previous), target // 4, counter)
    used = counter.count_text(narrative) + 1
    for field, item in ordered:
        key = _normalise(item.text)
        if not key or key in seen:
            continue
        # A line costs its text, its bullet and its line break; the first line of a section
        # also pays for the section's title.
        cost = counter.count_text(f"- {item.text}") + 1
        if not chosen[field]:
            cost += counter.count_text(f"{SECTION_TITLES[field]}:") + 1
        if used + cost > target:
            continue
        seen.add(key)
        chosen[field].append(item)
        used += cost

    def build() -> SummaryContent:
        return SummaryContent(
            summary_text=narrative,
            key_facts=tuple(chosen["key_facts"]),
            decisions=tuple(chosen["decisions"]),
            open_questions=tuple(chosen["open_questions"]),
            action_items=tuple(chosen["action_items"]),
        )

    content = build()
    # Lines were counted apart; tokens can merge across line breaks, so check the whole and
    # give up the narrative before any item.
    trim_order = ("action_items", "open_questions", "key_facts", "decisions")
    while counter.count_text(render_summary(content)) > target:
        fullest = next((f for f in trim_order if chosen[f]), None)
        if narrative:
            narrative = narrative[: len(narrative) // 2]
        elif fullest is not None:
            chosen[fullest].pop()
        else:
            break
        content = build()
    return content
