"""What an agent sends comes back as it sent it, in either format, or is refused at the door:
the order of an assistant's blocks, the numbers of a tool's input, an image's ``detail``, and
what a ``data:`` URL may carry."""

from __future__ import annotations

import json
from typing import Any

import httpx

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from app.budget.assembly import chat_problems
from tests.integration.test_anthropic_input import png, without_breakpoints
from tests.support import create_session, start_turn, stored_messages

PNG_URL = f"data:image/png;base64,{png(64, 64)}"
INTERLEAVED = [
    {"type": "text", "text": "First the weather."},
    {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": {"city": "Lisbon"}},
    {"type": "text", "text": "Then a screenshot of the forecast page."},
    {"type": "tool_use", "id": "toolu_01B", "name": "screenshot", "input": {}},
]
RESULTS = [
    {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "21C"},
    {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "The page."},
]


async def post_step(
    client: httpx.AsyncClient,
    session_id: str,
    turn_id: str,
    body: dict[str, Any],
    *,
    prompt_format: str,
) -> httpx.Response:
    return await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/steps", json={**body, "format": prompt_format}
    )


async def next_turn(
    client: httpx.AsyncClient, session_id: str, turn_id: str, *, prompt_format: str
) -> dict[str, Any]:
    """Completes the turn and starts the next one: the prompt is read back from storage."""
    done = await client.post(
        f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
        json={"assistant": {"content": "Done."}},
    )
    assert done.status_code == 200, done.text
    response = await client.post(
        f"/v1/sessions/{session_id}/turns",
        json={"message": {"content": "And now?"}, "format": prompt_format},
    )
    assert response.status_code == 201, response.text
    prompt: dict[str, Any] = response.json()
    return prompt


def openai_call(call_id: str, arguments: str, name: str = "plot") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def image_part(url: str, detail: str | None = None) -> dict[str, Any]:
    image = {"url": url} if detail is None else {"url": url, "detail": detail}
    return {"type": "image_url", "image_url": image}


