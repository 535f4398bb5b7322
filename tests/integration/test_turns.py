"""A turn's life through the API: the prompt it gets, tool steps, completion, errors."""

from __future__ import annotations

import asyncio

import httpx

from app.budget.assembly import chat_problems
from tests.support import (
    complete_turn,
    create_session,
    independent_prompt_tokens,
    post_step,
    start_turn,
    stored_messages,
)


async def test_first_turn_prompt_is_system_then_user(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    prompt = await start_turn(client, session["id"], "Find me a hotel near Alfama.")

    messages = prompt["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    system = messages[0]["content"]
    assert system.index("You are a careful assistant.") < system.index("You book travel.")
    assert system.index("You book travel.") < system.index("Goal: Plan a trip to Lisbon")
    assert "Mode: planning" in system
    assert messages[1] == {"role": "user", "content": "Find me a hotel near Alfama."}
    assert prompt["step"] == 0
    assert prompt["budget"]["estimated_input_tokens"] == independent_prompt_tokens(
        messages, "gpt-4"
    )
    assert sum(prompt["budget"]["blocks"].values()) == prompt["budget"]["estimated_input_tokens"]


async def test_tool_step_returns_calls_followed_by_their_results(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Weather in Lisbon and Porto?")

    prompt = await post_step(
        client, session["id"], turn["turn_id"], ["call_a", "call_b"], ["21C sunny", "17C rain"]
    )

    messages = prompt["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["call_a", "call_b"]
    assert [m["tool_call_id"] for m in messages[3:]] == ["call_a", "call_b"]
    assert chat_problems(messages) == []
    assert prompt["step"] == 1


async def test_completed_turn_answer_is_in_the_next_prompt(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Hi")
    completed = await complete_turn(client, session["id"], turn["turn_id"], "Hello! Where to?")

    prompt = await start_turn(client, session["id"], "Lisbon")

    assert completed["status"] == "completed"
    assert [m["role"] for m in prompt["messages"]] == ["system", "user", "assistant", "user"]
    assert prompt["messages"][2]["content"] == "Hello! Where to?"


async def test_multi_part_user_content_is_returned_as_sent(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="gpt-4o")
    content = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
    ]

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": content}},
    )

    assert response.status_code == 201, response.text
    assert response.json()["messages"][-1]["content"] == content


async def test_a_second_turn_cannot_start_while_one_is_open(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "first")

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns", json={"message": {"content": "second"}}
    )

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "turn_in_progress"
    assert error["details"]["turn_id"] == turn["turn_id"]
    assert (await client.get(f"/v1/sessions/{session['id']}")).json()["open_turn_id"] == turn[
        "turn_id"
    ]


async def test_steps_on_a_closed_turn_are_refused(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "q")
    await complete_turn(client, session["id"], turn["turn_id"], "a")

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]
            },
            "tool_results": [{"tool_call_id": "c", "content": "r"}],
        },
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "turn_not_open"


async def test_a_tool_call_without_its_result_is_refused(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "q")

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "c2", "function": {"name": "f", "arguments": "{}"}},
                ]
            },
            "tool_results": [{"tool_call_id": "c1", "content": "r"}],
        },
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "c2" in error["details"]["errors"][0]["problem"]
    assert len(await stored_messages(client, session["id"])) == 1


async def test_a_result_for_a_call_not_made_is_refused_naming_both_ids(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "q")

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": "{}"}},
                    {"id": "c2", "function": {"name": "f", "arguments": "{}"}},
                ]
            },
            "tool_results": [
                {"tool_call_id": "c1", "content": "r"},
                {"tool_call_id": "c9", "content": "r"},
            ],
        },
    )

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "unanswered ['c2'], unknown ['c9']" in error["details"]["errors"][0]["problem"]
    assert len(await stored_messages(client, session["id"])) == 1


async def test_unknown_session_and_turn_are_404(client: httpx.AsyncClient) -> None:
    session = await create_session(client)

    no_session = await client.post("/v1/sessions/nope/turns", json={"message": {"content": "x"}})
    no_turn = await client.post(
        f"/v1/sessions/{session['id']}/turns/nope/complete", json={"assistant": {"content": "x"}}
    )

    assert no_session.status_code == 404
    assert no_session.json()["error"]["code"] == "session_not_found"
    assert no_turn.status_code == 404
    assert no_turn.json()["error"]["code"] == "turn_not_found"


async def test_failed_turn_is_recorded_as_failed(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "q")

    closed = await complete_turn(client, session["id"], turn["turn_id"], None, status="failed")
    fetched = (await client.get(f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}")).json()

    assert closed["status"] == fetched["status"] == "failed"
    assert (await client.get(f"/v1/sessions/{session['id']}")).json()["open_turn_id"] is None


async def test_concurrent_turn_starts_on_one_session_serialise(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)

    responses = await asyncio.gather(
        *(
            client.post(
                f"/v1/sessions/{session['id']}/turns", json={"message": {"content": f"m{i}"}}
            )
            for i in range(4)
        )
    )

    assert sorted(r.status_code for r in responses) == [201, 409, 409, 409]
    assert len(await stored_messages(client, session["id"])) == 1


async def test_concurrent_steps_on_one_turn_lose_nothing(client: httpx.AsyncClient) -> None:
    session = await create_session(client)
    turn = await start_turn(client, session["id"], "Search everything.")

    responses = await asyncio.gather(
        *(
            client.post(
                f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
                json={
                    "assistant": {
                        "tool_calls": [
                            {"id": f"call_{i}", "function": {"name": "f", "arguments": "{}"}}
                        ]
                    },
                    "tool_results": [{"tool_call_id": f"call_{i}", "content": f"result {i}"}],
                },
            )
            for i in range(6)
        )
    )

    assert [r.status_code for r in responses] == [200] * 6
    assert sorted(r.json()["step"] for r in responses) == [1, 2, 3, 4, 5, 6]
    stored = await stored_messages(client, session["id"])
    assert [m["seq"] for m in stored] == list(range(1, 14))
    for call, result in zip(stored[1::2], stored[2::2], strict=True):
        assert result["tool_call_id"] == call["tool_calls"][0]["id"]
    final = max(responses, key=lambda r: r.json()["step"]).json()["messages"]
    assert chat_problems(final) == []
    assert len(final) == 14  # system + the 13 stored messages


async def test_restarted_service_keeps_the_conversation(apps: object) -> None:
    from tests.conftest import RunningApp

    assert isinstance(apps, RunningApp)
    _, first = await apps.start()
    session = await create_session(first)
    turn = await start_turn(first, session["id"], "Remember: my booking code is QX-7781.")
    await post_step(first, session["id"], turn["turn_id"], ["c1"], ["booking found"])
    await apps.stop_all()

    _, second = await apps.start()
    prompt = await post_step(second, session["id"], turn["turn_id"], ["c2"], ["seat 14C"])

    assert prompt["step"] == 2
    assert "QX-7781" in prompt["messages"][1]["content"]
    assert [m["role"] for m in prompt["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert len(await stored_messages(second, session["id"])) == 5
