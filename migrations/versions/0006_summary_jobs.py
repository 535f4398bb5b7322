"""summary jobs: LLM summaries made off the request path

Revision ID: 0006_summary_jobs
Revises: 0005_cache
Create Date: 2026-11-22 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_summary_jobs"
down_revision: str | None = "0005_cache"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "summary_jobs",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(length=128), nullable=False),
        sa.Column("session_id", sa.String(length=128), nullable=False),
        sa.Column("turn_id", sa.String(length=64), nullable=True),
        sa.Column("turn_seq", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("from_seq", sa.Integer(), nullable=False),
        sa.Column("to_seq", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_token", sa.String(length=64), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("summary_id", BigId, nullable=True),
        sa.Column("failure", sa.String(length=128), nullable=True),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["tenant_id", "session_id"],
            ["sessions.tenant_id", "sessions.id"],
            name="fk_summary_jobs_session_sessions",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_summary_jobs")),
    )
    with op.batch_alter_table("summary_jobs") as batch_op:
        batch_op.create_index("ix_summary_jobs_status_id", ["status", "id"], unique=False)
        batch_op.create_index(
            "ix_summary_jobs_session_id_id", ["tenant_id", "session_id", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("summary_jobs") as batch_op:
        batch_op.drop_index("ix_summary_jobs_session_id_id")
        batch_op.drop_index("ix_summary_jobs_status_id")
    op.drop_table("summary_jobs")
