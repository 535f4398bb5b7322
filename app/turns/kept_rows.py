"""A session's active messages kept by the worker between its assemblies.

Every assembly reads its session's active messages; a long open turn holds thousands of
them, and decoding each row (its JSON columns, the core's ``Message``) on every step made a
step's cost grow with the turn. A message's content never changes once stored (only its
state, cached count and summary id do), so this worker keeps the decoded rows of the last
assembly it committed, and the next snapshot read leaves out the content of every row up to
the last seq it knows: the database still says which rows are active and with what count,
and sends in full only the rows written since (by this worker's completion, or by another
worker). A row the read names that is not kept (it was not active then) makes the read
happen again in full.

Bounded: at most ``max_rows`` rows over all sessions; the sessions used least recently go
first. Kept only once the transaction that wrote them committed (``after_commit``): a write
rolled back could have left ids that SQLite hands out again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from app.budget.decision import Message
from app.turns.repository import StoredRow

#: Rows kept over all sessions by default: ~1.6 KiB each for the 128-call steps of
#: bench/neighbours.py (a 1,000-call open turn: ~3 MiB), see docs/benchmarks.md.
DEFAULT_MAX_ROWS = 50_000


@dataclass(frozen=True)
class KeptRows:
    """A session's active rows as of its last assembly on this worker."""

    #: Every row with a seq up to this one that was active then is kept here.
    known_seq: int
    rows: Mapping[int, StoredRow]
    #: The core's message made of each row, by id (its count is the row's at the time).
    messages: Mapping[int, Message]


class KeptRowsCache:
    """Sessions' kept rows by (tenant, session), least recently used evicted first."""

    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.max_rows = max_rows
        self._entries: OrderedDict[tuple[str, str], KeptRows] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()

    def get(self, tenant_id: str, session_id: str) -> KeptRows | None:
        with self._lock:
            kept = self._entries.get((tenant_id, session_id))
            if kept is not None:
                self._entries.move_to_end((tenant_id, session_id))
            return kept

    def put(self, tenant_id: str, session_id: str, kept: KeptRows) -> None:
        key = (tenant_id, session_id)
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._rows -= len(previous.rows)
            if not self.max_rows or len(kept.rows) > self.max_rows:
                return
            self._entries[key] = kept
            self._rows += len(kept.rows)
            while self._rows > self.max_rows:
                _, evicted = self._entries.popitem(last=False)
                self._rows -= len(evicted.rows)

    def discard(self, tenant_id: str, session_id: str) -> None:
        with self._lock:
            previous = self._entries.pop((tenant_id, session_id), None)
            if previous is not None:
                self._rows -= len(previous.rows)

    @property
    def rows(self) -> int:
        """Rows kept over all sessions."""
        return self._rows

    def __len__(self) -> int:
        return len(self._entries)
