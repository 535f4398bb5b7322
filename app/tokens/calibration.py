"""Calibration from usage reports, and the ratio budgets use.

A report of ``usage.prompt_tokens`` posted with step *s* of a turn is about the LLM call made
with the prompt of step *s - 1* (the turn start is step 0); posted with the completion, it is
about the prompt of the turn's last step. That prompt's accepted audit row holds contextd's
estimate of it (``estimated_input_tokens_after_prune``), the model and the estimator that made
it. The report becomes one observation ``prompt_tokens / estimate`` for the tenant, the model's
table entry and that estimator (:mod:`app.budget.calibration` says how observations are folded
in), and every later assembly for them holds its prompt to ``input_budget / ratio``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.budget.assembly import TOOLS_BLOCK
from app.budget.calibration import CalibrationState, applied_ratio, observe
from app.budget.tokens import ModelSpec, TokenCounter
from app.caches import TTLCache
from app.metrics import Metrics
from app.models import CalibrationRecord, SessionRecord
from app.models.base import utcnow
from app.sessions.repository import SessionRow
from app.settings import Settings
from app.tokens.budgets import SessionBudget
from app.tokens.registry import TokenizerRegistry
from app.tokens.repository import CalibrationRepository
from app.tokens.schemas import CalibrationOut


def _state(record: CalibrationRecord | None) -> CalibrationState | None:
    if record is None:
        return None
    return CalibrationState(
        ratio=record.ratio,
        samples=record.samples,
        rejected=record.rejected,
        outlier_streak=record.outlier_streak,
        last_observed=record.last_observed,
    )


@dataclass(frozen=True)
class Calibration:
    """A model's calibration as budgets see it."""

    ratio: float
    record: CalibrationRecord | None

    def out(self) -> CalibrationOut:
        record = self.record
        return CalibrationOut(
            ratio=self.ratio,
            learnt_ratio=record.ratio if record is not None and record.samples else None,
            samples=record.samples if record is not None else 0,
            rejected=record.rejected if record is not None else 0,
            updated_at=record.updated_at if record is not None else None,
        )


class CalibrationService:
    def __init__(
        self,
        db: AsyncSession,
        *,
        settings: Settings,
        tokenizers: TokenizerRegistry,
        metrics: Metrics | None = None,
        cache: TTLCache[tuple[str, str, str], float] | None = None,
    ) -> None:
        self.settings = settings
        self.tokenizers = tokenizers
        self.metrics = metrics
        self.cache = cache
        self.calibrations = CalibrationRepository(db)
        self.audit = AuditRepository(db)

    def ratio_for(self, spec: ModelSpec, record: CalibrationRecord | None) -> float:
        """The ratio budgets use for a model, given what has been learnt for it."""
        if not self.settings.calibration:
            return 1.0
        return applied_ratio(
            _state(record),
            safety_factor=spec.safety_factor,
            settings=self.settings.calibration_settings(),
        )

    async def calibration(
        self, tenant_id: str, spec: ModelSpec, counter: TokenCounter
    ) -> Calibration:
        """The calibration in force for a model counted by ``counter``."""
        record = await self.calibrations.get(tenant_id, spec.calibration_key, counter.name)
        return Calibration(self.ratio_for(spec, record), record)

    async def apply(self, tenant_id: str, resolved: SessionBudget) -> SessionBudget:
        """A session's budget with the calibration in force applied."""
        if not self.settings.calibration:
            return resolved.calibrated(1.0)
        key = (tenant_id, resolved.spec.calibration_key, resolved.counter.name)

        async def read() -> float:
            calibration = await self.calibration(tenant_id, resolved.spec, resolved.counter)
            return calibration.ratio

        if self.cache is None:
            return resolved.calibrated(await read())
        return resolved.calibrated(await self.cache.get_or_read(key, read))

    async def learn(
        self,
        session: SessionRecord | SessionRow,
        *,
        turn_id: str,
        step: int,
        prompt_tokens: int | None,
    ) -> None:
        """Take a provider's count of the prompt of ``step`` of a turn into calibration."""
        if not self.settings.calibration or prompt_tokens is None:
            return
        assembly = await self.audit.accepted_assembly(session.tenant_id, session.id, turn_id, step)
        if assembly is None:
            return
        spec = self.tokenizers.lookup(
            assembly.model_alias, default_context_limit=self.settings.default_context_limit
        )
        record = await self.calibrations.lock(
            session.tenant_id, spec.calibration_key, assembly.estimator
        )
        observation = observe(
            _state(record) or CalibrationState(),
            provider_tokens=prompt_tokens,
            estimated_tokens=assembly.estimated_input_tokens_after_prune,
            settings=self.settings.calibration_settings(),
            tools_tokens=int((assembly.blocks or {}).get(TOOLS_BLOCK, 0)),
        )
        state = observation.state
        record.ratio = state.ratio
        record.samples = state.samples
        record.rejected = state.rejected
        record.outlier_streak = state.outlier_streak
        record.last_observed = state.last_observed
        record.last_provider_tokens = prompt_tokens
        record.last_estimated_tokens = assembly.estimated_input_tokens_after_prune
        record.updated_at = utcnow()
        if self.cache is not None:
            self.cache.discard((session.tenant_id, spec.calibration_key, assembly.estimator))
        if self.metrics is not None:
            self.metrics.calibration_observations.labels(observation.verdict).inc()
