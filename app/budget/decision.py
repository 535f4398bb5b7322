"""The assembly decision: one snapshot of plain data in, one decision out.

Everything an assembly decides comes from here, in the policy's order (PRODUCT.md "The
policy"): a summary a job finished since the last assembly leaves the window; a failed job,
or a failed summariser, falls back to deterministic truncation; the 70 % / N-turn trigger
chooses what to summarise (now, or in a job when the prompt fits without it); the 90 % prune
goes down to the low-water mark keeping anchors; block caps shape what is left; and the prompt
either fits or is rejected with its figures. The decision also carries what the service must
write and report: the state changes, the new summary, the jobs, the audit figures, the prefix
verdict and the response's budget.

The summariser is the one thing the service waits for in the middle, so the decision comes in
two halves, both pure::

    plan = plan_assembly(snapshot)            # may ask for a summary (plan.summarise)
    outcome = await summariser(plan.summarise) # the service's only await in between
    decision = decide(plan, outcome)          # the whole decision

Nothing here reads a clock, a file or a database, logs, or keeps state between calls: the
token counter and the fixed-cost measure come in with the snapshot (the runtime owns their
caches), so the same snapshot always gives the same decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from app.budget.assembly import (
    CURRENT_BLOCK,
    HISTORY_BLOCK,
    SUMMARY_BLOCK,
    ChatMessage,
    ContextBlocks,
    FixedCost,
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
    BudgetSettings,
    HistoryMessage,
    PrunePlan,
    SummaryPlan,
    SummaryReason,
    history_tokens,
    plan_fallback_truncation,
    plan_prune,
    plan_summary,
)
from app.budget.recall import RECALL_BLOCK, RECALL_PREFIX, RecallBlock
from app.budget.summary import SummaryContent, has_lines, render_summary
from app.budget.tokens import TokenCounter, content_text, count_message
from app.budget.views import (
    CapMemo,
    SetAside,
    ViewReport,
    capped_tool_result,
    has_reasoning,
    images_set_aside,
    kept_aside,
    mark_views,
    previously_cleared,
    previously_set_aside,
    previously_without_images,
    set_aside_older_results,
    without_reasoning,
)

OVERFLOW_GUIDANCE = (
    "Shorten the input (the user message or the tool results of this step), "
    "or start a new session; raising context_limit helps only if the model really has it."
)


# -- the snapshot -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicySettings:
    """The knobs of the policy beyond the budget math."""

    budget: BudgetSettings = field(default_factory=BudgetSettings)
    #: A summary's token target, as a share of the input budget.
    summary_target_ratio: float = 0.25
    dedupe_summary_against_memory: bool = True
    #: A slow summariser runs in jobs: below the prune threshold the prompt goes out without
    #: waiting, and a later assembly applies the summary.
    summarizes_in_background: bool = False
    #: One tool result's cap in the prompt, as a share of the input budget (a session's
    #: ``tool_result_share`` cap overrides it).
    tool_result_share: float = 0.25
    #: Images of completed turns' tool results that stay when room is needed, newest first.
    tool_images_kept: int = 3


@dataclass(frozen=True)
class SessionBlocks:
    """What a session puts in front of its conversation."""

    system_layers: tuple[str, ...] = ()
    goal: str | None = None
    mode: str | None = None
    memory: str | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    caps: BlockCaps = field(default_factory=BlockCaps)


@dataclass(frozen=True)
class Message:
    """One conversation message, stored or arriving with this request."""

    id: int
    seq: int
    turn_seq: int
    role: str
    content: Any
    name: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] | None = None
    tool_call_id: str | None = None
    reasoning_content: str | None = None
    #: A tool result that reports the tool's failure (Anthropic's ``is_error``).
    is_error: bool = False
    #: The seq of the assistant message whose tool call a ``tool`` message answers.
    answers_seq: int | None = None
    #: The cached count and the estimator that made it (None: not counted yet).
    tokens: int | None = None
    encoding: str | None = None

    def chat(self) -> ChatMessage:
        return chat_message(
            role=self.role,
            content=self.content,
            name=self.name,
            tool_calls=self.tool_calls,
            tool_call_id=self.tool_call_id,
            reasoning_content=self.reasoning_content,
            is_error=self.is_error,
        )


@dataclass(frozen=True)
class LatestSummary:
    """The session's newest summary: what it covers and what it says."""

    id: int
    turn_seq: int
    from_seq: int
    to_seq: int
    content: SummaryContent


