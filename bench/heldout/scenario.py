"""What a generated session is: its turns as an agent posts them, and the answer key the
scorer checks the prompts against (facts, corrections, later questions)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

SourceRole = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Step:
    """One LLM call that asked for tools: its text (often none), its calls, their results."""

    content: str | None
    calls: tuple[ToolCall, ...]
    results: tuple[str, ...]


@dataclass(frozen=True)
class Turn:
    user: str
    steps: tuple[Step, ...]
    answer: str
    #: What the turn is, for the report only: fact, correction, question, routine, chat, prose.
    kind: str


@dataclass(frozen=True)
class Fact:
    """A detail the user stated; ``value`` is what must still be in the last prompt."""

    kind: str
    value: str
    turn: int
    #: Set when a later turn revised it: the value in force at the end.
    corrected_to: str | None = None
    correction_turn: int | None = None
    #: Values in force for a while between ``value`` and ``corrected_to`` (a correction that
    #: was itself corrected), each with the turn that stated it: old values too.
    superseded: tuple[tuple[str, int], ...] = ()
    #: How the correction was made ("marked", "retracted", ...), where a set labels it.
    style: str = ""

    @property
    def old_values(self) -> tuple[str, ...]:
        return (self.value, *(value for value, _ in self.superseded))


@dataclass(frozen=True)
class Question:
    """A later question about a detail that has left the prompt by then."""

    turn: int
    source_turn: int
    source_role: SourceRole
    #: The words of the source that hold the answer (matched normalised, like facts).
    value: str
    #: A window of the source message around ``value``: what shows the source itself came
    #: back, not a paraphrase of it.
    source_window: str
    shares_word: bool
    #: What the question is about ("tool output", "spans two messages", ...), where a set
    #: labels it. A question whose answer spans two messages is two of these at one turn.
    kind: str = ""


@dataclass
class Scenario:
    seed: int
    model: str
    context_limit: int
    system: dict[str, str]
    goal: str
    tools: list[dict[str, Any]]
    turns: list[Turn] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    #: Which agent the session is of, where a set has several (the report groups by it).
    agent: str = ""


_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """How every match is made: Unicode NFKC, case-folded, dashes unified, runs of white
    space made one space. Accents are kept: a name that lost them is not the user's name."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _DASHES.sub("-", text)).strip()


_WORD = re.compile(r"\w+")
#: Words too common to say a question "shares a word" with its source.
_STOP = frozenset(
    (
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "why",
        "how",
        "again",
        "did",
        "do",
        "does",
        "you",
        "your",
        "i",
        "me",
        "my",
        "we",
        "our",
        "us",
        "they",
        "them",
        "their",
        "he",
        "she",
        "his",
        "her",
        "can",
        "could",
        "would",
        "should",
        "will",
        "just",
        "about",
        "any",
        "some",
        "there",
        "here",
        "not",
        "no",
        "yes",
        "ok",
        "so",
        "one",
        "all",
        "have",
        "has",
        "had",
        "get",
        "got",
        "tell",
        "remind",
        "say",
        "said",
        "me",
        "know",
    )
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalise(text)) if len(w) > 2 and w not in _STOP}


def shares_a_word(question: str, source: str) -> bool:
    return bool(content_words(question) & content_words(source))
