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

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from app.budget.assembly import (
    CURRENT_BLOCK,
    HISTORY_BLOCK,
    MEMORY_BLOCK,
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
from app.budget.long_turns import (
    NOTE_SHARE,
    Folded,
    fold_older_steps,
    folded_mark,
    previously_folded,
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
    protected_from_turn,
)
from app.budget.reasoning import DEFAULT_RULE, ReasoningRule
from app.budget.recall import RECALL_BLOCK, RECALL_PREFIX, RecallBlock
from app.budget.summary import SummaryContent, has_lines, render_summary
from app.budget.tokens import TokenCounter, content_text, count_message
from app.budget.views import (
    SET_ASIDE_HEADROOM,
    CapMemo,
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
    #: One step's tool results' cap in the prompt (shared among parallel results), as a
    #: share of the input budget (a session's
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

    @classmethod
    def stored(
        cls,
        *,
        id: int,
        seq: int,
        turn_seq: int,
        role: str,
        content: Any,
        name: str | None,
        tool_calls: Sequence[Mapping[str, Any]] | None,
        tool_call_id: str | None,
        reasoning_content: str | None,
        is_error: bool,
        answers_seq: int | None,
        tokens: int,
        encoding: str,
    ) -> Message:
        """A stored message, every field given: the same value as the constructor makes,
        made about three times faster. The frozen dataclass's ``__init__`` sets its
        thirteen fields one by one through ``object.__setattr__``, and an assembly makes
        one message per active row (a long open turn has thousands)."""
        message = object.__new__(cls)
        message.__dict__.update(
            id=id,
            seq=seq,
            turn_seq=turn_seq,
            role=role,
            content=content,
            name=name,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            reasoning_content=reasoning_content,
            is_error=is_error,
            answers_seq=answers_seq,
            tokens=tokens,
            encoding=encoding,
        )
        return message

    def chat(self) -> ChatMessage:
        """The message as the chat-completions API wants it: made once, the same dict on
        every call after. A stored message is kept by the worker across the steps of a turn
        (app.turns.kept_rows), and each step's prompt shows every message of the open turn;
        made again each time, a 128-call assistant message copied its 128 calls on every
        step. The dict is shared: read it, never change it (a view is a new message)."""
        made: ChatMessage | None = self.__dict__.get(_CHAT)
        if made is None:
            made = chat_message(
                role=self.role,
                content=self.content,
                name=self.name,
                tool_calls=self.tool_calls,
                tool_call_id=self.tool_call_id,
                reasoning_content=self.reasoning_content,
                is_error=self.is_error,
            )
            # Beside the fields, not one of them: equality, ``replace`` and ``repr`` see the
            # fields alone, so a view made with ``replace`` makes its own.
            self.__dict__[_CHAT] = made
        return made

    def as_history(self, tokens: int) -> HistoryMessage:
        """The message as the policy sees it, shown with ``tokens``: made once per count,
        for the reason ``chat`` is."""
        made: HistoryMessage | None = self.__dict__.get(_HISTORY)
        if made is None or made.tokens != tokens:
            made = HistoryMessage(
                seq=self.seq,
                turn_seq=self.turn_seq,
                role=self.role,  # type: ignore[arg-type]
                tokens=tokens,
                calls_tools=bool(self.tool_calls),
                answers_seq=self.answers_seq,
                message_id=self.id,
            )
            self.__dict__[_HISTORY] = made
        return made


#: Where a message keeps its chat form and its history entry, made once (``Message.chat``).
_CHAT = "_chat"
_HISTORY = "_history"


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
    #: What completed turns' reasoning gets, by the model family's rule (app.budget.reasoning).
    reasoning: ReasoningRule = DEFAULT_RULE


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
    # A counter's name is built from its rules on each read: read once, not once a message.
    counter_name = counter.name
    for message in stored:
        tokens = message.tokens
        if tokens is None or message.encoding != counter_name:
            tokens = count_message(counter, message.chat())
            recounts.append((message.id, tokens))
        counted.append((message, tokens))
    new_tokens = tuple(count_message(counter, m.chat()) for m in snapshot.new)
    counted.extend(zip(snapshot.new, new_tokens, strict=True))

    previous = latest.content if latest else None
    blocks, telemetry = shape_blocks(snapshot, previous)
    fixed = snapshot.measure(counter, blocks)
    counted, views = prompt_views(snapshot, fixed, counted)
    history = tuple(message.as_history(tokens) for message, tokens in counted)
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
    # Parallel results of one step share the cap: two results of 20k tokens in one step take
    # one result's share of the budget, not two.
    parallel = Counter(m.answers_seq for m, _ in counted if m.role == "tool")
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
            cap_tokens=max(1, cap_tokens // max(1, parallel[message.answers_seq])),
            counter=counter,
            session_id=snapshot.session_id,
            memo=snapshot.capped,
        )
        capped += bool(cut)
        left_out += cut
        shown.append((view, view_tokens))
    usage = fixed.tokens + sum(tokens for _, tokens in shown)
    trigger = snapshot.settings.budget.summary_trigger_ratio * budget.input_budget
    reasoning = _reasoning_views(snapshot, shown, usage=usage, trigger=trigger)
    shown = reasoning.shown
    tokens_cleared, not_counted = reasoning.tokens_cleared, reasoning.tokens_not_counted
    images = images_set_aside(
        shown,
        turn_seq=snapshot.turn_seq,
        keep=snapshot.settings.tool_images_kept,
        excess=int(usage - tokens_cleared - not_counted - trigger),
        already=previously_without_images(snapshot.previous_fingerprint),
        counter=counter,
    )
    return images.shown, ViewReport(
        tool_results_capped=capped,
        tool_result_tokens_left_out=left_out,
        tool_results_kept_aside=kept,
        tool_result_tokens_kept_aside=kept_tokens,
        reasoning_messages_cleared=reasoning.messages_cleared,
        reasoning_parts_cleared=reasoning.parts_cleared,
        reasoning_tokens_cleared=tokens_cleared,
        reasoning_tokens_not_counted=not_counted,
        reasoning_cleared_seqs=reasoning.cleared,
        images_set_aside=images.images,
        image_tokens_set_aside=images.tokens_freed,
        images_set_aside_seqs=images.seqs,
    )


@dataclass(frozen=True)
class _ReasoningViews:
    """Completed turns' reasoning as the prompt shows and counts it."""

    shown: list[tuple[Message, int]]
    cleared: frozenset[int]
    messages_cleared: int
    parts_cleared: int
    tokens_cleared: int
    tokens_not_counted: int


def _reasoning_views(
    snapshot: Snapshot, shown: Sequence[tuple[Message, int]], *, usage: int, trigger: float
) -> _ReasoningViews:
    """Each completed turn's reasoning by the model family's rule (app.budget.reasoning):
    kept, cleared for room, shown uncounted, or dropped."""
    counter = snapshot.counter
    shown = list(shown)
    messages_cleared = parts_cleared = tokens_cleared = not_counted = 0
    cleared_before = previously_cleared(snapshot.previous_fingerprint)
    cleared: set[int] = set()
    uncounted: set[int] = set()
    rule = snapshot.reasoning
    turns_with_calls = {m.turn_seq for m, _ in shown if m.role == "assistant" and m.tool_calls}
    # Without a clear_thinking strategy the API keeps the last assistant turn's thinking
    # (Anthropic, "Context editing", thinking block clearing: the default keeps one turn):
    # the newest completed turn's reasoning is counted even where the rest is not.
    newest_completed = max(
        (m.turn_seq for m, _ in shown if m.turn_seq < snapshot.turn_seq and has_reasoning(m)),
        default=None,
    )
    # What earlier prompts cleared stays cleared, first (unless the provider needs it), and
    # what the provider ignores or does not count is dealt with; only then is the prompt
    # judged against the trigger (counting that reasoning as still shown would clear the
    # newest turn's every time), and over it, every completed turn's reasoning the rule lets
    # go goes at once, so that the prompt changes once rather than a little every turn.
    for again in (True, False):
        over = usage - tokens_cleared - not_counted > trigger
        for index, (message, tokens) in enumerate(shown):
            if message.turn_seq >= snapshot.turn_seq or message.seq in cleared | uncounted:
                continue
            if not has_reasoning(message):
                continue
            # DeepSeek's rule is by turn: between two user messages, if the model called a
            # tool, every assistant message there keeps its reasoning, the answer included.
            treatment = rule.treatment(made_tool_calls=message.turn_seq in turns_with_calls)
            earlier = message.seq in cleared_before
            if treatment == "keep":
                continue
            view, parts = without_reasoning(message)
            if treatment == "uncounted" and message.turn_seq == newest_completed:
                continue
            if treatment == "uncounted" and not earlier:
                view_tokens = count_message(counter, view.chat())
                shown[index] = (message, view_tokens)
                uncounted.add(message.seq)
                not_counted += tokens - view_tokens
                continue
            if (earlier or treatment == "drop") if again else over:
                view_tokens = count_message(counter, view.chat())
                shown[index] = (view, view_tokens)
                cleared.add(message.seq)
                messages_cleared += 1
                parts_cleared += parts
                tokens_cleared += tokens - view_tokens
    return _ReasoningViews(
        shown,
        frozenset(cleared),
        messages_cleared,
        parts_cleared,
        tokens_cleared,
        not_counted,
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
    tokens = content.tokens(counter)
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
    #: Steps of a long turn shown as a note (app.budget.long_turns): still active, and the
    #: note stands under the first one's id in ``kept_ids``.
    folded_ids: tuple[int, ...] = ()
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
    content, or how it failed; None when the plan asked for no summary.

    Six stages, in the policy's order, each a function of what the ones before it made:
    take the summary in (or fall back), prune at 90 %, apply the block caps, let the open
    turn's older steps give way (results set aside, then steps folded), let older history
    and the summary give way when the turn still does not fit, and then either reject with
    the figures or accept."""
    summarised = _take_summary(plan, summary)
    pruned = _prune(plan, summarised)
    capped = _apply_caps(plan.snapshot, summarised, pruned)
    long_turn = _long_turn(
        plan.snapshot,
        plan,
        capped.history,
        room=plan.snapshot.budget.input_budget - capped.fixed.tokens,
    )
    capped, long_turn = _make_room(plan.snapshot, capped, pruned, long_turn)
    report = _report(plan, summarised, pruned, capped, long_turn)
    if report.figures.final > plan.snapshot.budget.input_budget:
        return _rejected(plan, capped, long_turn, report)
    return _accepted(plan, summarised, pruned, capped, long_turn, report)


# -- the stages of ``decide`` ---------------------------------------------------------------------


FallbackCause = Literal["job", "error", "timeout", "contract"]


@dataclass(frozen=True)
class _Summarised:
    """The blocks and the history once the summariser's answer is taken in."""

    blocks: ContextBlocks
    fixed: FixedCost
    telemetry: dict[str, BlockTelemetry]
    #: Seqs the new summary covers, or the fallback truncation left out.
    left_out: frozenset[int]
    new_summary: NewSummary | None
    fallback_cause: FallbackCause | None

    @property
    def fallback(self) -> bool:
        return self.fallback_cause is not None


def _take_summary(plan: Plan, summary: SummaryContent | SummaryFailure | None) -> _Summarised:
    """A summary that keeps its contract replaces what it covers and reshapes the blocks; a
    failed one (or a failed job) falls back to truncation (seed 003 §9)."""
    snapshot = plan.snapshot
    blocks, fixed, telemetry = plan.blocks, plan.fixed, dict(plan.telemetry)
    left_out = set(plan.truncated)
    cause: FallbackCause | None = "job" if plan.job_failed else None
    new_summary: NewSummary | None = None
    work = plan.summarise
    if work is not None:
        eligible = plan.summary_plan.eligible
        if isinstance(summary, SummaryContent):
            new_summary = accept_summary(
                summary,
                counter=snapshot.counter,
                target_tokens=work.target_tokens,
                sources=work.sources,
                source_seqs=eligible,
            )
        if new_summary is not None:
            left_out.update(eligible)
            blocks, shaped = shape_blocks(snapshot, new_summary.content)
            telemetry.update(shaped)
            fixed = snapshot.measure(snapshot.counter, blocks)
        else:
            cause = cause or (summary if isinstance(summary, str) else "contract")
            left_out.update(_truncate(snapshot, fixed, plan.history, eligible))
    return _Summarised(blocks, fixed, telemetry, frozenset(left_out), new_summary, cause)


@dataclass(frozen=True)
class _Pruned:
    """The history after the 90 % prune."""

    history: list[HistoryMessage]
    plan: PrunePlan
    #: Seqs left out for good: pruned, or truncated by a fallback.
    seqs: frozenset[int]
    #: The summary in force and the messages its facts point to.
    in_force: SummaryContent | None
    anchors: frozenset[int]


def _prune(plan: Plan, summarised: _Summarised) -> _Pruned:
    """Seed 003 §8: over 90 %, prune low-signal chatter oldest first, anchors kept."""
    snapshot = plan.snapshot
    latest = snapshot.latest_summary
    remaining = [m for m in plan.history if m.seq not in summarised.left_out]
    new = summarised.new_summary
    in_force = new.content if new else (latest.content if latest else None)
    anchors = in_force.anchor_message_ids() if in_force else frozenset()
    prune = plan_prune(
        budget=snapshot.budget,
        settings=snapshot.settings.budget,
        fixed_tokens=summarised.fixed.tokens,
        history=remaining,
        current_turn_seq=snapshot.turn_seq,
        anchor_message_ids=anchors,
        summarised=new is not None or bool(plan.applied),
    )
    seqs = set(prune.pruned)
    if summarised.fallback:
        # Truncated messages are left out for good, as pruned ones are.
        seqs |= summarised.left_out
    history = [m for m in remaining if m.seq not in seqs]
    return _Pruned(history, prune, frozenset(seqs), in_force, anchors)


@dataclass(frozen=True)
class _Capped:
    """The prompt within the session's block caps."""

    history: list[HistoryMessage]
    blocks: ContextBlocks
    fixed: FixedCost
    telemetry: dict[str, BlockTelemetry]
    #: Seqs the history (or total) cap left out of this prompt only.
    over_cap: tuple[int, ...]
    #: Completed turns' history tokens before the caps.
    history_before: int
    #: Seqs of completed turns left out of this prompt only so that the open turn fits, and
    #: whether the summary and memory were squeezed for it.
    made_room: tuple[int, ...] = ()
    blocks_squeezed: bool = False


def _apply_caps(snapshot: Snapshot, summarised: _Summarised, pruned: _Pruned) -> _Capped:
    """The history cap leaves older messages out of this prompt only (they stay active, so a
    later summary still reads them); under a total cap, summary then memory squeeze."""
    blocks, fixed, telemetry = summarised.blocks, summarised.fixed, dict(summarised.telemetry)
    history = pruned.history
    history_before = history_tokens(m for m in history if m.turn_seq != snapshot.turn_seq)
    over_cap = _over_caps(snapshot, history, fixed.tokens, pruned.anchors)
    if over_cap:
        history = [m for m in history if m.seq not in set(over_cap)]
    total_cap = snapshot.blocks.caps.total
    if total_cap is not None and fixed.tokens + history_tokens(history) > total_cap:
        # History is down to its floor: squeeze the summary, then memory (seed 000 order).
        room = total_cap - history_tokens(history) - (fixed.tokens - fixed.blocks[SUMMARY_BLOCK])
        blocks, shaped = shape_blocks(snapshot, pruned.in_force, room=max(0, room))
        telemetry.update(shaped)
        fixed = snapshot.measure(snapshot.counter, blocks)
    return _Capped(history, blocks, fixed, telemetry, over_cap, history_before)


@dataclass(frozen=True)
class _Report:
    """What every decision reports, accepted or not."""

    figures: Figures
    blocks: dict[str, int]
    fields: dict[str, Any]


def _report(
    plan: Plan, summarised: _Summarised, pruned: _Pruned, capped: _Capped, long_turn: _LongTurn
) -> _Report:
    """The figures, the per-block tokens and the telemetry of the audit row."""
    snapshot = plan.snapshot
    final = long_turn.history
    blocks = _report_blocks(capped.fixed, final, snapshot.turn_seq)
    figures = Figures(
        before=plan.summary_plan.usage_before,
        after_summary=pruned.plan.usage_after_summary,
        after_prune=pruned.plan.usage_after_prune,
        final=capped.fixed.tokens + history_tokens(final),
    )
    telemetry = {
        **_telemetry(capped.telemetry, blocks, capped.history_before, len(capped.over_cap)),
        **plan.views.as_telemetry(),
        "open_turn": {
            "tool_results_set_aside": len(long_turn.set_aside),
            "tokens_set_aside": plan.views.tool_result_tokens_kept_aside + long_turn.tokens_freed,
            "steps_folded": long_turn.steps_folded,
            "messages_folded": len(long_turn.folded),
            "tokens_folded": long_turn.tokens_folded,
            "history_messages_left_out": len(capped.made_room),
            "blocks_squeezed": capped.blocks_squeezed,
        },
    }
    fields: dict[str, Any] = {
        "figures": figures,
        "budget": snapshot.budget,
        "blocks": blocks,
        "block_telemetry": telemetry,
        "blocks_before": plan.blocks_before,
        "summary_triggered": plan.summary_plan.triggered,
        "summary_reason": plan.summary_plan.reason,
        "summary_fallback": summarised.fallback,
        "fallback_cause": summarised.fallback_cause,
        "prune_triggered": pruned.plan.triggered,
        "recounts": plan.recounts,
        "new_tokens": plan.new_tokens,
    }
    return _Report(figures, blocks, fields)


def _rejected(plan: Plan, capped: _Capped, long_turn: _LongTurn, report: _Report) -> Decision:
    """Seed 003 §9: a prompt that cannot fit is refused with its figures and what to do."""
    snapshot, budget = plan.snapshot, plan.snapshot.budget
    return Decision(
        accepted=False,
        summary_queued=False,
        rejection={
            "estimated_input_tokens": report.figures.final,
            "input_budget": budget.input_budget,
            "model_context_limit": budget.model_context_limit,
            "calibration_ratio": snapshot.calibration_ratio,
            "blocks": report.blocks,
            "guidance": _guidance(snapshot, long_turn, budget.input_budget - capped.fixed.tokens),
        },
        **report.fields,
    )


def _accepted(
    plan: Plan,
    summarised: _Summarised,
    pruned: _Pruned,
    capped: _Capped,
    long_turn: _LongTurn,
    report: _Report,
) -> Decision:
    """The prompt in assembly order, its fingerprint against the previous one, and the
    writes: what was kept, summarised, pruned, and the jobs."""
    snapshot = plan.snapshot
    final = long_turn.history
    messages, fingerprint = _prompt(plan, capped, long_turn)
    pruned_ids = tuple(plan.by_seq[seq].id for seq in sorted(pruned.seqs))
    policy_change = _policy_change(plan, summarised, capped, long_turn, bool(pruned_ids))
    new_summary = summarised.new_summary
    pending_job = snapshot.pending_job_id
    latest = snapshot.latest_summary
    return Decision(
        accepted=True,
        summary_queued=plan.new_job is not None or (pending_job is not None and not new_summary),
        messages=tuple(messages),
        fingerprint=tuple(fingerprint),
        **_prefix_verdict(snapshot.previous_fingerprint, fingerprint, policy_change),
        policy_change=policy_change,
        current_messages=sum(1 for m in final if m.turn_seq == snapshot.turn_seq),
        kept_ids=tuple(plan.by_seq[m.seq].id for m in final),
        folded_ids=tuple(plan.by_seq[seq].id for seq in sorted(long_turn.folded)),
        applied_ids=tuple(m.id for m in plan.applied),
        applied_summary_id=latest.id if plan.applied and latest else None,
        new_summary=new_summary,
        pruned_ids=pruned_ids,
        pruned_by_policy=bool(pruned.plan.pruned),
        new_job=plan.new_job,
        jobs_taken_in=tuple(job.id for job in snapshot.finished_jobs),
        superseded_job_id=pending_job if new_summary is not None else None,
        **report.fields,
    )


def _prompt(
    plan: Plan, capped: _Capped, long_turn: _LongTurn
) -> tuple[list[ChatMessage], list[str]]:
    """The prompt in assembly order and its fingerprint, which remembers every view shown
    (set aside, reasoning cleared, images aside) so that the next prompt keeps them."""
    final = long_turn.history
    head = system_message(capped.blocks)
    messages = ([head] if head is not None else []) + [long_turn.shown[m.seq].chat() for m in final]
    fingerprint = mark_views(
        prompt_fingerprint(head, [m.seq for m in final]),
        long_turn.set_aside,
        plan.views.reasoning_cleared_seqs,
        plan.views.images_set_aside_seqs,
    )
    offset = len(fingerprint) - len(final)
    for index, message in enumerate(final):
        if message.seq in long_turn.folds:
            fingerprint[offset + index] = folded_mark(*long_turn.folds[message.seq])
    return messages, fingerprint


def _policy_change(
    plan: Plan,
    summarised: _Summarised,
    capped: _Capped,
    long_turn: _LongTurn,
    pruned: bool,
) -> ChangeReason | None:
    """The policy event that changes the prompt's prefix, if any: the first in the policy's
    order (``_prefix_verdict`` names the recall block or an edit of the session when none
    explains a change)."""
    before = plan.snapshot.previous_fingerprint
    views = plan.views
    if summarised.new_summary is not None or plan.applied:
        return "summary"
    if pruned:
        return "prune"
    if capped.over_cap:
        return "block_cap"
    if (
        long_turn.set_aside - previously_set_aside(before)
        or set(long_turn.folds.values()) - set(previously_folded(before))
        or capped.made_room
        or capped.blocks_squeezed
    ):
        return "long_turn"
    if views.reasoning_cleared_seqs - previously_cleared(before):
        return "reasoning"
    if views.images_set_aside_seqs - previously_without_images(before):
        return "tool_images"
    return None


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


def next_turn_fold(plan: Plan, decision: Decision) -> SummaryWork | None:
    """What the next turn start will fold into the summary when it crosses the turn count,
    if nothing else changes meanwhile: the previous summary and the messages that will have
    left the protected window, as that turn start asks for them (``plan_assembly``). None
    when the next turn start is not due by count, or would have nothing to fold.

    Pure, like the rest: the service makes this fold between turns and the next turn start
    takes it only if it asks for exactly this work."""
    snapshot = plan.snapshot
    settings = snapshot.settings
    every = settings.budget.mandatory_summary_turns
    if not decision.accepted or decision.new_summary is not None or not every:
        return None
    latest = snapshot.latest_summary
    # The next turn start is ``turn_seq + 1``; what the policy counts there is the turns
    # before it since the summary in force (see ``plan_assembly``).
    if snapshot.turn_seq - (latest.turn_seq if latest else 0) < every:
        return None
    first_protected = protected_from_turn(snapshot.turn_seq + 1, settings.budget)
    gone = {*decision.pruned_ids, *decision.summarised_ids}
    sources = tuple(
        SourceText(message.id, message.role, content_text(message.content))
        for message in (plan.by_seq[m.seq] for m in plan.history)
        if message.turn_seq < first_protected and message.id not in gone
    )
    if not sources:
        return None
    return SummaryWork(
        previous=latest.content if latest else None,
        sources=sources,
        target_tokens=plan.summary_target_tokens,
        bounded=False,
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


@dataclass(frozen=True)
class _LongTurn:
    """The history as the prompt shows it once the open turn's older steps gave way."""

    history: list[HistoryMessage]
    shown: Mapping[int, Any]
    #: Tool results shown as placeholders, and the tokens that freed.
    set_aside: frozenset[int]
    tokens_freed: int
    #: Notes by their seq, with the range of seqs each stands for; the messages they fold.
    folds: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    folded: frozenset[int] = frozenset()
    tokens_folded: int = 0

    steps_folded: int = 0


def _long_turn(
    snapshot: Snapshot, plan: Plan, final: list[HistoryMessage], *, room: int
) -> _LongTurn:
    """A long turn's older tool results set aside (app.budget.views), then its older steps
    folded (app.budget.long_turns), when the prompt would not fit otherwise, or because an
    earlier prompt already showed them so."""
    latest = frozenset(m.seq for m in snapshot.new)
    before = snapshot.previous_fingerprint

    def fold(
        history: Sequence[HistoryMessage],
        shown: Mapping[int, Any],
        already: Sequence[tuple[int, int]],
        extend: bool,
    ) -> Folded:
        return fold_older_steps(
            history,
            shown,
            current_turn_seq=snapshot.turn_seq,
            latest_seqs=latest,
            already=already,
            extend=extend,
            room=room,
            note_bound=max(1, int(NOTE_SHARE * snapshot.budget.uncalibrated_input_budget)),
            counter=snapshot.counter,
            session_id=snapshot.session_id,
        )

    # What earlier prompts folded stays folded, as it was; then results are set aside; and
    # only when that cannot free its share of the room (SET_ASIDE_HEADROOM) do more steps fold.
    earlier = fold(final, plan.by_seq, previously_folded(before), extend=False)
    aside = set_aside_older_results(
        earlier.history,
        earlier.shown,
        current_turn_seq=snapshot.turn_seq,
        latest_seqs=latest,
        already=previously_set_aside(before),
        room=room,
        counter=snapshot.counter,
    )
    needed = history_tokens(earlier.history) > room
    tight = history_tokens(aside.history) > room * (1 - SET_ASIDE_HEADROOM)
    folded = Folded(aside.history, aside.shown, earlier.ranges, earlier.seqs, earlier.tokens_freed)
    if needed and tight:
        # Fold again from the steps themselves (with their results as set aside), so that
        # the open turn's earlier notes and the steps folding now make one note.
        notes = earlier.ranges
        tokens = {m.seq: m.tokens for m in aside.history if m.seq not in notes}
        steps = [replace(m, tokens=tokens.get(m.seq, m.tokens)) for m in final]
        originals = {**aside.shown, **{seq: plan.by_seq[seq] for seq in notes}}
        folded = fold(steps, originals, previously_folded(before), extend=True)
    return _LongTurn(
        history=folded.history,
        shown=folded.shown,
        set_aside=aside.seqs - folded.seqs,
        tokens_freed=aside.tokens_freed,
        folds=folded.ranges,
        folded=folded.seqs,
        tokens_folded=folded.tokens_freed,
        steps_folded=sum(1 for seq in folded.seqs if plan.by_seq[seq].role == "assistant"),
    )


def _make_room(
    snapshot: Snapshot, capped: _Capped, pruned: _Pruned, long_turn: _LongTurn
) -> tuple[_Capped, _LongTurn]:
    """When the open turn, all its older steps folded, still does not fit: completed turns
    leave this prompt (whole, oldest first; they stay active), then the summary and memory
    squeeze into what is left. Nothing gives way while the prompt fits."""
    budget = snapshot.budget.input_budget
    history = long_turn.history
    over = capped.fixed.tokens + history_tokens(history) - budget
    if over <= 0:
        return capped, long_turn
    left_out: set[int] = set()
    for turn_seq in sorted({m.turn_seq for m in history if m.turn_seq < snapshot.turn_seq}):
        if over <= 0:
            break
        members = [m for m in history if m.turn_seq == turn_seq]
        left_out.update(m.seq for m in members)
        over -= history_tokens(members)
    history = [m for m in history if m.seq not in left_out]
    blocks, fixed, telemetry = capped.blocks, capped.fixed, capped.telemetry
    squeezed = over > 0 and fixed.blocks[SUMMARY_BLOCK] + fixed.blocks[MEMORY_BLOCK] > 0
    if squeezed:
        room = budget - history_tokens(history) - (fixed.tokens - fixed.blocks[SUMMARY_BLOCK])
        blocks, shaped = shape_blocks(snapshot, pruned.in_force, room=max(0, room))
        telemetry = {**telemetry, **shaped}
        fixed = snapshot.measure(snapshot.counter, blocks)
    capped = replace(
        capped,
        history=history,
        blocks=blocks,
        fixed=fixed,
        telemetry=telemetry,
        made_room=tuple(sorted(left_out)),
        blocks_squeezed=squeezed,
    )
    return capped, replace(long_turn, history=history)


def _guidance(snapshot: Snapshot, long_turn: _LongTurn, room: int) -> str:
    """What to do about a prompt that cannot fit: what the open turn's user message and its
    newest step cost against the room the blocks leave, once everything that can give way
    has (older steps folded, completed turns and the summary left out)."""
    final, notes = long_turn.history, long_turn.folds
    new = {m.seq for m in snapshot.new}
    latest = history_tokens(m for m in final if m.seq in new)
    if snapshot.step == 0 or not latest:
        return OVERFLOW_GUIDANCE
    user = history_tokens(
        m
        for m in final
        if m.turn_seq == snapshot.turn_seq and m.role == "user" and m.seq not in notes
    )
    rest = history_tokens(m for m in final if m.seq not in new) - user
    return (
        f"This step's tool calls and results need {latest} tokens and the turn's user message "
        f"{user}: {latest + user} of the {room} tokens the system prompt and blocks leave "
        f"({rest} more for the notes of the turn's earlier steps and what is left of the "
        "history, everything else having given way). Post this step again with shorter tool "
        "calls or results, or complete the turn as failed and start a new one."
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
    "next_turn_fold",
    "plan_assembly",
    "shape_blocks",
    "with_recall",
]
