"""Turns: start, tool steps, completion, and the context assembly each of them runs.

An assembly decides first and writes after: the policy runs on what is stored plus what the
request brings, and only an accepted prompt changes anything. A rejected one leaves the
session exactly as it was and writes its audit row alone.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.audit.telemetry import log_budget_telemetry
from app.budget.anthropic import to_anthropic
from app.budget.assembly import (
    CURRENT_BLOCK,
    HISTORY_BLOCK,
    SUMMARY_BLOCK,
    ChatMessage,
    ContextBlocks,
    chat_message,
    comparable_fingerprint,
    first_difference,
    fixed_cost,
    prompt_fingerprint,
    system_message,
)
from app.budget.blocks import (
    BlockCaps,
    BlockTelemetry,
    cap_summary,
    cap_text,
    dedupe_summary,
    history_over_cap,
)
from app.budget.policy import (
    Budget,
    HistoryMessage,
    history_tokens,
    plan_fallback_truncation,
    plan_prune,
    plan_summary,
)
from app.budget.summary import SummaryContent, SummaryItem, has_lines, render_summary
from app.budget.tokens import TokenCounter, content_text, count_message
from app.errors import BudgetExceededError, ConflictError, NotFoundError
from app.metrics import model_label
from app.models import (
    AuditRecord,
    MessageRecord,
    MessageState,
    SessionRecord,
    SummaryJobRecord,
    SummaryJobStatus,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)
from app.models.base import utcnow
from app.runtime import Runtime
from app.sessions.repository import SessionRepository
from app.sessions.service import SessionBudget, SessionService, session_budget
from app.summarize import SourceMessage, SummaryRequest
from app.summary_jobs.repository import SummaryJobRepository
from app.tokens.calibration import CalibrationService
from app.turns.repository import AssemblyState, SummaryHead, TurnRepository
from app.turns.schemas import (
    Actions,
    AssemblyOut,
    BudgetReport,
    CompleteRequest,
    MessagePage,
    PromptFormat,
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


async def summarise_sources(
    runtime: Runtime,
    *,
    resolved: SessionBudget,
    previous: SummaryContent | None,
    sources: Sequence[MessageRecord],
) -> _Summarised:
    """Fold ``sources`` into ``previous`` with the runtime's summariser; raises when the
    summary breaks its contract (empty, or over its token target)."""
    target = int(runtime.settings.summary_target_ratio * resolved.budget.input_budget)
    content = await runtime.summarizer.summarize(
        SummaryRequest(
            previous=previous,
            messages=tuple(SourceMessage(m.id, m.role, content_text(m.content)) for m in sources),
            target_tokens=target,
            counter=resolved.counter,
        )
    )
    rendered = render_summary(content)
    tokens = resolved.counter.count_text(rendered)
    if not rendered.strip() or tokens > target:
        raise ValueError(f"summary of {tokens} tokens breaks its contract (target {target})")
    return _Summarised(content, rendered, tokens, list(sources))


def summary_record(
    summarised: _Summarised,
    *,
    tenant_id: str,
    session_id: str,
    latest: SummaryRecord | SummaryHead | None,
    turn_id: str | None,
    turn_seq: int,
    encoding: str,
    summarizer: str,
) -> SummaryRecord:
    """The row of a new summary: it covers the previous summary's range and its sources."""
    sources = summarised.sources
    return SummaryRecord(
        tenant_id=tenant_id,
        session_id=session_id,
        turn_id=turn_id,
        turn_seq=turn_seq,
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
        token_encoding=encoding,
        summarizer=summarizer,
    )