@dataclass(frozen=True)
class FinishedJob:
    """A summary job that finished (done or failed) and no assembly has taken in yet."""

    id: int
    failed: bool
    to_seq: int


@dataclass(frozen=True)
class Snapshot:
    """Everything an assembly decides from, read once after the session lock."""

    settings: PolicySettings
    budget: Budget
    counter: TokenCounter
    blocks: SessionBlocks
    #: Active stored messages, in order.
    stored: tuple[Message, ...]
    #: This request's new messages, in order (their ids are reserved, not yet written).
    new: tuple[Message, ...]
    turn_seq: int
    step: int
    latest_summary: LatestSummary | None = None
    previous_fingerprint: Sequence[str] | None = None
    finished_jobs: tuple[FinishedJob, ...] = ()
    #: The id of the session's queued or running summary job, if any.
    pending_job_id: int | None = None
    calibration_ratio: float = 1.0
    estimator_fallback: bool = False
    #: Named in a capped tool result's marker, where the whole result is read.
    session_id: str = ""
    #: Exact tokens of the blocks; the runtime passes a remembering one (its cache is keyed
    #: by the counter's name and rules and the blocks' text), the default measures each time.
    measure: Callable[[TokenCounter, ContextBlocks], FixedCost] = fixed_cost
    #: Capped tool results already cut (the runtime's); None cuts each time.
    capped: CapMemo | None = None


# -- the first half: what to summarise ------------------------------------------------------------


@dataclass(frozen=True)
class SourceText:
    """A message as a summariser reads it."""

    message_id: int
    role: str
    text: str


@dataclass(frozen=True)
class SummaryWork:
    """A summary the service must ask the summariser for before the decision can finish."""

    previous: SummaryContent | None
    sources: tuple[SourceText, ...]
    target_tokens: int
    #: A background summariser called inline (the prompt cannot wait): bound the wait.
    bounded: bool


@dataclass(frozen=True)
class JobRequest:
    """A summary job to queue: this prompt fits without the summary."""

    reason: SummaryReason
    from_seq: int
    to_seq: int


@dataclass(frozen=True)
class Plan:
    """The first half of a decision, up to the summariser."""

    snapshot: Snapshot
    #: Active messages as the policy sees them (stored not yet summarised, then new).
    history: tuple[HistoryMessage, ...]
    by_seq: Mapping[int, Message]
    #: Stored messages a finished job's summary covers: they leave the window now.
    applied: tuple[Message, ...]
    recounts: tuple[tuple[int, int], ...]
    new_tokens: tuple[int, ...]
    blocks: ContextBlocks
    fixed: FixedCost
    telemetry: Mapping[str, BlockTelemetry]
    blocks_before: Mapping[str, int]
    #: Seqs the fallback truncation of a failed job left out.
    truncated: frozenset[int]
    job_failed: bool
    summary_plan: SummaryPlan
    new_job: JobRequest | None
    summarise: SummaryWork | None
    #: Capped tool results and cleared reasoning in this prompt.
    views: ViewReport = field(default_factory=ViewReport)

    @property
    def summary_target_tokens(self) -> int:
        settings = self.snapshot.settings
        return int(settings.summary_target_ratio * self.snapshot.budget.input_budget)


