"""A drop-in request's two units of work around the forwarded call.

1. **prepare** (before forwarding, committed before the upstream is called): the session
   (created from the request when its id is new), the agent's history matched against the
   stored one (:mod:`app.proxy.history`), the new part stored as a turn start or a step by
   the turns service, which assembles the prompt and writes its audit row. The request's
   fingerprint is its idempotency key: an identical request (an SDK's retry after an upstream
   failure) replays the assembly and stores nothing twice.
2. **record** (after the answer): a final answer completes the turn; an answer that calls
   tools leaves it open (the calls are stored with their results, from the agent's next
   request) and its usage goes to calibration and the audit row's cache figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from pydantic import RootModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.db import WriteBatch
from app.errors import BudgetExceededError, ConflictError
from app.idempotency.service import IdempotencyService
from app.metrics import model_label
from app.proxy.answer import Answer
from app.proxy.conversation import (
    AssistantUnit,
    Conversation,
    ConversationError,
    Protocol,
    ResultsUnit,
    Unit,
    UserUnit,
)
from app.proxy.history import ANCHOR, Plan, plan
from app.proxy.repository import OpenTurnRef, ProxyRepository
from app.runtime import Runtime
from app.sessions.repository import SessionRepository
from app.sessions.schemas import SessionCreate, SessionUpdate, SystemLayers
from app.sessions.service import SessionService
from app.turns.schemas import (
    AssemblyOut,
    CompleteRequest,
    StepRequest,
    TurnStart,
    UserMessage,
)
from app.turns.service import TurnService

logger = logging.getLogger(__name__)


class _Fingerprint(RootModel[str]):
    """The request as the idempotency record knows it."""


@dataclass(frozen=True)
class Prepared:
    assembly: AssemblyOut
    #: How the history matched ("replayed": an identical request was answered before).
    history: str


def request_key(protocol: Protocol, session_id: str, raw_body: bytes) -> str:
    """The idempotency key of a drop-in request: the same bytes on the same session are the
    same request (an SDK retries with the very body it sent; hashing the bytes costs a few
    milliseconds even for a long history, where re-serialising it would cost tens)."""
    digest = hashlib.sha256(f"{protocol}\n{session_id}\n".encode())
    digest.update(raw_body)
    return f"drop-in:{digest.hexdigest()}"


def chat_tools(protocol: Protocol, tools: Any) -> list[dict[str, Any]] | None:
    """The request's function tools in the chat shape sessions count them in (Anthropic's
    server tools are the provider's: not counted)."""
    if not isinstance(tools, list) or not tools:
        return None
    if protocol == "openai":
        # Function tools, as sessions count them (custom tools: the provider's to count).
        functions = [
            {"type": "function", "function": tool["function"]}
            for tool in tools
            if isinstance(tool, dict)
            and tool.get("type", "function") == "function"
            and isinstance(tool.get("function"), dict)
        ]
        return functions or None
    converted = [
        {
            "type": "function",
            "function": {
                "name": tool.get("name"),
                **({"description": tool["description"]} if tool.get("description") else {}),
                "parameters": tool.get("input_schema") or {"type": "object"},
            },
        }
        for tool in tools
        if isinstance(tool, dict) and "input_schema" in tool
    ]
    return converted or None


