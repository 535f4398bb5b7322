"""indexes for the filtered audit list

Revision ID: 0004_ops
Revises: 0003_trust
Create Date: 2026-11-24 09:00:00

Each filter of ``GET /v1/audit`` gets an index that yields rows in id order, so that a
page (newest first, ``id < before_id``) reads only the rows it returns: composites
``(column, id)`` for tenant and model, ``turn_id`` alone (a turn has few rows), and a
partial index per flag. Flags are rare, so a partial index costs little on insert and
stays small. The predicates are written per dialect as each one renders a true boolean
(Postgres: the bare column; SQLite: ``column = 1``), so that the planner sees that a
query's condition implies the index's.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_ops"
down_revision: str | None = "0003_trust"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)


def upgrade() -> None:
    with op.batch_alter_table("turn_context_audit", schema=None) as batch_op:
        # (tenant_id, id) comes with 0003_trust: every read of the audit trail is one tenant's.
        batch_op.create_index("ix_turn_context_audit_model_alias_id", ["model_alias", "id"])
        batch_op.create_index("ix_turn_context_audit_turn_id", ["turn_id"])
        for flag in FLAGS:
            batch_op.create_index(
                f"ix_turn_context_audit_{flag}",
                ["id"],
                postgresql_where=sa.text(flag),
                sqlite_where=sa.text(f"{flag} = 1"),
            )


def downgrade() -> None:
    with op.batch_alter_table("turn_context_audit", schema=None) as batch_op:
        for flag in reversed(FLAGS):
            batch_op.drop_index(f"ix_turn_context_audit_{flag}")
        batch_op.drop_index("ix_turn_context_audit_turn_id")
        batch_op.drop_index("ix_turn_context_audit_model_alias_id")