async def test_text_between_tool_calls_comes_back_where_the_agent_put_it(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Weather in Lisbon, and the page?")
    body = {"assistant": {"role": "assistant", "content": INTERLEAVED}, "tool_results": RESULTS}

    step = await post_step(client, session["id"], turn["turn_id"], body, prompt_format="anthropic")
    later = await next_turn(client, session["id"], turn["turn_id"], prompt_format="anthropic")

    assert step.status_code == 200, step.text
    for prompt in (step.json(), later):
        assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
        assistant = next(m for m in prompt["messages"] if m["role"] == "assistant")
        assert without_breakpoints(assistant["content"]) == INTERLEAVED


async def test_the_openai_prompt_of_interleaved_blocks_is_the_plain_chat_shape(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Weather in Lisbon, and the page?")
    body = {"assistant": {"role": "assistant", "content": INTERLEAVED}, "tool_results": RESULTS}

    step = await post_step(client, session["id"], turn["turn_id"], body, prompt_format="openai")
    later = await next_turn(client, session["id"], turn["turn_id"], prompt_format="openai")

    assert step.status_code == 200, step.text
    for prompt in (step.json(), later):
        assert chat_problems(prompt["messages"]) == []
        assistant = next(m for m in prompt["messages"] if m.get("tool_calls"))
        assert [text["text"] for text in assistant["content"]] == [
            "First the weather.",
            "Then a screenshot of the forecast page.",
        ]
        assert assistant["tool_calls"] == [
            openai_call("toolu_01A", '{"city": "Lisbon"}', name="weather"),
            openai_call("toolu_01B", "{}", name="screenshot"),
        ]
    # The history an agent may replay to a chat API holds the same calls, nothing of ours.
    history = await stored_messages(client, session["id"])
    assert next(m for m in history if m["tool_calls"])["tool_calls"] == [
        openai_call("toolu_01A", '{"city": "Lisbon"}', name="weather"),
        openai_call("toolu_01B", "{}", name="screenshot"),
    ]


async def test_a_tool_input_number_json_cannot_carry_is_refused_by_name(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Plot it.")
    blocks = [
        {"type": "text", "text": "Plotting."},
        {"type": "tool_use", "id": "toolu_01A", "name": "plot", "input": {"range": [0, "HUGE"]}},
    ]
    body = json.dumps(
        {
            "assistant": {"role": "assistant", "content": blocks},
            "tool_results": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "ok"}],
            "format": "anthropic",
        }
    )

    for number in ("1e999", "-1e999"):
        response = await client.post(
            f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
            content=body.replace('"HUGE"', number),
            headers={"content-type": "application/json"},
        )

        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_request"
        assert "assistant.content[1] (tool_use): input.range[1]" in error["message"]
    assert len(await stored_messages(client, session["id"])) == 1


async def test_tool_arguments_with_such_a_number_are_kept_as_the_agent_wrote_them(
    client: httpx.AsyncClient,
) -> None:
    """The OpenAI shape's arguments are text: the OpenAI prompt gives them back unchanged,
    and the Anthropic prompt, which wants an object, gets the text rather than a null."""
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Plot it.")
    arguments = '{"range": [0, 1e999]}'
    body = {
        "assistant": {"content": None, "tool_calls": [openai_call("call_1", arguments)]},
        "tool_results": [{"tool_call_id": "call_1", "content": "ok"}],
    }

    step = await post_step(client, session["id"], turn["turn_id"], body, prompt_format="openai")
    later = await next_turn(client, session["id"], turn["turn_id"], prompt_format="anthropic")

    assert step.status_code == 200, step.text
    assistant = next(m for m in step.json()["messages"] if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["function"]["arguments"] == arguments
    tool_use = next(
        block
        for message in later["messages"]
        for block in message["content"]
        if block["type"] == "tool_use"
    )
    assert tool_use["input"] == {"arguments": arguments}


async def test_an_image_sent_without_detail_renders_without_the_key(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"content": [{"type": "text", "text": "Look:"}, image_part(PNG_URL)]}},
    )
    assert response.status_code == 201, response.text
    turn_id = response.json()["turn_id"]
    anthropic_image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png(64, 64)},
    }
    body = {
        "assistant": {
            "content": None,
            "tool_calls": [openai_call("call_1", "{}"), openai_call("call_2", "{}")],
        },
        "tool_results": [
            {
                "tool_call_id": "call_1",
                "content": [
                    image_part(PNG_URL),
                    image_part("https://example.com/chart.png", detail="low"),
                ],
            },
            {"type": "tool_result", "tool_use_id": "call_2", "content": [anthropic_image]},
        ],
    }

    step = await post_step(client, session["id"], turn_id, body, prompt_format="openai")
    later = await next_turn(client, session["id"], turn_id, prompt_format="openai")

    assert step.status_code == 200, step.text
    for prompt in (step.json(), later):
        images = [
            part["image_url"]
            for message in prompt["messages"]
            if isinstance(message["content"], list)
            for part in message["content"]
            if part["type"] == "image_url"
        ]
        assert images == [
            {"url": PNG_URL},
            {"url": PNG_URL},
            {"url": "https://example.com/chart.png", "detail": "low"},
            {"url": PNG_URL},
        ]


async def test_a_data_url_that_is_not_an_image_is_refused_naming_what_is_taken(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Read these.")
    steps = f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps"
    call = openai_call("call_1", "{}")
    cases = [
        (
            steps,
            {
                "assistant": {"content": None, "tool_calls": [call]},
                "tool_results": [
                    {
                        "tool_call_id": "call_1",
                        "content": [image_part(f"data:{media_type};base64,SGVsbG8=")],
                    }
                ],
            },
            media_type,
        )
        for media_type in ("application/pdf", "text/plain")
    ]
    cases.append(
        (
            f"/v1/sessions/{session['id']}/turns",
            {"message": {"content": [image_part("data:application/pdf;base64,JVBE")]}},
            "application/pdf",
        )
    )

    for path, body, media_type in cases:
        response = await client.post(path, json=body)

        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "invalid_request"
        assert media_type in error["message"], error["message"]
        assert "image/png, image/jpeg, image/gif, image/webp" in error["message"]
    assert len(await stored_messages(client, session["id"])) == 1


async def test_an_image_by_https_url_is_taken_in_a_tool_result(client: httpx.AsyncClient) -> None:
    session = await create_session(client, model="claude-sonnet-4-5")
    turn = await start_turn(client, session["id"], "Look at the chart.")
    body = {
        "assistant": {"content": None, "tool_calls": [openai_call("call_1", "{}")]},
        "tool_results": [
            {"tool_call_id": "call_1", "content": [image_part("https://example.com/c.png")]}
        ],
    }

    step = await post_step(client, session["id"], turn["turn_id"], body, prompt_format="anthropic")

    assert step.status_code == 200, step.text
    result = step.json()["messages"][-1]["content"][0]
    assert result["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/c.png"}}
    ]
