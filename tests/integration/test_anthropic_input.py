"""A Claude agent posts what the Messages API gave it (content blocks with ``tool_use``) and
what its tools returned (``tool_result`` blocks, images too), and gets the same blocks back
in the next Anthropic prompt; OpenAI-shaped agents see the same steps in their own shape."""

from __future__ import annotations

import base64
import json
import re
import struct
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from app.budget.assembly import chat_problems
from tests.support import audit_rows, create_session, start_turn, stored_messages

SIGNATURE = "EqQBCkYIBxgCKkBl3+kR/0a9Zq==" + "Zm9vYmFy/+" * 8
THINKING = {"type": "thinking", "thinking": "Two cities, two calls.", "signature": SIGNATURE}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT+=="}
# Key order, nesting, unicode, floats and nulls all survive the trip.
INPUT = {"city": "São Paulo", "units": None, "at": {"lat": -23.55, "lon": -46.633}, "n": 3}


def png(width: int, height: int) -> str:
    """The base64 of a PNG header that says its size (all the counting reads)."""
    header = (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
    )
    return base64.b64encode(header + b"\x08\x02\x00\x00\x00").decode()


SCREENSHOT = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": png(800, 600)},
}
REMOTE = {"type": "image", "source": {"type": "url", "url": "https://example.com/map.png"}}


def anthropic_step(
    *, blocks: list[dict[str, Any]] | None = None, results: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "assistant": {
            "role": "assistant",
            "content": blocks
            or [
                THINKING,
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": INPUT},
                {"type": "tool_use", "id": "toolu_01B", "name": "screenshot", "input": {}},
            ],
        },
        "tool_results": results
        or [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01A",
                "content": "weather service down",
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01B",
                "content": [{"type": "text", "text": "The page:"}, SCREENSHOT, REMOTE],
            },
        ],
    }


async def post(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    body: dict[str, Any],
    *,
    prompt_format: str = "anthropic",
    expect: int = 200,
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json={**body, "format": prompt_format}
    )
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


def without_breakpoints(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in blocks]


def valid_anthropic(prompt: dict[str, Any]) -> None:
    assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []


async def test_an_anthropic_step_comes_back_as_the_same_blocks(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in São Paulo, and a screenshot?")
    body = anthropic_step()

    prompt = await post(client, session["id"], turn["turn_id"], body)

    valid_anthropic(prompt)
    assistant, results = prompt["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert without_breakpoints(assistant["content"]) == body["assistant"]["content"]
    assert results["role"] == "user"
    assert without_breakpoints(results["content"]) == body["tool_results"]
    # Stored in the OpenAI shape: the input as the call's JSON arguments, thinking in place.
    stored = await stored_messages(client, session["id"])
    assert stored[1]["content"] == [THINKING, {"type": "text", "text": "Checking both."}]
    call = stored[1]["tool_calls"][0]
    assert call["function"] == {
        "name": "weather",
        "arguments": json.dumps(INPUT, ensure_ascii=False),
    }
    assert stored[2]["tool_call_id"] == "toolu_01A"
    assert stored[2]["is_error"] is True
    assert stored[3]["is_error"] is None


async def test_the_openai_prompt_carries_tool_images_in_a_user_message_after_the_results(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Weather, and a screenshot?")
    without_images = anthropic_step(
        blocks=[
            {"type": "tool_use", "id": "toolu_00A", "name": "weather", "input": INPUT},
            {"type": "tool_use", "id": "toolu_00B", "name": "screenshot", "input": {}},
        ],
        results=[
            {"type": "tool_result", "tool_use_id": "toolu_00A", "content": "21C and sunny"},
            {"type": "tool_result", "tool_use_id": "toolu_00B", "content": "The page:"},
        ],
    )
    plain = await post(
        client, session["id"], turn["turn_id"], without_images, prompt_format="openai"
    )
    await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/complete",
        json={"assistant": {"content": "Done."}},
    )
    turn = await start_turn(client, session["id"], "Again, with the screenshot.")
    body = anthropic_step()

    prompt = await post(client, session["id"], turn["turn_id"], body, prompt_format="openai")

    messages = prompt["messages"]
    assert chat_problems(messages) == []
    calls, weather, page, carrier = messages[-4:]
    assert [call["id"] for call in calls["tool_calls"]] == ["toolu_01A", "toolu_01B"]
    assert json.loads(calls["tool_calls"][0]["function"]["arguments"]) == INPUT
    # is_error is Anthropic's: the OpenAI tool message is the result's text alone.
    assert weather == {
        "role": "tool",
        "tool_call_id": "toolu_01A",
        "content": "weather service down",
    }
    assert page["role"] == "tool"
    assert page["content"].startswith("The page:")
    assert "2 images" in page["content"]
    assert carrier["role"] == "user"
    assert [part["type"] for part in carrier["content"]] == ["text", "image_url", "image_url"]
    assert carrier["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert carrier["content"][2]["image_url"]["url"] == "https://example.com/map.png"
    # The images are counted: an 800x600 image is 765 tokens on GPT-4o, a remote one at most.
    step_tokens = (
        prompt["budget"]["estimated_input_tokens"] - plain["budget"]["estimated_input_tokens"]
    )
    assert step_tokens > 765 + 765


async def test_an_anthropic_answer_completes_the_turn_and_comes_back_unchanged(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather?")
    await post(client, session["id"], turn["turn_id"], anthropic_step())
    answer = [REDACTED, {"type": "text", "text": "21C in São Paulo."}]

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/complete",
        json={"assistant": {"role": "assistant", "content": answer}},
    )

    assert response.status_code == 200, response.text
    assert response.json()["assistant_output"] == "21C in São Paulo."
    nxt = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"content": "Thanks."}, "format": "anthropic"},
    )
    prompt = nxt.json()
    valid_anthropic(prompt)
    assert without_breakpoints(prompt["messages"][-2]["content"]) == answer


