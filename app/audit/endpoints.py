from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from app.audit.schemas import AuditOut, AuditPage
from app.audit.service import AuditService
from app.auth.dependencies import OpsCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES

#: Audit ids are 64-bit.
MAX_ID = 2**63 - 1

router = APIRouter(prefix="/v1/audit", tags=["audit"], responses=ERROR_RESPONSES)


def get_audit_service(db: DbSession, caller: OpsCaller) -> AuditService:
    return AuditService(db, tenant_id=caller.tenant_id)


AuditServiceDep = Annotated[AuditService, Depends(get_audit_service)]


@router.get("", response_model=AuditPage)
async def list_audit(
    service: AuditServiceDep,
    session_id: str | None = None,
    turn_id: str | None = None,
    since: Annotated[datetime | None, Query(description="created_at ≥ since")] = None,
    until: Annotated[datetime | None, Query(description="created_at < until")] = None,
    summary_triggered: bool | None = None,
    prune_triggered: bool | None = None,
    overflow_rejected: bool | None = None,
    before_id: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="cursor: next_before_id")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> AuditPage:
    """Audit rows, newest first, filtered by session, turn, time range and flags."""
    return await service.list(
        session_id=session_id,
        turn_id=turn_id,
        since=since,
        until=until,
        summary_triggered=summary_triggered,
        prune_triggered=prune_triggered,
        overflow_rejected=overflow_rejected,
        before_id=before_id,
        limit=limit,
    )


@router.get("/{audit_id}", response_model=AuditOut)
async def get_audit(
    audit_id: Annotated[int, Path(ge=1, le=MAX_ID)], service: AuditServiceDep
) -> AuditOut:
    """One assembly: its figures, its blocks, and what it kept, summarised or pruned."""
    return await service.get(audit_id)
