"""A chat-completions server for tests and benchmarks: it speaks the OpenAI protocol on
127.0.0.1 and answers the way it is told to (well, invalid JSON, error text, with facts dropped,
never, or with a 5xx), so that contextd's LLM summariser meets every failure a real one can."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.servers import serve_in_thread

Mode = Literal[
    "good",
    "invalid_json",
    "repair_once",
    "error_text",
    "drop_facts",
    "hang",
    "fail_5xx",
    "long_once",
]


@dataclass
class FakeChat:
    mode: Mode = "good"
    #: Answers wait until this is set (it is, unless a test holds the model "thinking").
    gate: threading.Event = field(default_factory=threading.Event)
    #: Seconds every answer takes (a benchmark's slow model).
    delay: float = 0.0
    #: With mode "drop_facts": the share of the previous summary's items left out.
    drop_share: float = 1.0
    #: A scripted model that also reorders every section and keeps each new user message
    #: whole (as the user's), dropping ``drop_share`` of those too (with mode "drop_facts").
    reorder: bool = False
    #: Items every answer adds to its key facts whatever it was given: a model that repeats
    #: something (a value the user has since corrected, say) as the user's.
    stale_facts: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    closing: bool = False

    def __post_init__(self) -> None:
        self.gate.set()

    def summary(self, prompt: dict[str, Any], *, seed: int) -> dict[str, Any]:
        """A good summary: the previous one's items, then one fact per new message (the
        first sentence; a user's marked as theirs). What it drops and how it reorders are
        drawn from ``seed``."""
        previous = prompt.get("previous_summary") or {}
        sections: dict[str, list[dict[str, Any]]] = {
            name: list(previous.get(name, []))
            for name in ("key_facts", "decisions", "open_questions", "action_items")
        }
        rng = random.Random(seed)
        if self.mode == "drop_facts":
            for name, items in sections.items():
                sections[name] = [i for i in items if rng.random() >= self.drop_share]
        for message in prompt["messages"]:
            if self.reorder:
                if message["role"] == "user" and rng.random() >= self.drop_share:
                    sections["key_facts"].append(
                        {
                            "text": message["text"][:300],
                            "source_message_ids": [message["id"]],
                            "from_user": True,
                        }
                    )
                continue
            first = message["text"].split(". ")[0][:100].strip()
            if first:
                sections["key_facts"].append(
                    {
                        "text": first,
                        "source_message_ids": [message["id"]],
                        "from_user": message["role"] == "user",
                    }
                )
        sections["key_facts"] += self.stale_facts
        if self.reorder:
            for items in sections.values():
                rng.shuffle(items)
        return {"summary_text": f"{len(prompt['messages'])} messages folded in.", **sections}

    async def _answer(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        # The gate is a thread's event (the test's loop sets it): poll it from this loop.
        while not self.gate.is_set():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.mode == "hang":
            while not self.closing:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        if self.mode == "fail_5xx":
            return Response("upstream error: model overloaded", status_code=503)
        repairing = len(body["messages"]) > 2
        if self.mode == "invalid_json" or (self.mode == "repair_once" and not repairing):
            content = '{"summary_text": "Trip to Lisbon", "key_facts": [oops'
        elif self.mode == "error_text":
            content = "I'm sorry, but I can't help with that request."
        else:
            summary = self.summary(
                json.loads(body["messages"][1]["content"]), seed=request_seed(body["messages"])
            )
            if self.mode == "long_once" and not repairing:
                summary["key_facts"] += [
                    {"text": f"Detail {i}: " + "the weather was mild and pleasant " * 4}
                    for i in range(80)
                ]
            content = json.dumps(summary)
        return JSONResponse(
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
            }
        )


def request_seed(messages: list[dict[str, Any]]) -> int:
    """A seed drawn from a request's messages alone, so that the same request gets the same
    answer whichever requests came before it (in this run or in another, in any order)."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


@contextmanager
def served_in_thread(app: Starlette) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on a free port; yields its ``/v1`` base URL."""
    with serve_in_thread(app, ws="none", http="h11", timeout_graceful_shutdown=1) as url:
        yield f"{url}/v1"


@contextmanager
def serve_fake_chat() -> Iterator[FakeChat]:
    """A FakeChat served by uvicorn in a thread on a free port; ``url`` is its base URL."""
    fake = FakeChat()
    app = Starlette(routes=[Route("/v1/chat/completions", fake._answer, methods=["POST"])])
    with served_in_thread(app) as url:
        fake.url = url
        try:
            yield fake
        finally:
            fake.gate.set()
            fake.closing = True
