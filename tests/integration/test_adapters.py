"""The framework adapters with the real frameworks (the OpenAI Agents SDK, LangChain v1),
their real OpenAI clients talking to a chat model on 127.0.0.1, and the real service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware import wrap_model_call as wrap
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from openai import AsyncOpenAI

from contextd_client import AsyncContextd, Contextd
from contextd_client.adapters.langchain import ContextdMiddleware
from contextd_client.adapters.openai_agents import ContextdSession
from tests.conftest import RunningApp
from tests.fake_agent_llm import FakeAgentModel, serve_fake_agent_model
from tests.integration.test_client import serving

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


@pytest.fixture
def served_contextd(database_url: str) -> Iterator[str]:
    with serving(database_url) as url:
        yield url


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


def _langchain_agent(
    fake_model: FakeAgentModel, middleware: ContextdMiddleware, **options: Any
) -> Any:
    model = ChatOpenAI(model="gpt-4o", base_url=fake_model.url, api_key="test")
    return create_agent(
        model,
        tools=[tool(weather_report)],
        system_prompt="You book travel.",
        middleware=[middleware],
        **options,
    )


def _ask(question: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": question}]}


def _thread(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def test_a_langchain_agent_gets_contextds_prompt_and_records_its_tool_steps(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    middleware = ContextdMiddleware(contextd, model="gpt-4o", goal=GOAL)
    agent = _langchain_agent(fake_model, middleware)
    fake_model.requests.clear()

    result = await agent.ainvoke(_ask("Weather in Lisbon?"), _thread("langchain-trip"))

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


def _user_texts(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(m["content"]) for m in messages if m["role"] == "user"]


async def test_one_langchain_middleware_keeps_two_threads_apart(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    middleware = ContextdMiddleware(contextd, session_prefix="lc-", model="gpt-4o", goal=GOAL)
    agent = _langchain_agent(fake_model, middleware, checkpointer=InMemorySaver())
    lisbon, porto = _thread("lisbon"), _thread("porto")

    # Both threads' turns at once, through the one middleware.
    await asyncio.gather(
        agent.ainvoke(_ask("Weather in Lisbon?"), lisbon),
        agent.ainvoke(_ask("Weather in Porto?"), porto),
    )
    fake_model.requests.clear()
    await agent.ainvoke(_ask("And tomorrow, in Lisbon?"), lisbon)

    lisbon_stored = (await contextd.messages("lc-lisbon"))["messages"]
    porto_stored = (await contextd.messages("lc-porto"))["messages"]
    next_prompt = fake_model.requests[0]["messages"]
    state = await agent.aget_state(lisbon)
    assert _user_texts(lisbon_stored) == ["Weather in Lisbon?", "And tomorrow, in Lisbon?"]
    assert _user_texts(porto_stored) == ["Weather in Porto?"]
    # Thread lisbon's next prompt is contextd's session lc-lisbon: its history, not porto's.
    assert _user_texts(next_prompt) == ["Weather in Lisbon?", "And tomorrow, in Lisbon?"]
    assert "Porto" not in json.dumps(next_prompt)
    assert (await contextd.get_session("lc-lisbon"))["turn_count"] == 2
    assert (await contextd.get_session("lc-porto"))["open_turn_id"] is None
    # The turn state is the agent's: checkpointed per thread, cleared when the turn closed.
    assert state.values["contextd_turn_id"] is None
    assert "contextd_turn_id" not in (await agent.ainvoke(_ask("Hi"), porto))


async def test_the_langchain_middleware_takes_the_session_from_the_runtime_context(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    middleware = ContextdMiddleware(contextd, model="gpt-4o")
    agent = _langchain_agent(fake_model, middleware)

    await agent.ainvoke(_ask("Weather in Lisbon?"), context={"contextd_session_id": "ctx-1"})
    with pytest.raises(ValueError, match="thread_id"):
        await agent.ainvoke(_ask("Weather in Lisbon?"))

    assert (await contextd.get_session("ctx-1"))["turn_count"] == 1


def test_the_langchain_middleware_serves_invoke_with_an_async_client(
    served_contextd: str, fake_model: FakeAgentModel
) -> None:
    middleware = ContextdMiddleware(AsyncContextd(served_contextd), model="gpt-4o")
    agent = _langchain_agent(fake_model, middleware)

    result = agent.invoke(_ask("Weather in Lisbon?"), _thread("sync-run"))

    with Contextd(served_contextd) as check:
        stored = check.messages("sync-run")["messages"]
    assert result["messages"][-1].content == ANSWER
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]


async def test_the_langchain_middleware_serves_ainvoke_with_a_sync_client(
    served_contextd: str, fake_model: FakeAgentModel
) -> None:
    with Contextd(served_contextd) as client:
        agent = _langchain_agent(fake_model, ContextdMiddleware(client, model="gpt-4o"))
        result = await agent.ainvoke(_ask("Weather in Lisbon?"), _thread("async-run"))
        stored = client.messages("async-run")["messages"]

    assert result["messages"][-1].content == ANSWER
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]


async def test_a_retried_langchain_model_call_stores_its_turn_once(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    # A retry wrapped around the middleware runs it again with the same request.
    attempts = 0

    async def fail_once(
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await handler(request)
            raise ConnectionError("the model's answer was lost")
        return await handler(request)

    class RetryOnce(AgentMiddleware):
        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return await handler(request)
            except ConnectionError:
                return await handler(request)

    model = ChatOpenAI(model="gpt-4o", base_url=fake_model.url, api_key="test")
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        RetryOnce(),
        ContextdMiddleware(contextd, model="gpt-4o"),
        wrap(fail_once),
    ]
    agent: Any = create_agent(model, middleware=middleware)

    result = await agent.ainvoke(_ask("Hello?"), _thread("retried"))

    stored = (await contextd.messages("retried"))["messages"]
    assert result["messages"][-1].content == "Hello from the fake model."
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "Hello?"),
        ("assistant", "Hello from the fake model."),
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
