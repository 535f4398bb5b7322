"""The embedding worker: embeds stored messages off the request path.

Its work list is the messages themselves: any message with no row in ``message_embeddings``
for the configured model is still to do. A turn writes nothing more for it, and nothing is
lost when a process stops: the next worker, in this process or another, finds the same
messages missing. One process's worker embeds at a time, the one holding the lease
(app.embeddings.lease); the others wait to take over. It reads forward from the last id it
embedded, and from the start again after a restart and every ``RESCAN_SECONDS`` while idle (a
Postgres transaction can commit a message with a lower id after a higher one). When the API
fails, the worker waits (1 s, doubling up to ``embeddings_retry_seconds``) and tries the same
messages again; search and recall rank by full text meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.budget.tokens import content_text
from app.embeddings.client import EmbeddingsClient, EmbeddingsError
from app.embeddings.lease import Lease, SoleLease
from app.embeddings.repository import EmbeddingRepository, Unembedded
from app.embeddings.vectors import pack, passages
from app.metrics import Metrics
from app.models.base import utcnow
from app.offload import off_the_loop
from app.settings import Settings

logger = logging.getLogger(__name__)

#: While idle, how often the worker reads every message again rather than only the new ones.
RESCAN_SECONDS = 60.0


class EmbeddingWorker:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        client: EmbeddingsClient,
        settings: Settings,
        metrics: Metrics,
        lease: Lease | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.client = client
        self.settings = settings
        self.metrics = metrics
        #: Whether this process embeds (app.embeddings.lease): one worker per database does.
        self.lease: Lease = lease or SoleLease()
        self.after_id = 0
        self._rescanned = time.monotonic()

    async def run_forever(self) -> None:
        try:
            await self._run()
        finally:
            await self.lease.release()

    async def _run(self) -> None:
        first_pause = min(1.0, self.settings.embeddings_retry_seconds)
        pause = first_pause
        while True:
            try:
                if not await self.lease.held():
                    # Another process embeds; this one takes over when it stops.
                    await asyncio.sleep(self.settings.embeddings_poll_seconds)
                    continue
                worked = await self.run_once()
            except EmbeddingsError as error:
                self.metrics.embedding_failures.labels("worker", error.reason).inc()
                logger.warning(
                    "embedding worker: the embeddings API failed (%s); retrying in %.0f s",
                    error,
                    pause,
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.settings.embeddings_retry_seconds)
                continue
            except Exception:
                logger.exception("embedding worker: unexpected error; retrying")
                worked = False
            pause = first_pause
            if not worked:
                await asyncio.sleep(self.settings.embeddings_poll_seconds)

    async def run_once(self) -> bool:
        """Embed the next batch of messages; False when none was waiting."""
        model = self.client.model
        if time.monotonic() - self._rescanned > RESCAN_SECONDS:
            self.after_id = 0
            self._rescanned = time.monotonic()
        async with self.sessionmaker() as db:
            batch = await EmbeddingRepository(db).unembedded(
                model, after_id=self.after_id, limit=self.settings.embeddings_batch_size
            )
            await db.commit()
        if not batch:
            return False
        rows = await self._embed(batch, model)
        async with self.sessionmaker() as db:
            await EmbeddingRepository(db).store(rows, {m.message_id: m.turn_id for m in batch})
            await db.commit()
        self.after_id = batch[-1].message_id
        self.metrics.embeddings_stored.inc(sum(1 for row in rows if row["vector"] is not None))
        return True

    async def _embed(self, batch: Sequence[Unembedded], model: str) -> list[dict[str, Any]]:
        texts = {m.message_id: passages(content_text(m.content)) for m in batch}
        wanted = [key for key, parts in texts.items() if parts]
        vectors: dict[int, bytes | None] = dict.fromkeys(texts)
        dims: dict[int, int] = dict.fromkeys(texts, 0)
        try:
            found = await self.client.embed([part for key in wanted for part in texts[key]])

            def pack_all() -> None:
                at = 0
                for key in wanted:
                    mine = found[at : at + len(texts[key])]
                    at += len(texts[key])
                    vectors[key], dims[key] = pack(*mine), len(mine[0])

            # Normalising and packing a batch is pure Python over every float: off the loop.
            await off_the_loop(pack_all)
        except EmbeddingsError as error:
            if error.reason != "refused":
                raise
            # One text the API will not take: find it, and keep the rest.
            for key in wanted:
                try:
                    mine = await self.client.embed(texts[key])
                    vectors[key], dims[key] = pack(*mine), len(mine[0])
                except EmbeddingsError as single:
                    if single.reason != "refused":
                        raise
                    self.metrics.embedding_failures.labels("worker", "refused").inc()
                    logger.warning("embedding worker: message %s refused (%s)", key, single)
        now = utcnow()
        return [
            {
                "message_id": key,
                "model": model,
                "dims": dims[key],
                "vector": vector,
                "created_at": now,
            }
            for key, vector in vectors.items()
        ]
