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
#: What a fact read from a tool's output starts with, so that later summaries know it from
#: a fact somebody stated.
TOOL_LABEL = "Tool output: "
#: Where a sentence may end: closing punctuation (and any closing quotes or brackets) followed
#: by white space. A full stop inside a token (3.5, v1.2.3, example.com/a.txt, ./run.sh) is
#: never a boundary because no white space follows it.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
#: Words whose full stop abbreviates rather than ends a sentence.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "vs",
        "cf",
        "approx",
        "dept",
        "fig",
        "inc",
        "ltd",
        "corp",
        "vol",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
    ]
)
#: Initials and dotted abbreviations: J. / U.S. / e.g. / i.e. / a.m.
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+$")
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
#: A fact is dense in specifics: at least one number, identifier or name per this many words
#: (a long sentence that merely mentions a number is not a fact worth a line).
_WORDS_PER_SPECIFIC = 20


def _abbreviation(token: str) -> bool:
    token = token.lstrip("(\"'[")
    return _DOTTED.match(token) is not None or token[:-1].lower() in _ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences, one line never joined to the next.

    A full stop after an abbreviation (Dr., e.g., U.S.) or an initial (J. R. Smith) does not
    end a sentence, nor does one followed by a lower-case word; decimals, versions, addresses
    and file paths are never cut.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for end in _SENTENCE_END.finditer(line):
            words = line[start : end.start()].split()
            if not words:
                continue
            following = line[end.end() : end.end() + 1]
            if end.group().rstrip() == "." and (
                following.islower() or _abbreviation(words[-1] + ".")
            ):
                continue
            sentences.append(line[start : end.end()].strip())
            start = end.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


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


def _dense(sentence: str) -> bool:
    specifics = (
        len(re.findall(r"\d+", sentence))
        + len(_IDENTIFIER.findall(sentence))
        + len(_PROPER_NAME.findall(sentence))
    )
    return specifics * _WORDS_PER_SPECIFIC >= len(sentence.split())


@dataclass(frozen=True)
class _Candidate:
    kind: str  # "decision" | "question" | "action" | "fact" | "tool fact"
    score: int
    item: SummaryItem


def _candidates(message: SourceMessage) -> list[_Candidate]:
    found: list[_Candidate] = []
    for raw in split_sentences(message.text):
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
        elif not _dense(sentence):
            continue
        elif message.role == "tool" and specificity >= 3:
            labelled = SummaryItem(_clip(TOOL_LABEL + sentence), item.source_message_ids)
            found.append(_Candidate("tool fact", specificity, labelled))
        elif specificity >= 2:
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


def _from_tool(item: SummaryItem) -> bool:
    return item.text.startswith(TOOL_LABEL)


def summarize_extractive(request: SummaryRequest) -> SummaryContent:
    previous = request.previous
    fresh: dict[str, list[SummaryItem]] = {
        "decision": [],
        "question": [],
        "action": [],
        "fact": [],
        "tool fact": [],
    }
    ranked = sorted(
        (c for m in request.messages for c in _candidates(m)),
        key=lambda c: -c.score,
    )
    for candidate in ranked:
        fresh[candidate.kind].append(candidate.item)
    earlier = previous or SummaryContent(summary_text="")
    stated = [i for i in earlier.key_facts if not _from_tool(i)]
    read = [i for i in earlier.key_facts if _from_tool(i)]

    # Priority, highest first. What earlier summaries decided, left open or were told stays:
    # nothing new evicts it. New decisions, questions and facts come next, then action items,
    # and last what a tool returned: it fills the room that is left and gives it up to
    # anything said in the conversation.
    ordered: list[tuple[str, SummaryItem]] = []
    ordered += [("decisions", i) for i in earlier.decisions]
    ordered += [("open_questions", i) for i in earlier.open_questions]
    ordered += [("key_facts", i) for i in stated]
    ordered += [("decisions", i) for i in fresh["decision"]]
    ordered += [("open_questions", i) for i in fresh["question"]]
    ordered += [("key_facts", i) for i in fresh["fact"]]
    ordered += [("action_items", i) for i in earlier.action_items]
    ordered += [("action_items", i) for i in fresh["action"]]
    ordered += [("key_facts", i) for i in read]
    ordered += [("key_facts", i) for i in fresh["tool fact"]]

    counter = request.counter
    target = request.target_tokens
    # Items carry the facts; the narrative only says what was folded. Its first sentence is
    # set aside, the items are chosen, and the narrative takes what room is left (at most a
    # quarter of the target), so a longer narrative never pushes an item out.
    full_narrative = _narrative(request.messages, previous)
    head = full_narrative.split(". Most recent: ")[0] + "."
    used = counter.count_text(head) + 1
    picked: list[tuple[str, SummaryItem]] = []
    seen: set[str] = set()
    titled: set[str] = set()
    for field, item in ordered:
        key = _normalise(item.text.removeprefix(TOOL_LABEL))
        if not key or key in seen:
            continue
        # A line costs its text, its bullet and its line break; the first line of a section
        # also pays for the section's title.
        cost = counter.count_text(f"- {item.text}") + 1
        if field not in titled:
            cost += counter.count_text(f"{SECTION_TITLES[field]}:") + 1
        if used + cost > target:
            continue
        seen.add(key)
        titled.add(field)
        picked.append((field, item))
        used += cost
    room = target - used + counter.count_text(head) + 1
    narrative = _fit(full_narrative, min(target // 4, room), counter)
    if counter.count_text(narrative) < counter.count_text(head) and room > 0:
        narrative = _fit(head, room, counter)

    # Each section reads oldest first: what earlier summaries held, then what is new.
    position = {
        id(item): index
        for index, item in enumerate(
            (*earlier.key_facts, *earlier.decisions, *earlier.open_questions, *earlier.action_items)
        )
    }

    def build() -> SummaryContent:
        sections: dict[str, list[tuple[int, int, SummaryItem]]] = {f: [] for f in SECTION_TITLES}
        for rank, (field, item) in enumerate(picked):
            age = position.get(id(item), len(position))
            sections[field].append((age, rank, item))
        return SummaryContent(
            summary_text=narrative,
            **{f: tuple(item for _, _, item in sorted(rows)) for f, rows in sections.items()},
        )

    content = build()
    # Lines were counted apart; tokens can merge across line breaks, so check the whole and
    # give up the narrative before any item, then items from the lowest priority up.
    while counter.count_text(render_summary(content)) > target:
        if narrative:
            narrative = narrative[: len(narrative) // 2]
        elif picked:
            picked.pop()
        else:
            break
        content = build()
    return content
