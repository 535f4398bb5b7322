"""Counting without a session, and the model table with what calibration has learnt."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from app.budget.anthropic_blocks import document_notes
from app.budget.tokens import ModelSpec, PromptCount, count_request, counting_method
from app.models import CalibrationRecord
from app.offload import off_the_loop
from app.tokens.calibration import Calibration

if TYPE_CHECKING:
    from app.runtime import Runtime

from app.tokens.schemas import (
    CountBreakdown,
    CountOut,
    CountRequest,
    ModelList,
    ModelOut,
)


class TokenService:
    """Counting and the model table, with the calling tenant's calibration."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.tenant_id = tenant_id
        self.settings = runtime.settings
        self.tokenizers = runtime.tokenizers
        self.calibration = runtime.calibration(db)

    async def count(self, request: CountRequest) -> CountOut:
        """Input tokens of a chat request for a model: the count a turn would make."""
        spec = self.tokenizers.lookup(
            request.model, default_context_limit=self.settings.default_context_limit
        )
        counter, fell_back = self.tokenizers.counter_for(spec)

        # A request may carry tens of thousands of messages: counting it holds a core for
        # seconds, so it runs in a worker thread while the loop serves other requests.
        def count() -> tuple[PromptCount, list[str]]:
            messages = [m.model_dump(mode="json", exclude_none=True) for m in request.messages]
            tools = [t.model_dump(mode="json", exclude_none=True) for t in request.tools]
            return (
                count_request(counter, messages, tools),
                document_notes(message.get("content") for message in messages),
            )

        counted, documents = await off_the_loop(count)
        calibration = await self.calibration.calibration(self.tenant_id, spec, counter)
        notes = list(documents)
        if counted.images_of_unknown_size:
            notes.append(
                f"{counted.images_of_unknown_size} image(s) of unknown size (not a data: URL) "
                "counted at the largest cost any size can have"
            )
        method = counting_method(spec, fell_back=fell_back, counter=counter)
        if method == "proxy" and spec.margins is not None:
            notes.append(
                f"{spec.encoding} stands in for this model's tokenizer (install its extra to "
                "count exactly), with margins for digits, CJK and emoji so that it errs high"
            )
        elif method == "proxy":
            notes.append(
                f"{spec.encoding} stands in for this model's tokenizer, times "
                f"{spec.safety_factor:g} so that it errs high"
            )
        elif method == "fallback":
            notes.append("no tokenizer could be loaded: counted as chars/4 * 1.25")
        return CountOut(
            model=request.model,
            input_tokens=counted.input_tokens,
            method=method,
            encoding=counter.name,
            calibration=calibration.out(),
            calibrated_input_tokens=math.ceil(counted.input_tokens * calibration.ratio),
            breakdown=CountBreakdown(messages=counted.messages_tokens, tools=counted.tools_tokens),
            notes=notes,
        )

    async def models(self) -> ModelList:
        """Every model of the table, how it is counted, and its calibration."""
        records = {
            (record.model, record.estimator): record
            for record in await self.calibration.calibrations.list(self.tenant_id)
        }
        models = []
        for spec in self.tokenizers.models.entries():
            models.append(self._model_out(spec, records))
        return ModelList(models=models)

    async def model(self, name: str) -> ModelOut:
        """The entry a model name resolves to (unknown names get the defaults)."""
        spec = self.tokenizers.lookup(
            name, default_context_limit=self.settings.default_context_limit
        )
        counter, _ = self.tokenizers.counter_for(spec)
        record = await self.calibration.calibrations.get(
            self.tenant_id, spec.calibration_key, counter.name
        )
        return self._model_out(spec, {(spec.calibration_key, counter.name): record})

    def _model_out(
        self,
        spec: ModelSpec,
        records: Mapping[tuple[str, str], CalibrationRecord | None],
    ) -> ModelOut:
        counter, fell_back = self.tokenizers.counter_for(spec)
        record = records.get((spec.calibration_key, counter.name))
        calibration = Calibration(self.calibration.ratio_for(spec, record), record)
        return ModelOut(
            name=spec.name,
            family=spec.family,
            source=spec.source,
            context_limit=spec.context_limit,
            max_output_tokens=spec.max_output_tokens,
            method=counting_method(spec, fell_back=fell_back, counter=counter),
            encoding=counter.name,
            safety_factor=spec.safety_factor,
            calibration=calibration.out(),
        )
