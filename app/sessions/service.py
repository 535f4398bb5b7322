"""Sessions: create, read, change, delete; and the budget a session's model implies."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.budget.policy import Budget, compute_budget
from app.budget.tokens import ModelSpec, TokenCounter, TokenizerRegistry
from app.errors import ConflictError, InvalidBudgetError, NotFoundError
from app.models import SessionRecord
from app.sessions.repository import SessionRepository
from app.sessions.schemas import (
    BlockCaps,
    BudgetOut,
    MemoryUpdate,
    SessionCreate,
    SessionOut,
    SessionUpdate,
    SystemLayersOut,
)
from app.settings import Settings
from app.tokens.calibration import CalibrationService
from app.tokens.schemas import ToolDefinition


@dataclass(frozen=True)
class SessionBudget:
    """What a session's model and overrides mean for its prompts."""

    spec: ModelSpec
    budget: Budget
    counter: TokenCounter
    estimator_fallback: bool
    #: The calibration ratio in force: ``budget.input_budget`` is the model's input budget
    #: divided by it, which is the same as counting every estimate that much higher.
    calibration_ratio: float = 1.0

    def calibrated(self, ratio: float) -> SessionBudget:
        """The budget with a calibration ratio applied (1.0 leaves it as it is)."""
        if ratio == 1.0:
            return self
        input_budget = max(1, math.floor(self.budget.input_budget / ratio))
        return replace(
            self,
            budget=replace(self.budget, input_budget=input_budget),
            calibration_ratio=ratio,
        )


def resolve_budget(
    *,
    model: str,
    context_limit: int | None,
    max_output_tokens: int | None,
    settings: Settings,
    tokenizers: TokenizerRegistry,
) -> SessionBudget:
    spec = tokenizers.lookup(model, default_context_limit=settings.default_context_limit)
    budget = compute_budget(
        model_context_limit=context_limit or spec.context_limit,
        max_output_tokens=max_output_tokens or settings.max_output_tokens,
        settings=settings.budget_settings(),
    )
    if not budget.valid:
        raise InvalidBudgetError(
            f"a {budget.model_context_limit}-token context leaves no input budget once "
            f"{budget.output_reserve} tokens are reserved for output and "
            f"{budget.overhead_reserve} for overhead; raise context_limit or lower "
            "max_output_tokens",
            details={
                "model_context_limit": budget.model_context_limit,
                "output_reserve": budget.output_reserve,
                "overhead_reserve": budget.overhead_reserve,
                "input_budget": budget.input_budget,
            },
        )
    counter, fell_back = tokenizers.counter_for(spec)
    return SessionBudget(spec, budget, counter, fell_back)


def session_budget(
    record: SessionRecord, *, settings: Settings, tokenizers: TokenizerRegistry
) -> SessionBudget:
    return resolve_budget(
        model=record.model,
        context_limit=record.context_limit,
        max_output_tokens=record.max_output_tokens,
        settings=settings,
        tokenizers=tokenizers,
    )


def session_not_found(session_id: str) -> NotFoundError:
    return NotFoundError("session_not_found", f"no session {session_id!r}")


