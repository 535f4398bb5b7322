"""keys by session: one foreign key a message, audit indexes led by the tenant

A message was checked against two parents on every write: its turn (``turn_id`` to
``turns.id``) and its session (``(tenant_id, session_id)`` to ``sessions``), each check a
query of its own inside the INSERT. A turn already belongs to its session (its own key to
``sessions``), so on Postgres a message now has one foreign key, to its turn by
``(id, tenant_id, session_id)``: the same rows are allowed, erasing a session still removes
every message (the session's turns go, and their messages with them), and handing a
tenant's sessions to another tenant moves a message's tenant with its turn's (``ON UPDATE
CASCADE``). The turn's primary key becomes ``(id, tenant_id, session_id)`` to carry it,
replacing ``(id)``: the turn path reads and updates a turn by all three, and the old key
let the planner read the session's turns one by one instead. Both keys now hold the
session, which a sharded Postgres requires of keys between co-located tables
(docs/scale-out.md).

Every audit read is one tenant's (the audit API scopes each to the caller's), but the
session, model and flag indexes did not start with the tenant: a small tenant's flagged rows
were found by walking every tenant's, and a session's rows by intersecting its index with
the whole tenant's. They now do: ``(tenant_id, session_id, id)``, ``(tenant_id, model_alias,
id)``, and each flag's partial index on ``(tenant_id, id)``. The two flags that are not
rare (a summary on 1 assembly in 7, a prune on 1 in 13) keep their ``(id)`` index too: for
a tenant holding much of the table the planner walks the primary key rather than the
tenant's index, which took twice to three times as long as walking the flag's rows in id
order. ``bench/audit_indexes.py`` measures every audit statement's plan before and after
(docs/benchmarks.md, "Which index earns its cost").

Locks and time on a large table (Postgres): the turns' primary key is built again and the
messages' foreign key validated, under locks that stop writes to ``turns`` and ``messages``
(and reads of ``turns``) until the migration commits; the audit indexes are built with the
table locked against writes. docs/operations.md gives the measured durations. SQLite keeps
its keys as they were (its tables would have to be copied to change them); its audit
indexes change as Postgres's do.

Revision ID: 0015_keys_by_session
Revises: 0014_search_vector_once
Create Date: 2026-11-28 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_keys_by_session"
down_revision: str | None = "0014_search_vector_once"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)
AUDIT = "turn_context_audit"
#: Flags whose ``(id)`` index stays beside the tenant's (see above).
COMMON_FLAGS = ("summary_triggered", "prune_triggered")


def _postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    if _postgres():
        op.drop_constraint("fk_messages_turn_id_turns", "messages", type_="foreignkey")
        op.drop_constraint("fk_messages_session_sessions", "messages", type_="foreignkey")
        op.drop_constraint("pk_turns", "turns", type_="primary")
        op.create_primary_key("pk_turns", "turns", ["id", "tenant_id", "session_id"])
        op.create_foreign_key(
            "fk_messages_turn_turns",
            "messages",
            "turns",
            ["turn_id", "tenant_id", "session_id"],
            ["id", "tenant_id", "session_id"],
            ondelete="CASCADE",
            onupdate="CASCADE",
        )
    op.create_index(f"ix_{AUDIT}_tenant_id_session_id_id", AUDIT, ["tenant_id", "session_id", "id"])
    op.drop_index(f"ix_{AUDIT}_session_id_id", table_name=AUDIT)
    op.create_index(
        f"ix_{AUDIT}_tenant_id_model_alias_id", AUDIT, ["tenant_id", "model_alias", "id"]
    )
    op.drop_index(f"ix_{AUDIT}_model_alias_id", table_name=AUDIT)
    for flag in FLAGS:
        op.create_index(
            f"ix_{AUDIT}_tenant_id_{flag}",
            AUDIT,
            ["tenant_id", "id"],
            postgresql_where=sa.text(flag),
            sqlite_where=sa.text(f"{flag} = 1"),
        )
        if flag not in COMMON_FLAGS:
            op.drop_index(f"ix_{AUDIT}_{flag}", table_name=AUDIT)


def downgrade() -> None:
    for flag in reversed(FLAGS):
        if flag not in COMMON_FLAGS:
            op.create_index(
                f"ix_{AUDIT}_{flag}",
                AUDIT,
                ["id"],
                postgresql_where=sa.text(flag),
                sqlite_where=sa.text(f"{flag} = 1"),
            )
        op.drop_index(f"ix_{AUDIT}_tenant_id_{flag}", table_name=AUDIT)
    op.create_index(f"ix_{AUDIT}_model_alias_id", AUDIT, ["model_alias", "id"])
    op.drop_index(f"ix_{AUDIT}_tenant_id_model_alias_id", table_name=AUDIT)
    op.create_index(f"ix_{AUDIT}_session_id_id", AUDIT, ["session_id", "id"])
    op.drop_index(f"ix_{AUDIT}_tenant_id_session_id_id", table_name=AUDIT)
    if _postgres():
        op.drop_constraint("fk_messages_turn_turns", "messages", type_="foreignkey")
        op.drop_constraint("pk_turns", "turns", type_="primary")
        op.create_primary_key("pk_turns", "turns", ["id"])
        op.create_foreign_key(
            "fk_messages_session_sessions",
            "messages",
            "sessions",
            ["tenant_id", "session_id"],
            ["tenant_id", "id"],
            ondelete="CASCADE",
        )
        op.create_foreign_key(
            "fk_messages_turn_id_turns",
            "messages",
            "turns",
            ["turn_id"],
            ["id"],
            ondelete="CASCADE",
        )
