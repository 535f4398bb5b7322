"""What the app builds once at start-up and every request shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from app.auth.cache import ApiKeyCache
from app.budget.tokens import TokenizerRegistry
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


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
