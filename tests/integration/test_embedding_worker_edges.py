"""The embedding worker at its edges: a batch of long messages does not hold the event loop,
and vectors of a message erased while the API answered never land on a new message that
took its id (SQLite gives ids again)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker

from app.db import create_engine
from app.embeddings.client import EmbeddingsClient
from app.embeddings.worker import EmbeddingWorker
from app.metrics import Metrics
from tests.conftest import RunningApp, make_settings
from tests.fake_embeddings import serve_fake_embeddings, topic_vector
from tests.integration.test_embeddings import embedding_settings, search
from tests.support import (
    complete_turn,
    create_session,
    no_collection_meanwhile,
    start_turn,
    words,
)

PUPPY = "We adopted a labrador puppy called Biscuit last spring."
LOCKER = "The locker code for the Lisbon flat is 4471."

#: Dimensions of OpenAI's text-embedding-3-small, the default model of the API the worker
#: is documented against.
OPENAI_DIMS = 1536


#: One vector's JSON, made once: the fake API's own work stays out of what is measured (a
#: real API does it on another machine).
VECTOR_JSON = json.dumps([round(0.01 * (k % 97), 2) for k in range(OPENAI_DIMS)])


def openai_sized_embeddings(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    data = ",".join(
        f'{{"object": "embedding", "index": {i}, "embedding": {VECTOR_JSON}}}'
        for i in range(len(texts))
    )
    return httpx.Response(
        200,
        content=f'{{"object": "list", "data": [{data}]}}'.encode(),
        headers={"content-type": "application/json"},
    )


async def stall_while(work: Callable[[], Awaitable[bool]]) -> tuple[float, float]:
    """The longest the event loop was held while ``work`` ran, and how long it took."""
    longest_stall = 0.0

    async def other_requests() -> None:
        nonlocal longest_stall
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            longest_stall = max(longest_stall, time.perf_counter() - before - 0.005)

    with no_collection_meanwhile():
        ticker = asyncio.create_task(other_requests())
        started = time.perf_counter()
        try:
            assert await work()
            return longest_stall, time.perf_counter() - started
        finally:
            ticker.cancel()


async def test_the_embedding_worker_does_not_hold_the_event_loop(apps: RunningApp) -> None:
    """The worker runs in the app's event loop. A batch of long messages (tool results,
    pasted documents) at OpenAI's 1536 dimensions must not stall every request of the process
    while its answer is read and its vectors packed."""
    _, client = await apps.start()
    sid = (await create_session(client, model="gpt-4o"))["id"]
    for number in range(16):
        turn = await start_turn(client, sid, words(800, seed=number))
        await complete_turn(client, sid, turn["turn_id"], words(800, seed=number + 1))

    engine = create_engine(apps.database_url)
    embedder = EmbeddingsClient(
        base_url="http://embeddings.test/v1",
        model="text-embedding-3-small",
        transport=httpx.MockTransport(openai_sized_embeddings),
    )
    worker = EmbeddingWorker(
        sessionmaker=async_sessionmaker(engine, expire_on_commit=False),
        client=embedder,
        settings=make_settings(apps.database_url),
        metrics=Metrics(),
    )
    try:
        # Measured again (up to three times, the batch's vectors deleted in between) while
        # the loop was held for a third of the batch or more: a stall of the whole test
        # process, on a shared machine, says nothing of the worker.
        for _ in range(3):
            longest_stall, took = await stall_while(worker.run_once)
            if longest_stall < took / 3:
                break
            async with engine.begin() as connection:
                await connection.execute(text("DELETE FROM message_embeddings"))
            worker.after_id = 0
    finally:
        await embedder.aclose()
        await engine.dispose()

    # 512 passages of 1536 dimensions: reading the answer and packing the vectors is most of
    # the batch's time. Held on the loop, one sleep would wait about that long.
    assert longest_stall < took / 3, f"the loop was held {longest_stall:.3f}s of {took:.3f}s"


async def test_an_erased_sessions_vectors_never_land_on_another_tenants_messages(
    apps: RunningApp,
) -> None:
    """The worker reads a batch, asks the API, then stores. If the batch's session is erased
    meanwhile and another tenant's new messages are written, the vectors of the erased text
    must not be stored under the new messages: the worker never embedded their text, and
    the other tenant's search would rank its messages by a stranger's erased words."""
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme"))
    globex_key = await apps.key("globex")
    globex = apps.client(app, globex_key)
    await create_session(acme, id="erased")
    turn = await start_turn(acme, "erased", PUPPY)
    await complete_turn(acme, "erased", turn["turn_id"], "A labrador puppy, noted.")
    asked: list[str] = []

    async def answer_after_the_erasure(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        asked.extend(texts)
        # While the API answers: acme erases its session, globex talks.
        assert (await acme.delete("/v1/sessions/erased")).status_code == 204
        await create_session(globex, id="kept")
        kept = await start_turn(globex, "kept", LOCKER)
        await complete_turn(globex, "kept", kept["turn_id"], "Code noted.")
        return httpx.Response(
            200,
            json={
                "data": [{"index": i, "embedding": topic_vector(t)} for i, t in enumerate(texts)]
            },
        )

    engine = create_engine(apps.database_url)
    embedder = EmbeddingsClient(
        base_url="http://embeddings.test/v1",
        model="topic-test",
        transport=httpx.MockTransport(answer_after_the_erasure),
    )
    worker = EmbeddingWorker(
        sessionmaker=async_sessionmaker(engine, expire_on_commit=False),
        client=embedder,
        settings=make_settings(apps.database_url),
        metrics=Metrics(),
    )
    try:
        await worker.run_once()
        async with engine.connect() as connection:
            stored_for_globex = (
                await connection.execute(
                    text(
                        "SELECT count(*) FROM message_embeddings AS e JOIN messages AS m "
                        "ON m.id = e.message_id WHERE m.tenant_id = 'globex'"
                    )
                )
            ).scalar_one()
    finally:
        await embedder.aclose()
        await engine.dispose()

    assert LOCKER not in asked, "globex's text was never sent to be embedded"
    # What globex sees: its search for a dog finds its locker code, by acme's erased words.
    with serve_fake_embeddings() as fake:
        searching, _ = await apps.start(**embedding_settings(fake))
        found = await search(apps.client(searching, globex_key), "kept", "dog")
    assert found["hits"] == [], "globex's locker code is found by acme's erased puppy"
    assert stored_for_globex == 0, "globex's messages hold vectors of acme's erased text"


PUPPY = "We adopted a labrador puppy called Biscuit last spring."
LOCKER = "The locker code for the Lisbon flat is 4471."
