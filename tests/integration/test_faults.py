"""Faults a production service meets: the database going away mid-traffic, and clients that
hang up mid-request. The database outage is made by a proxy the test owns (the database
server is shared and never touched)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from app.budget.summary import SummaryContent
from app.summarize import ExtractiveSummarizer, SummaryRequest
from tests.conftest import RunningApp
from tests.proxy import CuttableProxy
from tests.support import audit_rows, complete_turn, create_session, start_turn, stored_messages


@pytest.fixture
async def proxy(postgres_url: str) -> AsyncIterator[CuttableProxy]:
    url = make_url(postgres_url)
    proxy = CuttableProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()


@pytest.fixture
async def proxied(postgres_url: str, proxy: CuttableProxy) -> AsyncIterator[RunningApp]:
    """Apps whose database connections all go through ``proxy``."""
    url = make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
    running = RunningApp(url.render_as_string(hide_password=False))
    try:
        yield running
    finally:
        proxy.restore()
        await running.stop_all()


class HeldSummarizer:
    """Summarises like the built-in one, but first waits to be released: a request that
    calls it is held mid-assembly, its session locked and nothing yet written."""

    name = "held"

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        self.entered.set()
        await self.release.wait()
        return await ExtractiveSummarizer().summarize(request)


SUMMARISE_EVERY_TURN: dict[str, Any] = {"mandatory_summary_turns": 1, "protected_window_turns": 1}


def turn_body(content: str) -> dict[str, Any]:
    return {"message": {"content": content}}


@pytest.mark.postgres
async def test_calls_during_an_outage_get_503_with_retry_after(
    proxied: RunningApp, proxy: CuttableProxy
) -> None:
    _, client = await proxied.start()
    session = await create_session(client)
    proxy.cut()

    response = await client.post(f"/v1/sessions/{session['id']}/turns", json=turn_body("hi"))

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "database_unavailable"
    assert int(response.headers["retry-after"]) > 0


@pytest.mark.postgres
async def test_readiness_is_red_during_an_outage_and_green_after(
    proxied: RunningApp, proxy: CuttableProxy
) -> None:
    _, client = await proxied.start()
    proxy.cut()
    during = await client.get("/readyz")
    proxy.restore()
    after = await client.get("/readyz")

    assert during.status_code == 503
    assert during.json()["error"]["code"] == "database_unavailable"
    assert after.status_code == 200


@pytest.mark.postgres
async def test_service_resumes_by_itself_when_the_database_returns(
    proxied: RunningApp, proxy: CuttableProxy
) -> None:
    _, client = await proxied.start()
    session = await create_session(client)
    url = f"/v1/sessions/{session['id']}/turns"
    proxy.cut()
    refused = await client.post(url, json=turn_body("hi"), headers={"Idempotency-Key": "t1"})
    proxy.restore()

    retried = await client.post(url, json=turn_body("hi"), headers={"Idempotency-Key": "t1"})

    assert refused.status_code == 503
    assert retried.status_code == 201, retried.text
    assert [m["content"] for m in await stored_messages(client, session["id"])] == ["hi"]


@pytest.mark.postgres
async def test_an_outage_mid_request_leaves_nothing_half_written(
    proxied: RunningApp, proxy: CuttableProxy
) -> None:
    summarizer = HeldSummarizer()
    _, client = await proxied.start(summarizer=summarizer, **SUMMARISE_EVERY_TURN)
    session = await create_session(client)
    first = await start_turn(client, session["id"], "First question")
    await complete_turn(client, session["id"], first["turn_id"], "First answer")
    url = f"/v1/sessions/{session['id']}/turns"
    held = asyncio.create_task(client.post(url, json=turn_body("Second question")))
    await summarizer.entered.wait()

    proxy.cut()
    summarizer.release.set()
    failed = await held
    proxy.restore()

    assert failed.status_code == 503
    after = (await client.get(f"/v1/sessions/{session['id']}")).json()
    assert (after["turn_count"], after["message_count"], after["open_turn_id"]) == (1, 2, None)
    assert [m["state"] for m in await stored_messages(client, session["id"])] == ["active"] * 2
    assert len(await audit_rows(client, session["id"])) == 1
    assert (await client.get(f"/v1/sessions/{session['id']}/summaries")).json() == {"summaries": []}


async def session_when(
    client: httpx.AsyncClient, session_id: str, done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The session once ``done`` holds for it (requests whose client left finish unseen)."""
    for _ in range(400):
        session: dict[str, Any] = (await client.get(f"/v1/sessions/{session_id}")).json()
        if done(session):
            return session
        await asyncio.sleep(0.05)
    raise AssertionError(f"the session never got there: {session}")


