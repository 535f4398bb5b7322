"""A worker that remembers what earlier folds read off a summary's items stores, and shows,
the summaries a worker that reads everything again at each fold stores."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx

from app.budget.summary import SummaryContent
from app.summarize import ExtractiveSummarizer, SummaryRequest
from app.summarize.extractive import forget_texts
from bench import traffic
from tests.conftest import RunningApp

CONTENT = ("summary_text", "key_facts", "decisions", "open_questions", "action_items")


class RereadingSummarizer(ExtractiveSummarizer):
    """The extractive summariser with nothing remembered at the start of each fold."""

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        forget_texts()
        return await super().summarize(request)


async def stored_summaries(client: httpx.AsyncClient, session: traffic.Session) -> list[Any]:
    """Run ``session`` through the app at an 8k model; its summaries, oldest first, as the
    API shows them (what they say and what they cover)."""
    conversation = session.conversation
    created = await client.post(
        "/v1/sessions", json={"model": "gpt-4", "system": {"global": conversation.system}}
    )
    session_id = created.json()["id"]
    base = f"/v1/sessions/{session_id}/turns"
    for turn in conversation.turns:
        started = await client.post(base, json=turn.start_body())
        assert started.status_code == 201, started.text
        turn_id = started.json()["turn_id"]
        for step in turn.steps:
            response = await client.post(f"{base}/{turn_id}/steps", json=step.body())
            assert response.status_code in (200, 422), response.text
        done = await client.post(f"{base}/{turn_id}/complete", json=turn.complete_body())
        assert done.status_code == 200, done.text
    listed = await client.get(f"/v1/sessions/{session_id}/summaries", params={"limit": 500})
    summaries = sorted(listed.json()["summaries"], key=lambda s: s["id"])
    return [{name: summary[name] for name in CONTENT} for summary in summaries]


async def test_summaries_are_the_same_whether_a_worker_remembers_or_rereads(
    sqlite_template: Path, tmp_path: Path
) -> None:
    session = traffic.generate(402, turns=72)
    stored = []
    for name, summarizer in (
        ("remembering", ExtractiveSummarizer()),
        ("rereading", RereadingSummarizer()),
    ):
        path = tmp_path / f"{name}.db"
        shutil.copyfile(sqlite_template, path)
        running = RunningApp(f"sqlite+aiosqlite:///{path}")
        try:
            _, client = await running.start(summarizer=summarizer)
            stored.append(await stored_summaries(client, session))
        finally:
            await running.stop_all()
    remembering, rereading = stored
    assert len(remembering) >= 5
    assert remembering == rereading
    assert any(item["from_user"] for item in remembering[-1]["key_facts"])
