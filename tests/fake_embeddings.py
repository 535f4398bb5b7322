"""An embeddings server for tests: it speaks the OpenAI ``/embeddings`` protocol on 127.0.0.1
and answers with vectors that encode topics, so that two texts sharing no word but a topic
are near, and it fails the ways a real one can (5xx, hanging) when told to."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fake_llm import served_in_thread

#: The words of each topic; a text's vector counts its words per topic (one more dimension
#: for the rest, so that no vector is zero).
_TOPIC_WORDS = {
    "pets": "dog dogs puppy labrador cat kitten pet pets animal animals vet",
    "money": "budget euros cost costs price money spend afford cheap",
    "food": "dinner restaurant eat food vegetarian lunch cuisine meal",
    "health": "allergy allergic peanuts doctor medicine asthma",
}
TOPICS = {topic: frozenset(words.split()) for topic, words in _TOPIC_WORDS.items()}

Mode = Literal["good", "fail_5xx", "hang"]


def topic_vector(text: str) -> list[float]:
    words = re.findall(r"[a-z]+", text.lower())
    vector = [float(sum(word in topic for word in words)) for topic in TOPICS.values()]
    return [*vector, 0.2]


@dataclass
class FakeEmbeddings:
    mode: Mode = "good"
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    closing: bool = False

    async def _answer(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        if self.mode == "hang":
            while not self.closing and self.mode == "hang":  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        if self.mode == "fail_5xx":
            return Response("upstream error: model overloaded", status_code=503)
        data = [
            {"object": "embedding", "index": index, "embedding": topic_vector(text)}
            for index, text in enumerate(body["input"])
        ]
        return JSONResponse({"object": "list", "model": body["model"], "data": data})

    def texts(self) -> list[str]:
        """Every text asked for so far."""
        return [text for body in self.requests for text in body["input"]]


@contextmanager
def serve_fake_embeddings() -> Iterator[FakeEmbeddings]:
    """A FakeEmbeddings served by uvicorn in a thread on a free port; ``url`` is its base."""
    fake = FakeEmbeddings()
    app = Starlette(routes=[Route("/v1/embeddings", fake._answer, methods=["POST"])])
    with served_in_thread(app) as url:
        fake.url = url
        try:
            yield fake
        finally:
            fake.closing = True
