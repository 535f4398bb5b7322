"""Turns: start, tool steps, completion, and the context assembly each of them runs.

An assembly reads, decides, then writes:

1. **read**: lock the session row, then one snapshot read (open turn, latest summary head,
   active messages with their cached counts, ids for the rows it will insert);
2. **decide**: :func:`app.budget.decision.plan_assembly` and :func:`~app.budget.decision.decide`,
   pure, with the summariser the only thing awaited in between;
3. **write**: everything the decision changes (turn, messages, state changes, summary, jobs,
   audit row) in one batch: one round trip on Postgres.

Only an accepted prompt changes anything: a rejected one leaves the session exactly as it was
and writes its audit row alone.
"""

from __future__ import annotations

import logging
import time
import uuid
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.audit.telemetry import log_budget_telemetry
from app.budget.anthropic import to_anthropic
from app.budget.blocks import BlockCaps
from app.budget.decision import (
    Decision,
    FinishedJob,
    LatestSummary,
    Message,
    Plan,
    PolicySettings,
    SessionBlocks,
    Snapshot,
    SummaryFailure,
    decide,
    next_turn_fold,
    plan_assembly,
    shape_blocks,
)
from app.budget.openai_format import to_openai
from app.budget.reasoning import reasoning_rule
from app.budget.summary import SummaryContent
from app.budget.tokens import TokenCounter, content_text, count_message
from app.db import WriteBatch, after_commit, connection_of, dump_json, load_json
from app.errors import BudgetExceededError, ConflictError, NotFoundError, ToolCallIdReusedError
from app.metrics import model_label
from app.models import (
    MessageState,
    SessionRecord,
    SummaryJobRecord,
    SummaryJobStatus,
    SummaryRecord,
    TurnStatus,
)
from app.models.base import utcnow
from app.offload import off_the_loop
from app.runtime import Runtime
from app.search.recall import TurnRecall
from app.sessions.repository import SessionRepository, SessionRow
from app.sessions.service import session_not_found
from app.summarize.ahead import FoldKey, FoldMade
from app.summarize.extractive import ExtractiveSummarizer
from app.summarize.running import run_summarizer
from app.summary_jobs.repository import SummaryJobRepository
from app.tokens.budgets import SessionBudget, session_budget
from app.tracing import annotate_assembly
from app.turns.kept_rows import KeptRows, row_bytes, row_call_ids
from app.turns.repository import (
    AssemblyState,
    StoredRow,
    SummaryHead,
    TurnRepository,
    TurnRow,
    summary_content,
    summary_items,
    summary_items_json,
    summary_values,
)
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


#: New text (characters) past which a turn's decision is made in a worker thread: counting
#: this much takes tens of milliseconds or more, which would hold every other request.
HEAVY_TEXT_CHARS = 100_000
#: Messages of the open turn (stored and new) past which the decision is made in a worker
#: thread too: counting, setting aside and folding a long open turn take 10 ms and more at
#: this size, against some 0.1 ms for the thread hop (bench/neighbours.py). A turn start's
#: open turn is its one user message: however long the history, it stays on the loop.
HEAVY_TURN_MESSAGES = 128


@dataclass(frozen=True)
class _Turn:
    """The turn an assembly belongs to."""

    id: str
    seq: int
    #: Whether this assembly starts it (it is written with the assembly).
    new: bool


