"""Each Postgres test's own database, made off the test's path and emptied for the next.

Copying the migrated template and dropping the copy cost Postgres about 150 ms of CPU a test
(``CREATE DATABASE`` writes the whole template to the WAL; ``DROP DATABASE`` forces a
checkpoint), half of all it did for a test (docs/benchmarks.md, "The test suite: one hand-off
a statement on SQLite, a test database emptied instead of dropped"). Emptying the tables costs
a tenth of that. So a finished test's database is given back, and in the background, once its
other connections are ended, it is compared with a fresh copy of the template: the same
schema (every column with its type, default and place, index, constraint, function, trigger,
sequence, type, schema and extension), the same ``alembic_version``, the same database
settings and no planner statistics gathered. If so its tables are emptied and their
sequences restarted, and the next test gets it; if anything differs (a test migrated down, or
altered a column, or ran ``ANALYZE``) it is dropped and the next test gets a fresh copy.
Every test still gets a database as the template left it, touched by no other test.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections import deque
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

import asyncpg
from sqlalchemy.engine import make_url

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


#: What a database holds besides its rows, as one text: two databases with the same text have
#: the same schema, migration, settings and (no) planner statistics.
_FINGERPRINT = """
SELECT string_agg(item, E'\\n' ORDER BY item) FROM (
    SELECT format('column %s.%s.%s #%s %s not null=%s default=%s dropped=%s',
                  n.nspname, c.relname, a.attname, a.attnum,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(d.adbin, d.adrelid), a.attisdropped) AS item
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND a.attnum > 0
    UNION ALL
    SELECT format('relation %s.%s %s', n.nspname, c.relname, c.relkind)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid)
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL
    SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid))
    FROM pg_constraint
    WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL
    SELECT format('function %s %s', proname, md5(prosrc)) FROM pg_proc
    WHERE pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL
    SELECT format('trigger %s %s', tgname, tgrelid::regclass) FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT format('sequence %s %s %s %s', seqrelid::regclass, seqincrement, seqstart, seqcycle)
    FROM pg_sequence
    UNION ALL
    SELECT format('type %s %s', t.typname, t.typtype) FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    UNION ALL
    SELECT 'schema ' || nspname FROM pg_namespace
    UNION ALL
    SELECT format('extension %s %s', extname, extversion) FROM pg_extension
    UNION ALL
    SELECT 'setting ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
    WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    UNION ALL
    SELECT 'statistics ' || starelid::regclass FROM pg_statistic s
    JOIN pg_class c ON c.oid = s.starelid
    WHERE c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
    UNION ALL
    SELECT 'migration ' || version_num FROM alembic_version
) AS items
"""

#: The tables a test may fill: every table of the schema but the migration's own.
_TABLES = """
SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
WHERE schemaname NOT IN ('pg_catalog', 'information_schema') AND tablename <> 'alembic_version'
"""


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
        #: Databases given back, each being compared with the template and emptied: the
        #: name once it can be used again, None once it was dropped instead.
        self._given_back: deque[Future[str | None]] = deque()
        #: The template's fingerprint, read off its first copy before any test used it.
        self._fingerprint: Future[str] | None = None

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

    def dsn(self, name: str) -> str:
        """The asyncpg DSN of the database ``name`` on this server."""
        return make_url(self._admin_dsn).set(database=name).render_as_string(hide_password=False)

    async def _read_fingerprint(self, name: str) -> str:
        connection = await asyncpg.connect(self.dsn(name))
        try:
            return str(await connection.fetchval(_FINGERPRINT))
        finally:
            await connection.close()

    async def _empty(self, name: str, fingerprint: Future[str]) -> str | None:
        """``name`` emptied for the next test, or None (dropped) when it is not as the
        template left it but for its rows."""
        try:
            async with asyncio.timeout(STATEMENT_SECONDS):
                connection = await asyncpg.connect(self.dsn(name))
                try:
                    await connection.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                    if await connection.fetchval(_FINGERPRINT) == await asyncio.wrap_future(
                        fingerprint
                    ):
                        tables = [row[0] for row in await connection.fetch(_TABLES)]
                        await connection.execute(
                            f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"
                        )
                        return name
                finally:
                    await connection.close()
        except TimeoutError:
            raise PostgresWedged(f"empty the database {name!r}") from None
        except asyncpg.PostgresError:
            pass  # whatever the test left that cannot be emptied, the drop below removes
        await self._drop(name)
        return None

    def take(self) -> str:
        """The name of a database as the template left it: one a finished test gave back,
        emptied, or else a fresh copy of the template (the next copy is started at once)."""
        while self._given_back:
            emptied = _result(self._given_back.popleft(), "empty a test's database")
            if emptied is not None:
                return emptied
        ready = self._spare or self._submit(self._copy())
        self._spare = self._submit(self._copy())
        name = _result(ready, "copy the template")
        if self._fingerprint is None:
            self._fingerprint = self._submit(self._read_fingerprint(name))
            _result(self._fingerprint, "read the template's schema")
        return name

    def give_back(self, name: str) -> None:
        """Empty ``name`` for the next test, or drop it, without waiting for either."""
        if self._fingerprint is None:
            self.drop_later(name)
            return
        self._given_back.append(self._submit(self._empty(name, self._fingerprint)))

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
        while self._given_back:
            try:
                emptied = _result(self._given_back.popleft(), "empty a test's database")
            except Exception as error:
                failures.append(error)
            else:
                if emptied is not None:
                    self.drop_later(emptied)
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
