"""A model's summary beside the user's block: what of the model's answer may stand next to the
user's own words, and how the two share a summary's target.

The block (:func:`app.summarize.extractive.user_block`) is the only place a user statement is
kept. The model's part is everything else: a restatement of the user's words in it is left
out (the block holds them, or says they left it for room), and so is anything that presents a
value the user has since corrected. All of it is plain data in, data out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from app.budget.statements import is_correction, subject_key, subject_words, supersedes
from app.budget.summary import SECTION_TITLES, SummaryContent, SummaryItem
from app.budget.tokens import TokenCounter
from app.summarize.base import SourceMessage
from app.summarize.extractive import UserBlock, left_out_notice, split_sentences

_NORMALISE = re.compile(r"[\W_]+")
#: The notice of statements left out, as a summary's text carries it (either summariser's).
_NOTICE = re.compile(r"[;,]?\s*\d+ user statement\(s\) left out for room \(messages [^)]*\)\.?")
#: What a bare correction says it revised: "make that Thursday instead (was: … Tuesday …)".
_WAS = re.compile(r"\s*\(was: .*\)\s*$")
#: A user text this many words long or longer, found inside a model's item, is restated by it.
_RESTATED_WORDS = 3


def _key(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def _values(text: str) -> set[str]:
    """The values a text holds (names, numbers, days, hours), lower-cased."""
    return subject_words(text) - subject_key(text)


def _items(content: SummaryContent) -> list[SummaryItem]:
    return [item for name in SECTION_TITLES for item in getattr(content, name)]


def model_part(previous: SummaryContent | None) -> SummaryContent | None:
    """The previous summary without the user's block and its notice: what the model wrote
    (the block is chosen again, from the previous block's statements and the new messages)."""
    if previous is None:
        return None
    return SummaryContent(
        summary_text=_NOTICE.sub("", previous.summary_text).strip(),
        **{
            name: tuple(i for i in getattr(previous, name) if not i.from_user)
            for name in SECTION_TITLES
        },
    )


class UserWords:
    """What the user said in a fold, to judge a model's text against: whether it restates a
    statement of theirs, and whether it presents a value they have corrected."""

    def __init__(self, block: UserBlock, messages: Iterable[SourceMessage]) -> None:
        kept = _items(block.content)
        said = [*kept, *block.content.left_out, *block.revised]
        self._said = {_key(i.text) for i in said} | {
            _key(m.text) for m in messages if m.role == "user"
        }
        self._said.discard("")
        self._long = {f" {key} " for key in self._said if len(key.split()) >= _RESTATED_WORDS}
        current = [_WAS.sub("", i.text) for i in kept]
        now = set().union(*(_values(text) for text in current))
        # A statement a correction replaced in this fold: its values that nothing current
        # holds are old values, on its subject; what is current on that subject is new.
        self._old: list[tuple[frozenset[str], set[str], set[str]]] = []
        for item in block.revised:
            old = _values(item.text) - now
            if old:
                about = subject_key(item.text)
                new = set().union(*(_values(c) for c in current if subject_key(c) & about))
                self._old.append((about, old, new))
        self._corrections = [
            (text, _values(text)) for text in current if is_correction(text) and _values(text)
        ]

    def restates(self, text: str) -> bool:
        """Whether ``text`` is (part of) something the user said, or holds a statement of
        theirs whole."""
        key = _key(text)
        if not key:
            return True
        padded = f" {key} "
        return any(padded in f" {said} " for said in self._said) or any(
            said in padded for said in self._long
        )

    def stale(self, text: str) -> bool:
        """Whether ``text`` presents a value the user has corrected: it holds an old value of
        a statement a correction replaced (on its subject), or it is on the subject of a
        correction the block holds with another value and without the corrected one."""
        words = subject_words(text)
        if any(
            old & words and (not about or about & words) and not new & words
            for about, old, new in self._old
        ):
            return True
        values = _values(text)
        return any(
            values - new and not values & new and supersedes(correction, text) > 0
            for correction, new in self._corrections
        )


def without_user_words(content: SummaryContent, words: UserWords) -> SummaryContent:
    """The model's part without the user's statements restated (the block holds them) and
    without what presents a corrected value, in its items and in its narrative's sentences;
    every item is the model's (``from_user`` false), whatever it was marked."""
    narrative = " ".join(s for s in split_sentences(content.summary_text) if not words.stale(s))
    return SummaryContent(
        summary_text=narrative,
        **{
            name: tuple(
                replace(item, from_user=False)
                for item in getattr(content, name)
                if not words.restates(item.text) and not words.stale(item.text)
            )
            for name in SECTION_TITLES
        },
    )


def merged(block: SummaryContent, model: SummaryContent) -> SummaryContent:
    """One summary: the model's narrative and then the notice of what left the block (never
    cut); in each section the user's statements first, then the model's items."""
    notice = left_out_notice(block.left_out)
    text = " ".join(part for part in (model.summary_text, f"{notice}." if notice else "") if part)
    return SummaryContent(
        summary_text=text,
        **{name: (*getattr(block, name), *getattr(model, name)) for name in SECTION_TITLES},
        left_out=block.left_out,
        routine_left_out=block.routine_left_out,
    )


def within_target(
    block: SummaryContent, model: SummaryContent, target_tokens: int, counter: TokenCounter
) -> tuple[SummaryContent, SummaryContent]:
    """The block and the model's part, merged within ``target_tokens``: the model's narrative
    gives way first, then its items (action items first, newest first), then the oldest of
    the user's statements, each leaving the block visibly (counted in the notice, listed in
    ``left_out``)."""
    while merged(block, model).tokens(counter) > target_tokens:
        if model.summary_text:
            words = model.summary_text.split()
            model = replace(model, summary_text=" ".join(words[: len(words) // 2]))
        elif any(getattr(model, name) for name in SECTION_TITLES):
            name = next(n for n in reversed(SECTION_TITLES) if getattr(model, n))
            model = replace(model, **{name: getattr(model, name)[:-1]})
        elif _items(block):
            oldest = min(_items(block), key=lambda i: max(i.source_message_ids, default=-1))
            block = SummaryContent(
                summary_text=block.summary_text,
                left_out=(*block.left_out, oldest),
                routine_left_out=block.routine_left_out,
                **{
                    name: tuple(i for i in getattr(block, name) if i is not oldest)
                    for name in SECTION_TITLES
                },
            )
        else:
            break
    return block, model
