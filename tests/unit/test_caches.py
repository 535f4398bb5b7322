"""The in-process caches: bounded, and expiring when they should."""

from __future__ import annotations

import asyncio

import pytest

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


class Database:
    """A read that waits to be let go, counting how often it is sent."""

    def __init__(self, value: float = 1.2) -> None:
        self.value = value
        self.reads = 0
        self.fail = False
        self.release = asyncio.Event()

    async def read(self) -> float:
        self.reads += 1
        await self.release.wait()
        if self.fail:
            self.fail = False
            raise ConnectionError("the database went away")
        return self.value


async def test_requests_that_miss_together_share_one_read() -> None:
    cache: TTLCache[str, float] = TTLCache(1.0, clock=Clock())
    database = Database()

    waiting = [asyncio.create_task(cache.get_or_read("ratio", database.read)) for _ in range(5)]
    await asyncio.sleep(0)
    database.release.set()

    assert await asyncio.gather(*waiting) == [1.2] * 5
    assert database.reads == 1
    assert cache.get("ratio") == 1.2


async def test_a_failed_shared_read_is_the_failure_of_its_own_request_only() -> None:
    cache: TTLCache[str, float] = TTLCache(1.0, clock=Clock())
    database = Database()
    database.fail = True

    first = asyncio.create_task(cache.get_or_read("ratio", database.read))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get_or_read("ratio", database.read))
    await asyncio.sleep(0)
    database.release.set()

    with pytest.raises(ConnectionError):
        await first
    assert await second == 1.2  # read again, for itself
    assert database.reads == 2


async def test_a_waiting_request_cancelled_leaves_the_shared_read_alone() -> None:
    cache: TTLCache[str, float] = TTLCache(1.0, clock=Clock())
    database = Database()

    first = asyncio.create_task(cache.get_or_read("ratio", database.read))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get_or_read("ratio", database.read))
    await asyncio.sleep(0)
    second.cancel()
    database.release.set()

    assert await first == 1.2
    with pytest.raises(asyncio.CancelledError):
        await second
    assert database.reads == 1


async def test_no_seconds_means_every_request_reads() -> None:
    cache: TTLCache[str, float] = TTLCache(0)
    database = Database()
    database.release.set()

    waiting = [asyncio.create_task(cache.get_or_read("ratio", database.read)) for _ in range(3)]

    assert await asyncio.gather(*waiting) == [1.2] * 3
    assert database.reads == 3


async def test_a_request_after_a_discard_never_takes_a_read_begun_before_it() -> None:
    """A ratio just learnt discards the kept one: a read already under way may hold the old
    value, so a later request reads for itself and the old value is not kept."""
    cache: TTLCache[str, float] = TTLCache(1.0, clock=Clock())
    stale, fresh = Database(1.2), Database(1.5)

    before = asyncio.create_task(cache.get_or_read("ratio", stale.read))
    await asyncio.sleep(0)
    cache.discard("ratio")  # learn() stored 1.5
    after = asyncio.create_task(cache.get_or_read("ratio", fresh.read))
    await asyncio.sleep(0)
    stale.release.set()
    fresh.release.set()

    assert await before == 1.2
    assert await after == 1.5
    assert (stale.reads, fresh.reads) == (1, 1)
    assert cache.get("ratio") == 1.5
