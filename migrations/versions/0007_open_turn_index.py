"""open turn index: a turn start finds the session's open turn without reading its turns

Revision ID: 0007_open_turn_index
Revises: 0006_summary_jobs
Create Date: 2026-11-22 14:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_open_turn_index"
down_revision: str | None = "0006_summary_jobs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_turns_open",
        "turns",
        ["tenant_id", "session_id"],
        postgresql_where=sa.text("status = 'open'"),
        sqlite_where=sa.text("status = 'open'"),
    )


def downgrade() -> None:
    op.drop_index("ix_turns_open", table_name="turns")
