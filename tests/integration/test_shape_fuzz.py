"""Fuzzing the shapes that enter the service: tool definitions, tool calls, message parts and
audit dates, generated near their documented shapes (right keys, wrong types, odd nesting)
rather than as arbitrary JSON, which rarely reaches past the first check.

Whatever the input: no 5xx anywhere, and what was accepted keeps serving: a session stored
with generated tools still assembles its turns, an accepted step still gives prompts valid in
both formats."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.budget.anthropic import AnthropicPrompt, anthropic_problems
from tests.support import complete_turn, create_session, start_turn

EXAMPLES = 40

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        value = {"type": "object", "properties": {"inner": value}}
    return value


property_schemas = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["string", "integer", "array"]), json_values)},
        optional={
            "enum": st.one_of(st.lists(scalars, max_size=3), json_values),
            "description": json_values,
            "items": json_values,
        },
    ),
    st.integers(min_value=1, max_value=200).map(_deep),
)
parameters = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("object"),
            "properties": st.one_of(
                st.dictionaries(
                    st.sampled_from(["q", "when", "n"]), property_schemas, min_size=1, max_size=3
                ),
                json_values,
            ),
        },
        optional={"required": json_values},
    ),
    json_values,
    st.integers(min_value=1, max_value=200).map(_deep),
)
functions = st.fixed_dictionaries(
    {
        "name": st.one_of(st.sampled_from(["search", "get_weather"]), json_values),
        "parameters": parameters,
    },
    optional={"description": json_values},
)
tools = st.one_of(
    st.fixed_dictionaries({"type": st.just("function"), "function": functions}),
    st.fixed_dictionaries(
        {"type": st.one_of(st.just("function"), json_values)},
        optional={"function": st.one_of(functions, json_values)},
    ),
    json_values,
)
call_ids = st.one_of(
    st.text(alphabet="abcXYZ019_-:./ é", min_size=1, max_size=12), st.just(""), json_values
)
tool_calls = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"id": call_ids},
        optional={
            "type": st.one_of(st.just("function"), json_values),
            "function": st.one_of(
                st.fixed_dictionaries(
                    {"name": st.one_of(st.text(max_size=8), json_values)},
                    optional={"arguments": st.one_of(st.text(max_size=20), json_values)},
                ),
                json_values,
            ),
        },
    ),
)
parts = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["text", "image_url", "input_audio"]), json_values)},
        optional={
            "text": st.one_of(st.text(max_size=20), json_values),
            "image_url": st.one_of(
                st.fixed_dictionaries(
                    {
                        "url": st.one_of(
                            st.just("https://example.com/a.png"),
                            st.just("data:image/png;base64,iVBORw0KGgo="),
                            json_values,
                        )
                    },
                    optional={"detail": st.one_of(st.sampled_from(["low", "high"]), json_values)},
                ),
                json_values,
            ),
        },
    ),
)
contents = st.one_of(st.text(max_size=30), st.lists(parts, max_size=3), json_values)
dates = st.one_of(
    st.builds(
        lambda year, offset: f"{year:04d}-12-31T23:59:59{offset}",
        st.integers(min_value=1, max_value=9999),
        st.sampled_from(["Z", "+14:00", "-14:00", "+01:00", ""]),
    ),
    st.text(max_size=25),
)

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def no_server_error(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert response.json()["error"]["code"], response.text


@FUZZ
@given(tool_list=st.lists(tools, min_size=1, max_size=3))
async def test_sessions_accept_or_refuse_tools_and_keep_serving(
    client: httpx.AsyncClient, tool_list: list[Any]
) -> None:
    response = await client.post("/v1/sessions", json={"model": "gpt-4o", "tools": tool_list})
    no_server_error(response)
    if response.status_code != 201:
        return
    session = response.json()["id"]

    turn = await start_turn(client, session, "Find flights.")
    await complete_turn(client, session, turn["turn_id"], "Done.")


@FUZZ
@given(
    content=contents,
    calls=st.lists(tool_calls, max_size=2),
    tool_list=st.lists(tools, max_size=2),
)
async def test_counting_and_trimming_answer_every_shape_without_5xx(
    client: httpx.AsyncClient, content: Any, calls: list[Any], tool_list: list[Any]
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": content},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]
    for path in ("/v1/tokens/count", "/v1/context/trim", "/v1/context/truncate"):
        body = {"model": "gpt-4o", "messages": messages, "tools": tool_list, "keep": 1}
        no_server_error(await client.post(path, json=body))


@FUZZ
@given(calls=st.lists(tool_calls, min_size=1, max_size=2), result=contents)
async def test_steps_accept_or_refuse_calls_and_prompts_stay_valid(
    client: httpx.AsyncClient, calls: list[Any], result: Any
) -> None:
    session = await create_session(client, model="gpt-4o")
    turn = await start_turn(client, session["id"], "Look it up.")
    ids = [call.get("id") if isinstance(call, dict) else None for call in calls]
    body = {
        "assistant": {"content": None, "tool_calls": calls},
        "tool_results": [{"tool_call_id": i, "content": result} for i in ids],
        "format": "anthropic",
    }

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps", json=body
    )

    no_server_error(response)
    if response.status_code == 200:
        prompt = response.json()
        assert anthropic_problems(AnthropicPrompt(prompt["system"], prompt["messages"])) == []
        await complete_turn(client, session["id"], turn["turn_id"], "Done.")


@FUZZ
@given(since=dates, until=dates)
async def test_audit_bounds_are_answered_or_refused(
    client: httpx.AsyncClient, since: str, until: str
) -> None:
    no_server_error(await client.get("/v1/audit", params={"since": since, "until": until}))