def plan_assembly(snapshot: Snapshot) -> Plan:
    """Count what is new, apply a finished job, and decide whether to summarise now."""
    counter = snapshot.counter
    settings = snapshot.settings
    latest = snapshot.latest_summary
    # A summary job finished since the last assembly: what it covers leaves the prompt now.
    applied = tuple(m for m in snapshot.stored if latest is not None and m.seq <= latest.to_seq)
    stored = snapshot.stored[len(applied) :]
    recounts: list[tuple[int, int]] = []
    counted: list[tuple[Message, int]] = []
    for message in stored:
        tokens = message.tokens
        if tokens is None or message.encoding != counter.name:
            tokens = count_message(counter, message.chat())
            recounts.append((message.id, tokens))
        counted.append((message, tokens))
    new_tokens = tuple(count_message(counter, m.chat()) for m in snapshot.new)
    counted.extend(zip(snapshot.new, new_tokens, strict=True))

    previous = latest.content if latest else None
    blocks, telemetry = shape_blocks(snapshot, previous)
    fixed = snapshot.measure(counter, blocks)
    counted, views = prompt_views(snapshot, fixed, counted)
    history = tuple(_as_history(message, tokens) for message, tokens in counted)
    by_seq = {message.seq: message for message, _ in counted}
    blocks_before = _report_blocks(fixed, history, snapshot.turn_seq)

    truncated: frozenset[int] = frozenset()
    failed_jobs = [job for job in snapshot.finished_jobs if job.failed]
    if failed_jobs:
        # Seed 003 §9: a failed summary never loses history; truncate what it would have
        # covered instead.
        last = max(job.to_seq for job in failed_jobs)
        truncated = _truncate(snapshot, fixed, history, [m.seq for m in history if m.seq <= last])

    summary_plan = plan_summary(
        budget=snapshot.budget,
        settings=settings.budget,
        fixed_tokens=fixed.tokens,
        history=[m for m in history if m.seq not in truncated],
        current_turn_seq=snapshot.turn_seq,
        turns_since_summary=snapshot.turn_seq - 1 - (latest.turn_seq if latest else 0),
    )
    new_job: JobRequest | None = None
    summarise: SummaryWork | None = None
    can_wait = settings.summarizes_in_background and (
        summary_plan.usage_before
        < settings.budget.prune_trigger_ratio * snapshot.budget.input_budget
    )
    if summary_plan.triggered and can_wait:
        if snapshot.pending_job_id is None:
            new_job = JobRequest(
                reason=summary_plan.reason or "threshold",
                from_seq=summary_plan.eligible[0],
                to_seq=summary_plan.eligible[-1],
            )
    elif summary_plan.triggered:
        summarise = SummaryWork(
            previous=previous,
            sources=tuple(
                SourceText(by_seq[seq].id, by_seq[seq].role, content_text(by_seq[seq].content))
                for seq in summary_plan.eligible
            ),
            target_tokens=int(settings.summary_target_ratio * snapshot.budget.input_budget),
            bounded=settings.summarizes_in_background,
        )
    return Plan(
        snapshot=snapshot,
        history=history,
        by_seq=by_seq,
        applied=applied,
        recounts=tuple(recounts),
        new_tokens=new_tokens,
        blocks=blocks,
        fixed=fixed,
        telemetry=telemetry,
        blocks_before=blocks_before,
        truncated=truncated,
        job_failed=bool(failed_jobs),
        summary_plan=summary_plan,
        new_job=new_job,
        summarise=summarise,
        views=views,
    )


def prompt_views(
    snapshot: Snapshot, fixed: FixedCost, counted: Sequence[tuple[Message, int]]
) -> tuple[list[tuple[Message, int]], ViewReport]:
    """Messages as the prompt shows them (:mod:`app.budget.views`), with their tokens there:
    every tool result within its cap, then, when the prompt is over the summary trigger,
    completed turns without their reasoning."""
    counter, budget = snapshot.counter, snapshot.budget
    share = snapshot.blocks.caps.tool_result_share
    if share is None:
        share = snapshot.settings.tool_result_share
    # Of the budget before calibration: a usage report moves the calibrated budget, and a
    # result already shown must read the same in the next prompt of the turn.
    cap_tokens = max(1, int(share * budget.uncalibrated_input_budget))
    # What an earlier prompt of a long turn set aside stays aside (see ``decide``): shown as
    # its placeholder from here on, so that summary and prune see the prompt as it will be.
    already = previously_set_aside(snapshot.previous_fingerprint)
    shown: list[tuple[Message, int]] = []
    capped = left_out = kept = kept_tokens = 0
    for message, tokens in counted:
        aside = kept_aside(message, tokens, counter) if message.seq in already else None
        if aside is not None:
            shown.append(aside)
            kept += 1
            kept_tokens += tokens - aside[1]
            continue
        view, view_tokens, cut = capped_tool_result(
            message,
            tokens,
            cap_tokens=cap_tokens,
            counter=counter,
            session_id=snapshot.session_id,
            memo=snapshot.capped,
        )
        capped += bool(cut)
        left_out += cut
        shown.append((view, view_tokens))
    usage = fixed.tokens + sum(tokens for _, tokens in shown)
    trigger = snapshot.settings.budget.summary_trigger_ratio * budget.input_budget
    messages_cleared = parts_cleared = tokens_cleared = 0
    cleared_before = previously_cleared(snapshot.previous_fingerprint)
    cleared: set[int] = set()
    # What earlier prompts cleared stays cleared, first; only then is the prompt judged
    # against the trigger (counting that reasoning as still shown would clear the newest
    # turn's every time), and over it, every completed turn's reasoning goes at once, so
    # that the prompt changes once rather than a little every turn.
    for again in (True, False):
        over = usage - tokens_cleared > trigger
        for index, (message, tokens) in enumerate(shown):
            if message.turn_seq >= snapshot.turn_seq or message.seq in cleared:
                continue
            if not has_reasoning(message):
                continue
            if (message.seq in cleared_before) if again else over:
                view, parts = without_reasoning(message)
                view_tokens = count_message(counter, view.chat())
                shown[index] = (view, view_tokens)
                cleared.add(message.seq)
                messages_cleared += 1
                parts_cleared += parts
                tokens_cleared += tokens - view_tokens
    images = images_set_aside(
        shown,
        turn_seq=snapshot.turn_seq,
        keep=snapshot.settings.tool_images_kept,
        excess=int(usage - tokens_cleared - trigger),
        already=previously_without_images(snapshot.previous_fingerprint),
        counter=counter,
    )
    return images.shown, ViewReport(
        tool_results_capped=capped,
        tool_result_tokens_left_out=left_out,
        tool_results_kept_aside=kept,
        tool_result_tokens_kept_aside=kept_tokens,
        reasoning_messages_cleared=messages_cleared,
        reasoning_parts_cleared=parts_cleared,
        reasoning_tokens_cleared=tokens_cleared,
        reasoning_cleared_seqs=frozenset(cleared),
        images_set_aside=images.images,
        image_tokens_set_aside=images.tokens_freed,
        images_set_aside_seqs=images.seqs,
    )


