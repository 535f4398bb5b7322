"""The budget policy of seed 003, made exact (PRODUCT.md "The policy").

Everything here is a pure function of plain data. The service loads the session, asks
:func:`plan_summary` whether to summarise, runs the summariser, then asks :func:`plan_prune`
what (if anything) to leave out and whether the prompt fits at all.

Vocabulary:
- *history*: the active (neither summarised nor pruned) messages, in order, with their cached
  token counts; the current turn's messages are part of it.
- *fixed tokens*: the system message (layers, goal and mode, memory, summary) plus the reply
  priming: everything that is not a conversation message.
- *protected window*: the newest ``protected_window_turns`` turns, the current one included.
  It is never summarised; its user messages and final answers are never pruned.
- *unit*: what pruning removes at once. An assistant message that calls tools and every
  result of those calls form one unit, so a call is never separated from its result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal


@dataclass(frozen=True)
class BudgetSettings:
    output_reserve_ratio: float = 0.20
    overhead_reserve_ratio: float = 0.05
    overhead_reserve_min: int = 1024
    summary_trigger_ratio: float = 0.70
    prune_trigger_ratio: float = 0.90
    mandatory_summary_turns: int = 8
    protected_window_turns: int = 4
    low_water_ratio: float = 0.50
    #: Below the prune trigger, the 70 % trigger waits until what is eligible is at least
    #: this share of the input budget: a summary rewrites the prompt from its start, so
    #: summarising one turn at a time (the recent window alone over 70 %) would break the
    #: provider's prefix cache at every turn.
    summary_min_batch_ratio: float = 0.10


@dataclass(frozen=True)
class Budget:
    model_context_limit: int
    output_reserve: int
    overhead_reserve: int
    input_budget: int

    @property
    def valid(self) -> bool:
        return self.input_budget > 0

    @property
    def uncalibrated_input_budget(self) -> int:
        """The input budget before a calibration ratio scaled it: what shares that must not
        move with each usage report (a tool result's cap) are taken of."""
        return self.model_context_limit - self.output_reserve - self.overhead_reserve


def compute_budget(
    *, model_context_limit: int, max_output_tokens: int, settings: BudgetSettings
) -> Budget:
    """``input_budget = limit - min(max_output, ⌊0.20·limit⌋) - max(1024, ⌊0.05·limit⌋)``."""
    output_reserve = min(
        max_output_tokens, math.floor(model_context_limit * settings.output_reserve_ratio)
    )
    overhead_reserve = max(
        settings.overhead_reserve_min,
        math.floor(model_context_limit * settings.overhead_reserve_ratio),
    )
    return Budget(
        model_context_limit=model_context_limit,
        output_reserve=output_reserve,
        overhead_reserve=overhead_reserve,
        input_budget=model_context_limit - output_reserve - overhead_reserve,
    )


Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True)
class HistoryMessage:
    """One active conversation message as the policy sees it."""

    seq: int
    turn_seq: int
    role: Role
    tokens: int
    calls_tools: bool = False
    #: The seq of the assistant message whose tool call a ``tool`` message answers.
    answers_seq: int | None = None
    message_id: int | None = None

    @property
    def unit_key(self) -> int:
        return self.answers_seq if self.answers_seq is not None else self.seq


def history_tokens(history: Iterable[HistoryMessage]) -> int:
    return sum(m.tokens for m in history)


def _at_least(usage: int, budget: Budget, ratio: float) -> bool:
    return usage >= ratio * budget.input_budget


def protected_from_turn(current_turn_seq: int, settings: BudgetSettings) -> int:
    """The first turn number inside the protected recent window."""
    return current_turn_seq - settings.protected_window_turns + 1


SummaryReason = Literal["threshold", "turn_count"]


@dataclass(frozen=True)
class SummaryPlan:
    usage_before: int
    triggered: bool
    reason: SummaryReason | None
    #: Seqs of the messages the new summary must cover (oldest first).
    eligible: tuple[int, ...]


def plan_summary(
    *,
    budget: Budget,
    settings: BudgetSettings,
    fixed_tokens: int,
    history: Sequence[HistoryMessage],
    current_turn_seq: int,
    turns_since_summary: int,
) -> SummaryPlan:
    """Summarise eligible history at ≥ 70 % usage, or after N turns without a summary.

    Eligible means older than the protected window. With nothing eligible nothing triggers:
    a summary of nothing would only cost a cache break; below 90 %, neither does one of
    less than ``summary_min_batch_ratio`` of the budget (summaries come in batches).
    """
    usage = fixed_tokens + history_tokens(history)
    reason: SummaryReason | None = None
    if _at_least(usage, budget, settings.summary_trigger_ratio):
        reason = "threshold"
    elif settings.mandatory_summary_turns and turns_since_summary >= (
        settings.mandatory_summary_turns
    ):
        reason = "turn_count"
    first_protected = protected_from_turn(current_turn_seq, settings)
    eligible_messages = [m for m in history if m.turn_seq < first_protected]
    eligible = tuple(m.seq for m in eligible_messages)
    if reason is None or not eligible:
        return SummaryPlan(usage, False, None, ())
    batch = settings.summary_min_batch_ratio * budget.input_budget
    if (
        reason == "threshold"
        and not _at_least(usage, budget, settings.prune_trigger_ratio)
        and history_tokens(eligible_messages) < batch
    ):
        # Fits as it is, and too little to fold: wait for a batch worth a cache break.
        return SummaryPlan(usage, False, None, ())
    return SummaryPlan(usage, True, reason, eligible)


