"""Agents written with frameworks (the OpenAI Agents SDK, LangChain's ChatOpenAI and
ChatAnthropic) work through the drop-in endpoints unchanged: only their client's base URL and
a session header point them at contextd. The model has an 8k window and the agents make many
tool calls with results of a realistic size, so their histories outgrow the window; the fake
provider refuses any prompt over it (tests/fake_upstream.py), so no refusal means every
forwarded call fitted, and the audit shows every call was assembled, within its budget."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import httpx2
import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from fastapi import FastAPI
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from app.main import create_app
from tests.conftest import RunningApp, make_settings
from tests.fake_upstream import PROVIDER_KEY, FakeUpstream, prompt_tokens, serve_fake_upstream
from tests.servers import serve_in_thread
from tests.support import words

MODEL = "gpt-4"  # 8,192 tokens, in contextd's registry and at the fake provider alike
WINDOW = 8192
#: About 400 tokens a result, as a search or a file read returns: 25 of them are over 8k.
RESULT_TOKENS = 400


def _result(query: str) -> str:
    return f"Results for {query}: " + words(RESULT_TOKENS, seed=len(query))


def _tokens(results: list[str]) -> int:
    return prompt_tokens({"messages": [{"role": "tool", "content": r} for r in results]})


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with serve_fake_upstream(context_limit=WINDOW) as fake:
        yield fake


@pytest.fixture
async def proxy(apps: RunningApp, upstream: FakeUpstream) -> FastAPI:
    app, _ = await apps.start(
        proxy_openai_base_url=f"{upstream.url}/v1", proxy_read_timeout_seconds=5.0
    )
    return app


@pytest.fixture
async def contextd(proxy: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=proxy), base_url="http://contextd.test"
    ) as client:
        yield client


def _http_client(app: FastAPI) -> httpx2.AsyncClient:
    """The SDKs' own HTTP client (httpx2 in these releases), calling the app in process."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app))


async def _assert_every_call_fitted_and_was_audited(
    contextd: httpx.AsyncClient, upstream: FakeUpstream, session: str, calls: int
) -> None:
    """Every model call reached the provider, none was refused, each has its audit row within
    its budget, and contextd had to cut the history to keep it there."""
    assert upstream.refusals == []
    assert len(upstream.requests) == calls
    assert max(prompt_tokens(body) for body in upstream.requests) <= WINDOW
    response = await contextd.get("/v1/audit", params={"session_id": session, "limit": 500})
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["items"]
    assert len(rows) == calls
    assert all(row["model_context_limit"] == WINDOW for row in rows)
    assert all(row["estimated_input_tokens"] <= row["input_budget"] for row in rows)
    assert not any(row["overflow_rejected"] for row in rows)
    assert any(row["prune_triggered"] or row["summary_triggered"] for row in rows)


