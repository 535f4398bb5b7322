"""reasoning: an OpenAI-shaped assistant's reasoning text, and the prompt tokens a cache served

Revision ID: 0008_reasoning
Revises: 0007_open_turn_index
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_reasoning"
down_revision: str | None = "0007_open_turn_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("reasoning_content", sa.Text(), nullable=True))
    with op.batch_alter_table("turn_context_audit") as batch:
        batch.add_column(sa.Column("cache_read_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turn_context_audit") as batch:
        batch.drop_column("cache_read_tokens")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("reasoning_content")