@dataclass
class _BlockShaper:
    """Memory and summary as the prompt shows them: summary lines that repeat memory dropped,
    each block within its cap (read-time and deterministic, so the prefix stays stable)."""

    session: SessionRecord
    counter: TokenCounter
    caps: BlockCaps
    dedupe: bool
    telemetry: dict[str, BlockTelemetry]

    def blocks(self, summary: SummaryContent | None, *, room: int | None = None) -> ContextBlocks:
        """The session's blocks; ``room`` squeezes summary then memory under a total cap."""
        memory_cap = self.caps.memory
        summary_cap = self.caps.summary
        if room is not None:
            summary_cap = room if summary_cap is None else min(summary_cap, room)
        memory, memory_removed = cap_text(self.session.memory, memory_cap, self.counter)
        rendered: str | None = None
        if summary is not None:
            shown, duplicates = dedupe_summary(summary, memory) if self.dedupe else (summary, 0)
            shown, capped = cap_summary(shown, summary_cap, self.counter)
            rendered = render_summary(shown) if has_lines(shown) else None
            changed = duplicates + capped
            after = self.counter.count_text(rendered) if changed and rendered else 0
            self.telemetry["summary"] = BlockTelemetry(
                tokens_before=self.counter.count_text(render_summary(summary)) if changed else 0,
                tokens_after=after,
                lines_removed=changed,
                extra={"duplicate_lines_removed": duplicates},
            )
        if room is not None and rendered is None and memory is not None:
            memory, more = cap_text(memory, room, self.counter)
            memory_removed += more
        self.telemetry["memory"] = BlockTelemetry(
            tokens_before=self.counter.count_text(self.session.memory or "")
            if memory_removed
            else 0,
            tokens_after=self.counter.count_text(memory or "") if memory_removed else 0,
            lines_removed=memory_removed,
        )
        return ContextBlocks(
            system_layers=tuple(
                layer
                for layer in (
                    self.session.system_global,
                    self.session.system_mode,
                    self.session.system_role,
                )
                if layer
            ),
            goal=self.session.goal,
            mode=self.session.mode,
            memory=memory,
            summary=rendered,
            tools=tuple(self.session.tools or ()),
        )


def _telemetry(
    shaper: _BlockShaper, blocks: dict[str, int], history_before: int, history_removed: int
) -> dict[str, Any]:
    """Per-block tokens before and after shaping, and what was removed (seed 000 §6)."""
    report: dict[str, Any] = {}
    for name, telemetry in shaper.telemetry.items():
        if not telemetry.lines_removed:
            telemetry.tokens_before = telemetry.tokens_after = blocks[name]
        report[name] = telemetry.as_dict()
    report["history"] = {
        "tokens_before": history_before,
        "tokens_after": blocks[HISTORY_BLOCK],
        "messages_removed": history_removed,
    }
    return report