class TurnService:
    """One tenant's turns."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.db = db
        self.tenant_id = tenant_id
        self.runtime = runtime
        self.settings = runtime.settings
        self.metrics = runtime.metrics
        self.sessions = SessionRepository(db, tenant_id=tenant_id)
        self.turns = TurnRepository(db, tenant_id=tenant_id)
        self.recall = TurnRecall(db, tenant_id=tenant_id, runtime=runtime)
        self.audit = AuditRepository(db)
        self.jobs = SummaryJobRepository(db)
        self.calibration = runtime.calibration(db)
        # The turn-count fold made between turns (app.summarize.ahead): for a summariser
        # whose summary depends on its inputs alone, run inline.
        self.folds_ahead = (
            runtime.folds_ahead
            if runtime.settings.fold_between_turns
            and not runtime.settings.summarizes_in_background
            and isinstance(runtime.summarizer, ExtractiveSummarizer)
            else None
        )
        self.policy = PolicySettings(
            budget=runtime.settings.budget_settings(),
            summary_target_ratio=runtime.settings.summary_target_ratio,
            tool_result_share=runtime.settings.tool_result_share,
            tool_images_kept=runtime.settings.tool_images_kept,
            dedupe_summary_against_memory=runtime.settings.dedupe_summary_against_memory,
            summarizes_in_background=runtime.settings.summarizes_in_background,
        )

    # -- the agent's calls ------------------------------------------------------------------

    async def start_turn(self, session_id: str, body: TurnStart) -> AssemblyOut:
        """Start a turn with a user message and return the prompt for its first LLM call."""
        started = time.perf_counter()
        session = await self._locked(session_id)
        kept = self._kept(session)
        state = await self.turns.assembly_state(
            session_id,
            new_messages=1,
            # A fold made between turns is likely taken in: its summary goes in the batch.
            new_summary=self.folds_ahead is not None
            and self.folds_ahead.holds(self.tenant_id, session_id),
            **_known(kept),
        )
        if state.open_turn is not None:
            raise ConflictError(
                "turn_in_progress",
                f"turn {state.open_turn.id} is still open: complete it (status completed or "
                "failed) before starting another",
                details={"turn_id": state.open_turn.id},
            )
        turn = _Turn(id=str(uuid.uuid4()), seq=session.turn_count + 1, new=True)
        user = Message(
            id=state.message_ids[0],
            seq=session.message_count + 1,
            turn_seq=turn.seq,
            role="user",
            content=_stored_content(body.message),
            name=body.message.name,
        )
        return await self._read_decide_write(
            session,
            state,
            turn,
            step=0,
            new=(user,),
            usage=None,
            started=started,
            prompt_format=body.format,
            kept=kept,
        )

    async def post_step(self, session_id: str, turn_id: str, body: StepRequest) -> AssemblyOut:
        """Record the assistant's tool calls and their results; return the next prompt."""
        started = time.perf_counter()
        session = await self._locked(session_id)
        kept = self._kept(session)
        state = await self.turns.assembly_state(
            session_id, new_messages=1 + len(body.tool_results), **_known(kept)
        )
        open_turn = state.open_turn
        if open_turn is None or open_turn.id != turn_id:
            await self._refuse_turn(session_id, turn_id)
        _refuse_reused_call_ids(state, kept, [call.id for call in body.assistant.tool_calls])
        # The usage reported here is the provider's count of the previous step's prompt.
        await self.calibration.learn(
            session, turn_id=turn_id, step=open_turn.steps, prompt_tokens=_prompt_tokens(body.usage)
        )
        step = open_turn.steps + 1
        ids = iter(state.message_ids)
        turn_seq = open_turn.seq
        assistant = Message(
            id=next(ids),
            seq=session.message_count + 1,
            turn_seq=turn_seq,
            role="assistant",
            content=_stored_content(body.assistant),
            tool_calls=body.assistant.stored_tool_calls(),
            reasoning_content=body.assistant.reasoning_content,
        )
        results = tuple(
            Message(
                id=next(ids),
                seq=session.message_count + 2 + index,
                turn_seq=turn_seq,
                role="tool",
                content=_stored_content(result),
                tool_call_id=result.tool_call_id,
                is_error=result.is_error,
                answers_seq=assistant.seq,
            )
            for index, result in enumerate(body.tool_results)
        )
        return await self._read_decide_write(
            session,
            state,
            _Turn(id=turn_id, seq=turn_seq, new=False),
            step=step,
            new=(assistant, *results),
            usage=body.usage,
            started=started,
            prompt_format=body.format,
            kept=kept,
        )

    async def complete_turn(self, session_id: str, turn_id: str, body: CompleteRequest) -> TurnOut:
        """Close a turn with the assistant's answer (or as failed)."""
        session = await self._locked(session_id)
        turn = await self.turns.get_turn(session_id, turn_id)
        if turn is None or turn.status != TurnStatus.OPEN:
            await self._refuse_turn(session_id, turn_id)
        await self.calibration.learn(
            session, turn_id=turn_id, step=turn.steps, prompt_tokens=_prompt_tokens(body.usage)
        )
        batch = WriteBatch()
        assistant = body.assistant
        content = _stored_content(assistant)
        # The answer's text; thinking parts stay in the stored message only.
        output = content_text(content) or None
        message_count = session.message_count
        if output or isinstance(content, list) or assistant.reasoning_content:
            counter = self._budget(session).counter
            message_count += 1
            answer = Message(
                id=0,
                seq=message_count,
                turn_seq=turn.seq,
                role="assistant",
                content=content,
                reasoning_content=assistant.reasoning_content,
            )
            self.turns.insert_messages(
                batch,
                [
                    _message_row(
                        answer,
                        session_id=session_id,
                        turn_id=turn_id,
                        step=turn.steps,
                        tokens=count_message(counter, answer.chat()),
                        encoding=counter.name,
                        with_id=False,
                    )
                ],
            )
        usage = body.usage.model_dump(mode="json", exclude_none=True) if body.usage else None
        completed_at = utcnow()
        status = TurnStatus(body.status)
        self.turns.close_turn(
            batch,
            session_id=session_id,
            turn_id=turn_id,
            status=status,
            assistant_output=output,
            usage=usage,
            completed_at=completed_at,
        )
        self.sessions.record_assembly(
            batch, session_id, turn_count=session.turn_count, message_count=message_count
        )
        self._record_cache_read(batch, session, turn_id, step=turn.steps, usage=body.usage)
        await batch.send(await connection_of(self.db))
        # The turn is over: a summary this worker loaded and did not make is read now, then
        # the next turn start's fold, if it was prepared, is made (in that order, one thread).
        if self.folds_ahead is not None:
            self.folds_ahead.start_reading(self.tenant_id, session_id)
            self.folds_ahead.start(self.tenant_id, session_id)
        return TurnOut(
            id=turn.id,
            session_id=session_id,
            seq=turn.seq,
            status=status,
            steps=turn.steps,
            assistant_output=output,
            usage=usage if usage is not None else turn.usage,
            started_at=turn.started_at,
            completed_at=completed_at,
        )

    async def get_turn(self, session_id: str, turn_id: str) -> TurnOut:
        """One turn of a session."""
        await self._require_session(session_id)
        turn = await self.turns.get_turn(session_id, turn_id)
        if turn is None:
            raise NotFoundError("turn_not_found", f"no turn {turn_id!r} in this session")
        return _turn_out(turn)

    async def list_messages(
        self, session_id: str, *, after_seq: int, limit: int, state: MessageState | None
    ) -> MessagePage:
        """Every stored message in order, whatever its state, a page at a time."""
        await self._require_session(session_id)
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
        await self._require_session(session_id)
        rows = await self.turns.list_summaries(session_id, limit=limit)
        return SummaryList(summaries=[_summary_out(row) for row in rows])

    # -- read ---------------------------------------------------------------------------------

    async def _locked(self, session_id: str) -> SessionRow:
        """The session row, locked until the request ends: calls on one session queue."""
        record = await self.sessions.locked_row(session_id)
        if record is None:
            raise session_not_found(session_id)
        return record

    def _kept(self, session: SessionRow) -> KeptRows | None:
        """The rows this worker keeps for the (locked) session, unless they are another
        session's: one deleted and created again with the same id (on another worker, which
        SQLite can give the same ids and seqs) or one whose rows were written past what the
        session now counts."""
        cache = self.runtime.kept_rows
        kept = cache.get(self.tenant_id, session.id)
        if kept is None:
            return None
        if kept.born != session.created_at or kept.known_seq > session.message_count:
            cache.discard(self.tenant_id, session.id)
            return None
        return kept

    async def _require_session(self, session_id: str) -> SessionRecord:
        record = await self.sessions.get(session_id)
        if record is None:
            raise session_not_found(session_id)
        return record

    async def _refuse_turn(self, session_id: str, turn_id: str) -> NoReturn:
        """Why a call cannot go on ``turn_id``, the session's open turn being another (or
        none): it does not exist, or it is closed."""
        turn = await self.turns.get_turn(session_id, turn_id)
        if turn is None:
            raise NotFoundError("turn_not_found", f"no turn {turn_id!r} in this session")
        raise ConflictError(
            "turn_not_open",
            f"turn {turn_id} is {turn.status}; start a new turn",
            details={"turn_id": turn_id, "status": turn.status},
        )

    def _budget(self, session: SessionRow) -> SessionBudget:
        return session_budget(session, settings=self.settings, tokenizers=self.runtime.tokenizers)

    async def _summary(
        self, session_id: str, head: SummaryHead, counter: TokenCounter
    ) -> SummaryContent:
        """A summary's content, parsed once per process: summaries never change. Cached only
        once read back committed, under its id and creation time (see ``SummaryHead``).

        A summary this worker did not make (a restart, another worker's) is read ahead of
        its first fold, off the request path, once the turn is over
        (``FoldsAhead.read_ahead``)."""
        key = (head.id, head.created_at)
        content = self.runtime.summaries.get(key)
        if content is None:
            record = await self.turns.summary(head.id)
            if record is None:  # erased between the two reads: the session lock forbids it
                raise NotFoundError("summary_not_found", f"summary {head.id} is gone")
            content = summary_content(record)
            self.runtime.summaries.put(key, content)
            if self.folds_ahead is not None:
                self.folds_ahead.read_ahead(self.tenant_id, session_id, head.id, content, counter)
        return content

    async def _snapshot(
        self,
        session: SessionRow,
        state: AssemblyState,
        resolved: SessionBudget,
        *,
        turn_seq: int,
        step: int,
        new: Sequence[Message],
        kept: KeptRows | None,
    ) -> Snapshot:
        head = state.latest_summary
        finished: Sequence[SummaryJobRecord] = ()
        pending: SummaryJobRecord | None = None
        if self.policy.summarizes_in_background:
            finished = await self.jobs.finished_unapplied(session.tenant_id, session.id)
            pending = await self.jobs.pending_for_session(session.tenant_id, session.id)
        return Snapshot(
            settings=self.policy,
            budget=resolved.budget,
            counter=resolved.counter,
            blocks=SessionBlocks(
                system_layers=tuple(
                    layer
                    for layer in (session.system_global, session.system_mode, session.system_role)
                    if layer
                ),
                goal=session.goal,
                mode=session.mode,
                memory=session.memory,
                tools=tuple(session.tools or ()),
                caps=BlockCaps(**(session.block_caps or {})),
            ),
            stored=_stored_messages(state.active, kept.messages if kept is not None else {}),
            new=tuple(new),
            session_id=session.id,
            turn_seq=turn_seq,
            step=step,
            latest_summary=(
                LatestSummary(
                    id=head.id,
                    turn_seq=head.turn_seq,
                    from_seq=head.from_seq,
                    to_seq=head.to_seq,
                    content=await self._summary(session.id, head, resolved.counter),
                )
                if head is not None
                else None
            ),
            previous_fingerprint=session.prompt_fingerprint,
            finished_jobs=tuple(
                FinishedJob(
                    id=job.id, failed=job.status == SummaryJobStatus.FAILED, to_seq=job.to_seq
                )
                for job in finished
            ),
            pending_job_id=pending.id if pending is not None else None,
            calibration_ratio=resolved.calibration_ratio,
            estimator_fallback=resolved.estimator_fallback,
            measure=self.runtime.fixed_costs,
            capped=self.runtime.capped_results,
            reasoning=reasoning_rule(resolved.spec.family, resolved.spec.name),
        )

    # -- read, decide, write --------------------------------------------------------------------

    async def _read_decide_write(
        self,
        session: SessionRow,
        state: AssemblyState,
        turn: _Turn,
        *,
        step: int,
        new: Sequence[Message],
        usage: Usage | None,
        started: float,
        prompt_format: PromptFormat,
        kept: KeptRows | None,
    ) -> AssemblyOut:
        """The prompt for ``step`` of ``turn``, from ``state`` read after the session lock."""
        annotate_assembly(model=session.model)
        resolved = await self.calibration.apply(session.tenant_id, self._budget(session))
        snapshot = await self._snapshot(
            session, state, resolved, turn_seq=turn.seq, step=step, new=new, kept=kept
        )
        plan, decided, made = await self._decide(snapshot, resolved)
        items_json = made.pop("items_json", None) if made is not None else None
        decision = await self.recall.shown(
            session,
            decided,
            resolved.counter,
            turn_seq=turn.seq,
            starts_turn=turn.new,
            left_before=session.message_count - len(state.active),
            question=next((m.content for m in new if m.role == "user"), None),
            superseded=_superseded(decided, snapshot),
        )

        audit = _audit_values(decision, snapshot, session, turn, audit_id=state.audit_id)
        if made is not None:
            audit["block_telemetry"]["summary_made"] = made
        self._observe(decision, session, resolved)
        log_budget_telemetry(audit, blocks_before=decision.blocks_before, fits=decision.accepted)
        batch = WriteBatch()
        if not decision.accepted:
            audit["latency_ms"] = (time.perf_counter() - started) * 1000
            self.audit.insert(batch, audit)
            await batch.send(await connection_of(self.db))
            raise BudgetExceededError(
                f"the prompt needs {decision.figures.final} tokens even after summarising "
                f"and pruning, over the input budget of {decision.budget.input_budget}",
                details={**(decision.rejection or {}), "audit_id": state.audit_id},
            )
        summary_id = await self._write(
            batch,
            decision,
            snapshot,
            session,
            turn,
            step,
            usage,
            head=state.latest_summary,
            reserved_summary_id=state.summary_id,
            items_json=items_json,
        )
        if not turn.new:
            # The usage of a step is the provider's account of the previous step's prompt.
            self._record_cache_read(batch, session, turn.id, step=step - 1, usage=usage)
        if summary_id is not None:  # the summary this prompt shows
            audit["summary_id"] = summary_id
            self.runtime.folds_ahead.made_here(summary_id)
        audit["latency_ms"] = (time.perf_counter() - started) * 1000
        self.audit.insert(batch, audit)
        await batch.send(await connection_of(self.db))
        self._keep_rows(session, state, snapshot, decision)

        if turn.new and self.folds_ahead is not None:
            self._prepare_next_fold(plan, decision)
        self.metrics.prompt_tokens.labels(model_label(session.model)).observe(
            decision.figures.final
        )
        self.metrics.assembly_latency.observe(time.perf_counter() - started)
        # Built here from the decision's own values: constructed, not validated a second
        # time (FastAPI serialises the response model as it is).
        assembly = AssemblyOut.model_construct(
            turn_id=turn.id,
            step=step,
            messages=list(decision.messages),
            budget=BudgetReport.model_construct(
                model_context_limit=decision.budget.model_context_limit,
                input_budget=decision.budget.input_budget,
                estimated_input_tokens=decision.figures.final,
                blocks=dict(decision.blocks),
                estimator=resolved.counter.name,
                calibration_ratio=resolved.calibration_ratio,
            ),
            actions=Actions.model_construct(
                summary_triggered=decision.summary_triggered,
                summary_reason=decision.summary_reason,
                summary_fallback=decision.summary_fallback,
                summary_queued=decision.summary_queued,
                prune_triggered=decision.prune_triggered,
                summarised_message_ids=list(decision.summarised_ids),
                pruned_message_ids=list(decision.pruned_ids),
            ),
            audit_id=state.audit_id,
        )
        return _in_format(assembly, prompt_format, stable_messages=decision.stable_messages)

    def _keep_rows(
        self, session: SessionRow, state: AssemblyState, snapshot: Snapshot, decision: Decision
    ) -> None:
        """Keep the session's active rows as this assembly leaves them, once it commits, so
        that the next assembly on this worker reads back only what was written since."""
        if self.runtime.kept_rows.max_bytes <= 0:
            return
        kept_before = self.runtime.kept_rows.get(self.tenant_id, session.id)
        sizes_before = kept_before.sizes if kept_before is not None else {}
        rows: dict[int, StoredRow] = {}
        sizes: dict[int, int] = {}
        added: list[StoredRow] = []
        for row in state.active:
            rows[row.id] = row
            size = sizes_before.get(row.id)
            if size is None:
                size = row_bytes(row)
                added.append(row)
            sizes[row.id] = size
        # The calls' ids: those kept before, and the added rows', while no kept row has left
        # (a summary or a prune made it inactive); else made again from the rows.
        if kept_before is not None and len(rows) - len(added) == len(kept_before.rows):
            call_ids = dict(kept_before.call_ids)
        else:
            call_ids, added = {}, list(rows.values())
        messages = {message.id: message for message in snapshot.stored}
        encoding = snapshot.counter.name
        for message, tokens in zip(snapshot.new, decision.new_tokens, strict=True):
            # As a read of the stored row would give it back: the JSON columns decoded from
            # their stored text.
            row = StoredRow(
                id=message.id,
                seq=message.seq,
                turn_seq=message.turn_seq,
                role=message.role,
                content=_as_read(message.content),
                name=message.name,
                tool_calls=_as_read(list(message.tool_calls)) if message.tool_calls else None,
                tool_call_id=message.tool_call_id,
                reasoning_content=message.reasoning_content,
                is_error=message.is_error or None,
                answers_seq=message.answers_seq,
                token_count=tokens,
                token_encoding=encoding,
            )
            rows[row.id] = row
            sizes[row.id] = row_bytes(row)
            messages[row.id] = _stored_message(row)
            added.append(row)
        for row in added:
            if row.tool_calls:
                call_ids.update(dict.fromkeys(row_call_ids(row), row.id))
        kept = KeptRows(
            born=session.created_at,
            known_seq=session.message_count + len(snapshot.new),
            rows=rows,
            messages=messages,
            sizes=sizes,
            size=sum(sizes.values()),
            call_ids=call_ids,
        )
        cache, tenant_id, session_id = self.runtime.kept_rows, self.tenant_id, session.id
        after_commit(self.db, lambda: cache.put(tenant_id, session_id, kept))

    async def _decide(
        self, snapshot: Snapshot, resolved: SessionBudget
    ) -> tuple[Plan, Decision, dict[str, Any] | None]:
        """The plan and the decision, and, when the decision folds a summary, where and when
        that fold was made (``block_telemetry.summary_made`` of the audit row; with a fold made
        between turns, its items encoded for its row under ``items_json``)."""
        # The decision is pure CPU: a request bringing a lot of new text (counting it takes a
        # good part of a second), or deciding over a long open turn, has it made in a worker
        # thread, so that other requests on this worker are served meanwhile; an ordinary
        # turn does without the thread hop.
        heavy = (
            sum(m.turn_seq == snapshot.turn_seq for m in snapshot.stored) + len(snapshot.new)
            > HEAVY_TURN_MESSAGES
            or sum(len(content_text(m.content)) for m in snapshot.new) > HEAVY_TEXT_CHARS
        )
        plan = (
            await off_the_loop(lambda: plan_assembly(snapshot))
            if heavy
            else plan_assembly(snapshot)
        )
        outcome: SummaryContent | SummaryFailure | None = None
        made: dict[str, Any] | None = None
        ahead = await self._fold_made_ahead(snapshot, plan)
        if plan.summarise is not None:
            if ahead is not None:
                outcome = ahead.content
                made = {
                    "when": "between_turns",
                    "made_at": ahead.made_at.isoformat(),
                    "fold_ms": round(ahead.fold_ms, 3),
                    "waited_ms": round(ahead.waited_ms, 3),
                    "items_json": ahead.items_json,
                }
            else:
                folding = time.perf_counter()
                outcome = await run_summarizer(
                    self.runtime.summarizer,
                    plan.summarise,
                    counter=resolved.counter,
                    metrics=self.metrics,
                    wait_seconds=(
                        self.settings.summary_wait_seconds if plan.summarise.bounded else None
                    ),
                )
                made = {
                    "when": "in_turn",
                    "made_at": utcnow().isoformat(),
                    "fold_ms": round((time.perf_counter() - folding) * 1000, 3),
                }
        if heavy:
            decision = await off_the_loop(lambda: decide(plan, outcome))
        else:
            decision = decide(plan, outcome)
        # A rejected prompt stores no summary: its audit row claims none was made.
        shows_made = decision.accepted and decision.new_summary is not None
        return plan, decision, made if shows_made else None

    def _fold_key(self, snapshot: Snapshot, sources: Sequence[Any], target_tokens: int) -> FoldKey:
        latest = snapshot.latest_summary
        return FoldKey.of(
            tenant_id=self.tenant_id,
            session_id=snapshot.session_id,
            previous_id=latest.id if latest is not None else None,
            sources=sources,
            target_tokens=target_tokens,
            counter=snapshot.counter.name,
        )

    async def _fold_made_ahead(self, snapshot: Snapshot, plan: Plan) -> FoldMade | None:
        """The fold this turn start asks for, if it was made between turns."""
        work = plan.summarise
        if self.folds_ahead is None or snapshot.step != 0:
            return None
        if work is None:
            # Not due after all (or no longer, or only later): what was made is of no use.
            self.folds_ahead.drop(self.tenant_id, snapshot.session_id)
            return None
        # The key digests the messages' text: worked out only when a fold is held.
        if not self.folds_ahead.holds(self.tenant_id, snapshot.session_id):
            return None
        return await self.folds_ahead.take(
            self._fold_key(snapshot, work.sources, work.target_tokens)
        )

    def _prepare_next_fold(self, plan: Plan, decision: Decision) -> None:
        """When the next turn start crosses the turn count, what it will fold, made once
        this turn completes (``app.summarize.ahead``)."""
        assert self.folds_ahead is not None
        work = next_turn_fold(plan, decision)
        if work is None:
            return
        if not self.folds_ahead.would_keep(work):
            # Too much text to hold between turns: that turn start folds itself.
            self.folds_ahead.drop(self.tenant_id, plan.snapshot.session_id)
            return
        snapshot = plan.snapshot
        # The blocks as the next turn start shapes them around the new summary, counted by
        # the runtime's remembering measure: that turn start finds the count made.
        blocks_of = replace(snapshot, stored=(), new=())

        def ready(content: SummaryContent) -> Mapping[str, str]:
            blocks_of.measure(blocks_of.counter, shape_blocks(blocks_of, content)[0])
            return summary_items_json(content)

        self.folds_ahead.prepare(
            self._fold_key(snapshot, work.sources, work.target_tokens),
            work,
            counter=snapshot.counter,
            ready=ready,
        )

    async def _write(
        self,
        batch: WriteBatch,
        decision: Decision,
        snapshot: Snapshot,
        session: SessionRow,
        turn: _Turn,
        step: int,
        usage: Usage | None,
        *,
        head: SummaryHead | None,
        reserved_summary_id: int | None = None,
        items_json: Mapping[str, str] | None = None,
    ) -> int | None:
        """Add an accepted decision's writes to ``batch``; returns the new summary's id.

        A new summary goes first: the state changes of the messages it folds in point to it.
        Under an id the snapshot read reserved, it is one more write of the batch; otherwise
        it is stored on its own, for its id."""
        session_id = session.id
        encoding = snapshot.counter.name
        summary_id: int | None = None
        new_summary = decision.new_summary
        if new_summary is not None:
            folded = frozenset(new_summary.source_ids)
            sources = [m for m in snapshot.stored if m.id in folded]
            values = summary_values(
                new_summary.content,
                session_id=session_id,
                turn_id=turn.id,
                turn_seq=turn.seq,
                # A new summary covers the previous one's range and its sources.
                from_message_id=head.from_message_id if head else sources[0].id,
                to_message_id=sources[-1].id,
                from_seq=head.from_seq if head else sources[0].seq,
                to_seq=sources[-1].seq,
                rendered=new_summary.rendered,
                tokens=new_summary.tokens,
                encoding=encoding,
                summarizer=self.runtime.summarizer.name,
                items_json=(
                    items_json
                    if reserved_summary_id is not None and self.turns.sends_json_text
                    else None
                ),
            )
            if reserved_summary_id is not None:
                summary_id = reserved_summary_id
                self.turns.add_summary(batch, summary_id, values)
            else:
                summary_id = await self.turns.insert_summary(values)
            # The next turn shows this summary: parsed already, it need not be read back. Its
            # key holds the creation time too, so a write that rolls back names no other row.
            self.runtime.summaries.put((summary_id, values["created_at"]), new_summary.content)
        if turn.new:
            self.turns.insert_turn(batch, session_id=session_id, turn_id=turn.id, seq=turn.seq)
        else:
            self.turns.record_step(
                batch,
                session_id=session_id,
                turn_id=turn.id,
                step=step,
                usage=usage.model_dump(mode="json", exclude_none=True) if usage else None,
            )
        self.turns.insert_messages(
            batch,
            [
                _message_row(
                    message,
                    session_id=session_id,
                    turn_id=turn.id,
                    step=step,
                    tokens=tokens,
                    encoding=encoding,
                )
                for message, tokens in zip(snapshot.new, decision.new_tokens, strict=True)
            ],
        )
        self.turns.recount(batch, session_id, decision.recounts, encoding)
        self.turns.set_state(
            batch,
            session_id,
            decision.applied_ids,
            MessageState.SUMMARISED,
            summary_id=decision.applied_summary_id,
        )
        if new_summary is not None:
            self.turns.set_state(
                batch, session_id, new_summary.source_ids, MessageState.SUMMARISED,
                summary_id=summary_id,
            )  # fmt: skip
        self.turns.set_state(batch, session_id, decision.pruned_ids, MessageState.PRUNED)
        self.sessions.record_assembly(
            batch,
            session_id,
            turn_count=turn.seq if turn.new else session.turn_count,
            message_count=session.message_count + len(snapshot.new),
            prompt_fingerprint=decision.fingerprint,
        )
        await self._write_jobs(decision, session, turn, summary_id)
        return summary_id

    async def _write_jobs(
        self, decision: Decision, session: SessionRow, turn: _Turn, summary_id: int | None
    ) -> None:
        """Summary jobs (background summarisers only): taken in, made moot, or queued."""
        await self.jobs.mark_applied(list(decision.jobs_taken_in))
        if decision.superseded_job_id is not None and summary_id is not None:
            # Made here because this prompt could not wait: the job's result is moot.
            await self.jobs.finish(
                decision.superseded_job_id,
                token=None,
                status=SummaryJobStatus.DONE,
                summary_id=summary_id,
                applied_at=utcnow(),
            )
        job = decision.new_job
        if job is not None:
            self.jobs.add(
                SummaryJobRecord(
                    tenant_id=session.tenant_id,
                    session_id=session.id,
                    turn_id=turn.id,
                    turn_seq=turn.seq,
                    reason=job.reason,
                    from_seq=job.from_seq,
                    to_seq=job.to_seq,
                    status=SummaryJobStatus.QUEUED,
                    attempts=0,
                )
            )

    def _record_cache_read(
        self, batch: WriteBatch, session: SessionRow, turn_id: str, *, step: int,
        usage: Usage | None,
    ) -> None:  # fmt: skip
        """The prompt tokens the provider's cache served of the prompt of ``step``: on its
        audit row (in this request's batch: no extra round trip) and in the metrics."""
        tokens = usage.cache_read_tokens if usage is not None else None
        if tokens is None:
            return
        self.audit.record_cache_read(
            batch,
            tenant_id=session.tenant_id,
            session_id=session.id,
            turn_id=turn_id,
            step=step,
            tokens=tokens,
        )
        self.metrics.prompt_cache_read_tokens.labels(model_label(session.model)).inc(tokens)

    def _observe(self, decision: Decision, session: SessionRow, resolved: SessionBudget) -> None:
        """Metrics and warnings of one decision."""
        if resolved.estimator_fallback:
            self.metrics.estimator_fallback_count.inc()
        cause = decision.fallback_cause
        if cause is not None:
            self.metrics.summarizer_fallback_count.inc()
            logger.warning(
                "summary for session %s failed (%s); truncating deterministically",
                session.id,
                {"job": "summary job failed", "contract": "summary broke its contract"}.get(
                    cause, cause
                ),
            )
        if not decision.accepted:
            self.metrics.overflow_reject_count.inc()
            return
        if decision.new_summary is not None:
            self.metrics.summary_count.labels(decision.summary_reason or "threshold").inc()
        if decision.pruned_by_policy:
            self.metrics.prune_count.inc()
        self.metrics.prompt_prefix.labels(
            {True: "kept", False: "changed", None: "first"}[decision.prefix_kept]
        ).inc()


