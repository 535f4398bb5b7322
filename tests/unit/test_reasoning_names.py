"""Which Claude models' earlier thinking the API strips before it counts the window, read
from the model's name in both naming schemes (app/budget/reasoning.py)."""

from __future__ import annotations

import pytest

from app.budget.reasoning import claude_strips_earlier_thinking, reasoning_rule


@pytest.mark.parametrize(
    "model",
    [
        "claude-3-7-sonnet-latest",
        "claude-3-5-haiku-20241022",
        "claude-sonnet-4-20250514",
        "claude-opus-4-20250514",
        "claude-opus-4-1",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5",
    ],
)
def test_models_up_to_opus_4_1_and_sonnet_and_haiku_4_5_strip_it(model: str) -> None:
    assert claude_strips_earlier_thinking(model)
    assert reasoning_rule("anthropic", model).calls == "uncounted"


@pytest.mark.parametrize(
    "model", ["claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5", "claude"]
)
def test_later_and_unrecognised_models_keep_it_counted(model: str) -> None:
    assert not claude_strips_earlier_thinking(model)
    rule = reasoning_rule("anthropic", model)
    assert (rule.calls, rule.answers) == ("keep", "keep")
