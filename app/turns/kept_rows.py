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

Bounded: at most ``max_bytes`` over all sessions, each row weighed by its text (content,
tool calls, reasoning) plus what a kept row costs besides (``ROW_BYTES``); the sessions used
least recently go first. Kept only once the transaction that wrote them committed
(``app.db.after_commit``): a write rolled back could have left ids that SQLite hands out
again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from app.budget.decision import Message
from app.db import dump_json
from app.turns.repository import StoredRow

#: What a kept row costs besides its text (the decoded row, its message with its chat form
#: and history entry, the maps' entries, its calls' ids): a 1,033-row open turn of
#: bench/neighbours.py's 128-call steps, ~250 characters of text a row, held 1.8-1.9 MiB
#: (tracemalloc; docs/benchmarks.md).
ROW_BYTES = 1_600
#: Kept over all sessions by default.
DEFAULT_MAX_BYTES = 64 * 2**20


def row_call_ids(row: StoredRow) -> list[str]:
    """The ids of a row's tool calls, as a step's calls are compared with them."""
    return [str(call.get("id")) for call in row.tool_calls or () if isinstance(call, Mapping)]


def row_bytes(row: StoredRow) -> int:
    """A kept row's weight: its text (a character counted as a byte) and ``ROW_BYTES``."""
    size = ROW_BYTES + len(row.reasoning_content or "")
    content = row.content
    if type(content) is str:
        size += len(content)
    elif content is not None:
        size += len(dump_json(content))
    if row.tool_calls:
        size += len(dump_json(row.tool_calls))
    return size


@dataclass(frozen=True)
class KeptRows:
    """A session's active rows as of its last assembly on this worker."""

    #: The session's ``created_at``: a session deleted (on another worker) and created again
    #: with the same id can hand out the same ids, seqs and roles on SQLite; its rows are not
    #: these.
    born: datetime
    #: Every row with a seq up to this one that was active then is kept here.
    known_seq: int
    rows: Mapping[int, StoredRow]
    #: The core's message made of each row, by id (its count is the row's at the time).
    messages: Mapping[int, Message]
    #: Each row's weight (``row_bytes``), by id, and their sum.
    sizes: Mapping[int, int]
    size: int
    #: The id of every tool call of the kept rows, with the id of the row that made it: a
    #: step's new calls are checked against these (a call id names one call of the active
    #: history) without walking every call of a long open turn.
    call_ids: Mapping[str, int] = field(default_factory=dict)


class KeptRowsCache:
    """Sessions' kept rows by (tenant, session), least recently used evicted first."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], KeptRows] = OrderedDict()
        self._bytes = 0
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
                self._bytes -= previous.size
            if kept.size > self.max_bytes:
                return
            self._entries[key] = kept
            self._bytes += kept.size
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.size

    def discard(self, tenant_id: str, session_id: str) -> None:
        with self._lock:
            previous = self._entries.pop((tenant_id, session_id), None)
            if previous is not None:
                self._bytes -= previous.size

    @property
    def bytes(self) -> int:
        """What the kept rows weigh over all sessions (``row_bytes``)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