# -- helpers ---------------------------------------------------------------------------------


def _stored_content(message: BaseModel) -> Any:
    """A message's content as it is stored (JSON types). Only that field is dumped: a step's
    assistant message also carries every tool call of the step, which dumping the whole
    model would serialise once more for nothing."""
    return message.model_dump(mode="json", include=_CONTENT)["content"]


_CONTENT = {"content"}


def _known(kept: KeptRows | None) -> dict[str, Any]:
    """The snapshot read's arguments for the rows this worker keeps."""
    if kept is None:
        return {}
    return {"known": kept.rows, "known_seq": kept.known_seq}


def _as_read(value: Any) -> Any:
    """A JSON column's value as reading it back gives it (the same types, the same order);
    a string or None reads back as itself."""
    if value is None or type(value) is str:
        return value
    return load_json(dump_json(value))


def _stored_message(row: StoredRow) -> Message:
    return Message.stored(
        id=row.id,
        seq=row.seq,
        turn_seq=row.turn_seq,
        role=row.role,
        content=row.content,
        name=row.name,
        tool_calls=row.tool_calls,
        tool_call_id=row.tool_call_id,
        reasoning_content=row.reasoning_content,
        is_error=bool(row.is_error),
        answers_seq=row.answers_seq,
        tokens=row.token_count,
        encoding=row.token_encoding,
    )