def max_output_tokens(body: Mapping[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class DropInService:
    """One tenant's drop-in requests on one database session (one unit of work)."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.db = db
        self.tenant_id = tenant_id
        self.runtime = runtime
        self.turns = TurnService(db, tenant_id=tenant_id, runtime=runtime)
        self.sessions = SessionService(db, tenant_id=tenant_id, runtime=runtime)
        self.session_rows = SessionRepository(db, tenant_id=tenant_id)
        self.proxy = ProxyRepository(db, tenant_id=tenant_id)
        self.idempotency = IdempotencyService(
            db, tenant_id=tenant_id, ttl_seconds=runtime.settings.idempotency_ttl_seconds
        )

    async def prepare(
        self,
        session_id: str,
        *,
        protocol: Protocol,
        path: str,
        body: Mapping[str, Any],
        raw_body: bytes,
        conversation: Conversation,
    ) -> Prepared:
        """Store what is new in the request and assemble its prompt (see the module)."""
        await self._session(session_id, protocol, body, conversation)
        made: list[Prepared] = []

        async def work() -> AssemblyOut:
            assembly, note = await self._store(session_id, protocol, conversation)
            await self.proxy.note_on_audit(assembly.audit_id, note)
            made.append(Prepared(assembly, str(note["history"])))
            return assembly

        key = request_key(protocol, session_id, raw_body)
        result = await self.idempotency.run(
            key,
            request=("POST", path, _Fingerprint(key)),
            session_id=session_id,
            status_code=200,
            work=work,
        )
        if made:  # done now (the answer is also recorded for a retry)
            return made[0]
        if isinstance(result, AssemblyOut):
            return Prepared(result, "replayed")
        replayed = json.loads(bytes(result.body))
        if result.status_code != 200:  # the recorded rejection of the same request
            error = replayed.get("error", {})
            raise ReplayedRejection(error.get("details") or {})
        return Prepared(AssemblyOut.model_validate(replayed), "replayed")

    async def _session(
        self,
        session_id: str,
        protocol: Protocol,
        body: Mapping[str, Any],
        conversation: Conversation,
    ) -> None:
        """Lock the session (created from the request's model, system text, tools and output
        limit when it does not exist yet); a system text or tools that changed update a session
        made that way."""
        tools = chat_tools(protocol, body.get("tools"))
        record = await self.session_rows.get(session_id, lock=True)
        if record is None:
            # A concurrent first request may have made it: the lock below waits for it. In a
            # savepoint, so that the refused insert leaves this transaction usable.
            with suppress(ConflictError):
                async with self.db.begin_nested():
                    await self.sessions.create(
                        SessionCreate.model_validate(
                            {
                                "id": session_id,
                                "model": body.get("model"),
                                "system": SystemLayers.model_validate(
                                    {"global": conversation.system}
                                ),
                                "tools": tools,
                                "max_output_tokens": max_output_tokens(body),
                                "metadata": {"created_by": f"drop-in {protocol}"},
                            }
                        )
                    )
            record = await self.session_rows.get(session_id, lock=True)
            assert record is not None
            return
        if not str((record.session_metadata or {}).get("created_by", "")).startswith("drop-in"):
            return  # a session made with the sessions API keeps its own layers and tools
        changes: dict[str, Any] = {}
        if record.system_global != conversation.system:
            changes["system"] = SystemLayers.model_validate(
                {
                    "global": conversation.system,
                    "mode": record.system_mode,
                    "role": record.system_role,
                }
            )
        if (record.tools or None) != tools:
            changes["tools"] = tools
        if changes:
            await self.sessions.update(session_id, SessionUpdate.model_validate(changes))

    async def _store(
        self, session_id: str, protocol: Protocol, conversation: Conversation
    ) -> tuple[AssemblyOut, dict[str, Any]]:
        stored = await self.proxy.last_fingerprints(session_id, limit=ANCHOR)
        matched: Plan = plan(conversation.units, stored)
        note: dict[str, Any] = dict(matched.note)
        open_turn = await self.proxy.open_turn(session_id)
        skipped = 0
        for group in _groups(matched.imported):
            open_turn, assembly, was_skipped = await self._apply(
                session_id, protocol, group, open_turn, conversation
            )
            skipped += was_skipped
        if skipped:
            note["not_imported_messages"] = skipped
        try:
            _, assembly, _ = await self._apply(
                session_id, protocol, matched.new, open_turn, conversation, reopen=True
            )
        except BudgetExceededError as error:
            # The rejection's audit row is kept: it says how the history matched too.
            audit_id = (error.details or {}).get("audit_id")
            if isinstance(audit_id, int):
                await self.proxy.note_on_audit(audit_id, note)
            raise
        if assembly is None:  # the new part is a start or a step: it always assembles
            raise ConversationError("messages: nothing to send")
        return assembly, note

    async def _apply(
        self,
        session_id: str,
        protocol: Protocol,
        group: Sequence[Unit],
        open_turn: OpenTurnRef | None,
        conversation: Conversation,
        *,
        reopen: bool = False,
    ) -> tuple[OpenTurnRef | None, AssemblyOut | None, int]:
        """One unit (or an assistant message and its results) through the turns service:
        (the open turn after it, the assembly when one was made, messages skipped)."""
        first = group[0]
        if isinstance(first, UserUnit):
            if open_turn is not None:
                # The previous call's answer never came back (or the agent moved on without
                # it): that turn failed; its messages stay.
                await self.turns.complete_turn(
                    session_id, open_turn.id, CompleteRequest(status="failed")
                )
            assembly = await self.turns.start_turn(session_id, _turn_start(first, protocol))
            return OpenTurnRef(assembly.turn_id, 0), assembly, 0
        if isinstance(first, AssistantUnit) and len(group) == 2:
            results = group[1]
            assert isinstance(results, ResultsUnit)
            if open_turn is None:
                if not reopen:
                    return None, None, 1 + len(results.results)
                # Tool results on a turn that is closed (the agent rewound): a turn of their
                # own, started again by the user's last message, so no call goes unanswered.
                user = _last_user(conversation.units)
                started = await self.turns.start_turn(session_id, _turn_start(user, protocol))
                open_turn = OpenTurnRef(started.turn_id, 0)
            step = StepRequest.model_validate(
                {
                    "assistant": first.message,
                    "tool_results": list(results.results),
                    "format": protocol,
                }
            )
            assembly = await self.turns.post_step(session_id, open_turn.id, step)
            return OpenTurnRef(open_turn.id, assembly.step), assembly, 0
        if isinstance(first, AssistantUnit) and not first.call_ids and open_turn is not None:
            await self.turns.complete_turn(
                session_id,
                open_turn.id,
                CompleteRequest.model_validate({"assistant": first.message}),
            )
            return None, None, 0
        return (
            open_turn,
            None,
            sum(len(u.results) if isinstance(u, ResultsUnit) else 1 for u in group),
        )

    async def record(self, session_id: str, assembly: AssemblyOut, answer: Answer) -> bool:
        """Record the provider's answer to ``assembly``'s prompt; False when the session moved
        on meanwhile (a later request took the turn further): nothing is recorded twice."""
        session = await self.session_rows.get(session_id, lock=True)
        open_turn = await self.proxy.open_turn(session_id)
        if session is None or open_turn is None or open_turn.id != assembly.turn_id:
            return False
        if open_turn.steps != assembly.step:
            return False
        if not answer.calls_tools:
            try:
                request = CompleteRequest.model_validate(
                    {"assistant": answer.message, "usage": answer.usage}
                )
            except ValidationError as error:
                logger.warning("answer of turn %s not storable: %s", assembly.turn_id, error)
                request = CompleteRequest(status="failed", usage=answer.usage)
            await self.turns.complete_turn(session_id, assembly.turn_id, request)
            return True
        # The calls are stored with their results, from the agent's next request (byte-exact,
        # as the agent sends them back); the usage belongs to this prompt now.
        usage = answer.usage
        if usage is not None:
            await self.runtime.calibration(self.db).learn(
                session,
                turn_id=assembly.turn_id,
                step=assembly.step,
                prompt_tokens=usage.prompt_tokens,
            )
            cached = usage.cache_read_tokens
            if cached is not None:
                batch = WriteBatch()
                AuditRepository(self.db).record_cache_read(
                    batch,
                    tenant_id=self.tenant_id,
                    session_id=session_id,
                    turn_id=assembly.turn_id,
                    step=assembly.step,
                    tokens=cached,
                )
                await batch.send(await self.db.connection())
                self.runtime.metrics.prompt_cache_read_tokens.labels(
                    model_label(session.model)
                ).inc(cached)
        return True


class ReplayedRejection(Exception):
    """An identical request was rejected before: its rejection again (no second audit row)."""

    def __init__(self, details: dict[str, Any]) -> None:
        super().__init__("the prompt does not fit")
        self.details = details


def _turn_start(unit: UserUnit, protocol: Protocol) -> TurnStart:
    return TurnStart(
        message=UserMessage.model_validate({"content": unit.content, "name": unit.name}),
        format=protocol,
    )


def _last_user(units: Sequence[Unit]) -> UserUnit:
    for unit in reversed(units):
        if isinstance(unit, UserUnit):
            return unit
    raise ConversationError("messages: tool results with no user message before them")


def _groups(units: Sequence[Unit]) -> list[tuple[Unit, ...]]:
    """Units in the groups the turns API takes: an assistant message with tool calls goes
    with the results after it."""
    groups: list[tuple[Unit, ...]] = []
    index = 0
    while index < len(units):
        unit = units[index]
        following = units[index + 1] if index + 1 < len(units) else None
        if isinstance(unit, AssistantUnit) and unit.call_ids and isinstance(following, ResultsUnit):
            groups.append((unit, following))
            index += 2
        else:
            groups.append((unit,))
            index += 1
    return groups
