"""Calibration: learning how far a model's real token counts are from contextd's own.

An agent posts ``usage.prompt_tokens`` — what the provider counted for the prompt contextd
handed out — with the next step or the completion. Each report is one *observation*:
``provider_tokens / estimated_tokens`` for that very prompt. Per tenant, model and estimator
the observations are folded into one ratio:

- an observation is *invalid* (ignored, counted) when its prompt is under
  ``min_prompt_tokens`` (too small for a meaningful ratio) or its ratio falls outside
  ``[min_ratio, max_ratio]`` (no tokenizer is that far off: the usage belongs to another
  prompt, e.g. one the agent extended itself);
- the first valid observation sets the ratio, unless tool definitions make up more than
  ``max_first_tools_share`` of its prompt: a tools-only prompt measures how a template
  renders schemas, not the conversation, and would set a ratio that shrinks every later
  budget (such a report is invalid until a conversation-sized one has set the ratio);
  later ones move it by an exponentially weighted average that rises fast
  (``rise_weight``) and falls slowly (``fall_weight``): a count that runs low is a
  provider 400 waiting to happen, a count that runs high only wastes a little room;
- once ``warmup_samples`` observations are in, one that is more than ``outlier_share`` away
  from the ratio is an *outlier* and ignored, unless ``outlier_run`` outliers in a row agree
  on the direction: then the provider really changed, and the observation is taken.

Applying the ratio (:func:`applied_ratio`): above 1 it applies as it is. Below 1 (contextd
counts high) it applies only after ``warmup_samples`` observations and never below
``1 / safety_factor``: the calibrated count is never lower than the plain proxy encoding's
count, and for a model counted exactly (safety factor 1) never lower than the exact count.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True)
class CalibrationSettings:
    min_prompt_tokens: int = 100
    min_ratio: float = 0.5
    max_ratio: float = 2.0
    rise_weight: float = 0.5
    fall_weight: float = 0.1
    warmup_samples: int = 5
    outlier_share: float = 0.25
    outlier_run: int = 3
    max_first_tools_share: float = 0.5


@dataclass(frozen=True)
class CalibrationState:
    """The learnt ratio of one tenant, model and estimator."""

    ratio: float = 1.0
    samples: int = 0
    rejected: int = 0
    #: Consecutive outliers, signed: +n above the ratio, -n below it.
    outlier_streak: int = 0
    last_observed: float | None = None


Verdict = Literal["taken", "invalid", "outlier"]


@dataclass(frozen=True)
class Observation:
    state: CalibrationState
    verdict: Verdict
    observed: float | None


def observe(
    state: CalibrationState,
    *,
    provider_tokens: int,
    estimated_tokens: int,
    settings: CalibrationSettings,
    tools_tokens: int = 0,
) -> Observation:
    """Fold one report into the state; ``tools_tokens`` is the share of the estimate that
    was tool definitions."""
    if estimated_tokens < settings.min_prompt_tokens:
        return Observation(replace(state, rejected=state.rejected + 1), "invalid", None)
    observed = provider_tokens / estimated_tokens
    if not settings.min_ratio <= observed <= settings.max_ratio:
        return Observation(
            replace(state, rejected=state.rejected + 1, last_observed=observed),
            "invalid",
            observed,
        )
    if state.samples == 0 and tools_tokens > settings.max_first_tools_share * estimated_tokens:
        return Observation(
            replace(state, rejected=state.rejected + 1, last_observed=observed),
            "invalid",
            observed,
        )
    if state.samples == 0:
        return Observation(
            CalibrationState(observed, 1, state.rejected, 0, observed), "taken", observed
        )
    direction = 1 if observed > state.ratio else -1
    if state.samples >= settings.warmup_samples and (
        abs(observed - state.ratio) > settings.outlier_share * state.ratio
    ):
        same_way = state.outlier_streak * direction > 0
        streak = state.outlier_streak + direction if same_way else direction
        if abs(streak) < settings.outlier_run:
            return Observation(
                replace(
                    state,
                    rejected=state.rejected + 1,
                    outlier_streak=streak,
                    last_observed=observed,
                ),
                "outlier",
                observed,
            )
    weight = settings.rise_weight if direction > 0 else settings.fall_weight
    ratio = state.ratio + weight * (observed - state.ratio)
    ratio = min(settings.max_ratio, max(settings.min_ratio, ratio))
    return Observation(
        CalibrationState(ratio, state.samples + 1, state.rejected, 0, observed),
        "taken",
        observed,
    )


def applied_ratio(
    state: CalibrationState | None, *, safety_factor: float, settings: CalibrationSettings
) -> float:
    """The factor budgets use: the learnt ratio, bounded so that counts never err low."""
    if state is None or state.samples == 0:
        return 1.0
    if state.ratio >= 1.0:
        return state.ratio
    if state.samples < settings.warmup_samples:
        return 1.0
    return max(state.ratio, 1.0 / safety_factor)
