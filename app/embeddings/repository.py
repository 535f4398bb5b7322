"""Every query on message embeddings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exists, or_, select
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import MessageEmbeddingRecord, MessageRecord


@dataclass(frozen=True)
class Unembedded:
    """A stored message with no vector yet under the configured model."""

    message_id: int
    content: Any
    #: With the id, what names the message for good: SQLite may give an erased message's id
    #: to a new one (of any tenant), never its turn's id.
    turn_id: str


class EmbeddingRepository:
    """The embedding worker's queries (across tenants: it embeds every message), and the
    vectors of one session (filtered on the tenant and the session, like every search)."""

    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def unembedded(self, model: str, *, after_id: int, limit: int) -> list[Unembedded]:
        """Messages after ``after_id`` with no row for ``model``, oldest first."""
        done = exists().where(
            MessageEmbeddingRecord.message_id == MessageRecord.id,
            MessageEmbeddingRecord.model == model,
        )
        query = (
            select(MessageRecord.id, MessageRecord.content, MessageRecord.turn_id)
            .where(MessageRecord.id > after_id, ~done)
            .order_by(MessageRecord.id)
            .limit(limit)
        )
        return [Unembedded(row[0], row[1], row[2]) for row in (await self.db.execute(query)).all()]

    async def store(self, rows: Sequence[dict[str, Any]], turns: Mapping[int, str]) -> None:
        """Insert embedding rows; a row another worker stored first is left as it is. A
        message erased meanwhile is skipped, and so is a new message that took its id
        (``turns``: each read message's turn id, which a new message never shares)."""
        if not rows:
            return
        postgres = self.db.get_bind().dialect.name == "postgresql"
        insert = postgres_insert if postgres else sqlite_insert
        ids = [row["message_id"] for row in rows]
        present = {
            message_id
            for message_id, turn_id in (
                await self.db.execute(
                    select(MessageRecord.id, MessageRecord.turn_id).where(MessageRecord.id.in_(ids))
                )
            ).all()
            if turns.get(message_id) == turn_id
        }
        kept = [row for row in rows if row["message_id"] in present]
        if kept:
            await self.db.execute(
                insert(MessageEmbeddingRecord).values(kept).on_conflict_do_nothing()
            )

    async def session_vectors(
        self,
        tenant_id: str,
        session_id: str,
        model: str,
        *,
        states: Sequence[str] | None = None,
        roles: Sequence[str] | None = None,
        also: Sequence[int] = (),
    ) -> list[tuple[int, bytes]]:
        """The session's stored vectors under ``model`` (message id, vector); only messages
        in ``states`` (or of ids ``also``) and of ``roles`` when given."""
        query = (
            select(MessageEmbeddingRecord.message_id, MessageEmbeddingRecord.vector)
            .join(MessageRecord, MessageRecord.id == MessageEmbeddingRecord.message_id)
            .where(
                MessageRecord.tenant_id == tenant_id,
                MessageRecord.session_id == session_id,
                MessageEmbeddingRecord.model == model,
                MessageEmbeddingRecord.vector.is_not(None),
            )
        )
        if states and also:
            query = query.where(
                or_(MessageRecord.state.in_(states), MessageRecord.id.in_(list(also)))
            )
        elif states:
            query = query.where(MessageRecord.state.in_(states))
        if roles:
            query = query.where(MessageRecord.role.in_(roles))
        rows = (await self.db.execute(query)).all()
        return [(row[0], row[1]) for row in rows if row[1] is not None]