def _stored_messages(rows: Sequence[StoredRow], kept: Mapping[int, Message]) -> tuple[Message, ...]:
    """The core's message of each active row: the one made before for a kept row whose
    count has not changed since, a new one otherwise."""
    messages: list[Message] = []
    for row in rows:
        message = kept.get(row.id)
        if (
            message is None
            or message.content is not row.content
            or message.tokens != row.token_count
            or message.encoding != row.token_encoding
        ):
            message = _stored_message(row)
        messages.append(message)
    return tuple(messages)


def _prompt_tokens(usage: Usage | None) -> int | None:
    return usage.prompt_total if usage is not None else None


def _refuse_reused_call_ids(
    state: AssemblyState, kept: KeptRows | None, call_ids: Sequence[str]
) -> None:
    """A tool-call id names one call in a session's active history: a repeat would make a
    result ambiguous (and Anthropic refuses two ``tool_use`` blocks with one id).

    The rows this worker keeps know their calls' ids (``KeptRows.call_ids``): a new id is
    looked up there, and counts only if its row is still active; the rows read in full (those
    past the kept ones) are walked. Without kept rows, every active row is walked."""
    wanted = set(call_ids)
    reused: set[str] = set()
    known_seq = state.known_seq if kept is not None else 0
    for row in reversed(state.active):
        if row.seq <= known_seq:
            break
        reused.update(wanted.intersection(row_call_ids(row)))
    if known_seq:
        assert kept is not None
        seqs = _Seqs(state.active)
        for call_id in wanted:
            row_id = kept.call_ids.get(call_id)
            if row_id is not None and kept.rows[row_id].seq in seqs:
                reused.add(call_id)
    if reused:
        ordered = sorted(reused)
        raise ToolCallIdReusedError(
            f"tool call id(s) {ordered} were already used in this session; give every tool "
            "call a new id",
            details={"tool_call_ids": ordered},
        )


