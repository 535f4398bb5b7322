"""What a statement run on the asyncpg driver must carry (app/db.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, update
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect

from app.db import DriverStatement
from app.models.tables import SessionRecord, SummaryRecord


def test_a_column_default_computed_in_python_must_be_bound() -> None:
    # Compiled once and run many times, a timestamp default would be the first call's.
    statement = DriverStatement(insert(SummaryRecord).values(tenant_id="t", session_id="s"))

    with pytest.raises(TypeError, match="created_at"):
        statement.text(asyncpg_dialect())  # type: ignore[no-untyped-call]


def test_an_update_must_bind_what_its_columns_compute_on_update() -> None:
    statement = DriverStatement(update(SessionRecord).values(turn_count=1))

    with pytest.raises(TypeError, match="updated_at"):
        statement.text(asyncpg_dialect())  # type: ignore[no-untyped-call]
