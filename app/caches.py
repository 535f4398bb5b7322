"""Small in-process caches for what every assembly would otherwise read from the database.

Each is safe by construction rather than by invalidation across processes: summaries never
change once written, and a calibration ratio is a slow-moving average that may be a second
old in another worker (this process drops its own entry the moment it learns).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
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


class Loads(Generic[K, V]):
    """Reads under way on the event loop, by key: a request that needs what another one is
    already reading waits for that read instead of sending the same query.

    Without it, every request that arrives between an entry's expiry and the end of the read
    that refreshes it sends the read again: under load that was most requests of the
    second, each paying an ORM query (bench/wrk_load.py's profile showed the API-key check
    at 6% of a worker's busy time). A read that fails (or whose request is cancelled) is
    nobody else's error: each waiting request then reads for itself."""

    def __init__(self) -> None:
        #: The value boxed, or None when the read failed.
        self._running: dict[K, asyncio.Future[tuple[V] | None]] = {}

    async def load(self, key: K, read: Callable[[], Awaitable[V]]) -> V:
        running = self._running.get(key)
        if running is not None:
            # Shielded: a waiter's cancellation must not cancel the read it shares.
            shared = await asyncio.shield(running)
            if shared is not None:
                return shared[0]
            return await read()
        future: asyncio.Future[tuple[V] | None] = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            value = await read()
        except BaseException:
            future.set_result(None)
            raise
        else:
            future.set_result((value,))
        finally:
            del self._running[key]
        return value


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
        # Loads are keyed by the generation they began in: a discard or a clear starts a new
        # one, so a request that comes after it never takes (nor keeps) a read begun before.
        self._loads: Loads[tuple[K, int], V] = Loads()
        self._generation = 0

    def get(self, key: K) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self.clock() >= expires:
            self._entries.discard(key)
            return None
        return value

    async def get_or_read(self, key: K, read: Callable[[], Awaitable[V]]) -> V:
        """The entry, or what ``read`` returns, kept; a read of the key already under way is
        waited for rather than sent again (see :class:`Loads`). With no seconds to keep
        anything, every call reads."""
        value = self.get(key)
        if value is not None:
            return value
        if self.ttl_seconds <= 0:
            return await read()
        generation = self._generation
        value = await self._loads.load((key, generation), read)
        if generation == self._generation:
            self.put(key, value)
        return value

    def put(self, key: K, value: V) -> None:
        if self.ttl_seconds > 0:
            self._entries.put(key, (self.clock() + self.ttl_seconds, value))

    def discard(self, key: K) -> None:
        self._generation += 1
        self._entries.discard(key)

    def clear(self) -> None:
        self._generation += 1
        self._entries.clear()
