"""tenants own their sessions; API keys; idempotency records

A session's key becomes (tenant_id, id): two tenants may choose the same session id without
either learning that the other uses it. Turns, messages and summaries carry the tenant and
reference their session by both columns. Existing rows belong to the tenant "default".

On SQLite every table whose keys change is rebuilt (batch mode); contextd runs migrations
there with foreign keys off, so that rebuilding a parent does not cascade into its children.

Revision ID: 0003_trust
Revises: 0002_tokens
Create Date: 2026-11-23 09:00:00.000000
"""

import warnings
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import SAWarning

revision: str = "0003_trust"
down_revision: str | None = "0002_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHILDREN = ("turns", "messages", "session_summaries")
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _is_sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def upgrade() -> None:
    # 1. Children: let go of the old single-column key, take the tenant column.
    for table in CHILDREN:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_session_id_sessions", type_="foreignkey")
            batch.add_column(
                sa.Column("tenant_id", sa.String(128), nullable=False, server_default="default")
            )
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turns_session_id", type_="unique")
        batch.drop_index("ix_turns_session_id")
    with op.batch_alter_table("messages") as batch:
        batch.drop_constraint("uq_messages_session_id", type_="unique")
        batch.drop_index("ix_messages_session_state_seq")
    with op.batch_alter_table("session_summaries") as batch:
        batch.drop_index("ix_session_summaries_session_id_id")

    # 2. Sessions: keyed by (tenant_id, id); the old tenant index is the key's prefix now.
    with warnings.catch_warnings():
        # SQLAlchemy remarks that the rebuilt SQLite table's key differs from the old one's:
        # that is the point.
        warnings.filterwarnings("ignore", "Table '_alembic_tmp_sessions'", SAWarning)
        with op.batch_alter_table("sessions") as batch:
            batch.drop_index("ix_sessions_tenant_id")
            if not _is_sqlite():  # batch mode on SQLite rebuilds the table with the new key
                batch.drop_constraint("pk_sessions", type_="primary")
            batch.create_primary_key("pk_sessions", ["tenant_id", "id"])

    # 3. Children: the composite key, its uniqueness and indexes; no default tenant from now on.
    for table in CHILDREN:
        with op.batch_alter_table(table) as batch:
            batch.alter_column("tenant_id", server_default=None, existing_type=sa.String(128))
            batch.create_foreign_key(
                f"fk_{table}_session_sessions",
                "sessions",
                ["tenant_id", "session_id"],
                ["tenant_id", "id"],
                ondelete="CASCADE",
            )
    with op.batch_alter_table("turns") as batch:
        batch.create_unique_constraint("uq_turns_session_seq", ["tenant_id", "session_id", "seq"])
    with op.batch_alter_table("messages") as batch:
        batch.create_unique_constraint(
            "uq_messages_session_seq", ["tenant_id", "session_id", "seq"]
        )
        batch.create_index(
            "ix_messages_session_state_seq", ["tenant_id", "session_id", "state", "seq"]
        )
    with op.batch_alter_table("session_summaries") as batch:
        batch.create_index("ix_session_summaries_session_id_id", ["tenant_id", "session_id", "id"])
    with op.batch_alter_table("turn_context_audit") as batch:
        batch.create_index("ix_turn_context_audit_tenant_id_id", ["tenant_id", "id"])

    # 4. API keys and idempotency records.
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("name", sa.String(200), nullable=True),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
    )
    with op.batch_alter_table("api_keys") as batch:
        batch.create_index(batch.f("ix_api_keys_tenant_id"), ["tenant_id"])
    op.create_table(
        "idempotency_keys",
        sa.Column("tenant_id", sa.String(128), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["tenant_id", "session_id"],
            ["sessions.tenant_id", "sessions.id"],
            name="fk_idempotency_keys_session_sessions",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("tenant_id", "key", name=op.f("pk_idempotency_keys")),
    )
    with op.batch_alter_table("idempotency_keys") as batch:
        batch.create_index("ix_idempotency_keys_session", ["tenant_id", "session_id"])


def downgrade() -> None:
    # Only possible while every session id is unique across tenants.
    op.drop_table("idempotency_keys")
    op.drop_table("api_keys")
    with op.batch_alter_table("turn_context_audit") as batch:
        batch.drop_index("ix_turn_context_audit_tenant_id_id")
    with op.batch_alter_table("session_summaries") as batch:
        batch.drop_index("ix_session_summaries_session_id_id")
    with op.batch_alter_table("messages") as batch:
        batch.drop_index("ix_messages_session_state_seq")
        batch.drop_constraint("uq_messages_session_seq", type_="unique")
    with op.batch_alter_table("turns") as batch:
        batch.drop_constraint("uq_turns_session_seq", type_="unique")
    for table in CHILDREN:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f"fk_{table}_session_sessions", type_="foreignkey")
            batch.drop_column("tenant_id")
    with (
        warnings.catch_warnings(),
        op.batch_alter_table("sessions") as batch,
    ):
        warnings.filterwarnings("ignore", "Table '_alembic_tmp_sessions'", SAWarning)
        if not _is_sqlite():
            batch.drop_constraint("pk_sessions", type_="primary")
        batch.create_primary_key("pk_sessions", ["id"])
        batch.create_index("ix_sessions_tenant_id", ["tenant_id"])
    with op.batch_alter_table("turns") as batch:
        batch.create_unique_constraint("uq_turns_session_id", ["session_id", "seq"])
        batch.create_index("ix_turns_session_id", ["session_id"])
    with op.batch_alter_table("messages") as batch:
        batch.create_unique_constraint("uq_messages_session_id", ["session_id", "seq"])
        batch.create_index("ix_messages_session_state_seq", ["session_id", "state", "seq"])
    with op.batch_alter_table("session_summaries") as batch:
        batch.create_index("ix_session_summaries_session_id_id", ["session_id", "id"])
    for table in CHILDREN:
        with op.batch_alter_table(table) as batch:
            batch.create_foreign_key(
                f"fk_{table}_session_id_sessions",
                "sessions",
                ["session_id"],
                ["id"],
                ondelete="CASCADE",
            )
