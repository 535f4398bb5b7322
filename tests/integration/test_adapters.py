"""The framework adapters with the real frameworks (the OpenAI Agents SDK, LangChain v1),
their real OpenAI clients talking to a chat model on 127.0.0.1, and the real service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware import wrap_model_call as wrap
from langchain.agents.structured_output import ToolStrategy
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from openai import AsyncOpenAI
from pydantic import BaseModel

from contextd_client import AsyncContextd, Contextd
from contextd_client.adapters.langchain import ContextdMiddleware
from contextd_client.adapters.openai_agents import ContextdSession
from tests.conftest import RunningApp
from tests.fake_agent_llm import FakeAgentModel, serve_fake_agent_model
from tests.integration.test_client import serving
from tests.support import independent_prompt_tokens, words

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


ANSWER_ITEM = {
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "id": "msg_1",
    "content": [{"type": "output_text", "text": "21C.", "annotations": []}],
}
CALL_ITEM = {
    "type": "function_call",
    "id": "fc_1",
    "status": "completed",
    "call_id": "c1",
    "name": "weather",
    "arguments": "{}",
}
OUTPUT_ITEM = {"type": "function_call_output", "call_id": "c1", "output": "21C"}


async def _one_turn(session: ContextdSession) -> None:
    await session.add_items([{"role": "user", "content": "Weather?"}])
    await session.add_items([CALL_ITEM, OUTPUT_ITEM])  # type: ignore[list-item]
    await session.add_items([ANSWER_ITEM])  # type: ignore[list-item]


async def test_the_agents_sdk_session_gives_back_its_items_with_their_ids_and_status(
    contextd: AsyncContextd,
) -> None:
    session = ContextdSession("items", contextd, model="gpt-4o")
    await _one_turn(session)

    items = await session.get_items()
    latest = await session.get_items(limit=1)
    # Another process reading the same session rebuilds the items from contextd's messages.
    elsewhere = await ContextdSession("items", contextd).get_items()
    await session.clear_session()
    cleared = await session.get_items()

    assert items == [{"role": "user", "content": "Weather?"}, CALL_ITEM, OUTPUT_ITEM, ANSWER_ITEM]
    assert latest == [ANSWER_ITEM]
    assert elsewhere == [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        OUTPUT_ITEM,
        {"role": "assistant", "content": "21C."},
    ]
    assert cleared == []
    assert (await contextd.get_session("items"))["model"] == "gpt-4o"


async def test_the_agents_sdk_session_works_with_a_sync_client(served_contextd: str) -> None:
    with Contextd(served_contextd) as client:
        session = ContextdSession("sync-items", client, model="gpt-4o")
        await _one_turn(session)
        items = await session.get_items()
        turn_count = client.get_session("sync-items")["turn_count"]

    assert items == [{"role": "user", "content": "Weather?"}, CALL_ITEM, OUTPUT_ITEM, ANSWER_ITEM]
    assert turn_count == 1


async def test_the_agents_sdk_session_pops_its_newest_items(contextd: AsyncContextd) -> None:
    session = ContextdSession("popped", contextd, model="gpt-4o")
    await _one_turn(session)
    await session.add_items([{"role": "user", "content": "And tomorrow?"}])
    await session.add_items([CALL_ITEM])  # type: ignore[list-item]  # its output not yet in

    unanswered_call = await session.pop_item()
    question = await session.pop_item()
    answer = await session.pop_item()
    remaining = await session.get_items()
    elsewhere = await ContextdSession("popped", contextd).get_items()
    stored = await contextd.messages("popped")

    assert (unanswered_call, answer) == (CALL_ITEM, ANSWER_ITEM)
    assert question == {"role": "user", "content": "And tomorrow?"}
    assert remaining == [{"role": "user", "content": "Weather?"}, CALL_ITEM, OUTPUT_ITEM]
    assert len(elsewhere) == 3
    # contextd keeps every message; the popped ones are only out of the session's history.
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == [
        "Weather?",
        "And tomorrow?",
    ]
    assert [await session.pop_item() for _ in range(4)][-1] is None


async def test_an_agents_sdk_run_after_popping_a_question_does_not_see_it(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    openai = AsyncOpenAI(base_url=fake_model.url, api_key="test")
    agent = Agent(
        name="travel",
        instructions="You book travel.",
        model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=openai),
    )
    session = ContextdSession("undo", contextd, model="gpt-4o")

    async with openai:
        await Runner.run(agent, "Book the Ritz.", session=session)
        await session.pop_item()  # the answer
        await session.pop_item()  # the question
        fake_model.requests.clear()
        await Runner.run(agent, "Find a cheap hostel.", session=session)

    assert _user_texts(fake_model.requests[0]["messages"]) == ["Find a cheap hostel."]


def survey(city: str) -> str:
    """A long survey of a city's hotels."""
    return f"Hotels in {city}: " + words(330)


