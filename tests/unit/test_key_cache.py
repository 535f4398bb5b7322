"""The API-key cache: what it keeps, for how long, and what makes it forget (a clock of the
test's own: nothing here sleeps)."""

from __future__ import annotations

import asyncio

from app.auth.cache import ApiKeyCache, keys_changed
from app.auth.service import OPEN_CALLER, Caller


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Database:
    """Answers as the database would, counting how often it is asked."""

    def __init__(self, caller: Caller | None = OPEN_CALLER, *, active: bool = False) -> None:
        self.caller = caller
        self.active = active
        self.reads = 0

    async def find(self) -> Caller | None:
        self.reads += 1
        return self.caller

    async def any_active(self) -> bool:
        self.reads += 1
        return self.active


async def test_a_key_is_read_once_while_trusted_and_again_after() -> None:
    clock, database = Clock(), Database()
    cache = ApiKeyCache(ttl_seconds=2, clock=clock)

    first = await cache.caller("ctxd_a_secret", database.find)
    clock.now += 1.9
    again = await cache.caller("ctxd_a_secret", database.find)
    database.caller = None  # revoked by another process
    clock.now += 0.2
    after = await cache.caller("ctxd_a_secret", database.find)

    assert (first, again, after) == (OPEN_CALLER, OPEN_CALLER, None)
    assert database.reads == 2


async def test_each_key_is_kept_apart() -> None:
    cache = ApiKeyCache(ttl_seconds=2, clock=Clock())
    acme, globex = Database(Caller("acme", OPEN_CALLER.scopes, "a")), Database(None)

    assert await cache.caller("ctxd_a_secret", acme.find) == acme.caller
    assert await cache.caller("ctxd_b_secret", globex.find) is None
    assert await cache.caller("ctxd_a_secret", globex.find) == acme.caller


async def test_whether_any_key_is_active_is_kept_too() -> None:
    clock, database = Clock(), Database()
    cache = ApiKeyCache(ttl_seconds=1, clock=clock)

    answers = [await cache.any_active(database.any_active) for _ in range(3)]
    database.active = True
    clock.now += 1
    answers.append(await cache.any_active(database.any_active))

    assert answers == [False, False, False, True]
    assert database.reads == 2


async def test_a_key_change_in_this_process_empties_the_cache_at_once() -> None:
    database = Database()
    cache = ApiKeyCache(ttl_seconds=3600, clock=Clock())
    await cache.caller("ctxd_a_secret", database.find)
    await cache.any_active(database.any_active)

    database.caller, database.active = None, True
    keys_changed()

    assert await cache.caller("ctxd_a_secret", database.find) is None
    assert await cache.any_active(database.any_active) is True


async def test_what_was_read_while_keys_changed_is_not_kept() -> None:
    database = Database()
    cache = ApiKeyCache(ttl_seconds=3600, clock=Clock())
    reading, changed = asyncio.Event(), asyncio.Event()

    async def slow_read() -> Caller | None:
        reading.set()
        await changed.wait()
        return await database.find()  # read before the change was committed, say

    read = asyncio.create_task(cache.caller("ctxd_a_secret", slow_read))
    await reading.wait()
    keys_changed()
    changed.set()
    await read
    database.caller = None

    assert await cache.caller("ctxd_a_secret", database.find) is None


async def test_requests_that_miss_together_share_one_read() -> None:
    database = Database()
    cache = ApiKeyCache(ttl_seconds=1, clock=Clock())
    release = asyncio.Event()

    async def slow_read() -> bool:
        await release.wait()
        return await database.any_active()

    waiting = [asyncio.create_task(cache.any_active(slow_read)) for _ in range(5)]
    await asyncio.sleep(0)
    release.set()

    assert await asyncio.gather(*waiting) == [False] * 5
    assert database.reads == 1


async def test_a_request_after_a_key_change_does_not_take_a_read_begun_before_it() -> None:
    database = Database()
    cache = ApiKeyCache(ttl_seconds=3600, clock=Clock())
    release = asyncio.Event()

    async def slow_read() -> Caller | None:
        caller = database.caller  # read before the change was committed
        await release.wait()
        database.reads += 1
        return caller

    before = asyncio.create_task(cache.caller("ctxd_a_secret", slow_read))
    await asyncio.sleep(0)
    database.caller = None  # revoked
    keys_changed()
    after = asyncio.create_task(cache.caller("ctxd_a_secret", slow_read))
    await asyncio.sleep(0)
    release.set()

    assert (await before, await after) == (OPEN_CALLER, None)
    assert database.reads == 2


async def test_no_seconds_means_no_cache() -> None:
    database = Database()
    cache = ApiKeyCache(ttl_seconds=0, clock=Clock())

    for _ in range(3):
        await cache.caller("ctxd_a_secret", database.find)

    assert database.reads == 3
