"""Search of a session's history: what left the prompt is still found by what it said."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest

from tests.conftest import RunningApp
from tests.support import complete_turn, create_session, start_turn, words


async def search(
    client: httpx.AsyncClient, session_id: str, query: str, *, expect: int = 200, **params: Any
) -> dict[str, Any]:
    response = await client.get(f"/v1/sessions/{session_id}/search", params={"q": query, **params})
    assert response.status_code == expect, response.text
    body: dict[str, Any] = response.json()
    return body


async def talk(client: httpx.AsyncClient, session_id: str, *lines: str) -> None:
    for line in lines:
        turn = await start_turn(client, session_id, line)
        await complete_turn(client, session_id, turn["turn_id"], "Noted.")


async def test_a_summarised_message_is_found_by_what_it_said(apps: RunningApp) -> None:
    _, client = await apps.start(mandatory_summary_turns=1, protected_window_turns=1)
    sid = (await create_session(client))["id"]
    await talk(
        client,
        sid,
        "The locker code for the Lisbon flat is 4471 and the key is under the mat.",
        "We prefer window seats on every flight.",
        "Book dinner somewhere near the river.",
        "Remind me about the museum tickets.",
    )

    found = await search(client, sid, "locker code")

    best = found["hits"][0]
    assert best["seq"] == 1
    assert best["role"] == "user"
    assert best["state"] == "summarised"
    assert "**locker**" in best["snippet"]
    assert "**code**" in best["snippet"]
    assert best["turn_id"]
    assert len(found["hits"]) == 1


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("The ferry ticket is booked", "ferry ticket"),
        # Postgres's lexeme of "happy" is "happi", which no word as written starts with.
        ("The children were happy at the aquarium", "happy aquarium"),
    ],
)
async def test_a_match_deep_in_a_long_message_is_the_snippet(
    client: httpx.AsyncClient, said: str, asked: str
) -> None:
    sid = (await create_session(client))["id"]
    long = f"{words(1_500, 1)} {said}. {words(1_500, 2)}"
    await talk(client, sid, long)

    found = await search(client, sid, asked)

    snippet = found["hits"][0]["snippet"]
    assert all(f"**{word}**" in snippet for word in asked.split()), snippet
    assert len(snippet) < 400, snippet


async def test_hits_are_ranked_and_limited(client: httpx.AsyncClient) -> None:
    sid = (await create_session(client))["id"]
    await talk(
        client,
        sid,
        "Trains to Porto leave hourly.",
        "Porto trains, Porto hotels, Porto wine: Porto is the plan.",
        "A note about Sintra.",
    )

    found = await search(client, sid, "Porto", limit=1)

    assert [hit["seq"] for hit in found["hits"]] == [3]
    assert [h["seq"] for h in (await search(client, sid, "porto"))["hits"]] == [3, 1]


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("Dashboards live at https://grafana.acme.io/d/12/billing-latency today.", "billing"),
        ("Throttling is set in /srv/ingest/limits.yaml only.", "ingest limits"),
        ("Prometheus scrapes GET /metrics every minute.", "metrics"),
        ("Restore it with ~/.pgpass in place.", "pgpass"),
        ("Staging runs Postgres 15.4.2 since Monday.", "postgres 4"),
        ("The clock there is -5 hours from UTC.", "5 hours"),
        ("Write to ops-mei@acme.io about the outage.", "acme outage"),
    ],
)
async def test_the_parts_of_urls_paths_versions_and_addresses_are_found(
    client: httpx.AsyncClient, said: str, asked: str
) -> None:
    sid = (await create_session(client))["id"]
    await talk(client, sid, said, "Nothing else to add.")

    found = await search(client, sid, asked)

    assert [hit["seq"] for hit in found["hits"]] == [1]


async def test_text_parts_of_a_message_are_searchable(client: httpx.AsyncClient) -> None:
    sid = (await create_session(client))["id"]
    parts = [
        {"type": "text", "text": "What is on this receipt from Coimbra?"},
        {"type": "image_url", "image_url": {"url": "https://example.test/receipt.png"}},
    ]
    response = await client.post(f"/v1/sessions/{sid}/turns", json={"message": {"content": parts}})
    assert response.status_code == 201, response.text

    assert [h["seq"] for h in (await search(client, sid, "coimbra receipt"))["hits"]] == [1]
    assert (await search(client, sid, "example"))["hits"] == []


async def test_another_tenants_session_is_not_searched(apps: RunningApp) -> None:
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))
    await create_session(acme, id="shared-id")
    await talk(acme, "shared-id", "The acme launch code is kumquat.")
    await create_session(globex, id="shared-id")
    await talk(globex, "shared-id", "Nothing to see here.")

    assert (await search(globex, "shared-id", "kumquat"))["hits"] == []
    assert len((await search(acme, "shared-id", "kumquat"))["hits"]) == 1
    await create_session(acme, id="acme-only")
    missing = await search(globex, "acme-only", "kumquat", expect=404)
    assert missing["error"]["code"] == "session_not_found"


async def test_erasing_a_session_erases_its_hits(client: httpx.AsyncClient) -> None:
    sid = (await create_session(client, id="erased"))["id"]
    await talk(client, sid, "My passport number is XK1234567.")
    assert len((await search(client, sid, "passport"))["hits"]) == 1

    assert (await client.delete(f"/v1/sessions/{sid}")).status_code == 204
    await create_session(client, id="erased")

    assert (await search(client, sid, "passport"))["hits"] == []


@pytest.mark.parametrize("query", ["", "   ", '"', "*", "():^-", "_", "x" * 501])
async def test_a_query_with_nothing_to_look_for_is_422(
    client: httpx.AsyncClient, query: str
) -> None:
    sid = (await create_session(client))["id"]

    refused = await search(client, sid, query, expect=422)

    assert refused["error"]["code"] == "invalid_search_query"


@pytest.mark.parametrize(
    "query",
    ['flight AND "gate', "gate NOT flight", "NEAR(gate flight)", "gate*", "gate:flight", "gate's"],
)
async def test_query_syntax_characters_are_taken_as_text(
    client: httpx.AsyncClient, query: str
) -> None:
    sid = (await create_session(client))["id"]
    await talk(client, sid, "The flight leaves from gate B12; the gate's near the flight desk.")

    found = await search(client, sid, query)

    assert all(hit["seq"] == 1 for hit in found["hits"])


async def test_a_message_of_countless_distinct_words_is_stored_and_searchable(
    client: httpx.AsyncClient,
) -> None:
    sid = (await create_session(client, model="gpt-4o", context_limit=3_000_000))["id"]
    hashes = " ".join(hashlib.md5(str(i).encode()).hexdigest() for i in range(45_000))
    turn = await start_turn(client, sid, f"Checksums of the backup: {hashes}")

    found = await search(client, sid, "checksums backup")

    assert turn["turn_id"]
    assert [hit["seq"] for hit in found["hits"]] == [1]