def _caps(session: SessionRecord) -> BlockCaps:
    return BlockCaps(**(session.block_caps or {}))


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
        self.calibration = CalibrationService(
            db,
            settings=runtime.settings,
            tokenizers=runtime.tokenizers,
            metrics=runtime.metrics,
            cache=runtime.calibrations,
        )
        self.jobs = SummaryJobRepository(db)
        self.background_summaries = runtime.settings.summarizes_in_background

    def _summary_can_wait(self, usage: int, budget: Budget) -> bool:
        """Below the prune threshold the prompt fits without a summary: a slow summariser's
        work goes to a job instead of holding up the turn."""
        return (
            self.background_summaries
            and usage < self.settings.prune_trigger_ratio * budget.input_budget
        )

    # -- the agent's calls ------------------------------------------------------------------

    async def start_turn(self, session_id: str, body: TurnStart) -> AssemblyOut:
        """Start a turn with a user message and return the prompt for its first LLM call."""
        started = time.perf_counter()
        session = await self.sessions.require(session_id, lock=True)
        state = await self.turns.assembly_state(session_id)
        open_turn_id = state.open_turn_id
        if open_turn_id is not None:
            raise ConflictError(
                "turn_in_progress",
                f"turn {open_turn_id} is still open: complete it (status completed or failed) "
                "before starting another",
                details={"turn_id": open_turn_id},
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
        assembly = await self._assemble(
            session,
            turn,
            step=0,
            pending=[user],
            new_turn=True,
            usage=None,
            state=state,
            started=started,
        )
        return _in_format(assembly, body.format)

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
        # The usage reported here is the provider's count of the previous step's prompt.
        await self.calibration.learn(session, turn, step=turn.steps, usage=body.usage)
        assembly = await self._assemble(
            session,
            turn,
            state=await self.turns.assembly_state(session_id),
            step=step,
            pending=[assistant, *results],
            new_turn=False,
            usage=body.usage,
            started=started,
        )
        return _in_format(assembly, body.format)

    async def complete_turn(self, session_id: str, turn_id: str, body: CompleteRequest) -> TurnOut:
        """Close a turn with the assistant's answer (or as failed)."""
        session = await self.sessions.require(session_id, lock=True)
        turn = await self._open_turn(session_id, turn_id)
        await self.calibration.learn(session, turn, step=turn.steps, usage=body.usage)
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

    @staticmethod
    def _over_caps(
        history: list[HistoryMessage],
        *,
        caps: BlockCaps,
        fixed_tokens: int,
        current_turn_seq: int,
        anchors: frozenset[int],
    ) -> tuple[int, ...]:
        """Seqs the history cap (or, history first, the total cap) leaves out."""
        current = history_tokens(m for m in history if m.turn_seq == current_turn_seq)
        limits = [caps.history] if caps.history is not None else []
        if caps.total is not None:
            limits.append(caps.total - fixed_tokens - current)
        if not limits:
            return ()
        return history_over_cap(
            history,
            current_turn_seq=current_turn_seq,
            limit=max(0, min(limits)),
            min_recent_messages=caps.min_recent_messages,
            anchor_message_ids=anchors,
        )

    async def _summary_content(self, head: SummaryHead) -> SummaryContent:
        """A summary's content, parsed once per process: summaries never change. Cached only
        once read back committed, under its id and creation time (see ``SummaryHead``)."""
        key = (head.id, head.created_at)
        content = self.runtime.summaries.get(key)
        if content is None:
            record = await self.turns.summary(head.id)
            if record is None:  # erased between the two reads: the session lock forbids it
                raise NotFoundError("summary_not_found", f"summary {head.id} is gone")
            content = summary_content(record)
            self.runtime.summaries.put(key, content)
        return content

    async def _summarise(
        self,
        *,
        resolved: SessionBudget,
        previous: SummaryContent | None,
        sources: list[MessageRecord],
    ) -> _Summarised:
        return await summarise_sources(
            self.runtime, resolved=resolved, previous=previous, sources=sources
        )

    async def _assemble(
        self,
        session: SessionRecord,
        turn: TurnRecord,
        *,
        step: int,
        pending: list[MessageRecord],
        new_turn: bool,
        usage: Usage | None,
        state: AssemblyState,
        started: float,
    ) -> AssemblyOut:
        """The prompt for ``step`` of ``turn`` from ``state``, read after the session lock."""
        settings = self.settings.budget_settings()
        resolved = session_budget(
            session, settings=self.settings, tokenizers=self.runtime.tokenizers
        )
        resolved = await self.calibration.apply(session.tenant_id, resolved)
        budget, counter = resolved.budget, resolved.counter

        stored = list(state.active)
        latest = state.latest_summary
        previous = await self._summary_content(latest) if latest else None
        # A summary job finished since the last assembly: what it covers leaves the prompt now.
        applied = [r for r in stored if latest is not None and r.seq <= latest.to_seq]
        stored = stored[len(applied) :]
        finished_jobs = (
            await self.jobs.finished_unapplied(session.tenant_id, session.id)
            if self.background_summaries
            else []
        )
        self._count([*stored, *pending], counter)
        records = [*stored, *pending]
        by_seq = {record.seq: record for record in records}
        history = [_as_history(record) for record in records]
        caps = _caps(session)
        shaper = _BlockShaper(
            session, counter, caps, self.settings.dedupe_summary_against_memory, {}
        )
        blocks = shaper.blocks(previous)
        fixed = fixed_cost(counter, blocks)
        blocks_before = {
            **fixed.blocks,
            HISTORY_BLOCK: history_tokens(m for m in history if m.turn_seq != turn.seq),
            CURRENT_BLOCK: history_tokens(m for m in history if m.turn_seq == turn.seq),
        }

        summarised: _Summarised | None = None
        left_out: set[int] = set()
        fallback = False

        def truncate(eligible: Sequence[int]) -> None:
            # Seed 003 §9: never lose history, never store the error as a summary.
            nonlocal fallback
            if not fallback:  # one count per assembly, however many summaries failed
                self.metrics.summarizer_fallback_count.inc()
            fallback = True
            left_out.update(
                plan_fallback_truncation(
                    budget=budget,
                    settings=settings,
                    fixed_tokens=fixed.tokens,
                    history=history,
                    eligible=eligible,
                    current_turn_seq=turn.seq,
                    anchor_message_ids=previous.anchor_message_ids() if previous else frozenset(),
                )
            )

        failed_jobs = [j for j in finished_jobs if j.status == SummaryJobStatus.FAILED]
        if failed_jobs:
            logger.warning(
                "summary job %s failed for session %s (%s); truncating deterministically",
                failed_jobs[-1].id,
                session.id,
                failed_jobs[-1].failure,
            )
            truncate([m.seq for m in history if m.seq <= max(j.to_seq for j in failed_jobs)])

        summary_plan = plan_summary(
            budget=budget,
            settings=settings,
            fixed_tokens=fixed.tokens,
            history=[m for m in history if m.seq not in left_out],
            current_turn_seq=turn.seq,
            turns_since_summary=turn.seq - 1 - (latest.turn_seq if latest else 0),
        )
        pending_job = (
            await self.jobs.pending_for_session(session.tenant_id, session.id)
            if self.background_summaries
            else None
        )
        new_job: SummaryJobRecord | None = None
        if summary_plan.triggered and self._summary_can_wait(summary_plan.usage_before, budget):
            # A slow summariser runs in a job: this prompt still fits, so it goes out now and
            # a later assembly picks up the summary.
            if pending_job is None:
                new_job = SummaryJobRecord(
                    tenant_id=session.tenant_id,
                    session_id=session.id,
                    turn_id=turn.id,
                    turn_seq=turn.seq,
                    reason=summary_plan.reason or "threshold",
                    from_seq=summary_plan.eligible[0],
                    to_seq=summary_plan.eligible[-1],
                    status=SummaryJobStatus.QUEUED,
                    attempts=0,
                )
        elif summary_plan.triggered:
            sources = [by_seq[seq] for seq in summary_plan.eligible]
            try:
                summarised = await asyncio.wait_for(
                    self._summarise(resolved=resolved, previous=previous, sources=sources),
                    timeout=self.settings.summary_wait_seconds
                    if self.background_summaries
                    else None,
                )
            except Exception as error:
                if isinstance(error, TimeoutError):
                    self.metrics.summarizer_outcomes.labels("timeout").inc()
                logger.warning(
                    "summariser %s failed for session %s; truncating deterministically",
                    self.runtime.summarizer.name,
                    session.id,
                    exc_info=True,
                )
                truncate(summary_plan.eligible)
            else:
                left_out.update(summary_plan.eligible)
                blocks = shaper.blocks(summarised.content)
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
            summarised=summarised is not None or bool(applied),
        )
        pruned_seqs = set(prune_plan.pruned)
        if fallback:
            pruned_seqs |= left_out
        final = [m for m in remaining if m.seq not in pruned_seqs]
        history_before = history_tokens(m for m in final if m.turn_seq != turn.seq)
        over_cap = self._over_caps(
            final,
            caps=caps,
            fixed_tokens=fixed.tokens,
            current_turn_seq=turn.seq,
            anchors=in_force.anchor_message_ids() if in_force else frozenset(),
        )
        if over_cap:
            # Left out of this prompt only: they stay active, so a later summary still reads
            # them (a cap is a shape for the prompt, not a decision about history).
            final = [m for m in final if m.seq not in set(over_cap)]
        if caps.total is not None and fixed.tokens + history_tokens(final) > caps.total:
            # History is down to its floor: squeeze the summary, then memory (seed 000 order).
            room = caps.total - history_tokens(final) - (fixed.tokens - fixed.blocks[SUMMARY_BLOCK])
            blocks = shaper.blocks(in_force, room=max(0, room))
            fixed = fixed_cost(counter, blocks)
        final_tokens = fixed.tokens + history_tokens(final)
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
            estimated_input_tokens=final_tokens,
            summary_triggered=summary_plan.triggered,
            summary_reason=summary_plan.reason,
            summary_fallback=fallback,
            summary_id=latest.id if applied and latest else None,
            prune_triggered=prune_plan.triggered,
            blocks=report_blocks,
            block_telemetry=_telemetry(shaper, report_blocks, history_before, len(over_cap)),
            estimator=counter.name,
            estimator_fallback=resolved.estimator_fallback,
            calibration_ratio=resolved.calibration_ratio,
        )
        if resolved.estimator_fallback:
            self.metrics.estimator_fallback_count.inc()
        log_budget_telemetry(
            audit, blocks_before=blocks_before, fits=final_tokens <= budget.input_budget
        )

        if final_tokens > budget.input_budget:
            rejection = {
                "estimated_input_tokens": final_tokens,
                "input_budget": budget.input_budget,
                "model_context_limit": budget.model_context_limit,
                "calibration_ratio": resolved.calibration_ratio,
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
                f"the prompt needs {final_tokens} tokens even after summarising "
                f"and pruning, over the input budget of {budget.input_budget}",
                details={**rejection, "audit_id": audit.id},
            )

        # Accepted: write the turn, the new messages, the summary and the state changes.
        messages: list[ChatMessage] = []
        head = system_message(blocks)
        if head is not None:
            messages.append(head)
        fingerprint = prompt_fingerprint(head, [m.seq for m in final])
        previous_fingerprint = comparable_fingerprint(session.prompt_fingerprint)
        changed_at = (
            first_difference(previous_fingerprint, fingerprint)
            if previous_fingerprint is not None
            else None
        )
        session.prompt_fingerprint = fingerprint
        if new_turn:
            self.db.add(turn)
            session.turn_count = turn.seq
        turn.steps = step
        if usage is not None:
            turn.usage = usage.model_dump(mode="json", exclude_none=True)
        self.db.add_all(pending)
        session.message_count += len(pending)
        session.updated_at = utcnow()
        # One flush: the session's update, the turn and the new messages (the unit of work
        # orders the inserts by their foreign keys); the messages' ids come back with it.
        await self.db.flush()

        summarised_ids: list[int] = []
        if applied and latest is not None:
            summarised_ids = [m.id for m in applied]
            await self.turns.set_state(
                session.id, summarised_ids, MessageState.SUMMARISED, summary_id=latest.id
            )
        await self.jobs.mark_applied([j.id for j in finished_jobs])
        if new_job is not None:
            self.jobs.add(new_job)
        if summarised is not None:
            sources = summarised.sources
            record = summary_record(
                summarised,
                tenant_id=session.tenant_id,
                session_id=session.id,
                latest=latest,
                turn_id=turn.id,
                turn_seq=turn.seq,
                encoding=counter.name,
                summarizer=self.runtime.summarizer.name,
            )
            self.db.add(record)
            await self.db.flush()
            summarised_ids += [m.id for m in sources]
            if pending_job is not None:
                # Made here because this prompt could not wait: the job's result is moot.
                await self.jobs.finish(
                    pending_job.id,
                    token=None,
                    status=SummaryJobStatus.DONE,
                    summary_id=record.id,
                    applied_at=utcnow(),
                )
            await self.turns.set_state(
                session.id, [m.id for m in sources], MessageState.SUMMARISED, summary_id=record.id
            )
            audit.summary_id = record.id
            self.metrics.summary_count.labels(summary_plan.reason or "threshold").inc()
        pruned_ids = [by_seq[seq].id for seq in sorted(pruned_seqs)]
        await self.turns.set_state(session.id, pruned_ids, MessageState.PRUNED)
        if prune_plan.pruned:
            self.metrics.prune_count.inc()

        messages.extend(to_chat(by_seq[m.seq]) for m in final)
        kept_ids = [by_seq[m.seq].id for m in final]

        if previous_fingerprint is not None:
            audit.prefix_kept = changed_at is None
            audit.first_changed_index = changed_at
            if changed_at is not None:
                audit.change_reason = (
                    "summary"
                    if summarised is not None or applied
                    else "prune"
                    if pruned_ids
                    else "block_cap"
                    if over_cap
                    else "session_edit"
                )
        self.metrics.prompt_prefix.labels(
            {True: "kept", False: "changed", None: "first"}[audit.prefix_kept]
        ).inc()

        audit.turn_id = turn.id
        audit.kept_message_ids = kept_ids
        audit.summarised_message_ids = summarised_ids
        audit.pruned_message_ids = pruned_ids
        audit.overflow_rejected = False
        audit.latency_ms = (time.perf_counter() - started) * 1000
        self.audit.add(audit)
        await self.db.flush()

        self.metrics.prompt_tokens.labels(model_label(session.model)).observe(final_tokens)
        self.metrics.assembly_latency.observe(time.perf_counter() - started)
        return AssemblyOut(
            turn_id=turn.id,
            step=step,
            messages=messages,
            budget=BudgetReport(
                model_context_limit=budget.model_context_limit,
                input_budget=budget.input_budget,
                estimated_input_tokens=final_tokens,
                blocks=report_blocks,
                estimator=counter.name,
                calibration_ratio=resolved.calibration_ratio,
            ),
            actions=Actions(
                summary_triggered=summary_plan.triggered,
                summary_reason=summary_plan.reason,
                summary_fallback=fallback,
                summary_queued=new_job is not None
                or (pending_job is not None and summarised is None),
                prune_triggered=prune_plan.triggered,
                summarised_message_ids=summarised_ids,
                pruned_message_ids=pruned_ids,
            ),
            audit_id=audit.id,
        )


def _in_format(assembly: AssemblyOut, prompt_format: PromptFormat) -> AssemblyOut:
    if prompt_format == "openai":
        return assembly
    converted = to_anthropic(assembly.messages)
    return assembly.model_copy(
        update={"format": "anthropic", "system": converted.system, "messages": converted.messages}
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
