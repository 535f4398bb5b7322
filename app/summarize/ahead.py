"""The turn-count fold, made between turns.

Every ``mandatory_summary_turns`` turns, the turn start folds the turns that left the protected
window into the summary (PRODUCT.md, the policy, 2). With the built-in extractive summariser
that fold is CPU on the turn start (the previous summary's hundreds of items weighed with the
new messages, the new summary counted), one turn in nine: the tail of the turn start.

Its inputs are known a turn earlier: the previous summary, and the messages that will have left
the window, all of completed turns. So the turn start before it works out what the next one
will fold (:func:`app.budget.decision.next_turn_fold`), that turn's completion starts the fold
in a worker thread, and the turn start that crosses the count takes the result, provided it
asks for exactly that work: the same previous summary, the same messages with the same text,
the same target and the same way of counting. Anything else (a session edited in between, an
erasure, a turn start on another worker, a restart) folds on the turn start as before. The
summariser is deterministic, so the summary is the one the turn start would have made, on the
turn the policy says; only where its CPU is spent moves. The audit row tells which
(``block_telemetry.summary_made``).

Taking the summary in is made cheap the same way: the fold also counts the new summary and the
blocks it will be shown in (the runtime's fixed-cost cache), and encodes its items as its row
stores them, so that turn neither counts nor encodes them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from app.budget.decision import SourceText, SummaryWork
from app.budget.summary import SummaryContent
from app.budget.tokens import TokenCounter
from app.models.base import utcnow
from app.offload import off_the_loop
from app.summarize.base import SummaryRequest
from app.summarize.extractive import summarize_extractive

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FoldKey:
    """Everything a fold depends on besides the summariser itself."""

    session_id: str
    #: The previous summary's id, or None for a session's first summary.
    previous_id: int | None
    sources: tuple[SourceText, ...]
    target_tokens: int
    counter: str


@dataclass(frozen=True)
class FoldMade:
    """A fold made between turns, as the turn start that takes it reports it."""

    content: SummaryContent
    #: When the fold finished.
    made_at: datetime
    #: The fold's own time in its worker thread, and how long the turn start waited for it.
    fold_ms: float
    waited_ms: float
    #: What ``ready`` made of the summary (its items as its row stores them).
    items_json: Mapping[str, str]


#: A fold's summary, when it finished, its time, and what ``ready`` made of it.
_Result = tuple[SummaryContent, datetime, float, Mapping[str, str]]


@dataclass
class _Fold:
    key: FoldKey
    work: SummaryWork
    counter: TokenCounter
    #: Counts the blocks a summary is shown in (filling the runtime's fixed-cost cache) and
    #: encodes its items for its row.
    ready: Callable[[SummaryContent], Mapping[str, str]]
    task: asyncio.Task[_Result | None] | None = None


class FoldsAhead:
    """Folds prepared by one turn start for the next, at most one per session."""

    def __init__(self, max_sessions: int = 256) -> None:
        self.max_sessions = max_sessions
        # Used on the event loop only (a fold's thread never touches it).
        self._folds: OrderedDict[str, _Fold] = OrderedDict()

    def prepare(
        self,
        key: FoldKey,
        work: SummaryWork,
        *,
        counter: TokenCounter,
        ready: Callable[[SummaryContent], Mapping[str, str]],
    ) -> None:
        """Remember the fold the session's next turn start will ask for (not started yet:
        the turn that prepares it is still running)."""
        self._discard(key.session_id)
        self._folds[key.session_id] = _Fold(key, work, counter, ready)
        while len(self._folds) > self.max_sessions:
            _, oldest = self._folds.popitem(last=False)
            self._cancel(oldest)

    def holds(self, session_id: str) -> bool:
        """Whether a fold is prepared (or made) for the session's next turn start."""
        return session_id in self._folds

    def start(self, session_id: str) -> None:
        """Start the session's prepared fold, if any, in a worker thread (its turn is over:
        the CPU goes between turns)."""
        fold = self._folds.get(session_id)
        if fold is None or fold.task is not None:
            return
        fold.task = asyncio.get_running_loop().create_task(
            self._run(fold), name=f"fold-ahead-{session_id}"
        )

    async def take(self, key: FoldKey) -> FoldMade | None:
        """The fold made for exactly ``key``, waiting for it if it is still running; None
        when there is none (the turn start folds as it always did)."""
        fold = self._folds.pop(key.session_id, None)
        if fold is None:
            return None
        if fold.key != key or fold.task is None or fold.task.cancelled():
            self._cancel(fold)
            return None
        waiting = time.perf_counter()
        made = await asyncio.shield(fold.task)
        if made is None:
            return None
        content, made_at, fold_ms, items_json = made
        waited_ms = (time.perf_counter() - waiting) * 1000
        return FoldMade(content, made_at, fold_ms, waited_ms, items_json)

    async def close(self) -> None:
        """Stop every fold under way (the app is shutting down)."""
        tasks = [fold.task for fold in self._folds.values() if fold.task is not None]
        self._folds.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def drop(self, session_id: str) -> None:
        """Forget the session's fold: its next turn start does not need it."""
        self._discard(session_id)

    def _discard(self, session_id: str) -> None:
        fold = self._folds.pop(session_id, None)
        if fold is not None:
            self._cancel(fold)

    @staticmethod
    def _cancel(fold: _Fold) -> None:
        if fold.task is not None and not fold.task.done():
            fold.task.cancel()

    async def _run(self, fold: _Fold) -> _Result | None:
        work = fold.work
        request = SummaryRequest(
            previous=work.previous,
            messages=work.sources,
            target_tokens=work.target_tokens,
            counter=fold.counter,
        )

        def made() -> tuple[SummaryContent, float, Mapping[str, str]]:
            began = time.perf_counter()
            content = summarize_extractive(request)
            # Counted here, remembered by the content and the fixed-cost cache: the turn
            # start that takes this summary in counts nothing again.
            content.tokens(fold.counter)
            items_json = fold.ready(content)
            return content, (time.perf_counter() - began) * 1000, items_json

        try:
            content, fold_ms, items_json = await off_the_loop(made)
        except Exception:
            # The turn start folds itself and meets the same failure, handled there (seed
            # 003 §9: fall back to truncation, count it).
            logger.warning(
                "folding ahead for session %s failed", fold.key.session_id, exc_info=True
            )
            return None
        return content, utcnow(), fold_ms, items_json
