"""embeddings: a message's vectors under an embedding model, for semantic search and recall

One row per message and model: its passages' vectors as float32 bytes (unit length, ``dims``
each, one after the other), or none when the message has no text to embed. A message whose
row for the configured model is missing is what the embedding worker does next, so the work
survives restarts without a queue of its own, and a turn writes nothing more. Deleting a
message (erasing a session cascades to its messages) deletes its rows.

Revision ID: 0010_embeddings
Revises: 0009_search
Create Date: 2026-11-24 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_embeddings"
down_revision: str | None = "0009_search"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "message_embeddings",
        sa.Column(
            "message_id",
            BigId,
            sa.ForeignKey(
                "messages.id",
                name=op.f("fk_message_embeddings_message_id_messages"),
                ondelete="CASCADE",
            ),
            nullable=False,
        ),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("message_id", "model", name=op.f("pk_message_embeddings")),
    )


def downgrade() -> None:
    op.drop_table("message_embeddings")
