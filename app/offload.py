"""CPU-heavy request work (trimming a long message list) runs in a worker thread, a few at
a time, so that other requests on the worker keep being served meanwhile.

Work done for no request (a fold made between turns, ``app.summarize.ahead``) runs apart, in a
thread of its own, one piece at a time: it never takes the slots a request waits for, and
however many sessions complete at once, it holds one core at most."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
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


#: The one thread work between turns runs in; what waits for it is queued, not started.
_between_turns = ThreadPoolExecutor(max_workers=1, thread_name_prefix="between-turns")


async def between_turns(work: Callable[[], Result]) -> Result:
    """``work()`` in the thread kept for work between turns, after what was queued before it.

    Cancelled while it waits, it never runs; cancelled while it runs, the caller goes on at
    once and its result is dropped (a thread cannot be stopped: it finishes, and what was
    queued after it waits for that, so abandoned work never piles up on the cores)."""
    return await asyncio.wrap_future(_between_turns.submit(work))
