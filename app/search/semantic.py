"""Semantic ranking of a session's messages, when embeddings are configured: the query is
embedded, then compared with the session's stored vectors in process (a session's messages
are few enough). Whatever goes wrong, the answer is "no semantic ranking", never an error:
search and recall then rank by full text alone, and the failure is logged and counted."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncSession

from app.budget.tokens import content_text
from app.embeddings.client import EmbeddingsError
from app.embeddings.repository import EmbeddingRepository
from app.embeddings.vectors import ANY_WORD_WEIGHT, fuse, nearest, passages, tied_ranks
from app.offload import off_the_loop
from app.runtime import Runtime
from app.search.repository import SNIPPET_WORDS, MessageHit, SearchRepository

logger = logging.getLogger(__name__)

#: Stored vectors (float32 bytes) of a session past which scoring runs in a worker thread:
#: about 500 passages of 384 dimensions, some 7 ms.
OFF_THE_LOOP_BYTES = 768_000


@dataclass(frozen=True)
class Near:
    """A message's place in a semantic ranking: its passage nearest in meaning to the query
    (its index in ``app.embeddings.vectors.passages``), and how near."""

    passage: int
    similarity: float


def semantic_ranking(near: Mapping[int, Near], weight: float) -> tuple[list[int], float, list[int]]:
    """``near`` as a ranking for ``fuse``: equally near messages share a rank."""
    return list(near), weight, tied_ranks([hit.similarity for hit in near.values()])


class SemanticRanking:
    """One tenant's semantic rankings."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.embeddings = EmbeddingRepository(db)
        self.tenant_id = tenant_id
        self.client = runtime.embedder
        self.settings = runtime.settings
        self.metrics = runtime.metrics

    @property
    def enabled(self) -> bool:
        return self.client is not None

    async def rank(
        self,
        session_id: str,
        text: str,
        *,
        limit: int,
        states: Sequence[str] | None = None,
        roles: Sequence[str] | None = None,
        also: Sequence[int] = (),
    ) -> dict[int, Near] | None:
        """The session's messages nearest in meaning to ``text``, best first: each id with
        its nearest passage (``app.embeddings.vectors.passages``) and its similarity. None
        when there is nothing to rank by: embeddings off, none stored yet for the session,
        or the API failing."""
        if self.client is None or not text.strip():
            return None
        stored = await self.embeddings.session_vectors(
            self.tenant_id, session_id, self.client.model, states=states, roles=roles, also=also
        )
        if not stored:
            return None
        try:
            # A turn waits for its question's embedding with the session locked: bounded more
            # tightly than the worker's requests, and past the bound it ranks by full text.
            try:
                async with asyncio.timeout(self.settings.embeddings_query_timeout_seconds):
                    (query,) = await self.client.embed([text])
            except TimeoutError as error:
                raise EmbeddingsError("timeout", "the query's embedding took too long") from error
        except EmbeddingsError as error:
            self.metrics.embedding_failures.labels("query", error.reason).inc()
            logger.warning("embeddings API failed for a query (%s): full-text ranking only", error)
            return None
        floor = self.settings.embeddings_min_similarity

        def score() -> list[tuple[int, float, int]]:
            return nearest(query, stored, limit=limit, min_similarity=floor)

        # Scoring is linear in the session's passages (about 14 µs each at 384 dimensions):
        # a long session's is scored off the event loop.
        heavy = sum(len(vector) for _, vector in stored) > OFF_THE_LOOP_BYTES
        hits = await off_the_loop(score) if heavy else score()
        if len(hits) == limit:
            # The last messages listed are as near as some left out: they share a rank with
            # messages the ranking does not name, so it says nothing of them.
            last = round(hits[-1][1], 6)
            hits = [hit for hit in hits if round(hit[1], 6) != last]
        return {key: Near(passage, similarity) for key, similarity, passage in hits}


async def ranked_hits(
    search_index: SearchRepository,
    semantic: SemanticRanking,
    session_id: str,
    query: str,
    terms: tuple[str, ...],
    *,
    limit: int,
    match_any: bool = False,
    states: Sequence[str] | None = None,
    roles: Sequence[str] | None = None,
    snippets: bool = True,
    meaning: str | None = None,
) -> tuple[list[MessageHit], bool]:
    """The session's best ``limit`` messages for ``query``: by full text, fused (reciprocal
    rank fusion) with the semantic ranking of ``meaning`` (default: ``query``) when there is
    one; a ranking by ``match_any`` weighs less (``ANY_WORD_WEIGHT``). Also whether there
    was."""
    found = await search_index.search(
        session_id,
        query,
        terms,
        limit=limit,
        match_any=match_any,
        states=states,
        roles=roles,
        snippets=snippets,
    )
    if not semantic.enabled:
        return found, False
    near = await semantic.rank(
        session_id, meaning or query, limit=limit, states=states, roles=roles
    )
    if near is None:
        return found, False
    by_id = {hit.message_id: hit for hit in found}
    words_weight = ANY_WORD_WEIGHT if match_any else 1.0
    fused = fuse(([hit.message_id for hit in found], words_weight), semantic_ranking(near, 1.0))[
        :limit
    ]
    missing = await search_index.messages(session_id, [key for key, _ in fused if key not in by_id])
    hits: list[MessageHit] = []
    for key, score in fused:
        hit = by_id.get(key) or missing.get(key)
        if hit is None:
            continue  # erased meanwhile
        index = near[key].passage if key in near else None
        passage = passage_of(hit.content, index) if index is not None else None
        snippet = hit.snippet
        if key not in by_id and snippets:
            snippet = _snippet(passage or content_text(hit.content))
        hits.append(
            replace(
                hit,
                score=score,
                snippet=snippet,
                passage=passage,
                passage_index=index if passage is not None else None,
            )
        )
    return hits, True


def passage_of(content: object, index: int) -> str | None:
    """A message's passage ``index`` (``app.embeddings.vectors.passages``), if it has one."""
    found = passages(content_text(content))
    return found[index] if index < len(found) else None


def _snippet(text: str) -> str:
    """A semantic hit's snippet: the first words of its nearest passage (no word of the
    query need be in it)."""
    words = text.split()
    return " ".join(words[:SNIPPET_WORDS]) + (" …" if len(words) > SNIPPET_WORDS else "")
