"""Calibration from usage reports, through the API: an agent that posts the provider's
``usage.prompt_tokens`` with each step and completion.

The simulated provider counts 20% more than the proxy: for a prompt whose count with the
published OpenAI rules on o200k_base is *n*, it bills ``ceil(1.2 n)``. Its model is an
operator entry counted with o200k_base and no safety factor, so contextd starts out 20% low.
The real window for a prompt is the input budget, in the provider's tokens.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningApp
from tests.openai_counting import prompt_tokens
from tests.support import audit_rows, create_session, step_body, words

REAL_TO_PROXY = 1.2
INPUT_BUDGET = 5530  # 8192 - min(2048, 1638) - max(1024, 409)
MODELS_FILE = """
[models."acme-llm"]
context_limit = 8192
encoding = "o200k_base"
safety_factor = 1.0
family = "acme"
"""


def provider_count(messages: list[dict[str, Any]]) -> int:
    """What the simulated provider bills for a prompt."""
    return math.ceil(REAL_TO_PROXY * prompt_tokens("gpt-4o", messages))


@pytest.fixture
async def acme(apps: RunningApp, tmp_path: Path) -> httpx.AsyncClient:
    models_file = tmp_path / "models.toml"
    models_file.write_text(MODELS_FILE, encoding="utf-8")
    _, client = await apps.start(models_file=models_file)
    return client


async def agent_loop(
    client: httpx.AsyncClient, session_id: str, *, turns: int, report_usage: bool
) -> list[tuple[int, int]]:
    """Turns of a user message, two tool steps and an answer; returns, per prompt handed
    out, its turn and what the provider bills for it."""
    billed: list[tuple[int, int]] = []
    base = f"/v1/sessions/{session_id}/turns"
    for turn in range(1, turns + 1):
        response = await client.post(
            base, json={"message": {"content": f"Turn {turn}: what next? " + words(120, turn)}}
        )
        assert response.status_code == 201, response.text
        prompt = response.json()
        turn_id = prompt["turn_id"]
        billed.append((turn, provider_count(prompt["messages"])))
        for step in (1, 2):
            body = step_body([f"call_{turn}_{step}"], [words(700, turn * 10 + step)])
            if report_usage:
                body["usage"] = {"prompt_tokens": billed[-1][1]}
            response = await client.post(f"{base}/{turn_id}/steps", json=body)
            assert response.status_code == 200, response.text
            prompt = response.json()
            billed.append((turn, provider_count(prompt["messages"])))
        done: dict[str, Any] = {"assistant": {"content": f"Done with turn {turn}."}}
        if report_usage:
            done["usage"] = {"prompt_tokens": billed[-1][1], "completion_tokens": 9}
        response = await client.post(f"{base}/{turn_id}/complete", json=done)
        assert response.status_code == 200, response.text
    return billed


async def test_without_usage_reports_prompts_overflow_the_real_window(
    acme: httpx.AsyncClient,
) -> None:
    session = await create_session(acme, model="acme-llm")

    billed = await agent_loop(acme, session["id"], turns=6, report_usage=False)

    assert session["budget"]["input_budget"] == INPUT_BUDGET
    assert max(tokens for _, tokens in billed) > INPUT_BUDGET


async def test_budgets_converge_so_that_no_prompt_overflows_the_real_window(
    acme: httpx.AsyncClient,
) -> None:
    session = await create_session(acme, model="acme-llm")

    billed = await agent_loop(acme, session["id"], turns=6, report_usage=True)

    after_first_turn = [tokens for turn, tokens in billed if turn >= 2]
    assert max(after_first_turn) <= INPUT_BUDGET
    # The budget was really used, not left empty out of caution.
    assert max(after_first_turn) > 0.85 * INPUT_BUDGET


async def test_the_ratio_in_force_is_in_audit_rows_the_session_and_the_model_table(
    acme: httpx.AsyncClient,
) -> None:
    session = await create_session(acme, model="acme-llm")

    await agent_loop(acme, session["id"], turns=2, report_usage=True)
    rows = await audit_rows(acme, session["id"])
    model = (await acme.get("/v1/models/acme-llm")).json()
    budget = (await acme.get(f"/v1/sessions/{session['id']}")).json()["budget"]

    assert rows[0]["calibration_ratio"] == 1.0
    assert all(row["calibration_ratio"] >= REAL_TO_PROXY for row in rows[1:])
    assert all(
        row["input_budget"] == math.floor(INPUT_BUDGET / row["calibration_ratio"]) for row in rows
    )
    assert model["calibration"]["samples"] == 6
    assert model["calibration"]["ratio"] == pytest.approx(REAL_TO_PROXY, abs=0.01)
    assert budget["calibration_ratio"] == model["calibration"]["ratio"]
    assert budget["input_budget"] == math.floor(INPUT_BUDGET / budget["calibration_ratio"])


async def _first_turn_with_usage(
    client: httpx.AsyncClient, session_id: str, prompt_tokens_for: Any
) -> dict[str, Any]:
    base = f"/v1/sessions/{session_id}/turns"
    prompt = (await client.post(base, json={"message": {"content": words(300)}})).json()
    body = step_body(["call_1"], [words(200, 1)])
    body["usage"] = {"prompt_tokens": prompt_tokens_for(prompt["budget"]["estimated_input_tokens"])}
    step: dict[str, Any] = (
        await client.post(f"{base}/{prompt['turn_id']}/steps", json=body)
    ).json()
    return step


async def test_a_provider_counting_lower_never_loosens_an_exact_count(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")

    step = await _first_turn_with_usage(client, session["id"], lambda n: int(n * 0.8))
    model = (await client.get("/v1/models/gpt-4o")).json()

    assert model["calibration"]["learnt_ratio"] == pytest.approx(0.8, abs=0.01)
    assert model["calibration"]["ratio"] == 1.0
    assert step["budget"]["calibration_ratio"] == 1.0


async def test_an_implausible_usage_report_is_ignored(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="gpt-4o")

    step = await _first_turn_with_usage(client, session["id"], lambda n: n * 10)
    model = (await client.get("/v1/models/gpt-4o")).json()

    assert model["calibration"]["samples"] == 0
    assert model["calibration"]["rejected"] == 1
    assert step["budget"]["calibration_ratio"] == 1.0


async def test_counting_endpoint_reports_the_calibrated_count(acme: httpx.AsyncClient) -> None:
    session = await create_session(acme, model="acme-llm")
    await agent_loop(acme, session["id"], turns=1, report_usage=True)
    messages = [{"role": "user", "content": words(500)}]

    counted = (
        await acme.post("/v1/tokens/count", json={"model": "acme-llm", "messages": messages})
    ).json()

    assert counted["input_tokens"] == prompt_tokens("gpt-4o", messages)
    assert counted["calibrated_input_tokens"] >= provider_count(messages)
    assert counted["calibration"]["samples"] == 3
