from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES
from app.runtime import RuntimeDep
from app.search.schemas import SearchResult
from app.search.service import SearchService
from app.sessions.endpoints import SessionId

router = APIRouter(prefix="/v1/sessions/{session_id}", tags=["search"], responses=ERROR_RESPONSES)


async def get_search_service(
    db: DbSession, caller: AgentCaller, runtime: RuntimeDep
) -> SearchService:
    return SearchService(db, tenant_id=caller.tenant_id, runtime=runtime)


SearchServiceDep = Annotated[SearchService, Depends(get_search_service)]


@router.get("/search", response_model=SearchResult)
async def search_session(
    session_id: SessionId,
    service: SearchServiceDep,
    q: Annotated[str, Query(description="Words to look for; a message must say all of them.")],
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> SearchResult:
    """Full-text search of everything the session's messages said, best match first, with
    each message's seq, state (active, summarised, pruned), turn and a snippet; combined with
    semantic ranking when embeddings are configured (``ranking`` says which answered). A
    query with no word to look for is 422 ``invalid_search_query``."""
    return await service.search(session_id, q, limit=limit)
