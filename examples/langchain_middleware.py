"""A LangChain v1 agent whose model gets contextd's prompt, one contextd session per thread.

ContextdMiddleware starts a contextd turn on the user's message, posts each tool step,
completes the turn on the answer, and hands the model the prompt contextd assembled within the
budget. Which session: the run's thread (``config["configurable"]["thread_id"]``), so one agent
and one middleware serve every conversation; the open turn lives in the agent's checkpointed
state.

    pip install "contextd-client[langchain]" langchain-openai
    python examples/langchain_middleware.py "Weather in Lisbon?" "And in Porto?"

Needs a running contextd (CONTEXTD_URL) and an OpenAI-compatible chat-completions endpoint
(OPENAI_BASE_URL / OPENAI_API_KEY).
"""

import asyncio
import os
import sys
import uuid

from langchain.agents import create_agent
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from contextd_client import AsyncContextd
from contextd_client.adapters.langchain import ContextdMiddleware

MODEL = os.environ.get("MODEL", "gpt-4o")


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"21C and sunny in {city}"


async def main(questions: list[str]) -> None:
    async with AsyncContextd(os.environ.get("CONTEXTD_URL", "http://127.0.0.1:8080")) as ctx:
        agent = create_agent(
            ChatOpenAI(model=MODEL),
            tools=[weather],
            system_prompt="You help plan trips. Use the weather tool for the weather.",
            # Sessions are made on a thread's first turn with these fields.
            middleware=[ContextdMiddleware(ctx, model=MODEL, goal="Plan a trip")],
            checkpointer=InMemorySaver(),
        )
        thread_id = f"langchain-{uuid.uuid4().hex[:8]}"
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        for question in questions:
            # The checkpointer keeps the thread's messages; the model sees contextd's prompt.
            result = await agent.ainvoke(
                {"messages": [{"role": "user", "content": question}]}, config
            )
            print(f"> {question}\n{result['messages'][-1].content}")  # noqa: T201
        stored = await ctx.messages(thread_id)
        print(f"contextd stored {len(stored['messages'])} messages in session {thread_id}")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["Weather in Lisbon?"]))
