"""The stateless toolkit: trim or truncate a message list the agent keeps itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.budget.tokens import count_message, count_tools, reply_priming
from app.budget.trim import normalise, trim_messages, truncate_messages
from app.context.schemas import (
    ChatMessageIn,
    TrimRequest,
    TrimResponse,
    TruncateRequest,
    TruncateResponse,
)
from app.runtime import Runtime
from app.tokens.budgets import resolve_budget


def _plain(messages: list[ChatMessageIn]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


class ContextService:
    def __init__(self, *, runtime: Runtime) -> None:
        self.runtime = runtime

    def trim(self, request: TrimRequest) -> TrimResponse:
        """Seed 002's lazy trim at ``threshold`` of the model's input budget."""
        resolved = resolve_budget(
            model=request.model,
            context_limit=request.context_limit,
            max_output_tokens=request.max_output_tokens,
            settings=self.runtime.settings,
            tokenizers=self.runtime.tokenizers,
        )
        budget, counter = resolved.budget, resolved.counter
        tools_tokens = count_tools(counter, request.tools) if request.tools else 0

        def count(message: Mapping[str, Any]) -> int:
            return count_message(counter, message)

        result = trim_messages(
            normalise(_plain(request.messages)),
            count_message=count,
            fixed_tokens=reply_priming(counter) + tools_tokens,
            threshold_tokens=int(request.threshold * budget.input_budget),
            previous_index=request.trimmed_up_to_message_index,
            keep_last_n_assistant=request.keep_last_n_assistant_messages,
        )
        return TrimResponse(
            messages=result.messages,
            trimmed_up_to_message_index=result.trimmed_up_to_message_index,
            estimated_tokens_before=result.tokens_before,
            estimated_tokens_after=result.tokens_after,
            threshold_tokens=result.threshold_tokens,
            input_budget=budget.input_budget,
            within_threshold=result.within_threshold,
            estimator=counter.name,
        )

    def truncate(self, request: TruncateRequest) -> TruncateResponse:
        """Seed 004's keep-the-last-N, never starting on an orphaned tool result."""
        messages = _plain(request.messages)
        kept = truncate_messages(
            messages, keep=request.keep, preserve_system=request.preserve_system
        )
        return TruncateResponse(messages=kept, removed=len(messages) - len(kept))
