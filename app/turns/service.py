"""Turns: start, tool steps, completion, and the context assembly each of them runs.

An assembly decides first and writes after: the policy runs on what is stored plus what the
request brings, and only an accepted prompt changes anything. A rejected one leaves the
session exactly as it was and writes its audit row alone.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.budget.assembly import (
    CURRENT_BLOCK,
    HISTORY_BLOCK,
    ChatMessage,
    ContextBlocks,
    chat_message,
    fixed_cost,
    system_message,
)
from app.budget.policy import (
    HistoryMessage,
    history_tokens,
    plan_fallback_truncation,
    plan_prune,
    plan_summary,
)
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TokenCounter, content_text, count_message
from app.errors import BudgetExceededError, ConflictError, NotFoundError
from app.models import (
    AuditRecord,
    MessageRecord,
    MessageState,
    SessionRecord,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)
from app.models.base import utcnow
from app.runtime import Runtime
from app.sessions.repository import SessionRepository
from app.sessions.service import SessionBudget, SessionService, session_budget
from app.summarize import SourceMessage, SummaryRequest
from app.turns.repository import TurnRepository
from app.turns.schemas import (
    Actions,
    AssemblyOut,
    BudgetReport,
    CompleteRequest,
    MessagePage,
    StepRequest,
    StoredMessage,
    SummaryItemOut,
    SummaryList,
    SummaryOut,
    TurnOut,
    TurnStart,
    Usage,
)

logger = logging.getLogger(__name__)

OVERFLOW_GUIDANCE = (
    "Shorten the input (the user message or the tool results of this step), "
    "or start a new session; raising context_limit helps only if the model really has it."
)


def _items(raw: Sequence[Any]) -> tuple[SummaryItem, ...]:
    return tuple(
        SummaryItem(str(item["text"]), tuple(int(i) for i in item.get("source_message_ids", ())))
        for item in raw
    )


def _raw_items(items: Sequence[SummaryItem]) -> list[dict[str, Any]]:
    return [{"text": i.text, "source_message_ids": list(i.source_message_ids)} for i in items]


def summary_content(record: SummaryRecord) -> SummaryContent:
    return SummaryContent(
        summary_text=record.summary_text,
        key_facts=_items(record.key_facts),
        decisions=_items(record.decisions),
        open_questions=_items(record.open_questions),
        action_items=_items(record.action_items),
    )


def to_chat(record: MessageRecord) -> ChatMessage:
    return chat_message(
        role=record.role,
        content=record.content,
        name=record.name,
        tool_calls=record.tool_calls,
        tool_call_id=record.tool_call_id,
    )


def _as_history(record: MessageRecord) -> HistoryMessage:
    return HistoryMessage(
        seq=record.seq,
        turn_seq=record.turn_seq,
        role=record.role,  # type: ignore[arg-type]
        tokens=record.token_count,
        calls_tools=bool(record.tool_calls),
        answers_seq=record.answers_seq,
        message_id=record.id,
    )


@dataclass
class _Summarised:
    content: SummaryContent
    rendered: str
    tokens: int
    sources: list[MessageRecord]


class TurnService:
    """One tenant's turns."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.db = db
        self.runtime = runtime
        self.settings = runtime.settings
        self.metrics = runtime.metrics
        self.sessions = SessionService(
            db, tenant_id=tenant_id, settings=runtime.settings, tokenizers=runtime.tokenizers
        )
        self.session_rows = SessionRepository(db, tenant_id=tenant_id)
        self.turns = TurnRepository(db, tenant_id=tenant_id)
        self.audit = AuditRepository(db)

    # -- the agent's calls ------------------------------------------------------------------

    async def start_turn(self, session_id: str, body: TurnStart) -> AssemblyOut:
        """Start a turn with a user message and return the prompt for its first LLM call."""
        started = time.perf_counter()
        session = await self.sessions.require(session_id, lock=True)
        open_turn = await self.session_rows.open_turn(session_id)
        if open_turn is not None:
            raise ConflictError(
                "turn_in_progress",
                f"turn {open_turn.id} is still open: complete it (status completed or failed) "
                "before starting another",
                details={"turn_id": open_turn.id},
            )
        turn = TurnRecord(
            id=str(uuid.uuid4()),
            tenant_id=session.tenant_id,
            session_id=session_id,
            seq=session.turn_count + 1,
            status=TurnStatus.OPEN,
            steps=0,
        )
        content = body.message.model_dump(mode="json")["content"]
        user = self._message(
            session,
            turn,
            step=0,
            offset=1,
            role="user",
            content=content,
            name=body.message.name,
        )
        return await self._assemble(
            session, turn, step=0, pending=[user], new_turn=True, usage=None, started=started
        )

    async def post_step(self, session_id: str, turn_id: str, body: StepRequest) -> AssemblyOut:
        """Record the assistant's tool calls and their results; return the next prompt."""
        started = time.perf_counter()
        session = await self.sessions.require(session_id, lock=True)
        turn = await self._open_turn(session_id, turn_id)
        step = turn.steps + 1
        tool_calls = [call.model_dump(mode="json") for call in body.assistant.tool_calls]
        assistant = self._message(
            session,
            turn,
            step=step,
            offset=1,
            role="assistant",
            content=body.assistant.content,
            tool_calls=tool_calls,
        )
        results = [
            self._message(
                session,
                turn,
                step=step,
                offset=2 + index,
                role="tool",
                content=result.model_dump(mode="json")["content"],
                tool_call_id=result.tool_call_id,
                answers_seq=assistant.seq,
            )
            for index, result in enumerate(body.tool_results)
        ]
        return await self._assemble(
            session,
            turn,
            step=step,
            pending=[assistant, *results],
            new_turn=False,
            usage=body.usage,
            started=started,
        )

    async def complete_turn(self, session_id: str, turn_id: str, body: CompleteRequest) -> TurnOut:
        """Close a turn with the assistant's answer (or as failed)."""
        session = await self.sessions.require(session_id, lock=True)
        turn = await self._open_turn(session_id, turn_id)
        if body.assistant.content:
            resolved = session_budget(
                session, settings=self.settings, tokenizers=self.runtime.tokenizers
            )
            answer = self._message(
                session,
                turn,
                step=turn.steps,
                offset=1,
                role="assistant",
                content=body.assistant.content,
            )
            self._count([answer], resolved.counter)
            self.db.add(answer)
            session.message_count += 1
        turn.status = TurnStatus(body.status)
        turn.assistant_output = body.assistant.content
        if body.usage is not None:
            turn.usage = body.usage.model_dump(mode="json", exclude_none=True)
        turn.completed_at = utcnow()
        session.updated_at = utcnow()
        await self.db.flush()
        return _turn_out(turn)

    async def get_turn(self, session_id: str, turn_id: str) -> TurnOut:
        """One turn of a session."""
        await self.sessions.require(session_id)
        turn = await self.turns.get_turn(session_id, turn_id)
        if turn is None:
            raise NotFoundError("turn_not_found", f"no turn {turn_id!r} in this session")
        return _turn_out(turn)

    async def list_messages(
        self, session_id: str, *, after_seq: int, limit: int, state: MessageState | None
    ) -> MessagePage:
        """Every stored message in order, whatever its state, a page at a time."""
        await self.sessions.require(session_id)
        rows = await self.turns.list_messages(
            session_id, after_seq=after_seq, limit=limit + 1, state=state
        )
        page = rows[:limit]
        return MessagePage(
            messages=[StoredMessage.model_validate(row, from_attributes=True) for row in page],
            next_after_seq=page[-1].seq if len(rows) > limit else None,
        )

    async def list_summaries(self, session_id: str, *, limit: int) -> SummaryList:
        """A session's summaries, newest first."""
        await self.sessions.require(session_id)
        rows = await self.turns.list_summaries(session_id, limit=limit)
        return SummaryList(summaries=[_summary_out(row) for row in rows])

    # -- assembly ---------------------------------------------------------------------------

    async def _open_turn(self, session_id: str, turn_id: str) -> TurnRecord:
        turn = await self.turns.get_turn(session_id, turn_id)
        if turn is None:
            raise NotFoundError("turn_not_found", f"no turn {turn_id!r} in this session")
        if turn.status != TurnStatus.OPEN:
            raise ConflictError(
                "turn_not_open",
                f"turn {turn_id} is {turn.status}; start a new turn",
                details={"turn_id": turn_id, "status": turn.status},
            )
        return turn

    @staticmethod
    def _message(
        session: SessionRecord,
        turn: TurnRecord,
        *,
        step: int,
        offset: int,
        role: str,
        content: Any,
        name: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        answers_seq: int | None = None,
    ) -> MessageRecord:
        """A new message, not yet stored: ``offset`` places it after the session's last."""
        return MessageRecord(
            tenant_id=session.tenant_id,
            session_id=session.id,
            turn_id=turn.id,
            seq=session.message_count + offset,
            turn_seq=turn.seq,
            step=step,
            role=role,
            content=content,
            name=name,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            answers_seq=answers_seq,
            state=MessageState.ACTIVE,
        )

    @staticmethod
    def _count(records: Sequence[MessageRecord], counter: TokenCounter) -> None:
        """Count new messages, and recount stored ones only if the estimator changed."""
        for record in records:
            if record.token_encoding != counter.name:
                record.token_count = count_message(counter, to_chat(record))
                record.token_encoding = counter.name

    async def _summarise(
        self,
        *,
        resolved: SessionBudget,
        previous: SummaryContent | None,
        sources: list[MessageRecord],
    ) -> _Summarised:
        target = int(self.settings.summary_target_ratio * resolved.budget.input_budget)
        content = await self.runtime.summarizer.summarize(
            SummaryRequest(
                previous=previous,
                messages=tuple(
                    SourceMessage(m.id, m.role, content_text(m.content)) for m in sources
                ),
                target_tokens=target,
                counter=resolved.counter,
            )
        )
        rendered = render_summary(content)
        tokens = resolved.counter.count_text(rendered)
        if not rendered.strip() or tokens > target:
            raise ValueError(f"summary of {tokens} tokens breaks its contract (target {target})")
        return _Summarised(content, rendered, tokens, sources)

    async def _assemble(
        self,
        session: SessionRecord,
        turn: TurnRecord,
        *,
        step: int,
        pending: list[MessageRecord],
        new_turn: bool,
        usage: Usage | None,
        started: float,
    ) -> AssemblyOut:
        settings = self.settings.budget_settings()
        resolved = session_budget(
            session, settings=self.settings, tokenizers=self.runtime.tokenizers
        )
        budget, counter = resolved.budget, resolved.counter

        stored = list(await self.turns.active_messages(session.id))
        self._count([*stored, *pending], counter)
        records = [*stored, *pending]
        by_seq = {record.seq: record for record in records}
        history = [_as_history(record) for record in records]

        latest = await self.turns.latest_summary(session.id)
        previous = summary_content(latest) if latest else None
        blocks = ContextBlocks(
            system_layers=tuple(
                layer
                for layer in (session.system_global, session.system_mode, session.system_role)
                if layer
            ),
            goal=session.goal,
            mode=session.mode,
            memory=session.memory,
            summary=latest.rendered if latest else None,
        )
        fixed = fixed_cost(counter, blocks)

        summary_plan = plan_summary(
            budget=budget,
            settings=settings,
            fixed_tokens=fixed.tokens,
            history=history,
            current_turn_seq=turn.seq,
            turns_since_summary=turn.seq - 1 - (latest.turn_seq if latest else 0),
        )
        summarised: _Summarised | None = None
        left_out: set[int] = set()
        fallback = False
        if summary_plan.triggered:
            sources = [by_seq[seq] for seq in summary_plan.eligible]
            try:
                summarised = await self._summarise(
                    resolved=resolved, previous=previous, sources=sources
                )
            except Exception:
                # Seed 003 §9: never lose history, never store the error as a summary.
                logger.warning(
                    "summariser %s failed for session %s; truncating deterministically",
                    self.runtime.summarizer.name,
                    session.id,
                    exc_info=True,
                )
                self.metrics.summarizer_fallback_count.inc()
                fallback = True
                left_out.update(
                    plan_fallback_truncation(
                        budget=budget,
                        settings=settings,
                        fixed_tokens=fixed.tokens,
                        history=history,
                        eligible=summary_plan.eligible,
                        current_turn_seq=turn.seq,
                        anchor_message_ids=(
                            previous.anchor_message_ids() if previous else frozenset()
                        ),
                    )
                )
            else:
                left_out.update(summary_plan.eligible)
                blocks = blocks.with_summary(summarised.rendered)
                fixed = fixed_cost(counter, blocks)

        remaining = [m for m in history if m.seq not in left_out]
        in_force = summarised.content if summarised else previous
        prune_plan = plan_prune(
            budget=budget,
            settings=settings,
            fixed_tokens=fixed.tokens,
            history=remaining,
            current_turn_seq=turn.seq,
            anchor_message_ids=in_force.anchor_message_ids() if in_force else frozenset(),
        )
        pruned_seqs = set(prune_plan.pruned)
        if fallback:
            pruned_seqs |= left_out
        final = [m for m in remaining if m.seq not in pruned_seqs]
        report_blocks = {
            **fixed.blocks,
            HISTORY_BLOCK: history_tokens(m for m in final if m.turn_seq != turn.seq),
            CURRENT_BLOCK: history_tokens(m for m in final if m.turn_seq == turn.seq),
        }
        usage_after_summary = fixed.tokens + history_tokens(remaining)
        audit = AuditRecord(
            session_id=session.id,
            tenant_id=session.tenant_id,
            turn_id=None if new_turn else turn.id,
            turn_seq=turn.seq,
            step=step,
            model_alias=session.model,
            model_context_limit=budget.model_context_limit,
            input_budget=budget.input_budget,
            estimated_input_tokens_before=summary_plan.usage_before,
            estimated_input_tokens_after_summary=usage_after_summary,
            estimated_input_tokens_after_prune=prune_plan.usage_after_prune,
            summary_triggered=summary_plan.triggered,
            summary_reason=summary_plan.reason,
            summary_fallback=fallback,
            prune_triggered=prune_plan.triggered,
            blocks=report_blocks,
            estimator=counter.name,
            estimator_fallback=resolved.estimator_fallback,
        )
        if resolved.estimator_fallback:
            self.metrics.estimator_fallback_count.inc()

        if not prune_plan.fits(budget):
            rejection = {
                "estimated_input_tokens": prune_plan.usage_after_prune,
                "input_budget": budget.input_budget,
                "model_context_limit": budget.model_context_limit,
                "blocks": report_blocks,
                "guidance": OVERFLOW_GUIDANCE,
            }
            audit.overflow_rejected = True
            audit.rejection = rejection
            audit.kept_message_ids = []
            audit.summarised_message_ids = []
            audit.pruned_message_ids = []
            audit.latency_ms = (time.perf_counter() - started) * 1000
            self.audit.add(audit)
            await self.db.flush()
            self.metrics.overflow_reject_count.inc()
            raise BudgetExceededError(
                f"the prompt needs {prune_plan.usage_after_prune} tokens even after summarising "
                f"and pruning, over the input budget of {budget.input_budget}",
                details={**rejection, "audit_id": audit.id},
            )

        # Accepted: write the turn, the new messages, the summary and the state changes.
        if new_turn:
            self.db.add(turn)
            session.turn_count = turn.seq
            await self.db.flush()  # the turn row before the messages that reference it
        turn.steps = step
        if usage is not None:
            turn.usage = usage.model_dump(mode="json", exclude_none=True)
        self.db.add_all(pending)
        session.message_count += len(pending)
        session.updated_at = utcnow()
        await self.db.flush()

        summarised_ids: list[int] = []
        if summarised is not None:
            sources = summarised.sources
            record = SummaryRecord(
                tenant_id=session.tenant_id,
                session_id=session.id,
                turn_id=turn.id,
                turn_seq=turn.seq,
                from_message_id=latest.from_message_id if latest else sources[0].id,
                to_message_id=sources[-1].id,
                from_seq=latest.from_seq if latest else sources[0].seq,
                to_seq=sources[-1].seq,
                summary_text=summarised.content.summary_text,
                key_facts=_raw_items(summarised.content.key_facts),
                decisions=_raw_items(summarised.content.decisions),
                open_questions=_raw_items(summarised.content.open_questions),
                action_items=_raw_items(summarised.content.action_items),
                rendered=summarised.rendered,
                token_count=summarised.tokens,
                token_encoding=counter.name,
                summarizer=self.runtime.summarizer.name,
            )
            self.db.add(record)
            await self.db.flush()
            summarised_ids = [m.id for m in sources]
            await self.turns.set_state(
                session.id, summarised_ids, MessageState.SUMMARISED, summary_id=record.id
            )
            audit.summary_id = record.id
            self.metrics.summary_count.labels(summary_plan.reason or "threshold").inc()
        pruned_ids = [by_seq[seq].id for seq in sorted(pruned_seqs)]
        await self.turns.set_state(session.id, pruned_ids, MessageState.PRUNED)
        if prune_plan.pruned:
            self.metrics.prune_count.inc()

        messages: list[ChatMessage] = []
        head = system_message(blocks)
        if head is not None:
            messages.append(head)
        messages.extend(to_chat(by_seq[m.seq]) for m in final)

        audit.turn_id = turn.id
        audit.kept_message_ids = [by_seq[m.seq].id for m in final]
        audit.summarised_message_ids = summarised_ids
        audit.pruned_message_ids = pruned_ids
        audit.overflow_rejected = False
        audit.latency_ms = (time.perf_counter() - started) * 1000
        self.audit.add(audit)
        await self.db.flush()

        self.metrics.prompt_tokens.labels(session.model).observe(prune_plan.usage_after_prune)
        self.metrics.assembly_latency.observe(time.perf_counter() - started)
        return AssemblyOut(
            turn_id=turn.id,
            step=step,
            messages=messages,
            budget=BudgetReport(
                model_context_limit=budget.model_context_limit,
                input_budget=budget.input_budget,
                estimated_input_tokens=prune_plan.usage_after_prune,
                blocks=report_blocks,
                estimator=counter.name,
            ),
            actions=Actions(
                summary_triggered=summary_plan.triggered,
                summary_reason=summary_plan.reason,
                summary_fallback=fallback,
                prune_triggered=prune_plan.triggered,
                summarised_message_ids=summarised_ids,
                pruned_message_ids=pruned_ids,
            ),
            audit_id=audit.id,
        )


def _turn_out(turn: TurnRecord) -> TurnOut:
    return TurnOut(
        id=turn.id,
        session_id=turn.session_id,
        seq=turn.seq,
        status=turn.status,
        steps=turn.steps,
        assistant_output=turn.assistant_output,
        usage=turn.usage,
        started_at=turn.started_at,
        completed_at=turn.completed_at,
    )


def _summary_out(record: SummaryRecord) -> SummaryOut:
    def items(raw: Sequence[Any]) -> list[SummaryItemOut]:
        return [
            SummaryItemOut(text=i.text, source_message_ids=list(i.source_message_ids))
            for i in _items(raw)
        ]

    return SummaryOut(
        id=record.id,
        session_id=record.session_id,
        turn_id=record.turn_id,
        turn_seq=record.turn_seq,
        from_message_id=record.from_message_id,
        to_message_id=record.to_message_id,
        summary_text=record.summary_text,
        key_facts=items(record.key_facts),
        decisions=items(record.decisions),
        open_questions=items(record.open_questions),
        action_items=items(record.action_items),
        rendered=record.rendered,
        token_count=record.token_count,
        summarizer=record.summarizer,
        created_at=record.created_at,
    )
