"""Small in-process caches for what every assembly would otherwise read from the database.

Each is safe by construction rather than by invalidation across processes: summaries never
change once written, and a calibration ratio is a slow-moving average that may be a second
old in another worker (this process drops its own entry the moment it learns).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from typing import Generic, TypeVar

from app.budget.summary import SummaryContent

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded map that forgets its least recently used entry first. Safe to share with
    worker threads (the stateless toolkit counts in one while turns count on the loop)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def discard(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class SummaryCache(LRU[tuple[int, datetime], SummaryContent]):
    """Summaries' parsed content by summary id and creation time: a summary row is never
    updated, so an entry is never stale. The time is part of the key because SQLite may give
    the id of a deleted row (an erased session's summary) to a new one."""

    def __init__(self, max_entries: int = 1024) -> None:
        super().__init__(max_entries)


class TTLCache(Generic[K, V]):
    """Entries that expire ``ttl_seconds`` after they were stored (0 turns the cache off)."""

    def __init__(
        self,
        ttl_seconds: float,
        *,
        max_entries: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._entries: LRU[K, tuple[float, V]] = LRU(max_entries)

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self.clock() >= expires:
            self._entries.discard(key)
            return None
        return value

    def put(self, key: K, value: V) -> None:
        if self.ttl_seconds > 0:
            self._entries.put(key, (self.clock() + self.ttl_seconds, value))

    def discard(self, key: K) -> None:
        self._entries.discard(key)

    def clear(self) -> None:
        self._entries.clear()
