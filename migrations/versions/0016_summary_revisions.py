"""summary revisions: which user messages a summary's corrections superseded

A summary now records, beside its items, the user's messages every statement of which a
later statement of the user's replaced (each with the message that replaced it), and the
messages it holds only part of. Recall reads the record of the summary in force to leave a
superseded message out of a turn's recall block by its id, without weighing texts again.

One nullable JSON column, added without a default: no stored row is rewritten, and a summary
stored before this (NULL) records nothing; the next summary of its session records what its
own corrections replace from then on.

Revision ID: 0016_summary_revisions
Revises: 0015_keys_by_session
Create Date: 2026-11-28 12:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_summary_revisions"
down_revision: str | None = "0015_keys_by_session"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("session_summaries") as batch:
        batch.add_column(sa.Column("revisions", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("session_summaries") as batch:
        batch.drop_column("revisions")
