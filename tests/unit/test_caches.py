"""The in-process caches: bounded, and expiring when they should."""

from __future__ import annotations

from app.caches import LRU, TTLCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lru_forgets_the_least_recently_used_entry_first() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)

    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_ttl_entries_expire_and_can_be_dropped_early() -> None:
    clock = Clock()
    cache: TTLCache[str, float] = TTLCache(1.0, clock=clock)
    cache.put("ratio", 1.2)
    cache.put("other", 0.9)

    clock.now += 0.5
    assert cache.get("ratio") == 1.2
    cache.discard("other")
    assert cache.get("other") is None
    clock.now += 0.5
    assert cache.get("ratio") is None


def test_a_ttl_of_zero_caches_nothing() -> None:
    cache: TTLCache[str, float] = TTLCache(0)
    cache.put("ratio", 1.2)

    assert cache.get("ratio") is None