# -- what the summariser gave back --------------------------------------------------------------


@dataclass(frozen=True)
class NewSummary:
    """A summary that keeps its contract, ready to be stored."""

    content: SummaryContent
    rendered: str
    tokens: int
    #: The messages it folds in, oldest first (ids and seqs).
    source_ids: tuple[int, ...]
    source_seqs: tuple[int, ...]


SummaryFailure = Literal["error", "timeout", "contract"]


def accept_summary(
    content: SummaryContent,
    *,
    counter: TokenCounter,
    target_tokens: int,
    sources: Sequence[SourceText],
    source_seqs: Sequence[int],
) -> NewSummary | None:
    """The summary if it keeps its contract (not empty, within its token target), else None.
    The rendered summary is counted here, once."""
    rendered = render_summary(content)
    if not rendered.strip():
        return None
    tokens = counter.count_text(rendered)
    if tokens > target_tokens:
        return None
    return NewSummary(
        content=content,
        rendered=rendered,
        tokens=tokens,
        source_ids=tuple(s.message_id for s in sources),
        source_seqs=tuple(source_seqs),
    )


# -- the second half: the decision ---------------------------------------------------------------


ChangeReason = Literal[
    "summary",
    "prune",
    "block_cap",
    "long_turn",
    "reasoning",
    "tool_images",
    "recall",
    "session_edit",
]


@dataclass(frozen=True)
class Figures:
    """Estimated prompt tokens at each stage of the policy, all measured the same way
    (uncapped blocks up to the prune; caps apply to the final figure only)."""

    before: int
    after_summary: int
    after_prune: int
    final: int