async def test_blocks_that_cannot_be_converted_are_refused_by_name_and_nothing_is_stored(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather?")
    url = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}"
    no_input = {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": "Lisbon"}
    pdf = {
        "type": "image",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"},
    }
    cases = [
        (
            f"{url}/steps",
            anthropic_step(blocks=[{"type": "text", "text": "Hm."}, no_input]),
            "assistant.content[1] (tool_use): input must be an object",
        ),
        (
            f"{url}/steps",
            anthropic_step(
                results=[
                    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "ok"},
                    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": [pdf]},
                ]
            ),
            "tool_results[1].content[0] (image): source.media_type must be one of image/png",
        ),
        (
            f"{url}/complete",
            {"assistant": {"role": "assistant", "content": [no_input]}},
            "assistant.content[0] (tool_use): a turn's answer calls no tools",
        ),
    ]
    for path, body, message in cases:
        response = await client.post(path, json=body)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_request"
        assert message in error["message"], error["message"]
    assert len(await stored_messages(client, session["id"])) == 1


def image_result(call_id: str, width: int = 800) -> dict[str, Any]:
    screenshot = {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{png(width, 600)}"},
    }
    return {"tool_call_id": call_id, "content": [{"type": "text", "text": "Screen:"}, screenshot]}


def screenshot_step(call_id: str) -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "screenshot", "arguments": "{}"},
    }
    return {
        "assistant": {"content": None, "tool_calls": [call]},
        "tool_results": [image_result(call_id)],
    }


async def test_older_tool_images_give_way_to_placeholders_first_and_stay_so(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o", context_limit=9_000)
    sid = session["id"]
    aside_before: set[int] = set()
    ever_aside: set[int] = set()
    changes = []
    for number in range(1, 13):
        turn = await start_turn(client, sid, f"Look at page {number}.")
        prompt = await post(
            client, sid, turn["turn_id"], screenshot_step(f"call_{number}"), prompt_format="openai"
        )
        assert chat_problems(prompt["messages"]) == []
        budget = prompt["budget"]
        assert budget["estimated_input_tokens"] <= budget["input_budget"]
        aside = {
            int(seq)
            for m in prompt["messages"]
            if m["role"] == "tool"
            for seq in re.findall(
                r"image set aside for room; stored whole in message seq (\d+)", str(m["content"])
            )
        }
        if not budget["blocks"]["summary"]:
            # Until a summary folds them in, what was set aside stays aside.
            assert aside >= aside_before
        aside_before = aside
        ever_aside |= aside
        carriers = [
            m
            for m in prompt["messages"]
            if m["role"] == "user" and "Images returned" in str(m["content"])
        ]
        if aside:
            # The open turn's image and the newest three of completed turns stay.
            assert len(carriers) == 4
            assert carriers[-1]["content"][0]["text"].endswith(f"call_{number}:")
        await client.post(
            f"/v1/sessions/{sid}/turns/{turn['turn_id']}/complete",
            json={"assistant": {"content": f"Page {number} read."}},
        )
        row = (await audit_rows(client, sid))[-1]
        changes.append(row["change_reason"])
        telemetry = row["block_telemetry"]["tool_images"]
        assert telemetry["results"] == len(aside)
        assert telemetry["images_set_aside"] == len(aside)
    assert ever_aside, "room was needed and older images gave way"
    assert "tool_images" in changes
    # The originals stay stored whole.
    stored = await stored_messages(client, sid)
    for seq in ever_aside:
        assert stored[seq - 1]["content"][1]["type"] == "image_url"


async def test_a_claude_answer_with_citations_is_taken_as_it_came(
    client: httpx.AsyncClient,
) -> None:
    """An answer grounded in a document carries ``citations`` on its text blocks; the
    module says an agent posts what the Messages API gave it as it is."""
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Where is the flat?")
    citation = {
        "type": "char_location",
        "cited_text": "The flat is in Alfama.",
        "document_index": 0,
        "document_title": "Booking",
        "start_char_index": 0,
        "end_char_index": 22,
    }
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "In Alfama.", "citations": [citation]}],
    }

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/complete",
        json={"assistant": answer},
    )

    assert response.status_code == 200, response.text
