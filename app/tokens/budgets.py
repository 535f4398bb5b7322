"""The budget a session's model and overrides imply, with the estimator that counts for it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from app.budget.policy import Budget, compute_budget
from app.budget.tokens import ModelSpec, TokenCounter
from app.errors import InvalidBudgetError
from app.models import SessionRecord
from app.sessions.repository import SessionRow
from app.settings import Settings
from app.tokens.registry import TokenizerRegistry


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
    record: SessionRecord | SessionRow, *, settings: Settings, tokenizers: TokenizerRegistry
) -> SessionBudget:
    return resolve_budget(
        model=record.model,
        context_limit=record.context_limit,
        max_output_tokens=record.max_output_tokens,
        settings=settings,
        tokenizers=tokenizers,
    )