@dataclass(frozen=True)
class Decision:
    """Everything an assembly decided: what the prompt is, what to write, what to report."""

    accepted: bool
    figures: Figures
    budget: Budget
    #: Tokens per block of the prompt (or of the rejected attempt).
    blocks: Mapping[str, int]
    block_telemetry: Mapping[str, Any]
    blocks_before: Mapping[str, int]
    summary_triggered: bool
    summary_reason: SummaryReason | None
    summary_fallback: bool
    #: Why the fallback ran: a failed job, or the summariser failing now.
    fallback_cause: Literal["job", "error", "timeout", "contract"] | None
    summary_queued: bool
    prune_triggered: bool
    #: The prompt (accepted only), system message first.
    messages: tuple[ChatMessage, ...] = ()
    fingerprint: tuple[str, ...] = ()
    prefix_kept: bool | None = None
    first_changed_index: int | None = None
    change_reason: ChangeReason | None = None
    #: How many leading messages of the prompt the session's previous prompt also had (its
    #: cacheable prefix; 0 for the first prompt).
    stable_messages: int = 0
    #: Writes (accepted only).
    kept_ids: tuple[int, ...] = ()
    #: Stored messages a finished job's summary covers, and that summary's id.
    applied_ids: tuple[int, ...] = ()
    applied_summary_id: int | None = None
    new_summary: NewSummary | None = None
    pruned_ids: tuple[int, ...] = ()
    #: Whether the 90 % prune itself left messages out (not only a fallback truncation).
    pruned_by_policy: bool = False
    new_job: JobRequest | None = None
    jobs_taken_in: tuple[int, ...] = ()
    #: The pending job a summary made now makes moot.
    superseded_job_id: int | None = None
    recounts: tuple[tuple[int, int], ...] = ()
    new_tokens: tuple[int, ...] = ()
    rejection: Mapping[str, Any] | None = None
    #: What changed the prompt by the policy's own doing (summary, prune, caps, views), if
    #: anything: the reason given when its prefix changed, unless only recall changed it.
    policy_change: ChangeReason | None = None
    #: Messages of the current turn at the prompt's end (the recall block goes before them).
    current_messages: int = 0
    #: The recall block the prompt shows (``with_recall``), just before the current turn.
    recall: RecallBlock | None = None

    @property
    def summarised_ids(self) -> tuple[int, ...]:
        new = self.new_summary.source_ids if self.new_summary else ()
        return (*self.applied_ids, *new)


