"""Running a summariser on what an assembly asked for, for turns and summary jobs alike."""

from __future__ import annotations

import asyncio
import logging

from app.budget.decision import SummaryFailure, SummaryWork
from app.budget.summary import SummaryContent
from app.budget.tokens import TokenCounter
from app.metrics import Metrics
from app.summarize.base import Summarizer, SummaryRequest

logger = logging.getLogger(__name__)


async def run_summarizer(
    summarizer: Summarizer,
    work: SummaryWork,
    *,
    counter: TokenCounter,
    metrics: Metrics,
    wait_seconds: float | None = None,
) -> SummaryContent | SummaryFailure:
    """The summary ``work`` asks for, or how the summariser failed. A failure is never
    raised: seed 003 §9 answers it with deterministic truncation, never with lost history
    or an error text stored as a summary."""
    request = SummaryRequest(
        previous=work.previous,
        messages=work.sources,
        target_tokens=work.target_tokens,
        counter=counter,
    )
    try:
        return await asyncio.wait_for(summarizer.summarize(request), timeout=wait_seconds)
    except TimeoutError:
        metrics.summarizer_outcomes.labels("timeout").inc()
        logger.warning("summariser %s timed out after %s s", summarizer.name, wait_seconds)
        return "timeout"
    except Exception:
        logger.warning("summariser %s failed", summarizer.name, exc_info=True)
        return "error"
