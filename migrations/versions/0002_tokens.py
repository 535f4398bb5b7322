"""token counting: calibration table, the ratio in every audit row, session tools

Revision ID: 0002_tokens
Revises: 0001
Create Date: 2026-11-23 09:12:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_tokens"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "token_calibration",
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("estimator", sa.String(length=64), nullable=False),
        sa.Column("ratio", sa.Double(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("outlier_streak", sa.Integer(), nullable=False),
        sa.Column("last_observed", sa.Double(), nullable=True),
        sa.Column("last_provider_tokens", sa.Integer(), nullable=True),
        sa.Column("last_estimated_tokens", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "model", "estimator", name=op.f("pk_token_calibration")
        ),
    )
    with op.batch_alter_table("turn_context_audit", schema=None) as batch_op:
        # Rows written before calibration existed assembled with no ratio in force.
        batch_op.add_column(
            sa.Column("calibration_ratio", sa.Double(), nullable=False, server_default="1.0")
        )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tools", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("tools")
    with op.batch_alter_table("turn_context_audit", schema=None) as batch_op:
        batch_op.drop_column("calibration_ratio")
    op.drop_table("token_calibration")
