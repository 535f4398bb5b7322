"""The published counting rules, made pure: images, tool definitions, calibration."""

from __future__ import annotations

import base64
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.budget.calibration import (
    CalibrationSettings,
    CalibrationState,
    applied_ratio,
    observe,
)
from app.budget.images import (
    DEFAULT_IMAGE_RULES,
    ImageRules,
    data_url_size,
    image_tokens,
)
from app.budget.tokens import count_tools, lookup_model
from app.tokens.registry import TokenizerRegistry
from tests.openai_counting import jpeg_data_url, png_data_url

PATCHES = ImageRules("patches", patch_multiplier=1.0)
SIDES = st.integers(min_value=1, max_value=12_000)


@pytest.mark.parametrize(
    ("width", "height", "detail", "expected"),
    [
        (1024, 1024, "high", 765),  # the vision guide's examples, for gpt-4o
        (2048, 4096, "high", 1105),
        (4096, 8192, "low", 85),
        (512, 512, "high", 255),  # one tile: small images are not scaled up
    ],
)
def test_tile_rule_matches_the_vision_guide(
    width: int, height: int, detail: str, expected: int
) -> None:
    cost = image_tokens(DEFAULT_IMAGE_RULES, detail=detail, size=(width, height))
    assert (cost.tokens, cost.size_unknown) == (expected, False)


@pytest.mark.parametrize(("width", "height", "expected"), [(1024, 1024, 1024), (1800, 2400, 1452)])
def test_patch_rule_matches_the_vision_guide(width: int, height: int, expected: int) -> None:
    assert image_tokens(PATCHES, detail=None, size=(width, height)).tokens == expected


@given(width=SIDES, height=SIDES)
def test_an_image_of_unknown_size_costs_at_least_any_size(width: int, height: int) -> None:
    for rules in (DEFAULT_IMAGE_RULES, PATCHES, ImageRules("pixels")):
        unknown = image_tokens(rules, detail="high", size=None)
        assert unknown.size_unknown
        assert unknown.tokens >= image_tokens(rules, detail="high", size=(width, height)).tokens


def _webp_vp8x(width: int, height: int) -> str:
    chunk = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
    chunk += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    data = b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk
    return "data:image/webp;base64," + base64.b64encode(data).decode()


def _gif(width: int, height: int) -> str:
    data = b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00"
    return "data:image/gif;base64," + base64.b64encode(data).decode()


@pytest.mark.parametrize("make", [png_data_url, jpeg_data_url, _webp_vp8x, _gif])
def test_image_size_is_read_from_a_data_url(make: Any) -> None:
    assert data_url_size(make(1800, 2400)) == (1800, 2400)


@pytest.mark.parametrize(
    "url", ["https://example.com/a.png", "data:image/png;base64,!!!!", "data:text/plain,hi"]
)
def test_image_size_of_a_remote_or_unreadable_url_is_unknown(url: str) -> None:
    assert data_url_size(url) is None


def _weather(properties: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


def test_schema_parts_the_published_rule_leaves_out_are_counted_not_dropped() -> None:
    counter, _ = TokenizerRegistry().counter_for(lookup_model("gpt-4o"))
    flat = {"city": {"type": "object", "description": "Where."}}
    nested = {
        "city": {
            "type": "object",
            "description": "Where.",
            "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
            "required": ["name"],
        }
    }

    assert count_tools(counter, _weather(nested)) > count_tools(counter, _weather(flat))


SETTINGS = CalibrationSettings()


def _feed(ratios: list[float], state: CalibrationState | None = None) -> CalibrationState:
    state = state or CalibrationState()
    for ratio in ratios:
        state = observe(
            state, provider_tokens=round(1000 * ratio), estimated_tokens=1000, settings=SETTINGS
        ).state
    return state


def test_first_report_sets_the_ratio() -> None:
    assert _feed([1.2]).ratio == pytest.approx(1.2)


def test_a_tools_dominated_first_report_does_not_set_the_ratio() -> None:
    tools_only = observe(
        CalibrationState(),
        provider_tokens=2400,
        estimated_tokens=1000,
        tools_tokens=900,
        settings=SETTINGS,
    )
    assert tools_only.verdict == "invalid"
    assert tools_only.state.samples == 0

    conversation = observe(
        tools_only.state, provider_tokens=1100, estimated_tokens=1000, settings=SETTINGS
    )
    assert conversation.state.ratio == pytest.approx(1.1)
    # Once set, a tools-heavy report is an ordinary observation.
    later = observe(
        conversation.state,
        provider_tokens=1200,
        estimated_tokens=1000,
        tools_tokens=900,
        settings=SETTINGS,
    )
    assert later.verdict == "taken"


def test_ratio_rises_fast_and_falls_slowly() -> None:
    up = _feed([1.0, 1.2])
    down = _feed([1.2, 1.0])

    assert up.ratio - 1.0 > 1.2 - down.ratio > 0


@pytest.mark.parametrize(("provider", "estimate"), [(5000, 1000), (100, 1000), (90, 50)])
def test_implausible_or_tiny_reports_are_ignored(provider: int, estimate: int) -> None:
    state = _feed([1.1])

    result = observe(state, provider_tokens=provider, estimated_tokens=estimate, settings=SETTINGS)

    assert result.verdict == "invalid"
    assert result.state.ratio == state.ratio
    assert result.state.rejected == 1


def test_a_lone_outlier_is_ignored_but_a_run_of_them_is_a_change() -> None:
    settled = _feed([1.1] * SETTINGS.warmup_samples)

    once = _feed([1.6], settled)
    three_times = _feed([1.6] * SETTINGS.outlier_run, settled)

    assert once.ratio == settled.ratio
    assert three_times.ratio > settled.ratio


def test_a_ratio_below_one_never_lowers_counts_below_the_proxy_count() -> None:
    low = _feed([0.7] * 10)

    assert applied_ratio(low, safety_factor=1.0, settings=SETTINGS) == 1.0
    assert applied_ratio(low, safety_factor=1.25, settings=SETTINGS) == pytest.approx(0.8)
    assert applied_ratio(_feed([0.9]), safety_factor=1.25, settings=SETTINGS) == 1.0