def decide(
    plan: Plan,
    summary: SummaryContent | SummaryFailure | None = None,
) -> Decision:
    """Finish the decision with what the summariser gave back (``plan.summarise``): its
    content, or how it failed; None when the plan asked for no summary."""
    snapshot = plan.snapshot
    counter = snapshot.counter
    budget = snapshot.budget
    settings = snapshot.settings
    latest = snapshot.latest_summary
    history = plan.history
    blocks, fixed, telemetry = plan.blocks, plan.fixed, dict(plan.telemetry)
    left_out = set(plan.truncated)
    fallback_cause: Literal["job", "error", "timeout", "contract"] | None = (
        "job" if plan.job_failed else None
    )
    new_summary: NewSummary | None = None

    work = plan.summarise
    if work is not None:
        eligible = plan.summary_plan.eligible
        if isinstance(summary, SummaryContent):
            new_summary = accept_summary(
                summary,
                counter=counter,
                target_tokens=work.target_tokens,
                sources=work.sources,
                source_seqs=eligible,
            )
        if new_summary is not None:
            left_out.update(eligible)
            blocks, shaped = shape_blocks(snapshot, new_summary.content)
            telemetry.update(shaped)
            fixed = snapshot.measure(counter, blocks)
        else:
            cause = summary if isinstance(summary, str) else "contract"
            fallback_cause = fallback_cause or cause
            left_out.update(_truncate(snapshot, fixed, history, eligible))
    fallback = fallback_cause is not None

    remaining = [m for m in history if m.seq not in left_out]
    in_force = new_summary.content if new_summary else (latest.content if latest else None)
    anchors = in_force.anchor_message_ids() if in_force else frozenset()
    prune = plan_prune(
        budget=budget,
        settings=settings.budget,
        fixed_tokens=fixed.tokens,
        history=remaining,
        current_turn_seq=snapshot.turn_seq,
        anchor_message_ids=anchors,
        summarised=new_summary is not None or bool(plan.applied),
    )
    pruned_seqs = set(prune.pruned)
    if fallback:
        # Truncated messages are left out for good, as pruned ones are.
        pruned_seqs |= left_out
    final = [m for m in remaining if m.seq not in pruned_seqs]
    history_before = history_tokens(m for m in final if m.turn_seq != snapshot.turn_seq)
    over_cap = _over_caps(snapshot, final, fixed.tokens, anchors)
    if over_cap:
        # Left out of this prompt only: they stay active, so a later summary still reads
        # them (a cap is a shape for the prompt, not a decision about history).
        final = [m for m in final if m.seq not in set(over_cap)]
    caps = snapshot.blocks.caps
    if caps.total is not None and fixed.tokens + history_tokens(final) > caps.total:
        # History is down to its floor: squeeze the summary, then memory (seed 000 order).
        room = caps.total - history_tokens(final) - (fixed.tokens - fixed.blocks[SUMMARY_BLOCK])
        blocks, shaped = shape_blocks(snapshot, in_force, room=max(0, room))
        telemetry.update(shaped)
        fixed = snapshot.measure(counter, blocks)
    long_turn = _set_aside(snapshot, plan, final, room=budget.input_budget - fixed.tokens)
    final = long_turn.history
    final_tokens = fixed.tokens + history_tokens(final)
    report_blocks = _report_blocks(fixed, final, snapshot.turn_seq)
    figures = Figures(
        before=plan.summary_plan.usage_before,
        after_summary=prune.usage_after_summary,
        after_prune=prune.usage_after_prune,
        final=final_tokens,
    )
    common: dict[str, Any] = {
        "figures": figures,
        "budget": budget,
        "blocks": report_blocks,
        "block_telemetry": {
            **_telemetry(telemetry, report_blocks, history_before, len(over_cap)),
            **plan.views.as_telemetry(),
            "open_turn": {
                "tool_results_set_aside": len(long_turn.seqs),
                "tokens_set_aside": plan.views.tool_result_tokens_kept_aside
                + long_turn.tokens_freed,
            },
        },
        "blocks_before": plan.blocks_before,
        "summary_triggered": plan.summary_plan.triggered,
        "summary_reason": plan.summary_plan.reason,
        "summary_fallback": fallback,
        "fallback_cause": fallback_cause,
        "prune_triggered": prune.triggered,
        "recounts": plan.recounts,
        "new_tokens": plan.new_tokens,
    }
    if final_tokens > budget.input_budget:
        return Decision(
            accepted=False,
            summary_queued=False,
            rejection={
                "estimated_input_tokens": final_tokens,
                "input_budget": budget.input_budget,
                "model_context_limit": budget.model_context_limit,
                "calibration_ratio": snapshot.calibration_ratio,
                "blocks": report_blocks,
                "guidance": _guidance(snapshot, final, budget.input_budget - fixed.tokens),
            },
            **common,
        )

    head = system_message(blocks)
    shown = long_turn.shown
    messages = ([head] if head is not None else []) + [shown[m.seq].chat() for m in final]
    fingerprint = mark_views(
        prompt_fingerprint(head, [m.seq for m in final]),
        long_turn.seqs,
        plan.views.reasoning_cleared_seqs,
        plan.views.images_set_aside_seqs,
    )
    pruned_ids = tuple(plan.by_seq[seq].id for seq in sorted(pruned_seqs))
    policy_change: ChangeReason | None = (
        "summary"
        if new_summary is not None or plan.applied
        else "prune"
        if pruned_ids
        else "block_cap"
        if over_cap
        else "long_turn"
        if long_turn.seqs - previously_set_aside(snapshot.previous_fingerprint)
        else "reasoning"
        if plan.views.reasoning_cleared_seqs - previously_cleared(snapshot.previous_fingerprint)
        else "tool_images"
        if plan.views.images_set_aside_seqs
        - previously_without_images(snapshot.previous_fingerprint)
        else None
    )
    pending_job = snapshot.pending_job_id
    return Decision(
        accepted=True,
        summary_queued=plan.new_job is not None or (pending_job is not None and not new_summary),
        messages=tuple(messages),
        fingerprint=tuple(fingerprint),
        **_prefix_verdict(snapshot.previous_fingerprint, fingerprint, policy_change),
        policy_change=policy_change,
        current_messages=sum(1 for m in final if m.turn_seq == snapshot.turn_seq),
        kept_ids=tuple(plan.by_seq[m.seq].id for m in final),
        applied_ids=tuple(m.id for m in plan.applied),
        applied_summary_id=latest.id if plan.applied and latest else None,
        new_summary=new_summary,
        pruned_ids=pruned_ids,
        pruned_by_policy=bool(prune.pruned),
        new_job=plan.new_job,
        jobs_taken_in=tuple(job.id for job in snapshot.finished_jobs),
        superseded_job_id=pending_job if new_summary is not None else None,
        **common,
    )


