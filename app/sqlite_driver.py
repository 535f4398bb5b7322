"""SQLite connections whose statements each cost one hand-off to the connection's thread.

aiosqlite runs every call on a ``sqlite3`` connection in a thread of its own and hands each
one over through a queue: the caller's loop puts the call, the thread wakes, runs it and wakes
the loop again. SQLAlchemy's adapter makes four such calls for every statement (open a cursor,
execute, fetch all rows, close the cursor), so a statement costs four round trips between two
threads, each a wake-up and a pass of the GIL; on a busy machine the waits add up to more than
SQLite's own work (docs/benchmarks.md, "The test suite: one hand-off a statement on SQLite").

The cursor here does all four in one call on the connection's thread and keeps what SQLAlchemy
reads afterwards (the description, the row count, the last row id, the rows) with it. The
connection, its thread, its commit, rollback and close are aiosqlite's own. A result asked
for as a stream (``AsyncConnection.stream``, ``stream_results``) is read whole when its
statement runs, as SQLAlchemy's adapter already reads every other result; nothing in the app
streams a result on SQLite.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import aiosqlite

T = TypeVar("T")
Row = Any
Description = tuple[tuple[Any, ...], ...] | None


class OneTripCursor:
    """A cursor that executes a statement and fetches its rows in one call on the connection's
    thread; fetching afterwards reads what that call kept."""

    arraysize = 1

    def __init__(self, connection: OneTripConnection) -> None:
        self._connection = connection
        self._rows: deque[Row] = deque()
        self.description: Description = None
        self.rowcount = -1
        self.lastrowid: int | None = None

    async def __aenter__(self) -> OneTripCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def execute(self, sql: str, parameters: Any = None) -> OneTripCursor:
        raw = self._connection.raw

        def run() -> tuple[Description, list[Row], int, int | None]:
            cursor = raw.cursor()
            try:
                cursor.execute(sql, () if parameters is None else parameters)
                rows = cursor.fetchall() if cursor.description is not None else []
                return cursor.description, rows, cursor.rowcount, cursor.lastrowid
            finally:
                cursor.close()

        self.description, rows, self.rowcount, self.lastrowid = await self._connection.call(run)
        self._rows = deque(rows)
        return self

    async def executemany(self, sql: str, parameters: Any) -> OneTripCursor:
        raw = self._connection.raw

        def run() -> tuple[int, int | None]:
            cursor = raw.cursor()
            try:
                cursor.executemany(sql, parameters)
                return cursor.rowcount, cursor.lastrowid
            finally:
                cursor.close()

        self.rowcount, self.lastrowid = await self._connection.call(run)
        self.description, self._rows = None, deque()
        return self

    async def fetchone(self) -> Row | None:
        return self._rows.popleft() if self._rows else None

    async def fetchmany(self, size: int | None = None) -> Sequence[Row]:
        count = self.arraysize if size is None else size
        return [self._rows.popleft() for _ in range(min(count, len(self._rows)))]

    async def fetchall(self) -> Sequence[Row]:
        taken = list(self._rows)
        self._rows.clear()
        return taken

    async def close(self) -> None:
        self._rows.clear()


class OneTripConnection(aiosqlite.Connection):
    """aiosqlite's connection, with cursors that make one call per statement."""

    @property
    def raw(self) -> sqlite3.Connection:
        """The ``sqlite3`` connection, to be used on the connection's thread only."""
        return self._conn

    async def call(self, function: Callable[[], T]) -> T:
        """``function()``, run on the connection's thread."""
        return cast(T, await self._execute(function))  # type: ignore[no-untyped-call]

    def cursor(self) -> OneTripCursor:  # type: ignore[override]
        return OneTripCursor(self)


async def connect(database: str, **kwargs: Any) -> OneTripConnection:
    """Open ``database`` (``sqlite3.connect``'s arguments) on a thread of its own."""

    def connector() -> sqlite3.Connection:
        connection: sqlite3.Connection = sqlite3.connect(database, **kwargs)
        return connection

    connection = OneTripConnection(connector, iter_chunk_size=64)
    # As SQLAlchemy does for aiosqlite's own connections: an engine not disposed of must
    # not keep the process from exiting.
    connection._thread.daemon = True
    await connection
    return connection
