"""An OpenAI Agents SDK agent whose conversation lives in contextd: pass a ContextdSession to
Runner.run and each run's input, tool calls and answer become a contextd turn; the next run
starts from the history contextd kept (its latest summary, then the active messages). With the
session's call_model_input_filter in the RunConfig, every model call inside a run also gets the
session's system layers and goal, and is fitted to the model's budget by contextd.

    pip install "contextd-client[openai-agents]"
    python examples/openai_agents_session.py "Weather in Lisbon?" "And in Porto?"

Needs a running contextd (CONTEXTD_URL) and an OpenAI-compatible chat-completions endpoint
(OPENAI_BASE_URL / OPENAI_API_KEY).
"""

import asyncio
import os
import sys
import uuid

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from contextd_client import AsyncContextd
from contextd_client.adapters.openai_agents import ContextdSession

MODEL = os.environ.get("MODEL", "gpt-4o")


@function_tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"21C and sunny in {city}"


async def main(questions: list[str]) -> None:
    set_tracing_disabled(True)  # the SDK's own traces would go to OpenAI's platform
    async with (
        AsyncOpenAI() as openai,
        AsyncContextd(os.environ.get("CONTEXTD_URL", "http://127.0.0.1:8080")) as contextd,
    ):
        agent = Agent(
            name="travel",
            instructions="You help plan trips. Use the weather tool for the weather.",
            tools=[weather],
            model=OpenAIChatCompletionsModel(model=MODEL, openai_client=openai),
        )
        session = ContextdSession(
            f"agents-{uuid.uuid4().hex[:8]}",
            contextd,
            model=MODEL,
            goal="Plan a trip",
            system={"global": "Answer in one paragraph."},
        )
        budgeted = RunConfig(call_model_input_filter=session.call_model_input_filter)
        for question in questions:
            result = await Runner.run(agent, question, session=session, run_config=budgeted)
            print(f"> {question}\n{result.final_output}")  # noqa: T201
        stored = await contextd.messages(session.session_id)
        print(f"contextd stored {len(stored['messages'])} messages")  # noqa: T201


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or ["Weather in Lisbon?"]))