def _prefix_verdict(
    previous: Sequence[str] | None, fingerprint: Sequence[str], policy_change: ChangeReason | None
) -> dict[str, Any]:
    """Whether the prompt starts with the previous one, where it first differs and why:
    the policy's change if it made one, else the recall block if that is where it differs,
    else an edit of the session."""
    previous_fingerprint = comparable_fingerprint(previous)
    if previous_fingerprint is None:
        return {
            "prefix_kept": None,
            "first_changed_index": None,
            "change_reason": None,
            "stable_messages": 0,
        }
    changed_at = first_difference(previous_fingerprint, list(fingerprint))
    reason: ChangeReason | None = None
    if changed_at is not None:
        reason = policy_change or (
            "recall"
            if any(
                len(entries) > changed_at and entries[changed_at].startswith(RECALL_PREFIX)
                for entries in (previous_fingerprint, fingerprint)
            )
            else "session_edit"
        )
    return {
        "prefix_kept": changed_at is None,
        "first_changed_index": changed_at,
        "change_reason": reason,
        "stable_messages": len(previous_fingerprint) if changed_at is None else changed_at,
    }


def with_recall(
    decision: Decision, recall: RecallBlock, previous: Sequence[str] | None
) -> Decision:
    """An accepted decision's prompt with ``recall`` shown after the history, just before the
    current turn (so the prompt up to it is the previous prompt's prefix), its tokens booked
    as the ``recall`` block. The caller has checked that it fits."""
    at = len(decision.messages) - decision.current_messages
    messages = [*decision.messages]
    messages.insert(at, recall.message())
    fingerprint = [*decision.fingerprint]
    fingerprint.insert(at, recall.fingerprint())
    figures = decision.figures
    return replace(
        decision,
        messages=tuple(messages),
        fingerprint=tuple(fingerprint),
        figures=replace(figures, final=figures.final + recall.tokens),
        blocks={**decision.blocks, RECALL_BLOCK: recall.tokens},
        recall=recall,
        **_prefix_verdict(previous, fingerprint, decision.policy_change),
    )


# -- block shaping --------------------------------------------------------------------------------


def shape_blocks(
    snapshot: Snapshot, summary: SummaryContent | None, *, room: int | None = None
) -> tuple[ContextBlocks, dict[str, BlockTelemetry]]:
    """Memory and summary as the prompt shows them: summary lines that repeat memory dropped,
    each block within its cap (deterministic, so the prefix stays stable); ``room``
    squeezes summary then memory under a total cap. Returns the blocks and what shaping did."""
    session, counter = snapshot.blocks, snapshot.counter
    caps = session.caps
    telemetry: dict[str, BlockTelemetry] = {}
    summary_cap = caps.summary
    if room is not None:
        summary_cap = room if summary_cap is None else min(summary_cap, room)
    memory, memory_removed = cap_text(session.memory, caps.memory, counter)
    rendered: str | None = None
    if summary is not None:
        dedupe = snapshot.settings.dedupe_summary_against_memory
        shown, duplicates = dedupe_summary(summary, memory) if dedupe else (summary, 0)
        shown, capped = cap_summary(shown, summary_cap, counter)
        rendered = render_summary(shown) if has_lines(shown) else None
        changed = duplicates + capped
        telemetry["summary"] = BlockTelemetry(
            tokens_before=counter.count_text(render_summary(summary)) if changed else 0,
            tokens_after=counter.count_text(rendered) if changed and rendered else 0,
            lines_removed=changed,
            extra={"duplicate_lines_removed": duplicates},
        )
    if room is not None and rendered is None and memory is not None:
        memory, more = cap_text(memory, room, counter)
        memory_removed += more
    telemetry["memory"] = BlockTelemetry(
        tokens_before=counter.count_text(session.memory or "") if memory_removed else 0,
        tokens_after=counter.count_text(memory or "") if memory_removed else 0,
        lines_removed=memory_removed,
    )
    blocks = ContextBlocks(
        system_layers=session.system_layers,
        goal=session.goal,
        mode=session.mode,
        memory=memory,
        summary=rendered,
        tools=session.tools,
    )
    return blocks, telemetry


def _telemetry(
    shaped: Mapping[str, BlockTelemetry],
    blocks: Mapping[str, int],
    history_before: int,
    history_removed: int,
) -> dict[str, Any]:
    """Per-block tokens before and after shaping, and what was removed (seed 000 §6)."""
    report: dict[str, Any] = {}
    for name, telemetry in shaped.items():
        if not telemetry.lines_removed:
            telemetry = BlockTelemetry(blocks[name], blocks[name], 0, dict(telemetry.extra))
        report[name] = telemetry.as_dict()
    report["history"] = {
        "tokens_before": history_before,
        "tokens_after": blocks[HISTORY_BLOCK],
        "messages_removed": history_removed,
    }
    return report


