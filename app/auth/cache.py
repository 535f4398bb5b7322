"""What this process last read about API keys, kept for a few seconds so that a request does
not query the database to learn who is calling.

A key created or revoked through :class:`app.auth.service.KeyService` in this process is seen
at once: its commit empties every cache of the process. One created or revoked by another
process (``contextd keys`` on the command line, another worker) is seen once the entries
read before it expire, ``ttl_seconds`` at most.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from app.auth.callers import Caller
from app.caches import Loads, TTLCache

V = TypeVar("V")

#: Entries kept per cache at most, the least recently used going first: a flood of made-up keys
#: does not grow it, each such key costing one query, as it would without a cache.
MAX_ENTRIES = 10_000

# Key changes committed in this process so far; a cache that last saw another number empties
# itself. A counter rather than a list of caches: nothing has to register or unregister.
_changes = 0


def keys_changed() -> None:
    """Tell every cache of this process that the API keys changed (called on commit)."""
    global _changes
    _changes += 1


class _Expiring(Generic[V]):
    """Values loaded from the database, each trusted for ``ttl_seconds`` after its load, all
    forgotten when this process commits a key change."""

    def __init__(self, ttl_seconds: float, clock: Callable[[], float]) -> None:
        # Values are boxed: None ("no such key") is a value worth keeping.
        self._entries: TTLCache[str, tuple[V]] = TTLCache(
            ttl_seconds, max_entries=MAX_ENTRIES, clock=clock
        )
        self._changes_seen = _changes
        # Keyed by the changes seen when the read started too: a request that comes after a
        # key change never takes a read begun before it.
        self._loads: Loads[tuple[str, int], V] | None = Loads() if ttl_seconds > 0 else None

    async def get(self, key: str, load: Callable[[], Awaitable[V]]) -> V:
        if self._changes_seen != _changes:
            self._entries.clear()
            self._changes_seen = _changes
        kept = self._entries.get(key)
        if kept is not None:
            return kept[0]
        changes_before = _changes
        if self._loads is None:  # no cache: every request reads for itself
            value = await load()
        else:
            value = await self._loads.load((key, changes_before), load)
        # A key change committed while this was read may not be in it: not kept.
        if changes_before == _changes:
            self._entries.put(key, (value,))
        return value


class ApiKeyCache:
    """Callers by key, and whether any key is active (the service runs open while none is)."""

    def __init__(self, *, ttl_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._callers: _Expiring[Caller | None] = _Expiring(ttl_seconds, clock)
        self._any_active: _Expiring[bool] = _Expiring(ttl_seconds, clock)

    async def caller(self, key: str, load: Callable[[], Awaitable[Caller | None]]) -> Caller | None:
        """The caller ``key`` stands for (None: unknown, malformed or revoked), from ``load``
        when not known or no longer trusted. Kept by a hash: no secret stays in memory."""
        return await self._callers.get(hashlib.sha256(key.encode()).hexdigest(), load)

    async def any_active(self, load: Callable[[], Awaitable[bool]]) -> bool:
        """Whether any key is active, from ``load`` when not known or no longer trusted."""
        return await self._any_active.get("", load)