async def test_an_openai_agents_sdk_agent_makes_many_tool_calls_within_an_8k_window(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    upstream.tool_rounds = 25
    queries: list[str] = []

    @function_tool
    def search(query: str, pad: str) -> str:
        """Search the project's documents.

        Args:
            query: what to look for.
            pad: a note for the search engine.
        """
        queries.append(query)
        return _result(query)

    client = openai.AsyncOpenAI(
        base_url="http://contextd.test/v1",
        api_key=PROVIDER_KEY,
        default_headers={"X-Contextd-Session": "agents-sdk"},
        http_client=_http_client(proxy),
        max_retries=0,
    )
    agent = Agent(
        name="researcher",
        instructions="You are a careful research assistant. Search before you answer.",
        model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
        tools=[search],
    )

    result = await Runner.run(
        agent,
        "Survey everything the documents say about context windows.",
        max_turns=40,
        run_config=RunConfig(tracing_disabled=True),
    )

    assert len(queries) == 25
    assert result.final_output == upstream._text()
    # The agent kept all 25 results, over the window together, yet every call fitted.
    history: list[dict[str, Any]] = cast(Any, result.to_input_list())
    outputs = [i["output"] for i in history if i.get("type") == "function_call_output"]
    assert outputs == [_result(q) for q in queries]
    assert _tokens(outputs) > WINDOW
    await _assert_every_call_fitted_and_was_audited(contextd, upstream, "agents-sdk", 26)


async def _langchain_agent_run(model: BaseChatModel, upstream: FakeUpstream) -> None:
    """A LangChain agent (``create_agent``) with a search tool, asked three questions in a row;
    the scripted model calls the tool 8 times for each. The agent keeps all 24 results in its
    own history, over the window together."""
    upstream.tool_rounds = 8
    queries: list[str] = []

    @tool
    def search(query: str, pad: str) -> str:
        """Search the project's documents for query (pad is a note for the engine)."""
        queries.append(query)
        return _result(query)

    agent = create_agent(
        model, tools=[search], system_prompt="You are a careful research assistant."
    )
    messages: list[BaseMessage] = []
    for question in (
        "What do the documents say about budgets?",
        "And about summaries?",
        "And about pruning?",
    ):
        messages.append(HumanMessage(question))
        state = await agent.ainvoke(cast(Any, {"messages": messages}), {"recursion_limit": 50})
        messages = state["messages"]
        assert isinstance(messages[-1], AIMessage)
        assert messages[-1].text == upstream._text()

    assert len(queries) == 24
    results = [str(m.text) for m in messages if isinstance(m, ToolMessage)]
    assert results == [_result(q) for q in queries]
    assert _tokens(results) > WINDOW


async def test_a_langchain_openai_agent_loops_over_several_turns_within_an_8k_window(
    proxy: FastAPI, upstream: FakeUpstream, contextd: httpx.AsyncClient
) -> None:
    model = ChatOpenAI(
        model=MODEL,
        base_url="http://contextd.test/v1",
        api_key=PROVIDER_KEY,
        default_headers={"X-Contextd-Session": "langchain"},
        http_async_client=_http_client(proxy),
        max_retries=0,
    )

    await _langchain_agent_run(model, upstream)

    await _assert_every_call_fitted_and_was_audited(contextd, upstream, "langchain", 27)


#: A Claude model with an 8k window, as an operator declares one in the models file.
CLAUDE_MODELS_FILE = """
[models."claude-test"]
context_limit = 8192
max_output_tokens = 4096
encoding = "o200k_base"
safety_factor = 1.25
family = "anthropic"
"""


@contextmanager
def _serving(database_url: str, **settings: Any) -> Iterator[str]:
    """The service on a real socket of 127.0.0.1, in a thread; yields its URL. ChatAnthropic
    builds its HTTP client itself, so it can only reach the app over a socket."""
    app = create_app(make_settings(database_url, **settings))
    with serve_in_thread(app, lifespan="auto") as url:
        yield url


async def test_a_langchain_anthropic_agent_loops_over_several_turns_within_an_8k_window(
    database_url: str, upstream: FakeUpstream, tmp_path: Path
) -> None:
    models_file = tmp_path / "models.toml"
    models_file.write_text(CLAUDE_MODELS_FILE, encoding="utf-8")

    with _serving(
        database_url,
        proxy_anthropic_base_url=upstream.url,
        proxy_read_timeout_seconds=5.0,
        models_file=models_file,
    ) as url:
        model = ChatAnthropic(
            model="claude-test",
            base_url=url,
            api_key=PROVIDER_KEY,
            default_headers={"X-Contextd-Session": "langchain-anthropic"},
            max_tokens=1024,
            max_retries=0,
        )

        await _langchain_agent_run(model, upstream)

        async with httpx.AsyncClient(base_url=url) as contextd:
            await _assert_every_call_fitted_and_was_audited(
                contextd, upstream, "langchain-anthropic", 27
            )