class SessionService:
    """One tenant's sessions."""

    def __init__(
        self,
        db: AsyncSession,
        *,
        tenant_id: str,
        settings: Settings,
        tokenizers: TokenizerRegistry,
    ) -> None:
        self.sessions = SessionRepository(db, tenant_id=tenant_id)
        self.tenant_id = tenant_id
        self.db = db
        self.settings = settings
        self.tokenizers = tokenizers
        self.calibration = CalibrationService(db, settings=settings, tokenizers=tokenizers)

    async def create(self, request: SessionCreate) -> SessionOut:
        """Create a session; 409 when the tenant already has one with the chosen id, 422 when
        its budget is empty."""
        resolve_budget(
            model=request.model,
            context_limit=request.context_limit,
            max_output_tokens=request.max_output_tokens,
            settings=self.settings,
            tokenizers=self.tokenizers,
        )
        session_id = request.id or str(uuid.uuid4())
        if await self.sessions.get(session_id) is not None:
            raise ConflictError("session_exists", f"session {session_id!r} already exists")
        record = SessionRecord(
            id=session_id,
            tenant_id=self.tenant_id,
            model=request.model,
            system_global=request.system.global_,
            system_mode=request.system.mode,
            system_role=request.system.role,
            goal=request.goal,
            mode=request.mode,
            session_metadata=request.metadata,
            memory=request.memory,
            tools=_tools(request.tools),
            max_output_tokens=request.max_output_tokens,
            context_limit=request.context_limit,
            block_caps=request.block_caps.model_dump() if request.block_caps else None,
            turn_count=0,
            message_count=0,
        )
        self.sessions.add(record)
        try:
            await self.db.flush()
        except IntegrityError as error:  # created by a concurrent request in the meantime
            raise ConflictError(
                "session_exists", f"session {session_id!r} already exists"
            ) from error
        return await self._out(record)

    async def require(self, session_id: str, *, lock: bool = False) -> SessionRecord:
        record = await self.sessions.get(session_id, lock=lock)
        if record is None:
            raise session_not_found(session_id)
        return record

    async def get(self, session_id: str) -> SessionOut:
        """A session with the budget its model implies and its open turn, if any."""
        return await self._out(await self.require(session_id))

    async def update(self, session_id: str, request: SessionUpdate) -> SessionOut:
        """Change what was sent; the resulting budget must still leave room for input."""
        record = await self.require(session_id, lock=True)
        changes = request.model_dump(exclude_unset=True)
        resolve_budget(
            model=changes.get("model") or record.model,
            context_limit=changes.get("context_limit", record.context_limit),
            max_output_tokens=changes.get("max_output_tokens", record.max_output_tokens),
            settings=self.settings,
            tokenizers=self.tokenizers,
        )
        if request.model is not None:
            record.model = request.model
        if "system" in changes:
            layers = request.system
            record.system_global = layers.global_ if layers else None
            record.system_mode = layers.mode if layers else None
            record.system_role = layers.role if layers else None
        if "metadata" in changes:
            record.session_metadata = request.metadata or {}
        if "block_caps" in changes:
            record.block_caps = request.block_caps.model_dump() if request.block_caps else None
        if "tools" in changes:
            record.tools = _tools(request.tools)
        for field in ("goal", "mode", "memory", "max_output_tokens", "context_limit"):
            if field in changes:
                setattr(record, field, changes[field])
        await self.db.flush()
        await self.db.refresh(record)
        return await self._out(record)

    async def set_memory(self, session_id: str, request: MemoryUpdate) -> SessionOut:
        """Replace the session's pinned memory (null clears it)."""
        record = await self.require(session_id, lock=True)
        record.memory = request.memory
        await self.db.flush()
        await self.db.refresh(record)
        return await self._out(record)

    async def delete(self, session_id: str) -> None:
        """Erase a session: its turns, messages, summaries and recorded answers go with it
        (the database cascades); its audit rows stay, with figures and ids but no content."""
        record = await self.require(session_id, lock=True)
        await self.sessions.delete(record)
        await self.db.flush()

    async def _out(self, record: SessionRecord) -> SessionOut:
        resolved = await self.calibration.apply(
            record.tenant_id,
            session_budget(record, settings=self.settings, tokenizers=self.tokenizers),
        )
        open_turn = await self.sessions.open_turn(record.id)
        return SessionOut(
            id=record.id,
            tenant_id=record.tenant_id,
            model=record.model,
            system=SystemLayersOut(
                global_=record.system_global, mode=record.system_mode, role=record.system_role
            ),
            goal=record.goal,
            mode=record.mode,
            metadata=record.session_metadata,
            memory=record.memory,
            tools=record.tools,
            max_output_tokens=record.max_output_tokens,
            context_limit=record.context_limit,
            block_caps=BlockCaps(**record.block_caps) if record.block_caps else None,
            budget=BudgetOut(
                model_context_limit=resolved.budget.model_context_limit,
                output_reserve=resolved.budget.output_reserve,
                overhead_reserve=resolved.budget.overhead_reserve,
                input_budget=resolved.budget.input_budget,
                estimator=resolved.counter.name,
                calibration_ratio=resolved.calibration_ratio,
            ),
            turn_count=record.turn_count,
            message_count=record.message_count,
            open_turn_id=open_turn.id if open_turn else None,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


def _tools(tools: list[ToolDefinition] | None) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    return [tool.model_dump(mode="json", exclude_none=True) for tool in tools]
