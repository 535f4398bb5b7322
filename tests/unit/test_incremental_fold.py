"""A fold that reuses what earlier folds read off their items says exactly what a fold that
reads everything again says, summary after summary of a long realistic session."""

from __future__ import annotations

import pytest
import tiktoken

from app.budget.summary import SummaryContent
from app.budget.tokens import TiktokenCounter, content_text
from app.summarize import SourceMessage, SummaryRequest
from app.summarize.extractive import forget_texts, summarize_extractive
from bench import traffic

CL100K = TiktokenCounter("cl100k_base", tiktoken.get_encoding("cl100k_base"))
#: The policy folds eight turns at a time (the turn-count summary).
TURNS_PER_FOLD = 8


def folds(seed: int, *, turns: int, target_tokens: int, reread: bool) -> list[SummaryContent]:
    """Every summary of a generated session folded eight turns at a time; with ``reread``,
    each fold starts from nothing remembered."""
    session = traffic.generate(seed, turns=turns)
    summaries: list[SummaryContent] = []
    previous: SummaryContent | None = None
    message_id = 0
    turns_of_session = session.conversation.turns
    for start in range(0, len(turns_of_session), TURNS_PER_FOLD):
        sources: list[SourceMessage] = []
        for turn in turns_of_session[start : start + TURNS_PER_FOLD]:
            for message in turn.messages():
                message_id += 1
                text = content_text(message.get("content"))
                sources.append(SourceMessage(message_id, str(message["role"]), text))
        if reread:
            forget_texts()
        previous = summarize_extractive(
            SummaryRequest(previous, tuple(sources), target_tokens, CL100K)
        )
        summaries.append(previous)
    return summaries


@pytest.mark.parametrize(
    ("seed", "target_tokens"),
    [(2, 1382), (401, 1382), (3, 23_910)],
    ids=["8k-model", "8k-model-reporting-seed", "128k-model"],
)
def test_a_fold_that_remembers_says_what_a_fold_that_rereads_says(
    seed: int, target_tokens: int
) -> None:
    forget_texts()
    remembering = folds(seed, turns=160, target_tokens=target_tokens, reread=False)
    rereading = folds(seed, turns=160, target_tokens=target_tokens, reread=True)
    assert len(remembering) == 20
    assert remembering == rereading
    # The session states facts and corrects some: the summaries carry what the user said.
    assert any(item.from_user for item in remembering[-1].key_facts)
