"""Embeddings for search and recall: stored by a worker off the request path, found by
meaning where no word is shared, and never a reason for a search or a turn to fail.

The embeddings API is a real HTTP server on 127.0.0.1 (tests/fake_embeddings.py) whose
vectors encode topics: "dog" and "labrador puppy" are near, "dog" and "budget" are not."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from app.budget.recall import RECALL_HEADING
from app.db import create_engine
from app.main import create_app
from tests.conftest import RunningApp, make_settings
from tests.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from tests.support import complete_turn, create_session, start_turn

PUPPY = "We adopted a labrador puppy called Biscuit last spring."
LOCKER = "The locker code for the Lisbon flat is 4471."
LINES = (
    PUPPY,
    LOCKER,
    "Our budget is 3000 euros for the whole trip.",
    "Book dinner at a vegetarian restaurant near the river.",
)


@pytest.fixture
def fake() -> Iterator[FakeEmbeddings]:
    with serve_fake_embeddings() as served:
        yield served


def embedding_settings(fake: FakeEmbeddings, **overrides: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "embeddings_base_url": fake.url,
        "embeddings_model": "topic-test",
        "embeddings_timeout_seconds": 2.0,
        "embeddings_poll_seconds": 0.02,
        "embeddings_retry_seconds": 0.05,
    }
    settings.update(overrides)
    return settings


async def eventually(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait (bounded) for something the background worker does."""
    for _ in range(500):
        if await check():
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"never happened: {what}")


def metric(app: FastAPI, name: str, labels: dict[str, str]) -> float:
    rendered = app.state.runtime.metrics.render().decode()
    for family in text_string_to_metric_families(rendered):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


async def scalar(database_url: str, sql: str, **params: Any) -> int:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return int((await connection.execute(text(sql), params)).scalar_one())
    finally:
        await engine.dispose()


async def stored_vectors(database_url: str, session_id: str) -> int:
    return await scalar(
        database_url,
        "SELECT count(*) FROM message_embeddings AS e JOIN messages AS m "
        "ON m.id = e.message_id WHERE m.session_id = :sid AND e.vector IS NOT NULL",
        sid=session_id,
    )


async def talk(client: httpx.AsyncClient, session_id: str, *lines: str) -> None:
    for line in lines:
        turn = await start_turn(client, session_id, line)
        await complete_turn(client, session_id, turn["turn_id"], "Noted.")


async def search(client: httpx.AsyncClient, session_id: str, query: str) -> dict[str, Any]:
    response = await client.get(f"/v1/sessions/{session_id}/search", params={"q": query})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def all_embedded(database_url: str, session_id: str, count: int) -> None:
    async def done() -> bool:
        return await stored_vectors(database_url, session_id) == count

    await eventually(done, f"{count} vectors stored")


