from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES
from app.runtime import RuntimeDep
from app.sessions.endpoints import SessionId
from app.summary_jobs.schemas import SummaryJobList
from app.summary_jobs.service import SummaryJobService

router = APIRouter(
    prefix="/v1/sessions/{session_id}", tags=["summaries"], responses=ERROR_RESPONSES
)


async def get_job_service(
    db: DbSession, runtime: RuntimeDep, caller: AgentCaller
) -> SummaryJobService:
    return SummaryJobService(db, tenant_id=caller.tenant_id, runtime=runtime)


SummaryJobServiceDep = Annotated[SummaryJobService, Depends(get_job_service)]


@router.get("/summary-jobs", response_model=SummaryJobList)
async def list_summary_jobs(
    session_id: SessionId,
    service: SummaryJobServiceDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> SummaryJobList:
    """A session's summary jobs (LLM summaries made off the request path), newest first."""
    return await service.list_jobs(session_id, limit=limit)
