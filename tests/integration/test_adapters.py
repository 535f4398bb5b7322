"""The framework adapters with the real frameworks (the OpenAI Agents SDK, LangChain v1),
their real OpenAI clients talking to a chat model on 127.0.0.1, and the real service."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import AsyncOpenAI

from contextd_client import AsyncContextd
from contextd_client.adapters.langchain import ContextdMiddleware
from contextd_client.adapters.openai_agents import ContextdSession
from tests.conftest import RunningApp
from tests.fake_agent_llm import FakeAgentModel, serve_fake_agent_model

GOAL = "Plan a weekend in Lisbon"
ANSWER = "Here is what I found: 21C and sunny in Lisbon"


def weather_report(city: str) -> str:
    """The weather in a city."""
    return f"21C and sunny in {city}"


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeAgentModel]:
    # The Agents SDK would otherwise send its own traces to OpenAI.
    set_tracing_disabled(True)
    with serve_fake_agent_model() as model:
        yield model


@pytest.fixture
async def contextd(apps: RunningApp) -> AsyncIterator[AsyncContextd]:
    app, _ = await apps.start()
    async with AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx:
        yield ctx


def _system_text(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


async def test_an_agents_sdk_agent_keeps_its_conversation_in_contextd(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    openai = AsyncOpenAI(base_url=fake_model.url, api_key="test")
    agent = Agent(
        name="travel",
        instructions="You book travel.",
        tools=[function_tool(weather_report)],
        model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=openai),
    )
    session = ContextdSession("agents-trip", contextd, model="gpt-4o", goal=GOAL)
    fake_model.requests.clear()

    async with openai:
        first = await Runner.run(agent, "Weather in Lisbon?", session=session)
        second = await Runner.run(agent, "And tomorrow?", session=session)

    stored = await contextd.messages("agents-trip")
    state = await contextd.get_session("agents-trip")
    assert first.final_output == ANSWER
    assert second.final_output == ANSWER
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant", "tool", "assistant"] * 2
    calls = stored["messages"][1]["tool_calls"]
    assert calls is not None
    assert calls[0]["function"]["name"] == "weather_report"
    assert (state["turn_count"], state["open_turn_id"]) == (2, None)
    # The second run's first model call starts from the history contextd kept.
    second_run_first_call = fake_model.requests[2]["messages"]
    contents = [m.get("content") for m in second_run_first_call]
    assert "Weather in Lisbon?" in contents
    assert ANSWER in contents


async def test_the_agents_sdk_session_reads_back_as_responses_items(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    session = ContextdSession("items", contextd, model="gpt-4o")
    await session.add_items([{"role": "user", "content": "Weather?"}])
    await session.add_items(
        [
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "21C"},
        ]
    )
    await session.add_items(
        [
            {
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "id": "msg_1",
                "content": [{"type": "output_text", "text": "21C.", "annotations": []}],
            }
        ]
    )

    items = await session.get_items()
    latest = await session.get_items(limit=1)
    await session.clear_session()
    cleared = await session.get_items()

    assert items == [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "21C"},
        {"role": "assistant", "content": "21C."},
    ]
    assert latest == items[-1:]
    assert cleared == []
    assert (await contextd.get_session("items"))["model"] == "gpt-4o"
    with pytest.raises(NotImplementedError):
        await session.pop_item()


async def test_a_langchain_agent_gets_contextds_prompt_and_records_its_tool_steps(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    model = ChatOpenAI(model="gpt-4o", base_url=fake_model.url, api_key="test")
    middleware = ContextdMiddleware(contextd, "langchain-trip", model="gpt-4o", goal=GOAL)
    agent = create_agent(
        model,
        tools=[tool(weather_report)],
        system_prompt="You book travel.",
        middleware=[middleware],
    )
    fake_model.requests.clear()

    result = await agent.ainvoke({"messages": [{"role": "user", "content": "Weather in Lisbon?"}]})

    stored = await contextd.messages("langchain-trip")
    state = await contextd.get_session("langchain-trip")
    assert result["messages"][-1].content == ANSWER
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert stored["messages"][2]["content"] == "21C and sunny in Lisbon"
    assert (state["turn_count"], state["open_turn_id"]) == (1, None)
    # Both model calls got contextd's prompt: the agent's system prompt, then the session's
    # goal, in one system message.
    for request in fake_model.requests:
        system = _system_text(request)
        assert system.startswith("You book travel.")
        assert GOAL in system
    assert [m["role"] for m in fake_model.requests[1]["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]


async def test_the_agents_sdk_session_hands_back_contextds_summary_not_what_it_folded(
    contextd: AsyncContextd,
) -> None:
    session = ContextdSession("long", contextd, model="gpt-4o")
    for number in range(12):
        await session.add_items([{"role": "user", "content": f"Fact {number}: room {number}."}])
        await session.add_items([{"role": "assistant", "content": f"Noted {number}."}])

    items = await session.get_items()
    summarised = await contextd.messages("long", state="summarised")

    assert summarised["messages"]
    assert items[0]["role"] == "system"  # type: ignore[typeddict-item]
    assert "Fact 0" in str(items[0]["content"])  # type: ignore[typeddict-item]
    assert len(items) == 1 + 24 - len(summarised["messages"])