def _survey_thirty_times(body: dict[str, Any]) -> dict[str, Any]:
    """A model that asks for the survey 30 times in one run, then answers."""
    done = sum(1 for message in body["messages"] if message["role"] == "tool")
    if done < 30:
        arguments = json.dumps({"city": f"City {done}"})
        call = {"id": f"call_{done}", "type": "function",
                "function": {"name": "survey", "arguments": arguments}}  # fmt: skip
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": "Done: 30 surveys read."}


@pytest.mark.parametrize("filtered", [True, False], ids=["with-filter", "without-filter"])
async def test_an_agents_sdk_run_of_30_tool_calls_at_8k_stays_within_budget_on_every_call(
    contextd: AsyncContextd, fake_model: FakeAgentModel, filtered: bool
) -> None:
    openai = AsyncOpenAI(base_url=fake_model.url, api_key="test")
    agent = Agent(
        name="researcher",
        instructions="You compare hotels.",
        tools=[function_tool(survey)],
        model=OpenAIChatCompletionsModel(model="gpt-4", openai_client=openai),
    )
    session = ContextdSession(
        f"thirty-{filtered}", contextd, model="gpt-4", goal=GOAL, system={"global": "Be brief."}
    )
    fake_model.requests.clear()
    fake_model.answer = _survey_thirty_times  # type: ignore[method-assign]
    run_config = RunConfig(
        call_model_input_filter=session.call_model_input_filter if filtered else None
    )

    try:
        async with openai:
            result = await Runner.run(
                agent, "Compare 30 cities' hotels.", session=session, max_turns=40,
                run_config=run_config,
            )  # fmt: skip
    finally:
        del fake_model.answer

    input_budget = (await contextd.get_session(f"thirty-{filtered}"))["budget"]["input_budget"]
    # Each request the model received, counted as contextd counts a prompt: its messages and
    # its tool definitions, with the model's tokenizer and OpenAI's message overheads.
    counts = [
        (await contextd.count_tokens("gpt-4", r["messages"], tools=r["tools"]))["input_tokens"]
        for r in fake_model.requests
    ]
    assert len(fake_model.requests) == 31
    assert result.final_output == "Done: 30 surveys read."
    if filtered:
        assert max(counts) <= input_budget
        # And by OpenAI's published rules with tiktoken alone, none of contextd's code.
        assert all(
            independent_prompt_tokens(r["messages"], "gpt-4") <= input_budget
            for r in fake_model.requests
        )
        for request in fake_model.requests:
            system = _system_text(request)
            assert system.startswith("You compare hotels.")
            assert "Be brief." in system
            assert GOAL in system
        # The latest survey always reaches the model whole.
        last = fake_model.requests[-1]["messages"][-1]
        assert last["role"] == "tool"
        assert str(last["content"]).startswith("Hotels in City 29")
    else:
        # The same run, unbudgeted, overflows the 8k window well before its end.
        assert max(counts) > 8192


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


class Destination(BaseModel):
    city: str


async def test_a_langchain_structured_output_completes_the_turn(
    contextd: AsyncContextd, fake_model: FakeAgentModel
) -> None:
    model = ChatOpenAI(model="gpt-4o", base_url=fake_model.url, api_key="test")
    agent: Any = create_agent(
        model,
        middleware=[ContextdMiddleware(contextd, model="gpt-4o")],
        response_format=ToolStrategy(Destination),
    )

    result = await agent.ainvoke(_ask("Where to?"), _thread("structured"))

    stored = (await contextd.messages("structured"))["messages"]
    assert result["structured_response"] == Destination(city="Lisbon")
    assert (await contextd.get_session("structured"))["open_turn_id"] is None
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "Where to?"),
        ("assistant", '{"city": "Lisbon"}'),
    ]


def _assert_one_tool_turn(url: str, session_id: str, result: dict[str, Any]) -> None:
    with Contextd(url) as check:
        stored = check.messages(session_id)["messages"]
    assert result["messages"][-1].content == ANSWER
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]


def test_the_langchain_middleware_serves_invoke_with_an_async_client(
    served_contextd: str, fake_model: FakeAgentModel
) -> None:
    middleware = ContextdMiddleware(AsyncContextd(served_contextd), model="gpt-4o")
    agent = _langchain_agent(fake_model, middleware)

    result = agent.invoke(_ask("Weather in Lisbon?"), _thread("sync-run"))

    _assert_one_tool_turn(served_contextd, "sync-run", result)


async def test_the_langchain_middleware_serves_ainvoke_with_a_sync_client(
    served_contextd: str, fake_model: FakeAgentModel
) -> None:
    with Contextd(served_contextd) as client:
        agent = _langchain_agent(fake_model, ContextdMiddleware(client, model="gpt-4o"))
        result = await agent.ainvoke(_ask("Weather in Lisbon?"), _thread("async-run"))

    _assert_one_tool_turn(served_contextd, "async-run", result)


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