# -- helpers ---------------------------------------------------------------------------------


def _as_history(message: Message, tokens: int) -> HistoryMessage:
    return HistoryMessage(
        seq=message.seq,
        turn_seq=message.turn_seq,
        role=message.role,  # type: ignore[arg-type]
        tokens=tokens,
        calls_tools=bool(message.tool_calls),
        answers_seq=message.answers_seq,
        message_id=message.id,
    )


def _report_blocks(
    fixed: FixedCost, history: Sequence[HistoryMessage], current_turn_seq: int
) -> dict[str, int]:
    return {
        **fixed.blocks,
        HISTORY_BLOCK: history_tokens(m for m in history if m.turn_seq != current_turn_seq),
        CURRENT_BLOCK: history_tokens(m for m in history if m.turn_seq == current_turn_seq),
    }


def _truncate(
    snapshot: Snapshot,
    fixed: FixedCost,
    history: Sequence[HistoryMessage],
    eligible: Sequence[int],
) -> frozenset[int]:
    """Seed 003 §9: never lose history, never store an error as a summary: leave the
    eligible range's chatter out, anchors of the summary in force kept."""
    latest = snapshot.latest_summary
    return frozenset(
        plan_fallback_truncation(
            budget=snapshot.budget,
            settings=snapshot.settings.budget,
            fixed_tokens=fixed.tokens,
            history=history,
            eligible=eligible,
            current_turn_seq=snapshot.turn_seq,
            anchor_message_ids=latest.content.anchor_message_ids() if latest else frozenset(),
        )
    )


def _set_aside(
    snapshot: Snapshot, plan: Plan, final: list[HistoryMessage], *, room: int
) -> SetAside:
    """A long turn's older tool results set aside (app.budget.views) when the prompt would
    not fit otherwise, or because the previous prompt of the turn already had them so."""
    return set_aside_older_results(
        final,
        plan.by_seq,
        current_turn_seq=snapshot.turn_seq,
        latest_seqs=frozenset(m.seq for m in snapshot.new),
        already=previously_set_aside(snapshot.previous_fingerprint),
        room=room,
        counter=snapshot.counter,
    )


def _guidance(snapshot: Snapshot, final: Sequence[HistoryMessage], room: int) -> str:
    """What to do about a prompt that cannot fit: what the open turn's newest input costs
    against the room the blocks leave, once everything that can give way has."""
    new = {m.seq for m in snapshot.new}
    latest = history_tokens(m for m in final if m.seq in new)
    if snapshot.step == 0 or not latest:
        return OVERFLOW_GUIDANCE
    rest = history_tokens(m for m in final if m.seq not in new)
    return (
        f"This step's tool calls and results need {latest} tokens, and the rest of the prompt "
        f"(the user message, the turn's earlier steps with their results set aside, the "
        f"kept history) {rest}, in the {room} tokens the system prompt and blocks leave. "
        "Post this step again with shorter tool results, or complete the turn as failed and "
        "start a new one."
    )


def _over_caps(
    snapshot: Snapshot,
    history: list[HistoryMessage],
    fixed_tokens: int,
    anchors: frozenset[int],
) -> tuple[int, ...]:
    """Seqs the history cap (or, history first, the total cap) leaves out."""
    caps = snapshot.blocks.caps
    current = history_tokens(m for m in history if m.turn_seq == snapshot.turn_seq)
    limits = [caps.history] if caps.history is not None else []
    if caps.total is not None:
        limits.append(caps.total - fixed_tokens - current)
    if not limits:
        return ()
    return history_over_cap(
        history,
        current_turn_seq=snapshot.turn_seq,
        limit=max(0, min(limits)),
        min_recent_messages=caps.min_recent_messages,
        anchor_message_ids=anchors,
    )


__all__ = [
    "OVERFLOW_GUIDANCE",
    "Decision",
    "Figures",
    "FinishedJob",
    "JobRequest",
    "LatestSummary",
    "Message",
    "NewSummary",
    "Plan",
    "PolicySettings",
    "PrunePlan",
    "SessionBlocks",
    "Snapshot",
    "SourceText",
    "SummaryWork",
    "accept_summary",
    "decide",
    "plan_assembly",
    "shape_blocks",
    "with_recall",
]
