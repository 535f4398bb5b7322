from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response, status

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES
from app.idempotency.dependencies import IdempotencyDep, IdempotencyKey
from app.runtime import RuntimeDep
from app.sessions.schemas import (
    SESSION_ID_PATTERN,
    MemoryUpdate,
    SessionCreate,
    SessionOut,
    SessionUpdate,
)
from app.sessions.service import SessionService

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], responses=ERROR_RESPONSES)

SessionId = Annotated[str, Path(pattern=SESSION_ID_PATTERN)]


async def get_session_service(
    db: DbSession, runtime: RuntimeDep, caller: AgentCaller
) -> SessionService:
    return SessionService(db, tenant_id=caller.tenant_id, runtime=runtime)


SessionServiceDep = Annotated[SessionService, Depends(get_session_service)]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=SessionOut)
async def create_session(
    request: Request,
    body: SessionCreate,
    service: SessionServiceDep,
    idempotency: IdempotencyDep,
    idempotency_key: IdempotencyKey = None,
) -> SessionOut | Response:
    """Create a session: its model, layered system instructions, goal and mode."""
    return await idempotency.run(
        idempotency_key,
        request=(request.method, request.url.path, body),
        session_id=lambda created: created.id,
        status_code=status.HTTP_201_CREATED,
        work=lambda: service.create(body),
    )


@router.get("/{session_id}", response_model=SessionOut)
async def get_session(session_id: SessionId, service: SessionServiceDep) -> SessionOut:
    """A session, the budget its model implies, and its open turn if there is one."""
    return await service.get(session_id)


@router.patch("/{session_id}", response_model=SessionOut)
async def update_session(
    session_id: SessionId, body: SessionUpdate, service: SessionServiceDep
) -> SessionOut:
    """Change a session's model, instructions, goal, mode, memory or budget overrides."""
    return await service.update(session_id, body)


@router.put("/{session_id}/memory", response_model=SessionOut)
async def set_memory(
    session_id: SessionId, body: MemoryUpdate, service: SessionServiceDep
) -> SessionOut:
    """Pin memory to the session: shown after the goal and before the summary, and summary
    lines that repeat it are left out."""
    return await service.set_memory(session_id, body)


@router.delete("/{session_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_session(session_id: SessionId, service: SessionServiceDep) -> Response:
    """Erase a session: its turns, messages, summaries and recorded answers. Its audit rows
    are kept; they hold figures and ids, never content."""
    await service.delete(session_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
