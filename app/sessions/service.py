"""Sessions: create, read, change, delete; and the budget a session's model implies."""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.auth.service import TENANT_PATTERN
from app.errors import ConflictError, InvalidRequestError, NotFoundError
from app.models import SessionRecord
from app.search.repository import SearchRepository
from app.sessions.repository import SessionRepository
from app.sessions.schemas import (
    BlockCaps,
    BudgetOut,
    MemoryUpdate,
    RecallSettings,
    SessionCreate,
    SessionOut,
    SessionUpdate,
    SystemLayersOut,
)
from app.tokens.budgets import resolve_budget, session_budget
from app.tokens.schemas import ToolDefinition

if TYPE_CHECKING:
    from app.runtime import Runtime


def session_not_found(session_id: str) -> NotFoundError:
    return NotFoundError("session_not_found", f"no session {session_id!r}")


async def count_sessions(db: AsyncSession, *, tenant_id: str) -> int:
    """How many sessions a tenant has."""
    return await SessionRepository(db, tenant_id=tenant_id).count()


async def hand_over_sessions(db: AsyncSession, *, from_tenant: str, to_tenant: str) -> int:
    """Give every session of ``from_tenant`` (with all it holds, and the tenant's audit rows)
    to ``to_tenant``, e.g. the sessions made while the service ran open (tenant ``default``)
    to the tenant of its first key. Returns how many sessions moved. 409 ``session_exists``,
    moving nothing, when ``to_tenant`` already uses one of their ids."""
    if not re.fullmatch(TENANT_PATTERN, to_tenant):
        raise InvalidRequestError(f"tenant ids match {TENANT_PATTERN}: {to_tenant!r}")
    if to_tenant == from_tenant:
        raise InvalidRequestError(f"the sessions already belong to tenant {to_tenant!r}")
    sessions = SessionRepository(db, tenant_id=from_tenant)
    clashes = await sessions.ids_also_used_by(to_tenant)
    if clashes:
        shown = ", ".join(repr(session_id) for session_id in clashes[:10])
        more = f" and {len(clashes) - 10} more" if len(clashes) > 10 else ""
        raise ConflictError(
            "session_exists",
            f"tenant {to_tenant!r} already has sessions with the ids {shown}{more}: nothing "
            "was moved (delete one of each pair first)",
        )
    moved = await sessions.count()
    await sessions.hand_over(to_tenant)
    await AuditRepository(db).hand_over(from_tenant, to_tenant)
    return moved


class SessionService:
    """One tenant's sessions."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.sessions = SessionRepository(db, tenant_id=tenant_id)
        self.tenant_id = tenant_id
        self.db = db
        self.settings = runtime.settings
        self.tokenizers = runtime.tokenizers
        self.calibration = runtime.calibration(db)
        self.folds_ahead = runtime.folds_ahead
        self.kept_rows = runtime.kept_rows

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
            recall=request.recall.model_dump() if request.recall else None,
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
        if "recall" in changes:
            record.recall = request.recall.model_dump() if request.recall else None
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
        await SearchRepository(self.db, tenant_id=record.tenant_id).forget_erased()
        # A fold made ahead holds the erased text: it goes too (this worker's; another
        # worker's is never taken, its messages being gone, and gives way to newer ones).
        self.folds_ahead.erase(record.tenant_id, session_id)
        self.kept_rows.discard(record.tenant_id, session_id)

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
            recall=RecallSettings(**record.recall) if record.recall else None,
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