async def test_the_worker_stores_a_vector_for_every_message(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    _, client = await apps.start(**embedding_settings(fake))
    sid = (await create_session(client))["id"]

    await talk(client, sid, *LINES)

    # Four user messages and four replies.
    await all_embedded(apps.database_url, sid, 8)
    assert PUPPY in fake.texts()
    assert fake.requests[0]["model"] == "topic-test"
    dims = await scalar(apps.database_url, "SELECT min(dims) FROM message_embeddings")
    assert dims == 5


async def test_a_question_sharing_no_word_but_the_meaning_is_found(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    _, client = await apps.start(**embedding_settings(fake))
    sid = (await create_session(client))["id"]
    await talk(client, sid, *LINES)
    await all_embedded(apps.database_url, sid, 8)

    found = await search(client, sid, "dog")

    assert found["ranking"] == "hybrid"
    assert [hit["seq"] for hit in found["hits"]] == [1]
    assert found["hits"][0]["snippet"].startswith("We adopted a labrador puppy")
    # Words still count: the message that says them ranks first.
    locker = await search(client, sid, "locker code")
    assert locker["hits"][0]["seq"] == 3


async def test_without_embeddings_the_same_question_finds_nothing(
    apps: RunningApp,
) -> None:
    _, client = await apps.start()
    sid = (await create_session(client))["id"]
    await talk(client, sid, *LINES)

    found = await search(client, sid, "dog")

    assert found == {"query": "dog", "ranking": "full_text", "hits": []}


async def test_recall_brings_back_a_summarised_fact_asked_about_in_other_words(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    _, client = await apps.start(
        mandatory_summary_turns=1, protected_window_turns=1, **embedding_settings(fake)
    )
    sid = (await create_session(client, recall={"enabled": True, "share": 0.2}))["id"]
    await talk(client, sid, *LINES)
    await all_embedded(apps.database_url, sid, 8)

    prompt = await start_turn(client, sid, "Which animal lives with us?")

    recalled = [m for m in prompt["messages"] if str(m["content"]).startswith(RECALL_HEADING)]
    assert len(recalled) == 1
    assert "[message 1, user] " + PUPPY in recalled[0]["content"]
    assert "budget" not in recalled[0]["content"]


async def test_a_failing_api_leaves_full_text_search_working_and_is_counted(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    app, client = await apps.start(**embedding_settings(fake))
    sid = (await create_session(client))["id"]
    await talk(client, sid, *LINES)
    await all_embedded(apps.database_url, sid, 8)
    fake.mode = "fail_5xx"

    found = await search(client, sid, "locker code")

    assert found["ranking"] == "full_text"
    assert [hit["seq"] for hit in found["hits"]] == [3]
    assert (
        metric(app, "context_embedding_failures_total", {"stage": "query", "reason": "status"}) == 1
    )

    # New messages wait for the API to come back; turns go on meanwhile.
    await talk(client, sid, "Remind me about the museum tickets.")

    async def worker_failed() -> bool:
        labels = {"stage": "worker", "reason": "status"}
        return metric(app, "context_embedding_failures_total", labels) >= 1

    await eventually(worker_failed, "the worker's failure counted")
    assert await stored_vectors(apps.database_url, sid) == 8
    fake.mode = "good"
    await all_embedded(apps.database_url, sid, 10)


async def test_a_hanging_api_never_holds_a_search_past_its_timeout(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    app, client = await apps.start(**embedding_settings(fake, embeddings_timeout_seconds=0.3))
    sid = (await create_session(client))["id"]
    await talk(client, sid, *LINES)
    await all_embedded(apps.database_url, sid, 8)
    fake.mode = "hang"

    found = await search(client, sid, "vegetarian dinner")

    assert found["ranking"] == "full_text"
    assert [hit["seq"] for hit in found["hits"]] == [7]
    labels = {"stage": "query", "reason": "timeout"}
    assert metric(app, "context_embedding_failures_total", labels) == 1


async def test_erasing_a_session_erases_its_embeddings(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    _, client = await apps.start(**embedding_settings(fake))
    erased = (await create_session(client))["id"]
    kept = (await create_session(client))["id"]
    await talk(client, erased, PUPPY)
    await talk(client, kept, LOCKER)
    await all_embedded(apps.database_url, erased, 2)
    await all_embedded(apps.database_url, kept, 2)

    assert (await client.delete(f"/v1/sessions/{erased}")).status_code == 204

    assert await scalar(apps.database_url, "SELECT count(*) FROM message_embeddings") == 2
    assert await stored_vectors(apps.database_url, kept) == 2


async def test_another_tenants_messages_are_never_hits(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    app, _ = await apps.start(**embedding_settings(fake))
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))
    await create_session(acme, id="shared-id")
    await create_session(globex, id="shared-id")
    await talk(acme, "shared-id", PUPPY)
    await talk(globex, "shared-id", "Our budget is 3000 euros.")

    async def both_embedded() -> bool:
        return await scalar(apps.database_url, "SELECT count(*) FROM message_embeddings") == 4

    await eventually(both_embedded, "both tenants' messages embedded")

    assert (await search(globex, "shared-id", "dog"))["hits"] == []
    assert [hit["seq"] for hit in (await search(acme, "shared-id", "dog"))["hits"]] == [1]


async def test_a_new_app_on_the_same_database_embeds_what_was_left(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    # The first app's API never answers: its messages stay unembedded when it stops.
    fake.mode = "hang"
    first = create_app(make_settings(apps.database_url, **embedding_settings(fake)))
    lifespan = first.router.lifespan_context(first)
    await lifespan.__aenter__()
    try:
        transport = httpx.ASGITransport(app=first)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            sid = (await create_session(client))["id"]
            await talk(client, sid, *LINES)
    finally:
        await lifespan.__aexit__(None, None, None)
    assert await stored_vectors(apps.database_url, sid) == 0

    fake.mode = "good"
    _, client = await apps.start(**embedding_settings(fake))

    await all_embedded(apps.database_url, sid, 8)
    assert [hit["seq"] for hit in (await search(client, sid, "dog"))["hits"]] == [1]


async def test_a_hanging_api_holds_a_turn_with_recall_no_longer_than_the_query_bound(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    # The worker's requests may wait long; the question of a turn, which waits with its
    # session locked, may not.
    app, client = await apps.start(
        mandatory_summary_turns=1,
        protected_window_turns=1,
        **embedding_settings(
            fake, embeddings_timeout_seconds=600, embeddings_query_timeout_seconds=0.2
        ),
    )
    sid = (await create_session(client, recall={"enabled": True, "share": 0.2}))["id"]
    await talk(client, sid, *LINES)
    await all_embedded(apps.database_url, sid, 8)
    fake.mode = "hang"

    prompt = await asyncio.wait_for(start_turn(client, sid, "Which animal lives with us?"), 60)

    assert prompt["messages"][-1]["content"] == "Which animal lives with us?"
    labels = {"stage": "query", "reason": "timeout"}
    assert metric(app, "context_embedding_failures_total", labels) == 1


async def test_one_process_embeds_and_another_takes_over_when_it_stops(
    apps: RunningApp, fake: FakeEmbeddings
) -> None:
    # Two processes on one database (`serve --workers 2`), each its own API here, so that
    # what each asked for shows: a message is paid for once, by whichever holds the lease.
    first = create_app(make_settings(apps.database_url, **embedding_settings(fake)))
    lifespan = first.router.lifespan_context(first)
    await lifespan.__aenter__()
    running = True
    try:
        transport = httpx.ASGITransport(app=first)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            sid = (await create_session(client))["id"]
            await talk(client, sid, LINES[0])
        await all_embedded(apps.database_url, sid, 2)
        with serve_fake_embeddings() as other:
            _, second = await apps.start(**embedding_settings(other))
            await talk(second, sid, *LINES[1:3])
            await all_embedded(apps.database_url, sid, 6)
            # A few of the second worker's polls go by with nothing left to embed.
            await asyncio.sleep(0.2)
            assert other.texts() == []

            await lifespan.__aexit__(None, None, None)
            running = False
            before = len(fake.texts())
            await talk(second, sid, LINES[3])
            await all_embedded(apps.database_url, sid, 8)

            assert len(fake.texts()) == before
            assert other.texts() == [LINES[3], "Noted."]
    finally:
        if running:
            await lifespan.__aexit__(None, None, None)