class _Seqs:
    """Whether a seq is one of rows' (in order of seq), found by bisection: a step asks about
    a few of a long turn's thousands of rows."""

    def __init__(self, rows: Sequence[StoredRow]) -> None:
        self.rows = rows

    def __contains__(self, seq: int) -> bool:
        index = bisect_left(self.rows, seq, key=_seq_of)
        return index < len(self.rows) and self.rows[index].seq == seq


def _seq_of(row: StoredRow) -> int:
    return row.seq


def _message_row(
    message: Message,
    *,
    session_id: str,
    turn_id: str,
    step: int,
    tokens: int,
    encoding: str,
    with_id: bool = True,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "session_id": session_id,
        "turn_id": turn_id,
        "seq": message.seq,
        "turn_seq": message.turn_seq,
        "step": step,
        "role": message.role,
        "content": message.content,
        "name": message.name,
        "tool_calls": list(message.tool_calls) if message.tool_calls else None,
        "tool_call_id": message.tool_call_id,
        "reasoning_content": message.reasoning_content,
        "is_error": message.is_error or None,
        "answers_seq": message.answers_seq,
        "token_count": tokens,
        "token_encoding": encoding,
        "state": MessageState.ACTIVE,
        "created_at": utcnow(),
    }
    if with_id:
        row["id"] = message.id
    return row


