"""LLM summaries: what the 70% crossing costs a turn, and how many facts survive re-summaries.

1. Turn latency at the 70% crossing with a model that takes 2 s per answer: sessions run until
   a turn crosses 70%; that turn's time is compared with the ordinary turns' (the summary is
   made by a summary job, so the crossing should cost what an ordinary turn costs).
2. Facts kept across ten successive summaries made by a model that drops a third of the
   previous summary's items each time: with contextd's carry-over, and as the raw model
   answers alone would keep them.

The model is the chat-completions server of tests/fake_llm.py, on 127.0.0.1.

    python -m bench.llm_summaries [--sessions 5] [--delay 2.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from typing import Any

import httpx

from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import lookup_model
from app.main import create_app
from app.settings import Settings
from app.summarize import SourceMessage, SummaryRequest
from app.summarize.llm import LLMSummarizer, request_prompt
from app.tokens.registry import TokenizerRegistry
from bench.common import machine, percentile
from tests.fake_llm import FakeChat, serve_fake_chat

FILLER = " ".join(["alpha", "delta", "echo", "golf", "hotel", "river", "stone", "cloud"] * 62)


async def crossing_latency(fake: FakeChat, sessions: int) -> tuple[list[float], list[float]]:
    """Seconds per turn start: ordinary turns, and turns that crossed 70%."""
    ordinary: list[float] = []
    crossing: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            _env_file=None,
            database_url=f"sqlite+aiosqlite:///{folder}/bench.db",
            auto_migrate=True,
            summarizer="llm",
            summarizer_base_url=fake.url,
            summarizer_model="bench-model",
            summary_job_poll_seconds=0.05,
        )
        app = create_app(settings)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench"
            ) as client,
        ):
            for _ in range(sessions):
                session = (await client.post("/v1/sessions", json={"model": "gpt-4"})).json()
                sid = session["id"]
                for turn in range(12):
                    started = time.perf_counter()
                    response = await client.post(
                        f"/v1/sessions/{sid}/turns",
                        json={"message": {"role": "user", "content": f"Fact {turn}. {FILLER}"}},
                    )
                    elapsed = time.perf_counter() - started
                    prompt = response.json()
                    crossed = prompt["actions"]["summary_triggered"]
                    (crossing if crossed else ordinary).append(elapsed)
                    await client.post(
                        f"/v1/sessions/{sid}/turns/{prompt['turn_id']}/complete",
                        json={"assistant": {"content": "Noted. " + FILLER[:1200]}},
                    )
                    if crossed:
                        break
    return ordinary, crossing


PLANTED_PER_ROUND = 3


def planted(round_number: int) -> list[SourceMessage]:
    return [
        SourceMessage(
            round_number * 100 + k,
            "user",
            f"Planted fact F{round_number}x{k}: the locker code is {round_number}{k}481. "
            "More chatter follows here.",
        )
        for k in range(PLANTED_PER_ROUND)
    ]


def kept(summary: SummaryContent, rounds: int) -> float:
    rendered = render_summary(summary)
    facts = [f"F{r}x{k}" for r in range(rounds) for k in range(PLANTED_PER_ROUND)]
    return sum(f"{fact}:" in rendered for fact in facts) / len(facts)


def _content(raw: dict[str, Any]) -> SummaryContent:
    def items(name: str) -> tuple[SummaryItem, ...]:
        return tuple(
            SummaryItem(i["text"], tuple(i["source_message_ids"])) for i in raw.get(name, [])
        )

    return SummaryContent(
        raw["summary_text"],
        items("key_facts"),
        items("decisions"),
        items("open_questions"),
        items("action_items"),
    )


async def facts_kept(fake: FakeChat, rounds: int) -> tuple[float, float]:
    """Share of planted facts in the last of ``rounds`` summaries: with carry-over, raw."""
    fake.mode = "drop_facts"
    fake.drop_share = 1 / 3
    fake.delay = 0.0
    counter, _ = TokenizerRegistry().counter_for(lookup_model("gpt-4o"))
    summarizer = LLMSummarizer(base_url=fake.url, model="bench-model")
    carried: SummaryContent | None = None
    raw: SummaryContent | None = None
    async with httpx.AsyncClient(base_url=fake.url + "/") as client:
        for round_number in range(rounds):
            messages = tuple(planted(round_number))
            carried = await summarizer.summarize(
                SummaryRequest(carried, messages, target_tokens=4000, counter=counter)
            )
            request = SummaryRequest(raw, messages, target_tokens=4000, counter=counter)
            answer = await client.post(
                "chat/completions",
                json={
                    "model": "bench-model",
                    "messages": [
                        {"role": "system", "content": "summarise"},
                        {"role": "user", "content": request_prompt(request)},
                    ],
                },
            )
            raw = _content(json.loads(answer.json()["choices"][0]["message"]["content"]))
    await summarizer.aclose()
    assert carried is not None
    assert raw is not None
    return kept(carried, rounds), kept(raw, rounds)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--delay", type=float, default=2.0, help="the model's seconds per answer")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: {machine()}")  # noqa: T201
    with serve_fake_chat() as fake:
        fake.delay = args.delay
        ordinary, crossing = await crossing_latency(fake, args.sessions)
        print(  # noqa: T201
            f"turn start, ordinary turns (n={len(ordinary)}): "
            f"median {statistics.median(ordinary) * 1000:.1f} ms, "
            f"p90 {percentile(ordinary, 0.9) * 1000:.1f} ms"
        )
        print(  # noqa: T201
            f"turn start at the 70% crossing, model taking {args.delay:.1f} s "
            f"(n={len(crossing)}): median {statistics.median(crossing) * 1000:.1f} ms, "
            f"max {max(crossing) * 1000:.1f} ms"
        )
        with_carry, raw = await facts_kept(fake, args.rounds)
        print(  # noqa: T201
            f"planted facts kept after {args.rounds} successive summaries by a model that "
            f"drops a third of the previous summary's items: {with_carry:.0%} with carry-over "
            f"(raw model answers alone: {raw:.0%})"
        )


if __name__ == "__main__":
    asyncio.run(main())
