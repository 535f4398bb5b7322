"""Search: what a session's stored messages say, whatever their state."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.runtime import Runtime
from app.search.repository import SearchRepository
from app.search.schemas import SearchHit, SearchResult
from app.search.semantic import SemanticRanking, ranked_hits
from app.search.terms import search_terms
from app.sessions.repository import SessionRepository
from app.sessions.service import session_not_found


class SearchService:
    """One tenant's searches."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.sessions = SessionRepository(db, tenant_id=tenant_id)
        self.search_index = SearchRepository(db, tenant_id=tenant_id)
        self.semantic = SemanticRanking(db, tenant_id=tenant_id, runtime=runtime)

    async def search(self, session_id: str, query: str, *, limit: int) -> SearchResult:
        """The session's messages that say every word of ``query``, best first: active ones
        and those the prompt no longer shows (summarised or pruned) alike; with embeddings,
        also those that mean what it says, the two rankings fused. 404 for a session the
        tenant does not have; 422 ``invalid_search_query`` for a query with no word."""
        terms = search_terms(query)
        if await self.sessions.get(session_id) is None:
            raise session_not_found(session_id)
        hits, hybrid = await ranked_hits(
            self.search_index, self.semantic, session_id, query, terms, limit=limit
        )
        return SearchResult(
            query=query,
            ranking="hybrid" if hybrid else "full_text",
            hits=[
                SearchHit(
                    message_id=hit.message_id,
                    seq=hit.seq,
                    turn_id=hit.turn_id,
                    turn_seq=hit.turn_seq,
                    role=hit.role,
                    state=hit.state,
                    score=hit.score,
                    snippet=hit.snippet,
                )
                for hit in hits
            ],
        )
