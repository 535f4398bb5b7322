"""CPU-heavy request work (trimming a long message list) runs in a worker thread, a few at
a time, so that other requests on the worker keep being served meanwhile."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

Result = TypeVar("Result")

#: Heavy requests at once per event loop; more wait their turn without holding the loop.
HEAVY_WORK_AT_ONCE = 2

# A limiter belongs to the event loop it was made in (tests run one loop each).
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


def _limiter() -> CapacityLimiter:
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = CapacityLimiter(HEAVY_WORK_AT_ONCE)
    return limiter


async def off_the_loop(work: Callable[[], Result]) -> Result:
    """``work()`` in a worker thread, at most ``HEAVY_WORK_AT_ONCE`` at a time."""
    return await anyio.to_thread.run_sync(work, limiter=_limiter())
