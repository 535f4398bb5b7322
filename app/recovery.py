"""How long the database takes to come back, as this process sees it: what a 503
``database_unavailable`` tells the client to wait (``Retry-After``).

A restarted or failed-over Postgres usually answers again within tens of milliseconds, so a
fixed wait of several seconds holds clients back for nothing, while a long outage is better
met by waits that grow with it. The wait is therefore what recovery has taken here: the
median of the last outages while the current one is younger than that, else as long again as
it has lasted so far (an outage that has outlasted the usual one is a long one). It is given
in whole seconds, rounded up, between ``RETRY_AFTER_MIN_SECONDS`` and
``RETRY_AFTER_MAX_SECONDS``: ``Retry-After`` is either an HTTP date or ``delay-seconds``, a
non-negative decimal integer (RFC 9110 §10.2.3), and 0 would invite a retry at once, before
even a quick restart is over.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from collections.abc import Callable

#: The shortest wait said: a quick recovery (tens of milliseconds) rounds up to it.
RETRY_AFTER_MIN_SECONDS = 1
#: The longest: a client told to wait longer may as well come back and ask again.
RETRY_AFTER_MAX_SECONDS = 30
#: Outages whose length the wait is taken from, newest kept.
OUTAGES_REMEMBERED = 8


class DatabaseRecovery:
    """The outages this process has seen: when the current one began, and how long the last
    few lasted (from the first failed request to the first one that reached the database)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._down_since: float | None = None
        self._lasted: deque[float] = deque(maxlen=OUTAGES_REMEMBERED)

    def unreachable(self) -> None:
        """A request could not reach the database."""
        if self._down_since is None:
            self._down_since = self._clock()

    def reachable(self) -> None:
        """A request reached the database: an outage under way is over."""
        if self._down_since is not None:
            self._lasted.append(self._clock() - self._down_since)
            self._down_since = None

    def retry_after(self) -> int:
        """Seconds to wait before trying again (whole, at least one)."""
        usual = statistics.median(self._lasted) if self._lasted else 0.0
        so_far = self._clock() - self._down_since if self._down_since is not None else 0.0
        expected = usual - so_far if so_far < usual else so_far
        return max(RETRY_AFTER_MIN_SECONDS, min(RETRY_AFTER_MAX_SECONDS, math.ceil(expected)))
