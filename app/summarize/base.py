"""The summariser interface (seed 003 §7 output contract)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.budget.decision import SourceText
from app.budget.summary import SummaryContent
from app.budget.tokens import TokenCounter

#: A message as a summariser reads it: the budget core's type, so that what an assembly asks
#: to summarise goes to the summariser as it is.
SourceMessage = SourceText


@dataclass(frozen=True)
class SummaryRequest:
    """Fold ``messages`` into ``previous`` within ``target_tokens`` (counted by ``counter``)."""

    previous: SummaryContent | None
    messages: tuple[SourceMessage, ...]
    target_tokens: int
    counter: TokenCounter


class Summarizer(Protocol):
    """Turns a range of messages (and the previous summary) into a new summary.

    An implementation may raise anything: the caller falls back to deterministic truncation
    and never stores the error as a summary.
    """

    @property
    def name(self) -> str: ...

    async def summarize(self, request: SummaryRequest) -> SummaryContent: ...
