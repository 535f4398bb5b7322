"""What the app builds once at start-up and every request shares."""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.cache import ApiKeyCache
from app.budget.assembly import ContextBlocks, FixedCost, fixed_cost
from app.budget.recall import RecallHit
from app.budget.tokens import ChatRules, TokenCounter, rules_of
from app.caches import LRU, SummaryCache, TTLCache
from app.metrics import Metrics
from app.settings import Settings
from app.summarize import Summarizer
from app.summarize.ahead import FoldsAhead
from app.tokens.calibration import CalibrationService
from app.tokens.registry import TokenizerRegistry
from app.turns.kept_rows import KeptRowsCache

if TYPE_CHECKING:
    from app.embeddings.client import EmbeddingsClient


class FixedCostCache:
    """The fixed cost of a session's blocks (system layers, goal, memory, summary, tools):
    between two policy events every turn has the same blocks, so they are tokenised once.

    Keyed by everything that changes the count: the counter's name (encoding, scale, the
    tagged rules), its whole rule set (reply priming and tool rules are not in the name),
    and the blocks' text. The sections key as they are, a tuple of strings: encoding them as
    JSON on every turn cost more than a lookup should once a session's summary grows (a
    summary of 150 kB of facts at 10,000 stored messages); only the tool definitions, which
    are mappings, are encoded."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: LRU[tuple[str, ChatRules, tuple[tuple[str, str], ...], str], FixedCost] = (
            LRU(max_entries)
        )

    def __call__(self, counter: TokenCounter, blocks: ContextBlocks) -> FixedCost:
        key = (
            counter.name,
            rules_of(counter),
            tuple(blocks.sections()),
            json.dumps(blocks.tools, sort_keys=True) if blocks.tools else "",
        )
        known = self._entries.get(key)
        if known is None:
            known = fixed_cost(counter, blocks)
            self._entries.put(key, known)
        return FixedCost(known.tokens, dict(known.blocks))


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
    #: Fixed costs of blocks by counter and text (see ``FixedCostCache``).
    fixed_costs: FixedCostCache = field(default_factory=FixedCostCache)
    #: Recall hits of a turn start by what they depend on, and the messages a recall block
    #: shows by its fingerprint entry, for the turn's steps (see ``TurnService._recall``).
    recalls: LRU[tuple[object, ...], tuple[RecallHit, ...]] = field(
        default_factory=lambda: LRU(1024)
    )
    #: Capped tool results already cut (app.budget.views.CapMemo): each is at most the cap
    #: (a share of the window), so this holds at most this many windows' shares.
    capped_results: LRU[Hashable, tuple[Any, int, int]] = field(default_factory=lambda: LRU(128))
    #: Turn-count folds made between turns, by session (see ``app.summarize.ahead``).
    folds_ahead: FoldsAhead = field(default_factory=FoldsAhead)
    #: Sessions' active rows as this worker's last assembly left them (app.turns.kept_rows).
    kept_rows: KeptRowsCache = field(default_factory=KeptRowsCache)
    #: The embeddings API, when configured (``Settings.embeds``); None: full text only.
    embedder: EmbeddingsClient | None = None

    def calibration(self, db: AsyncSession) -> CalibrationService:
        """Calibration for a request's unit of work, with this worker's ratio cache."""
        return CalibrationService(
            db,
            settings=self.settings,
            tokenizers=self.tokenizers,
            metrics=self.metrics,
            cache=self.calibrations,
        )


async def get_runtime(request: Request) -> Runtime:
    # Dependencies are ``async def`` throughout: FastAPI runs a plain ``def`` dependency in a
    # worker thread, a hop that costs more than the work it does.
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
