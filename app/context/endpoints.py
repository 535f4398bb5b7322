from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.auth.dependencies import require
from app.auth.service import Scope
from app.context.schemas import TrimRequest, TrimResponse, TruncateRequest, TruncateResponse
from app.context.service import ContextService
from app.errors import ERROR_RESPONSES
from app.offload import off_the_loop
from app.runtime import RuntimeDep

# Stateless, but an agent's tool all the same: callers need an agent key.
router = APIRouter(
    prefix="/v1/context",
    tags=["stateless toolkit"],
    responses=ERROR_RESPONSES,
    dependencies=[Depends(require(Scope.AGENT))],
)


async def get_context_service(runtime: RuntimeDep) -> ContextService:
    return ContextService(runtime=runtime)


ContextServiceDep = Annotated[ContextService, Depends(get_context_service)]


@router.post("/trim", response_model=TrimResponse)
async def trim(body: TrimRequest, service: ContextServiceDep) -> TrimResponse:
    """Trim a message list you keep yourself: lazily, at a threshold of the model's input
    budget, replacing old assistant and tool content by ``[trimmed]``. Send back the returned
    ``trimmed_up_to_message_index`` next time: it never decreases, so the prefix stays
    cacheable."""
    return await off_the_loop(lambda: service.trim(body))


@router.post("/truncate", response_model=TruncateResponse)
async def truncate(body: TruncateRequest, service: ContextServiceDep) -> TruncateResponse:
    """Keep the system prompt and the last ``keep`` messages, never leaving a tool result
    without the call it answers."""
    return await off_the_loop(lambda: service.truncate(body))
