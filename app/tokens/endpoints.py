from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.errors import ERROR_RESPONSES
from app.runtime import RuntimeDep
from app.tokens.schemas import CountOut, CountRequest, ModelList, ModelOut
from app.tokens.service import TokenService

router = APIRouter(prefix="/v1", tags=["tokens"], responses=ERROR_RESPONSES)


async def get_token_service(
    db: DbSession, runtime: RuntimeDep, caller: AgentCaller
) -> TokenService:
    return TokenService(db, tenant_id=caller.tenant_id, runtime=runtime)


TokenServiceDep = Annotated[TokenService, Depends(get_token_service)]


@router.post("/tokens/count", response_model=CountOut)
async def count_tokens(body: CountRequest, service: TokenServiceDep) -> CountOut:
    """Count a chat request's input tokens (messages and tool definitions) for a model,
    exactly as a turn counts its prompt, with the calibration in force."""
    return await service.count(body)


@router.get("/models", response_model=ModelList)
async def list_models(service: TokenServiceDep) -> ModelList:
    """The model table (built-in and operator entries): limits, how each is counted, and
    what calibration has learnt for it."""
    return await service.models()


@router.get("/models/{name:path}", response_model=ModelOut)
async def get_model(name: str, service: TokenServiceDep) -> ModelOut:
    """What a model name resolves to (a dated or provider-prefixed alias finds its entry;
    an unknown name gets the defaults)."""
    return await service.model(name)
