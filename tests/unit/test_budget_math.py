"""Budget math of seed 003 §4 / PRODUCT.md policy 1.

``input_budget = limit - min(max_output, floor(0.20 * limit)) - max(1024, floor(0.05 * limit))``
"""

from __future__ import annotations

import pytest

from app.budget.policy import Budget, BudgetSettings, compute_budget

DEFAULTS = BudgetSettings()


def test_defaults_are_the_seed_ratios() -> None:
    assert DEFAULTS.output_reserve_ratio == 0.20
    assert DEFAULTS.overhead_reserve_ratio == 0.05
    assert DEFAULTS.overhead_reserve_min == 1024
    assert DEFAULTS.summary_trigger_ratio == 0.70
    assert DEFAULTS.prune_trigger_ratio == 0.90
    assert DEFAULTS.mandatory_summary_turns == 8
    assert DEFAULTS.protected_window_turns == 4


def test_8192_limit_with_2048_max_output_gives_5530() -> None:
    budget = compute_budget(model_context_limit=8192, max_output_tokens=2048, settings=DEFAULTS)
    # min(2048, floor(1638.4)) = 1638; max(1024, floor(409.6)) = 1024
    assert budget == Budget(
        model_context_limit=8192, output_reserve=1638, overhead_reserve=1024, input_budget=5530
    )
    assert budget.valid


def test_128000_limit_reserves_max_output_and_five_percent_overhead() -> None:
    budget = compute_budget(model_context_limit=128_000, max_output_tokens=2048, settings=DEFAULTS)
    # min(2048, 25600) = 2048; max(1024, 6400) = 6400
    assert budget.output_reserve == 2048
    assert budget.overhead_reserve == 6400
    assert budget.input_budget == 128_000 - 2048 - 6400 == 119_552
    assert budget.valid


def test_large_max_output_is_capped_at_twenty_percent_of_the_limit() -> None:
    budget = compute_budget(
        model_context_limit=128_000, max_output_tokens=16_384, settings=DEFAULTS
    )
    assert budget.output_reserve == 16_384
    capped = compute_budget(
        model_context_limit=32_768, max_output_tokens=100_000, settings=DEFAULTS
    )
    assert capped.output_reserve == 6553  # floor(0.2 * 32768) = floor(6553.6)
    assert capped.overhead_reserve == 1638  # floor(0.05 * 32768) = floor(1638.4) > 1024
    assert capped.input_budget == 32_768 - 6553 - 1638


@pytest.mark.parametrize(
    ("limit", "max_output", "expected"),
    [
        (8192, 2048, 5530),
        (16_385, 4096, 16_385 - 3277 - 1024),
        (20_480, 2048, 20_480 - 2048 - 1024),
        (200_000, 8192, 200_000 - 8192 - 10_000),
        (1_048_576, 8192, 1_048_576 - 8192 - 52_428),
    ],
)
def test_input_budget_matches_the_formula(limit: int, max_output: int, expected: int) -> None:
    budget = compute_budget(
        model_context_limit=limit, max_output_tokens=max_output, settings=DEFAULTS
    )
    assert budget.input_budget == expected
    assert budget.input_budget == limit - budget.output_reserve - budget.overhead_reserve


def test_tiny_limit_makes_the_budget_invalid() -> None:
    # 1024 overhead minimum alone eats the whole window: 1000 - 200 - 1024 < 0.
    budget = compute_budget(model_context_limit=1000, max_output_tokens=2048, settings=DEFAULTS)
    assert budget.input_budget == 1000 - 200 - 1024
    assert budget.input_budget <= 0
    assert not budget.valid


def test_input_budget_of_exactly_zero_is_invalid() -> None:
    # limit 1280: output floor(256) = 256, overhead max(1024, 64) = 1024 -> 0 left.
    budget = compute_budget(model_context_limit=1280, max_output_tokens=2048, settings=DEFAULTS)
    assert budget.input_budget == 0
    assert not budget.valid


def test_input_budget_of_one_token_is_valid() -> None:
    budget = compute_budget(model_context_limit=1281, max_output_tokens=2048, settings=DEFAULTS)
    assert budget.input_budget == 1281 - 256 - 1024 == 1
    assert budget.valid


def test_ratios_and_minimum_come_from_settings() -> None:
    settings = BudgetSettings(
        output_reserve_ratio=0.10, overhead_reserve_ratio=0.02, overhead_reserve_min=100
    )
    budget = compute_budget(model_context_limit=10_000, max_output_tokens=5000, settings=settings)
    assert budget.output_reserve == 1000  # min(5000, 1000)
    assert budget.overhead_reserve == 200  # max(100, 200)
    assert budget.input_budget == 8800


def test_overhead_minimum_from_settings_wins_over_a_small_ratio() -> None:
    settings = BudgetSettings(overhead_reserve_ratio=0.0, overhead_reserve_min=500)
    budget = compute_budget(model_context_limit=10_000, max_output_tokens=1000, settings=settings)
    assert budget.overhead_reserve == 500
    assert budget.input_budget == 10_000 - 1000 - 500


def test_reserves_are_floored_not_rounded() -> None:
    # 0.2 * 8199 = 1639.8 and 0.05 * 40_999 = 2049.95: rounding would reserve one more token.
    budget = compute_budget(model_context_limit=8199, max_output_tokens=4096, settings=DEFAULTS)
    assert budget.output_reserve == 1639
    big = compute_budget(model_context_limit=40_999, max_output_tokens=100, settings=DEFAULTS)
    assert big.overhead_reserve == 2049