async def settled(client: httpx.AsyncClient, session_id: str) -> None:
    """Wait until requests whose client left have finished (the message count holds still)."""
    counts: list[int] = []
    for _ in range(400):
        session = (await client.get(f"/v1/sessions/{session_id}")).json()
        counts.append(session["message_count"])
        if len(counts) >= 5 and len(set(counts[-5:])) == 1:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"requests kept landing: {counts[-10:]}")


async def test_a_client_hanging_up_mid_request_does_not_cut_its_work_short(
    apps: RunningApp,
) -> None:
    summarizer = HeldSummarizer()
    _, client = await apps.start(summarizer=summarizer, **SUMMARISE_EVERY_TURN)
    session = await create_session(client)
    first = await start_turn(client, session["id"], "First question")
    await complete_turn(client, session["id"], first["turn_id"], "First answer")
    url = f"/v1/sessions/{session['id']}/turns"
    held = asyncio.create_task(client.post(url, json=turn_body("Second question")))
    await summarizer.entered.wait()

    held.cancel()
    await asyncio.gather(held, return_exceptions=True)
    summarizer.release.set()

    after = await session_when(client, session["id"], lambda s: s["turn_count"] == 2)
    assert (after["message_count"], after["open_turn_id"] is not None) == (3, True)
    messages = await stored_messages(client, session["id"])
    assert [m["content"] for m in messages if m["state"] == "active"] == ["Second question"]
    assert len((await client.get(f"{url[:-6]}/summaries")).json()["summaries"]) == 1


async def test_hanging_up_at_any_point_of_a_step_leaves_whole_steps(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Search many things")
    url = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps"
    attempts = 24
    answered: list[str] = []

    for attempt in range(attempts):
        body = {
            "assistant": {
                "tool_calls": [{"id": f"c{attempt}", "function": {"name": "f", "arguments": "{}"}}]
            },
            "tool_results": [{"tool_call_id": f"c{attempt}", "content": f"result {attempt}"}],
        }
        request = asyncio.create_task(client.post(url, json=body))
        for _ in range(attempt):  # hang up a little later each time
            await asyncio.sleep(0.001)
        request.cancel()
        done = (await asyncio.gather(request, return_exceptions=True))[0]
        if isinstance(done, httpx.Response):
            answered.append(f"c{attempt}")

    await settled(client, session["id"])
    messages = await stored_messages(client, session["id"])
    assert len(answered) < attempts  # some clients did hang up
    assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))
    steps = messages[1:]
    for call, result in zip(steps[::2], steps[1::2], strict=True):
        assert call["role"] == "assistant"
        assert result["tool_call_id"] == call["tool_calls"][0]["id"]
    stored_calls = [m["tool_call_id"] for m in steps[1::2]]
    assert len(set(stored_calls)) == len(stored_calls)
    assert set(answered) <= set(stored_calls)


@pytest.mark.postgres
async def test_retry_after_says_what_the_outage_has_taken_so_far(
    proxied: RunningApp, proxy: CuttableProxy
) -> None:
    _, client = await proxied.start()
    session = await create_session(client)
    url = f"/v1/sessions/{session['id']}/turns"
    proxy.cut()
    first = await client.post(url, json=turn_body("hi"))
    await asyncio.sleep(2.2)
    later = await client.post(url, json=turn_body("hi"))
    proxy.restore()
    await start_turn(client, session["id"], "hi")  # recovered: it took some 2.2 s
    proxy.cut()
    next_outage = await client.post(url, json=turn_body("again"))
    proxy.restore()

    # delay-seconds (RFC 9110 §10.2.3): whole seconds, never 0 (a retry at once)
    assert first.headers["retry-after"] == "1"
    assert int(later.headers["retry-after"]) >= 3  # 2.2 s gone: as long again, rounded up
    wait = next_outage.headers["retry-after"]
    assert int(wait) >= 3  # the last recovery took 2.2 s and more
    assert f"retry after {wait} s" in next_outage.json()["error"]["message"]
