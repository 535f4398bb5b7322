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

What a worker holds is bounded: a fold waiting or under way holds its messages' text, a made
one only its summary; past ``MAX_CHARS_HELD`` characters in all (or ``max_sessions`` folds),
the oldest gives way, and a fold whose messages come to more than ``MAX_FOLD_SOURCE_CHARS`` is
not prepared at all (its turn start folds itself). Folds run one at a time, in a thread of
their own (:func:`app.offload.between_turns`): a turn start that finds its fold still waiting
behind others' folds itself rather than wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.budget.decision import SourceText, SummaryWork
from app.budget.summary import SummaryContent
from app.budget.tokens import TokenCounter
from app.caches import LRU
from app.models.base import utcnow
from app.offload import between_turns
from app.summarize.base import SummaryRequest
from app.summarize.extractive import read_items, summarize_extractive

logger = logging.getLogger(__name__)

#: Characters of text every fold of a worker holds at most, all sessions together (the text of
#: the messages a fold reads until it is made, then its summary's): some tens of megabytes.
MAX_CHARS_HELD = 16_000_000
#: A fold reading more characters than this is not made ahead: holding that text between turns
#: costs more memory than the turn start's CPU is worth.
MAX_FOLD_SOURCE_CHARS = 1_000_000

#: Whose fold: session ids are unique within a tenant only.
SessionKey = tuple[str, str]


def sources_digest(sources: Sequence[SourceText]) -> bytes:
    """What a fold's messages say (ids, roles, text), in a few bytes: a key holds no text."""
    digest = hashlib.blake2b(digest_size=32)
    for source in sources:
        text = source.text.encode("utf-8", "surrogatepass")
        digest.update(f"{source.message_id}\0{source.role}\0{len(text)}\0".encode())
        digest.update(text)
    return digest.digest()


@dataclass(frozen=True)
class FoldKey:
    """Everything a fold depends on besides the summariser itself."""

    tenant_id: str
    session_id: str
    #: The previous summary's id, or None for a session's first summary.
    previous_id: int | None
    #: The messages it folds in (``sources_digest``).
    sources: bytes
    target_tokens: int
    counter: str

    @classmethod
    def of(
        cls,
        *,
        tenant_id: str,
        session_id: str,
        previous_id: int | None,
        sources: Sequence[SourceText],
        target_tokens: int,
        counter: str,
    ) -> FoldKey:
        """The key of folding ``sources`` on top of the summary ``previous_id``."""
        return cls(
            tenant_id, session_id, previous_id, sources_digest(sources), target_tokens, counter
        )

    @property
    def session(self) -> SessionKey:
        return (self.tenant_id, self.session_id)


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
    #: What to fold; let go once the fold is made (its text is the bulk of what is held).
    work: SummaryWork | None
    counter: TokenCounter
    #: Counts the blocks a summary is shown in (filling the runtime's fixed-cost cache) and
    #: encodes its items for its row.
    ready: Callable[[SummaryContent], Mapping[str, str]]
    #: Characters held: the messages' text, then the summary's.
    chars: int
    task: asyncio.Task[_Result | None] | None = None
    #: Set by the fold's thread when it begins (until then it waits behind other folds).
    began: bool = False


def _source_chars(work: SummaryWork) -> int:
    return sum(len(source.text) for source in work.sources)


