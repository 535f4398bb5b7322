"""tool errors: whether a tool result reported a failure (Anthropic's ``is_error``)

Revision ID: 0011_tool_errors
Revises: 0010_embeddings
Create Date: 2026-11-24 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_tool_errors"
down_revision: str | None = "0010_embeddings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("is_error", sa.Boolean(), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # SQLite drops the column in place (3.35+): a batch copy would rename the table
        # under the search view of 0009_search, which SQLite refuses.
        op.execute("ALTER TABLE messages DROP COLUMN is_error")
        return
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("is_error")
