"""An agent's chat model on 127.0.0.1, speaking the OpenAI chat-completions protocol: asked
with tools after the user spoke, it calls the first tool; after a tool's result, it answers
with that result; without tools, it greets. It keeps every request, so that tests see the
prompt an agent framework really sent.

``python -m tests.fake_agent_llm --port 8090`` serves it until interrupted (for the examples).
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers import serve_in_thread

ARGUMENTS = {"city": "Lisbon"}


@dataclass
class FakeAgentModel:
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    _ids: Iterator[int] = field(default_factory=itertools.count)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The next assistant message for a chat-completions request."""
        last = body["messages"][-1]
        tools = body.get("tools") or []
        if last["role"] == "tool":
            content = last["content"]
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            return {"role": "assistant", "content": f"Here is what I found: {content}"}
        if last["role"] == "user" and tools:
            name = tools[0]["function"]["name"]
            call = {
                "id": f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(ARGUMENTS)},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": "Hello from the fake model."}

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        message = self.answer(body)
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        )


def _app(model: FakeAgentModel) -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", model.chat, methods=["POST"])])


@contextmanager
def serve_fake_agent_model() -> Iterator[FakeAgentModel]:
    """A FakeAgentModel on a free port of 127.0.0.1; ``url`` is its OpenAI base URL."""
    model = FakeAgentModel()
    with serve_in_thread(_app(model)) as url:
        model.url = f"{url}/v1"
        yield model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8090)
    arguments = parser.parse_args()
    uvicorn.run(_app(FakeAgentModel()), host="127.0.0.1", port=arguments.port, log_level="warning")


if __name__ == "__main__":
    main()
