"""A scripted tool-using agent, 300 turns at an 8k model, through the unmodified official SDKs
pointed at contextd's drop-in endpoints: does every call fit, is every forwarded request valid,
is every call audited?

The agent is the naive loop agents are written as: it keeps its whole history and sends it on
every call (it never trims), runs the tools the model asks for (two rounds of two parallel
calls per turn, each result a few hundred tokens) and answers the user. The model is
tests/fake_upstream.py on 127.0.0.1: it speaks the real wire protocol, streamed and not, and
refuses what the provider refuses (over 8192 tokens, orphan tool results, unanswered calls,
roles out of alternation, thinking blocks not byte-exact). contextd runs in process (the SDKs
call it through their HTTP client's ASGI transport) on a fresh SQLite file or Postgres.

    python -m bench.drop_in_agent [--turns 300] [--postgres] [--sdk openai|anthropic]

Figures per SDK and mode: calls, context-length errors, invalid requests (any 4xx the model or
contextd answered), calls audited (an audit id in the response headers), summaries and prunes,
and contextd's own time per call (``x-contextd-overhead-duration-ms``).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anthropic
import httpx2
import openai

from bench.common import DEFAULT_SERVER, fresh_database, percentile
from tests.fake_upstream import PROVIDER_KEY, FakeUpstream, serve_fake_upstream
from tests.support import words

MODELS_FILE = """
[models."claude-8k"]
context_limit = 8192
max_output_tokens = 4096
encoding = "o200k_base"
safety_factor = 1.25
family = "anthropic"
"""
SYSTEM = "You are a research agent. Use the search tool, then answer in one paragraph."
OPENAI_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]
ANTHROPIC_TOOLS: list[Any] = [
    {
        "name": "search",
        "description": "Search the web.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
]


@dataclass
class Tally:
    calls: int = 0
    context_errors: int = 0
    invalid: int = 0
    audited: set[str] = field(default_factory=set)
    summaries: int = 0
    prunes: int = 0
    overhead_ms: list[float] = field(default_factory=list)

    def hook(self, response: httpx2.Response) -> None:
        """Read contextd's headers of every answer (an httpx event hook)."""
        headers = response.headers
        self.calls += 1
        if "x-contextd-audit-id" in headers:
            self.audited.add(headers["x-contextd-audit-id"])
        self.summaries += headers.get("x-contextd-summarised") == "true"
        self.prunes += headers.get("x-contextd-pruned") == "true"
        if "x-contextd-overhead-duration-ms" in headers:
            self.overhead_ms.append(float(headers["x-contextd-overhead-duration-ms"]))
        if response.status_code >= 400:
            self.invalid += 1


def _tool_result(turn: int, call_id: str) -> str:
    return f"result for {call_id}: " + words(250, seed=turn)


async def openai_agent(app: Any, tally: Tally, turns: int, *, stream: bool) -> None:
    async def hook(response: httpx2.Response) -> None:
        tally.hook(response)

    client = openai.AsyncOpenAI(
        api_key=PROVIDER_KEY,
        base_url="http://contextd.bench/v1",
        default_headers={"X-Contextd-Session": f"openai-{'stream' if stream else 'json'}"},
        http_client=httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), event_hooks={"response": [hook]}
        ),
        max_retries=0,
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Question {turn}: " + words(40, seed=turn)})
        while True:
            try:
                message = await _openai_call(client, messages, stream)
            except openai.BadRequestError as error:
                tally.context_errors += error.code == "context_length_exceeded"
                messages.pop()
                break
            messages.append(message)
            if not message.get("tool_calls"):
                break
            for call in message["tool_calls"]:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": _tool_result(turn, call["id"]),
                    }
                )


