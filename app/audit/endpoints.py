from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from app.audit.schemas import AuditFilter, AuditOut, AuditPage, AuditRollup
from app.audit.service import AuditService
from app.auth.dependencies import OpsCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES

#: Audit ids are 64-bit.
MAX_ID = 2**63 - 1

router = APIRouter(prefix="/v1/audit", tags=["audit"], responses=ERROR_RESPONSES)


async def get_audit_service(db: DbSession, caller: OpsCaller) -> AuditService:
    return AuditService(db, tenant_id=caller.tenant_id)


AuditServiceDep = Annotated[AuditService, Depends(get_audit_service)]


@router.get("", response_model=AuditPage)
async def list_audit(
    service: AuditServiceDep,
    filters: Annotated[AuditFilter, Query()],
    before_id: Annotated[
        int | None, Query(ge=1, le=MAX_ID, description="cursor: next_before_id")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> AuditPage:
    """Audit rows, newest first, filtered by session, tenant, model, turn, time range and
    flags; page on with ``before_id`` (stable while new rows arrive)."""
    return await service.list(filters, before_id=before_id, limit=limit)


@router.get("/rollup", response_model=AuditRollup)
async def rollup_audit(service: AuditServiceDep, session_id: str) -> AuditRollup:
    """One session's assemblies summed up: turns, tokens, policy events, latency."""
    return await service.rollup(session_id)


@router.get("/{audit_id}", response_model=AuditOut)
async def get_audit(
    audit_id: Annotated[int, Path(ge=1, le=MAX_ID)], service: AuditServiceDep
) -> AuditOut:
    """One assembly: its figures, its blocks, and what it kept, summarised or pruned."""
    return await service.get(audit_id)
