"""Which process's embedding worker embeds: one per database and model at a time.

Every contextd process starts an embedding worker, and with ``serve --workers N`` (or several
hosts on one Postgres) each would read the same backlog and pay the embeddings API for it N
times: the stored data stays right, since a message's vector is stored once, but the calls
do not. The worker embeds only while it holds this lease, and the others wait to take it
over. Nothing needs renewing: the lease is released by the process's end, however it ends.

- Postgres: a session-level advisory lock, held on a connection kept for it (in autocommit,
  so it holds no snapshot); a lost connection loses the lock, which the next check sees.
- SQLite: an exclusive ``flock`` on a file beside the database (``<database>.embedding-lock``).
  An in-memory database, or a platform without ``flock``, has one process: the lease is
  always held.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import IO, Protocol

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)


class Lease(Protocol):
    async def held(self) -> bool:
        """Whether this process holds the lease now, taking it when it is free."""
        ...

    async def release(self) -> None: ...


def lease_key(model: str) -> int:
    """The advisory lock's key: a signed 64-bit number of the model's name."""
    digest = hashlib.sha256(f"contextd:embeddings:{model}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresLease:
    def __init__(self, engine: AsyncEngine, model: str) -> None:
        self.engine = engine
        self.key = lease_key(model)
        self._connection: AsyncConnection | None = None

    async def held(self) -> bool:
        if self._connection is not None:
            try:
                await self._connection.execute(text("SELECT 1"))
                return True
            except Exception:
                logger.warning("embedding worker: lost the connection holding its lease")
                await self._drop()
        connection = await self.engine.connect()
        try:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            taken = await connection.scalar(
                text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}
            )
        except BaseException:
            await connection.close()
            raise
        if not taken:
            await connection.close()
            return False
        self._connection = connection
        logger.info("embedding worker: this process embeds (it holds the lease)")
        return True

    async def release(self) -> None:
        if self._connection is not None:
            try:
                await self._connection.execute(
                    text("SELECT pg_advisory_unlock(:key)"), {"key": self.key}
                )
            except Exception:
                logger.debug("embedding worker: unlock failed", exc_info=True)
            await self._drop()

    async def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                await connection.close()
            except Exception:
                logger.debug("embedding worker: closing the lease's connection", exc_info=True)


class FileLease:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[bytes] | None = None

    async def held(self) -> bool:
        if self._file is not None:
            return True
        assert fcntl is not None
        handle = self.path.open("ab")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._file = handle
        return True

    async def release(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            handle.close()  # closing the file releases its lock


class SoleLease:
    """A database that one process alone can open."""

    async def held(self) -> bool:
        return True

    async def release(self) -> None:
        return None


def embedding_lease(engine: AsyncEngine, model: str) -> Lease:
    url = make_url(str(engine.url))
    if url.get_backend_name() != "sqlite":
        return PostgresLease(engine, model)
    if fcntl is None or not url.database or url.database == ":memory:":
        return SoleLease()
    # One file for every model: SQLite's writes are serial anyway.
    return FileLease(Path(f"{url.database}.embedding-lock"))