class FoldsAhead:
    """Folds prepared by one turn start for the next, at most one per session."""

    def __init__(
        self,
        max_sessions: int = 256,
        *,
        max_chars: int = MAX_CHARS_HELD,
        max_fold_chars: int = MAX_FOLD_SOURCE_CHARS,
    ) -> None:
        self.max_sessions = max_sessions
        self.max_chars = max_chars
        self.max_fold_chars = max_fold_chars
        # Used on the event loop only (a fold's thread never touches it).
        self._folds: OrderedDict[SessionKey, _Fold] = OrderedDict()
        self._chars = 0
        #: Work started in the thread between turns and not over, folds and summaries read
        #: ahead alike (one runs, the others wait for it).
        self._in_flight = 0
        #: Summaries being read ahead of their first fold (``read_ahead``).
        self._reading: set[asyncio.Task[None]] = set()
        #: Summaries to read ahead once their session's turn is over (``read_ahead``).
        self._to_read: OrderedDict[SessionKey, tuple[SummaryContent, TokenCounter]] = OrderedDict()
        #: Ids of the summaries this worker made: their items were read as they were folded.
        self._made_here: LRU[int, bool] = LRU(max_sessions)

    @property
    def chars_held(self) -> int:
        """Characters of text the folds hold (the bound is ``max_chars``)."""
        return self._chars

    def would_keep(self, work: SummaryWork) -> bool:
        """Whether a fold of ``work`` is made ahead (its messages are not too much text)."""
        return _source_chars(work) <= self.max_fold_chars

    def prepare(
        self,
        key: FoldKey,
        work: SummaryWork,
        *,
        counter: TokenCounter,
        ready: Callable[[SummaryContent], Mapping[str, str]],
    ) -> None:
        """Remember the fold the session's next turn start will ask for (not started yet:
        the turn that prepares it is still running). A fold of too much text is not kept."""
        self._discard(key.session)
        if not self.would_keep(work):
            return
        chars = _source_chars(work)
        self._folds[key.session] = _Fold(key, work, counter, ready, chars)
        self._chars += chars
        while len(self._folds) > self.max_sessions or self._chars > self.max_chars:
            _, oldest = self._folds.popitem(last=False)
            self._forget(oldest)

    def holds(self, tenant_id: str, session_id: str) -> bool:
        """Whether a fold is prepared (or made) for the session's next turn start."""
        return (tenant_id, session_id) in self._folds

    def start(self, tenant_id: str, session_id: str) -> None:
        """Start the session's prepared fold, if any, in the thread kept for work between
        turns (its turn is over: the CPU goes between turns)."""
        fold = self._folds.get((tenant_id, session_id))
        if fold is None or fold.task is not None:
            return
        fold.task = asyncio.get_running_loop().create_task(
            self._run(fold), name=f"fold-ahead-{session_id}"
        )
        self._in_flight += 1
        fold.task.add_done_callback(self._over)

    def _over(self, _: object) -> None:
        self._in_flight -= 1

    async def take(self, key: FoldKey) -> FoldMade | None:
        """The fold made for exactly ``key``, waiting for it if it is under way; None when
        there is none, or it still waits behind other sessions' folds (the turn start folds
        as it always did, sooner than the queue would)."""
        fold = self._folds.pop(key.session, None)
        if fold is None:
            return None
        if (
            fold.key != key
            or fold.task is None
            or fold.task.cancelled()
            or not (fold.began or fold.task.done() or self._in_flight == 1)
        ):
            self._forget(fold)
            return None
        self._chars -= fold.chars
        fold.chars = 0
        waiting = time.perf_counter()
        made = await asyncio.shield(fold.task)
        if made is None:
            return None
        content, made_at, fold_ms, items_json = made
        waited_ms = (time.perf_counter() - waiting) * 1000
        return FoldMade(content, made_at, fold_ms, waited_ms, items_json)

    def made_here(self, summary_id: int) -> None:
        """This worker folded the summary ``summary_id``: reading it ahead is of no use."""
        self._made_here.put(summary_id, True)

    def read_ahead(
        self,
        tenant_id: str,
        session_id: str,
        summary_id: int,
        content: SummaryContent,
        counter: TokenCounter,
    ) -> None:
        """Remember to read off a summary this worker has just loaded, and did not make, what
        a fold on top of it reads (:func:`app.summarize.extractive.read_items`), once the
        session's turn is over (``start_reading``): the session's next fold, made between
        turns or on a turn start, then reads only its new messages instead of every carried
        item on the request path."""
        if self._made_here.get(summary_id):
            return
        session = (tenant_id, session_id)
        self._to_read[session] = (content, counter)
        self._to_read.move_to_end(session)
        while len(self._to_read) > self.max_sessions:
            self._to_read.popitem(last=False)

    def start_reading(self, tenant_id: str, session_id: str) -> None:
        """Read the session's summary ahead of its fold, if one waits (its turn is over), in
        the thread kept for work between turns, before the fold ``start`` queues after it."""
        waiting = self._to_read.pop((tenant_id, session_id), None)
        if waiting is None:
            return
        task = asyncio.get_running_loop().create_task(
            self._read(*waiting), name=f"summary-read-ahead-{session_id}"
        )
        self._reading.add(task)
        task.add_done_callback(self._reading.discard)
        # A read queued in the thread delays the folds queued after it as much as a fold
        # does: a turn start whose fold waits behind it folds itself (``take``).
        self._in_flight += 1
        task.add_done_callback(self._over)

    async def _read(self, content: SummaryContent, counter: TokenCounter) -> None:
        try:
            await between_turns(lambda: read_items(content, counter))
        except Exception:
            # Only a cost moves: the fold reads the items itself and meets any failure there.
            logger.warning("reading a summary ahead of its fold failed", exc_info=True)

    async def settled(self) -> None:
        """Wait for the summaries being read ahead (tests, and shutdown)."""
        while self._reading:
            await asyncio.gather(*self._reading, return_exceptions=True)

    async def close(self) -> None:
        """Stop every fold under way (the app is shutting down)."""
        self._to_read.clear()
        for reading in list(self._reading):
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
        tasks = [fold.task for fold in self._folds.values() if fold.task is not None]
        self._folds.clear()
        self._chars = 0
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def drop(self, tenant_id: str, session_id: str) -> None:
        """Forget the session's fold: its next turn start does not need it."""
        self._discard((tenant_id, session_id))

    def erase(self, tenant_id: str, session_id: str) -> None:
        """Forget all that is held of an erased session: its fold, and its summary waiting to
        be read ahead."""
        self._discard((tenant_id, session_id))
        self._to_read.pop((tenant_id, session_id), None)

    def _discard(self, session: SessionKey) -> None:
        fold = self._folds.pop(session, None)
        if fold is not None:
            self._forget(fold)

    def _forget(self, fold: _Fold) -> None:
        """Stop ``fold`` (taken out of ``_folds``) and stop counting what it holds."""
        self._chars -= fold.chars
        fold.chars = 0
        fold.work = None
        if fold.task is not None and not fold.task.done():
            fold.task.cancel()

    def _done(self, fold: _Fold, items_json: Mapping[str, str]) -> None:
        """``fold`` is over: it holds its summary now (``items_json``), no longer its
        messages."""
        fold.work = None
        if self._folds.get(fold.key.session) is fold:
            chars = sum(len(text) for text in items_json.values())
            self._chars += chars - fold.chars
            fold.chars = chars

    async def _run(self, fold: _Fold) -> _Result | None:
        work = fold.work
        assert work is not None
        request = SummaryRequest(
            previous=work.previous,
            messages=work.sources,
            target_tokens=work.target_tokens,
            counter=fold.counter,
        )

        def made() -> tuple[SummaryContent, float, Mapping[str, str]]:
            fold.began = True
            began = time.perf_counter()
            content = summarize_extractive(request)
            # Counted here, remembered by the content and the fixed-cost cache: the turn
            # start that takes this summary in counts nothing again.
            content.tokens(fold.counter)
            items_json = fold.ready(content)
            return content, (time.perf_counter() - began) * 1000, items_json

        try:
            content, fold_ms, items_json = await between_turns(made)
        except Exception:
            # The turn start folds itself and meets the same failure, handled there (seed
            # 003 §9: fall back to truncation, count it).
            logger.warning(
                "folding ahead for session %s failed", fold.key.session_id, exc_info=True
            )
            self._done(fold, {})
            return None
        self._done(fold, items_json)
        return content, utcnow(), fold_ms, items_json
