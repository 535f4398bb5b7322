"""message text serial: contextd_message_text is not safe in a parallel query

The function of 0009_search catches the errors of text Postgres cannot hold in a block with
an EXCEPTION clause, and entering such a block starts a subtransaction, which Postgres
refuses in a parallel query. Marked PARALLEL SAFE, it let the planner choose a parallel plan
for a query that calls it over many rows (an operator's report over ``messages``, a future
search plan), which then failed with "cannot start subtransactions during a parallel
operation". Marked PARALLEL UNSAFE, such a query runs without workers. The stored column it
generates is unchanged.

Revision ID: 0012_message_text_serial
Revises: 0011_tool_errors
Create Date: 2026-11-24 15:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012_message_text_serial"
down_revision: str | None = "0011_tool_errors"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER FUNCTION contextd_message_text(json) PARALLEL UNSAFE")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER FUNCTION contextd_message_text(json) PARALLEL SAFE")