class PruneTier(IntEnum):
    """The order pruning takes units in: low-signal chatter first, oldest first in a tier."""

    OLD_TOOL_CHATTER = 0
    OLD_ASSISTANT = 1
    OLD_USER = 2
    WINDOW_TOOL_CHATTER = 3


@dataclass(frozen=True)
class _Unit:
    tier: PruneTier
    first_seq: int
    seqs: tuple[int, ...]
    tokens: int


def _prunable_units(
    history: Sequence[HistoryMessage],
    *,
    current_turn_seq: int,
    first_protected_turn: int,
    anchor_message_ids: frozenset[int],
    tiers: frozenset[PruneTier],
) -> list[_Unit]:
    grouped: dict[int, list[HistoryMessage]] = {}
    for message in history:
        grouped.setdefault(message.unit_key, []).append(message)
    units: list[_Unit] = []
    for members in grouped.values():
        head = members[0]
        if head.turn_seq >= current_turn_seq:
            continue  # the unresolved turn is never dropped
        if any(m.message_id in anchor_message_ids for m in members):
            continue  # a summary fact points here
        in_window = head.turn_seq >= first_protected_turn
        if head.calls_tools:
            tier = PruneTier.WINDOW_TOOL_CHATTER if in_window else PruneTier.OLD_TOOL_CHATTER
        elif in_window:
            continue
        elif head.role == "assistant":
            tier = PruneTier.OLD_ASSISTANT
        else:
            tier = PruneTier.OLD_USER
        if tier in tiers:
            units.append(
                _Unit(tier, head.seq, tuple(m.seq for m in members), history_tokens(members))
            )
    units.sort(key=lambda unit: (unit.tier, unit.first_seq))
    return units


def _select(units: Iterable[_Unit], usage: int, target: float) -> tuple[list[int], int]:
    """Take units in order until usage is below ``target``."""
    chosen: list[int] = []
    for unit in units:
        if usage < target:
            break
        chosen.extend(unit.seqs)
        usage -= unit.tokens
    return chosen, usage


@dataclass(frozen=True)
class PrunePlan:
    usage_after_summary: int
    triggered: bool
    pruned: tuple[int, ...]
    usage_after_prune: int

    def fits(self, budget: Budget) -> bool:
        return self.usage_after_prune <= budget.input_budget


def plan_prune(
    *,
    budget: Budget,
    settings: BudgetSettings,
    fixed_tokens: int,
    history: Sequence[HistoryMessage],
    current_turn_seq: int,
    anchor_message_ids: frozenset[int] = frozenset(),
    summarised: bool = False,
) -> PrunePlan:
    """Leave out the oldest low-signal units, down to the low-water mark.

    Pruning runs at ≥ 90 % usage, and also right after a summary (``summarised``) that left
    usage at or above the summary threshold: that assembly breaks the prompt cache anyway,
    and without going further the very next turn would summarise again. Either way it goes
    down to the low-water mark, so that the following turns only append to the prompt.

    Order: tool exchanges older than the protected window, then plain assistant messages, then
    user messages, then tool exchanges of the window's completed turns; oldest first within
    each. The window's user messages and answers, anchored units and the current turn stay.
    """
    usage = fixed_tokens + history_tokens(history)
    required = _at_least(usage, budget, settings.prune_trigger_ratio)
    worth_it = summarised and _at_least(usage, budget, settings.summary_trigger_ratio)
    if not (required or worth_it):
        return PrunePlan(usage, False, (), usage)
    units = _prunable_units(
        history,
        current_turn_seq=current_turn_seq,
        first_protected_turn=protected_from_turn(current_turn_seq, settings),
        anchor_message_ids=anchor_message_ids,
        tiers=frozenset(PruneTier),
    )
    pruned, remaining = _select(units, usage, settings.low_water_ratio * budget.input_budget)
    return PrunePlan(usage, True, tuple(sorted(pruned)), remaining)


def plan_fallback_truncation(
    *,
    budget: Budget,
    settings: BudgetSettings,
    fixed_tokens: int,
    history: Sequence[HistoryMessage],
    eligible: Sequence[int],
    current_turn_seq: int,
    anchor_message_ids: frozenset[int] = frozenset(),
) -> tuple[int, ...]:
    """What to leave out when the summariser failed (seed 003 §9).

    Deterministic truncation of the eligible range: its assistant and tool chatter goes,
    oldest first, down to the low-water mark. User messages and anchored
    messages stay, so what was asked and what the last summary cites survive verbatim.
    """
    eligible_set = frozenset(eligible)
    usage = fixed_tokens + history_tokens(history)
    units = _prunable_units(
        [m for m in history if m.seq in eligible_set],
        current_turn_seq=current_turn_seq,
        first_protected_turn=protected_from_turn(current_turn_seq, settings),
        anchor_message_ids=anchor_message_ids,
        tiers=frozenset({PruneTier.OLD_TOOL_CHATTER, PruneTier.OLD_ASSISTANT}),
    )
    chosen, _ = _select(units, usage, settings.low_water_ratio * budget.input_budget)
    return tuple(sorted(chosen))
