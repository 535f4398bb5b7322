from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Path, Query, Request, Response, status

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.edge import LeanRoute
from app.errors import ERROR_RESPONSES
from app.idempotency.dependencies import IdempotencyKey
from app.idempotency.service import IdempotencyService
from app.models import MessageState
from app.runtime import Runtime
from app.sessions.endpoints import SessionId
from app.tracing import traced_assembly
from app.turns.schemas import (
    AssemblyOut,
    CompleteRequest,
    MessagePage,
    StepRequest,
    SummaryList,
    TurnOut,
    TurnStart,
)
from app.turns.service import TurnService

router = APIRouter(prefix="/v1/sessions/{session_id}", tags=["turns"], responses=ERROR_RESPONSES)


async def get_turn_service(request: Request, db: DbSession, caller: AgentCaller) -> TurnService:
    return TurnService(db, tenant_id=caller.tenant_id, runtime=request.app.state.runtime)


TurnServiceDep = Annotated[TurnService, Depends(get_turn_service)]


@dataclass(frozen=True)
class TurnCall:
    """What an agent's turn call needs: the service, and replay of a retried request. One
    dependency: the hot routes resolve as few as they can on every request."""

    service: TurnService
    idempotency: IdempotencyService


async def get_turn_call(request: Request, db: DbSession, caller: AgentCaller) -> TurnCall:
    runtime: Runtime = request.app.state.runtime
    return TurnCall(
        TurnService(db, tenant_id=caller.tenant_id, runtime=runtime),
        IdempotencyService(
            db, tenant_id=caller.tenant_id, ttl_seconds=runtime.settings.idempotency_ttl_seconds
        ),
    )


TurnCallDep = Annotated[TurnCall, Depends(get_turn_call)]
TurnId = Annotated[str, Path(min_length=1, max_length=64)]
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


def hot_post(path: str, **declaration: Any) -> Callable[[Endpoint], Endpoint]:
    """``@router.post`` for the routes an agent calls around every LLM call: the same
    declaration (and OpenAPI document), served by :class:`app.edge.LeanRoute`."""

    def register(endpoint: Endpoint) -> Endpoint:
        router.add_api_route(
            path, endpoint, methods=["POST"], route_class_override=LeanRoute, **declaration
        )
        return endpoint

    return register


@hot_post("/turns", status_code=status.HTTP_201_CREATED, response_model=AssemblyOut)
async def start_turn(
    request: Request,
    session_id: SessionId,
    body: TurnStart,
    call: TurnCallDep,
    idempotency_key: IdempotencyKey = None,
) -> AssemblyOut | Response:
    """Start a turn with the user's message; returns the prompt for the first LLM call, or
    422 ``context_budget_exceeded`` (nothing stored) when it cannot fit."""
    return await call.idempotency.run(
        idempotency_key,
        request=(request.method, request.url.path, body),
        session_id=session_id,
        status_code=status.HTTP_201_CREATED,
        work=traced_assembly(
            request.app.state.tracer,
            "start_turn",
            session_id,
            lambda: call.service.start_turn(session_id, body),
        ),
    )


@router.get("/turns/{turn_id}", response_model=TurnOut)
async def get_turn(session_id: SessionId, turn_id: TurnId, service: TurnServiceDep) -> TurnOut:
    """One turn: its status, steps and answer."""
    return await service.get_turn(session_id, turn_id)


@hot_post("/turns/{turn_id}/steps", response_model=AssemblyOut)
async def post_step(
    request: Request,
    session_id: SessionId,
    turn_id: TurnId,
    body: StepRequest,
    call: TurnCallDep,
    idempotency_key: IdempotencyKey = None,
) -> AssemblyOut | Response:
    """Post the assistant's tool calls and their results; returns the next prompt."""
    return await call.idempotency.run(
        idempotency_key,
        request=(request.method, request.url.path, body),
        session_id=session_id,
        status_code=status.HTTP_200_OK,
        work=traced_assembly(
            request.app.state.tracer,
            "step",
            session_id,
            lambda: call.service.post_step(session_id, turn_id, body),
        ),
    )


@hot_post("/turns/{turn_id}/complete", response_model=TurnOut)
async def complete_turn(
    request: Request,
    session_id: SessionId,
    turn_id: TurnId,
    body: CompleteRequest,
    call: TurnCallDep,
    idempotency_key: IdempotencyKey = None,
) -> TurnOut | Response:
    """Close the turn with the assistant's answer, as completed or failed."""
    return await call.idempotency.run(
        idempotency_key,
        request=(request.method, request.url.path, body),
        session_id=session_id,
        status_code=status.HTTP_200_OK,
        work=lambda: call.service.complete_turn(session_id, turn_id, body),
    )


@router.get("/messages", response_model=MessagePage)
async def list_messages(
    session_id: SessionId,
    service: TurnServiceDep,
    after_seq: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    state: MessageState | None = None,
) -> MessagePage:
    """Every stored message with its state (active, summarised, pruned), oldest first."""
    return await service.list_messages(session_id, after_seq=after_seq, limit=limit, state=state)


@router.get("/summaries", response_model=SummaryList)
async def list_summaries(
    session_id: SessionId,
    service: TurnServiceDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> SummaryList:
    """The session's summaries, newest first, each fact with the messages it came from."""
    return await service.list_summaries(session_id, limit=limit)
