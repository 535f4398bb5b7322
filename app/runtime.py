"""What the app builds once at start-up and every request shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from app.auth.cache import ApiKeyCache
from app.budget.tokens import TokenizerRegistry
from app.caches import SummaryCache, TTLCache
from app.metrics import Metrics
from app.settings import Settings
from app.summarize import Summarizer


@dataclass
class Runtime:
    settings: Settings
    tokenizers: TokenizerRegistry
    summarizer: Summarizer
    metrics: Metrics
    api_keys: ApiKeyCache
    #: Parsed summaries by id and creation time (they never change once written).
    summaries: SummaryCache = field(default_factory=SummaryCache)
    #: Calibration ratios by (tenant, model key, estimator), for ``calibration_cache_seconds``.
    calibrations: TTLCache[tuple[str, str, str], float] = field(default_factory=lambda: TTLCache(0))


async def get_runtime(request: Request) -> Runtime:
    # Dependencies are ``async def`` throughout: FastAPI runs a plain ``def`` dependency in a
    # worker thread, a hop that costs more than the work it does.
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
