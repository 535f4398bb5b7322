"""prompt fingerprints, prefix-cache audit fields, per-block caps and telemetry

Revision ID: 0005_cache
Revises: 0004_ops
Create Date: 2026-11-22 11:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_cache"
down_revision: str | None = "0004_ops"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.add_column(sa.Column("prompt_fingerprint", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("block_caps", sa.JSON(), nullable=True))
    with op.batch_alter_table("turn_context_audit") as batch_op:
        batch_op.add_column(sa.Column("prefix_kept", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("first_changed_index", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("change_reason", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("block_telemetry", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("estimated_input_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turn_context_audit") as batch_op:
        batch_op.drop_column("estimated_input_tokens")
        batch_op.drop_column("block_telemetry")
        batch_op.drop_column("change_reason")
        batch_op.drop_column("first_changed_index")
        batch_op.drop_column("prefix_kept")
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("block_caps")
        batch_op.drop_column("prompt_fingerprint")