def _audit_values(
    decision: Decision,
    snapshot: Snapshot,
    session: SessionRow,
    turn: _Turn,
    *,
    audit_id: int,
) -> dict[str, Any]:
    """The audit row of one assembly (seed 003 §10), accepted or rejected."""
    figures = decision.figures
    return {
        "id": audit_id,
        "session_id": session.id,
        "tenant_id": session.tenant_id,
        # A rejected turn start made no turn.
        "turn_id": None if turn.new and not decision.accepted else turn.id,
        "turn_seq": turn.seq,
        "step": snapshot.step,
        "model_alias": session.model,
        "model_context_limit": decision.budget.model_context_limit,
        "input_budget": decision.budget.input_budget,
        "estimated_input_tokens_before": figures.before,
        "estimated_input_tokens_after_summary": figures.after_summary,
        "estimated_input_tokens_after_prune": figures.after_prune,
        "estimated_input_tokens": figures.final,
        "summary_triggered": decision.summary_triggered,
        "summary_reason": decision.summary_reason,
        "summary_fallback": decision.summary_fallback,
        "summary_id": decision.applied_summary_id,
        "prune_triggered": decision.prune_triggered,
        "overflow_rejected": not decision.accepted,
        "rejection": dict(decision.rejection) if decision.rejection else None,
        "blocks": dict(decision.blocks),
        "block_telemetry": {
            **decision.block_telemetry,
            **_left_out_telemetry(decision),
            **(
                {"recall": {"message_ids": list(decision.recall.message_ids)}}
                if decision.recall is not None
                else {}
            ),
        },
        "kept_message_ids": list(decision.kept_ids),
        "summarised_message_ids": list(decision.summarised_ids),
        "pruned_message_ids": list(decision.pruned_ids),
        "estimator": snapshot.counter.name,
        "estimator_fallback": snapshot.estimator_fallback,
        "calibration_ratio": snapshot.calibration_ratio,
        "prefix_kept": decision.prefix_kept,
        "first_changed_index": decision.first_changed_index,
        "change_reason": decision.change_reason,
        "created_at": utcnow(),
    }


