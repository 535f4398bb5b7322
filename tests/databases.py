"""Each Postgres test's own database, made and dropped off the test's path.

Copying the migrated template takes Postgres about half a second, and ``DROP DATABASE`` waits
for a checkpoint that it forces (about a second on the 2-core machine; docs/benchmarks.md,
"The test suite under five minutes"). Neither needs to hold a test up: the next test's
database is copied while the current test runs, and a finished test's database is dropped in
the background, a few at a time (drops that wait together share a checkpoint). Every test
still gets a database of its own, copied from the template and touched by nothing else.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")

#: Drops under way at once: enough to share checkpoints, few enough to leave the server's
#: connections to the tests (every worker of the suite has its own).
CONCURRENT_DROPS = 4
#: The longest one statement of the set-up (a copy of the template, a drop) may take, and
#: the longest a test or the end of the run waits for one: far above the second or so they
#: take on a loaded machine, so that only a wedged server (a lock never released, a
#: checkpoint that never ends) reaches it, and the run fails saying so instead of hanging.
STATEMENT_SECONDS = 120.0


class PostgresWedged(RuntimeError):
    """A statement of the test databases' set-up did not finish in ``STATEMENT_SECONDS``."""

    def __init__(self, doing: str) -> None:
        super().__init__(
            f"Postgres did not {doing} within {STATEMENT_SECONDS:g} s: the server is wedged "
            "or overloaded (look for a lock held or a checkpoint that does not end, with "
            "pg_stat_activity); the test databases' set-up gave up rather than hang the run."
        )


async def execute_admin(admin_dsn: str, statement: str) -> None:
    """Run ``statement`` on a connection of its own to ``admin_dsn``, within
    ``STATEMENT_SECONDS`` (connecting included)."""
    try:
        async with asyncio.timeout(STATEMENT_SECONDS):
            connection = await asyncpg.connect(admin_dsn)
            try:
                await connection.execute(statement)
            finally:
                await connection.close()
    except TimeoutError:
        raise PostgresWedged(f"run {statement!r}") from None


class PostgresDatabases:
    """Hands out fresh copies of ``template`` and drops them once their test is over.

    ``admin_dsn`` is an asyncpg DSN of a database on the server (``postgres``) from which
    databases can be created and dropped. The work runs on an event loop in a thread of its
    own, so that it goes on while a test runs on its own loop or blocks.
    """

    def __init__(self, admin_dsn: str, template: str) -> None:
        self._admin_dsn = admin_dsn
        self._template = template
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="postgres-databases", daemon=True
        )
        self._thread.start()
        self._drop_slots = asyncio.Semaphore(CONCURRENT_DROPS)
        self._spare: Future[str] | None = None
        self._drops: list[Future[None]] = []

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _copy(self) -> str:
        name = f"contextd_test_{uuid.uuid4().hex[:12]}"
        await execute_admin(
            self._admin_dsn, f'CREATE DATABASE "{name}" TEMPLATE "{self._template}"'
        )
        return name

    async def _drop(self, name: str) -> None:
        async with self._drop_slots:
            await execute_admin(self._admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def take(self) -> str:
        """The name of a fresh copy of the template; the next one is started at once."""
        ready = self._spare or self._submit(self._copy())
        self._spare = self._submit(self._copy())
        return _result(ready, "copy the template")

    def drop_later(self, name: str) -> None:
        """Drop ``name`` (and end its connections) without waiting for it."""
        self._drops.append(self._submit(self._drop(name)))

    def close(self) -> None:
        """Drop the spare copy and wait for every drop; raise the first that failed."""
        spare, self._spare = self._spare, None
        failures: list[BaseException] = []
        if spare is not None:
            try:
                self.drop_later(_result(spare, "copy the template"))
            except Exception as error:
                failures.append(error)
        # Each statement has its own limit; this one bounds the wait for all of them (queued
        # behind CONCURRENT_DROPS included), whatever happens to the loop.
        deadline = time.monotonic() + STATEMENT_SECONDS * (1 + len(self._drops) / CONCURRENT_DROPS)
        for drop in self._drops:
            try:
                failed = drop.exception(timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                failed = PostgresWedged("drop the test databases")
            if failed is not None:
                failures.append(failed)
        self._drops.clear()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=STATEMENT_SECONDS)
        if not self._thread.is_alive():
            self._loop.close()
        if failures:
            raise failures[0]


def _result(future: Future[T], doing: str) -> T:
    """``future``'s result, or PostgresWedged when it takes longer than a statement may."""
    try:
        return future.result(timeout=STATEMENT_SECONDS)
    except TimeoutError:
        future.cancel()
        raise PostgresWedged(doing) from None