async def _openai_call(
    client: openai.AsyncOpenAI, messages: list[dict[str, Any]], stream: bool
) -> dict[str, Any]:
    if not stream:
        completion = await client.chat.completions.create(
            model="gpt-4", messages=cast(Any, messages), tools=OPENAI_TOOLS, max_tokens=1024
        )
        return completion.choices[0].message.model_dump(exclude_none=True)
    events = await client.chat.completions.create(
        model="gpt-4",
        messages=cast(Any, messages),
        tools=OPENAI_TOOLS,
        max_tokens=1024,
        stream=True,
        stream_options={"include_usage": True},
    )
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    async for chunk in events:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for piece in choice.delta.tool_calls or ():
                empty = {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                call = calls.setdefault(piece.index, empty)
                call["id"] = piece.id or call["id"]
                if piece.function is not None:
                    call["function"]["name"] += piece.function.name or ""
                    call["function"]["arguments"] += piece.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return message


async def anthropic_agent(app: Any, tally: Tally, turns: int, *, stream: bool) -> None:
    async def hook(response: httpx2.Response) -> None:
        tally.hook(response)

    client = anthropic.AsyncAnthropic(
        api_key=PROVIDER_KEY,
        base_url="http://contextd.bench",
        default_headers={"X-Contextd-Session": f"anthropic-{'stream' if stream else 'json'}"},
        http_client=httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), event_hooks={"response": [hook]}
        ),
        max_retries=0,
    )
    messages: list[dict[str, Any]] = []
    request: dict[str, Any] = {
        "model": "claude-8k",
        "system": SYSTEM,
        "tools": ANTHROPIC_TOOLS,
        "max_tokens": 1500,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Question {turn}: " + words(40, seed=turn)})
        while True:
            try:
                if stream:
                    async with client.messages.stream(messages=cast(Any, messages), **request) as s:
                        reply = await s.get_final_message()
                else:
                    reply = await client.messages.create(messages=cast(Any, messages), **request)
            except anthropic.BadRequestError as error:
                tally.context_errors += "prompt is too long" in error.message
                messages.pop()
                break
            content = [block.model_dump(exclude_none=True) for block in reply.content]
            messages.append({"role": "assistant", "content": content})
            uses = [block for block in content if block["type"] == "tool_use"]
            if not uses:
                break
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": use["id"],
                    "content": _tool_result(turn, use["id"]),
                }
                for use in uses
            ]
            messages.append({"role": "user", "content": results})


@asynccontextmanager
async def contextd(database_url: str, upstream: FakeUpstream, folder: Path) -> AsyncIterator[Any]:
    from app.main import create_app
    from app.settings import Settings

    models_file = folder / "models.toml"
    models_file.write_text(MODELS_FILE, encoding="utf-8")
    settings = Settings(
        _env_file=None,
        database_url=database_url,
        auto_migrate=True,
        models_file=models_file,
        proxy_openai_base_url=f"{upstream.url}/v1",
        proxy_anthropic_base_url=upstream.url,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def run(turns: int, postgres: bool, only: str | None = None) -> list[str]:
    lines = [
        f"{turns} turns per agent, 8k window, 2 rounds of 2 tool calls per turn\n",
        "| SDK | mode | calls | context-length errors | invalid requests | audited calls "
        "| summaries | prunes | contextd ms p50 | p95 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    agents = [
        ("openai", False, openai_agent),
        ("openai", True, openai_agent),
        ("anthropic", False, anthropic_agent),
        ("anthropic", True, anthropic_agent),
    ]
    for sdk, stream, agent in agents:
        if only is not None and only != sdk:
            continue
        with (
            serve_fake_upstream(tool_rounds=2, parallel_calls=2, answer_chars=300) as upstream,
            tempfile.TemporaryDirectory() as folder,
        ):
            async with (
                _database(postgres, Path(folder)) as url,
                contextd(url, upstream, Path(folder)) as app,
            ):
                tally = Tally()
                await agent(app, tally, turns, stream=stream)
            refused = len(upstream.refusals)
            overhead = tally.overhead_ms or [0.0]
            lines.append(
                f"| {sdk} | {'stream' if stream else 'json'} | {tally.calls} "
                f"| {tally.context_errors} | {tally.invalid + refused} | {len(tally.audited)} "
                f"| {tally.summaries} | {tally.prunes} | {percentile(overhead, 0.5):.1f} "
                f"| {percentile(overhead, 0.95):.1f} |"
            )
            print(lines[-1], flush=True)  # noqa: T201
    return lines


@asynccontextmanager
async def _database(postgres: bool, folder: Path) -> AsyncIterator[str]:
    if postgres:
        async with fresh_database(DEFAULT_SERVER, prefix="contextd_drop_in") as url:
            yield url
        return
    yield f"sqlite+aiosqlite:///{folder}/bench.db"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--sdk", choices=["openai", "anthropic"], help="run one SDK's agents")
    arguments = parser.parse_args()
    lines = asyncio.run(run(arguments.turns, arguments.postgres, arguments.sdk))
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
