"""The recall block: what the conversation said earlier, no longer in the prompt, brought back
for the current turn.

A session that turns recall on has its stored messages searched, on each assembly, for the
words of the turn's user message among those that left the prompt (summarised or pruned).
The best hits, within a share of the input budget, go into one ``user`` message placed just
before the current turn: after the whole history, so the prompt up to there is the previous
prompt's prefix and the provider's cache still hits it. Only user and assistant text is
recalled, as quoted text inside the block, so no tool call or tool result ever comes back
without its pair.

The block is counted as a fixed cost of the prompt, like the system message: the 70 % / 90 %
triggers and the caps see it, and the audit row reports its tokens and the ids it recalled.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.budget.assembly import ChatMessage, ContextBlocks, FixedCost
from app.budget.tokens import TokenCounter, count_message

RECALL_BLOCK = "recall"
RECALL_HEADING = (
    "Recalled from earlier in this conversation (no longer shown above; for reference only):"
)
#: A recalled message longer than its room is cut to about this share of it, then counted.
_CUT_MARGIN = 0.9


#: A recall block's entry in a prompt fingerprint; the other kinds: ``s:`` the system
#: message, ``q:`` a message, ``p:`` a set-aside tool result, ``r:`` a message without its
#: reasoning, ``i:`` a tool result without its images (app.budget.assembly, app.budget.views).
RECALL_PREFIX = "c:"


@dataclass(frozen=True)
class RecallHit:
    """A message that left the prompt and matches the current turn, best first."""

    message_id: int
    seq: int
    role: str
    text: str
    #: The part of ``text`` that matched (its passage nearest in meaning, with embeddings):
    #: shown instead of the whole text when that is too long for the room left.
    excerpt: str | None = None


@dataclass(frozen=True)
class RecallBlock:
    """The recall message of one prompt."""

    text: str
    tokens: int
    #: The recalled messages, in the order shown (oldest first).
    message_ids: tuple[int, ...]

    def message(self) -> ChatMessage:
        return {"role": "user", "content": self.text}

    def fingerprint(self) -> str:
        """The block's entry in a prompt fingerprint (see assembly.prompt_fingerprint)."""
        return RECALL_PREFIX + hashlib.sha256(self.text.encode()).hexdigest()[:16]


def recall_block(
    hits: Sequence[RecallHit], *, room: int, max_hits: int, counter: TokenCounter
) -> RecallBlock | None:
    """The best ``hits`` (at most ``max_hits``) whose block fits ``room`` tokens, shown oldest
    first; a hit too long for what is left shows its excerpt instead, if it has one, and is
    cut to fit. None when nothing fits."""
    chosen: list[tuple[RecallHit, str]] = []
    block: RecallBlock | None = None
    for hit in hits:
        if len(chosen) == max_hits:
            break
        text = " ".join(hit.text.split())
        if not text:
            continue
        candidate = _render([*chosen, (hit, text)], counter)
        if candidate.tokens > room and hit.excerpt and hit.excerpt.strip() != text:
            text = "… " + " ".join(hit.excerpt.split()) + " …"
            candidate = _render([*chosen, (hit, text)], counter)
        if candidate.tokens > room:
            left = room - (block.tokens if block else _render([], counter).tokens)
            text = _cut(text, left, counter)
            if not text:
                continue
            candidate = _render([*chosen, (hit, text)], counter)
            if candidate.tokens > room:
                continue
        chosen.append((hit, text))
        block = candidate
    return block


def with_recall(
    measure: Callable[[TokenCounter, ContextBlocks], FixedCost], recall: RecallBlock | None
) -> Callable[[TokenCounter, ContextBlocks], FixedCost]:
    """A fixed-cost measure that books the recall block as one more fixed block."""
    if recall is None:
        return measure

    def measure_with_recall(counter: TokenCounter, blocks: ContextBlocks) -> FixedCost:
        fixed = measure(counter, blocks)
        return FixedCost(
            fixed.tokens + recall.tokens, {**fixed.blocks, RECALL_BLOCK: recall.tokens}
        )

    return measure_with_recall


def _render(chosen: Sequence[tuple[RecallHit, str]], counter: TokenCounter) -> RecallBlock:
    shown = sorted(chosen, key=lambda pair: pair[0].seq)
    lines = [RECALL_HEADING, *(f"[message {hit.seq}, {hit.role}] {text}" for hit, text in shown)]
    text = "\n".join(lines)
    return RecallBlock(
        text=text,
        tokens=count_message(counter, {"role": "user", "content": text}),
        message_ids=tuple(hit.message_id for hit, _ in shown),
    )


def _cut(text: str, tokens: int, counter: TokenCounter) -> str:
    """The start of ``text`` in about ``tokens`` tokens (whole words, marked as cut)."""
    if tokens <= 8:
        return ""
    total = counter.count_text(text)
    keep = int(len(text) * tokens / max(total, 1) * _CUT_MARGIN)
    return text[:keep].rsplit(" ", 1)[0] + " …"