def _left_out_telemetry(decision: Decision) -> dict[str, Any]:
    """What of the user's words the summary made by this assembly left out: the statements
    (for room, as its notice says) and the routine lines (requests said again and again, or
    that the previous summary held), each counted and listed by message id (they stay in the
    history, and recall can bring them back)."""
    made = decision.new_summary
    if made is None:
        return {}
    telemetry: dict[str, Any] = {}
    for key, count_name, items in (
        ("summary_left_out", "statements", made.content.left_out),
        ("summary_routine_left_out", "lines", made.content.routine_left_out),
    ):
        if items:
            ids = sorted({i for item in items for i in item.source_message_ids})
            telemetry[key] = {count_name: len(items), "message_ids": ids}
    return telemetry


def _in_format(
    assembly: AssemblyOut, prompt_format: PromptFormat, *, stable_messages: int
) -> AssemblyOut:
    if prompt_format == "openai":
        return assembly.model_copy(update={"messages": to_openai(assembly.messages)})
    converted = to_anthropic(assembly.messages, stable_messages=stable_messages)
    return assembly.model_copy(
        update={"format": "anthropic", "system": converted.system, "messages": converted.messages}
    )


def _turn_out(turn: TurnRow) -> TurnOut:
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
            SummaryItemOut(
                text=i.text,
                source_message_ids=list(i.source_message_ids),
                from_user=i.from_user,
            )
            for i in summary_items(raw)
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


def _superseded(decision: Decision, snapshot: Snapshot) -> frozenset[int]:
    """The user's messages the summary in force (this turn's new one, or the latest) records
    as superseded: recall leaves them out by id."""
    if decision.new_summary is not None:
        return decision.new_summary.content.superseded_ids
    latest = snapshot.latest_summary
    return latest.content.superseded_ids if latest is not None else frozenset()
