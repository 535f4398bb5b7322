"""A LangChain v1 agent whose model gets contextd's prompt: ContextdMiddleware starts a
contextd turn on the user's message, posts each tool step, completes the turn on the answer,
and hands the model the prompt contextd assembled within the budget.

    pip install "contextd-client[langchain]" langchain-openai
    python examples/langchain_middleware.py "Weather in Lisbon?"

Needs a running contextd (CONTEXTD_URL) and an OpenAI-compatible chat-completions endpoint
(OPENAI_BASE_URL / OPENAI_API_KEY).
"""

import asyncio
import os
import sys
import uuid

from langchain.agents import create_agent
from langchain_core.messages import AnyMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from contextd_client import AsyncContextd
from contextd_client.adapters.langchain import ContextdMiddleware

MODEL = os.environ.get("MODEL", "gpt-4o")


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"21C and sunny in {city}"


async def main(questions: list[str]) -> None:
    async with AsyncContextd(os.environ.get("CONTEXTD_URL", "http://127.0.0.1:8080")) as ctx:
        session_id = f"langchain-{uuid.uuid4().hex[:8]}"
        agent = create_agent(
            ChatOpenAI(model=MODEL),
            tools=[weather],
            system_prompt="You help plan trips. Use the weather tool for the weather.",
            middleware=[ContextdMiddleware(ctx, session_id, model=MODEL, goal="Plan a trip")],
        )
        messages: list[AnyMessage] = []
        for question in questions:
            # The agent keeps its own message list; its model sees contextd's prompt instead.
            result = await agent.ainvoke({"messages": [*messages, HumanMessage(question)]})
            messages = result["messages"]
            print(f"> {question}\n{messages[-1].content}")  # noqa: T201
        stored = await ctx.messages(session_id)
        print(f"contextd stored {len(stored['messages'])} messages")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["Weather in Lisbon?"]))
