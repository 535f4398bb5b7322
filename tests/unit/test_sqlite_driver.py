"""The SQLite engine's cursors (app/sqlite_driver.py) run a statement and fetch its rows in
one call on the connection's thread: what SQLAlchemy reads of a statement afterwards (its
rows, the rows it changed, the id it inserted, its error) must be what ``sqlite3`` said."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from app.db import create_engine


async def test_what_each_statement_did_is_read_back_as_sqlite_said_it(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'contextd.db'}")
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)"))
            inserted = await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
            assert inserted.lastrowid == 1
            await connection.execute(
                text("INSERT INTO t (v) VALUES (:v)"), [{"v": "b"}, {"v": "c"}]
            )
            changed = await connection.execute(text("UPDATE t SET v = v || '!' WHERE id > 1"))
            assert changed.rowcount == 2
            returned = await connection.execute(
                text("INSERT INTO t (v) VALUES ('d') RETURNING id, v")
            )
            assert returned.all() == [(4, "d")]
            nothing = await connection.execute(text("SELECT v FROM t WHERE id > 99"))
            assert nothing.all() == []

        async with engine.connect() as connection:
            await connection.execute(text("INSERT INTO t (v) VALUES ('e')"))
            with pytest.raises(IntegrityError):
                await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
            await connection.rollback()

        async with engine.connect() as connection:
            streamed = await connection.stream(text("SELECT id, v FROM t ORDER BY id"))
            rows = [tuple(row) async for row in streamed]
            first = await connection.execute(text("SELECT v FROM t ORDER BY id"))
            assert first.fetchone() == ("a",)
            assert first.fetchmany(2) == [("b!",), ("c!",)]
            assert first.fetchall() == [("d",)]
        # The failed transaction left nothing behind: 'e' was rolled back with it.
        assert rows == [(1, "a"), (2, "b!"), (3, "c!"), (4, "d")]
    finally:
        await engine.dispose()
