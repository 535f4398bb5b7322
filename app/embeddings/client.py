"""An OpenAI-compatible ``/embeddings`` API (OpenAI, vLLM, Ollama, TEI, LiteLLM): texts in,
vectors out, or an :class:`EmbeddingsError` that says why not."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import orjson

from app.offload import off_the_loop
from app.upstream import api_client

#: Characters of a message sent to be embedded: models read a few hundred tokens at most
#: (all-MiniLM-L6-v2 256, OpenAI's 8,191), and a tool result can be megabytes.
MAX_TEXT_CHARS = 8_000


#: An answer longer than this is parsed off the event loop (some tens of milliseconds).
OFF_THE_LOOP_BYTES = 256_000


class EmbeddingsError(Exception):
    """The API gave no vectors. ``reason`` is a bounded metric label: timeout, transport,
    refused (a 4xx about the input: retrying the same text will not help), status (any other
    HTTP error), invalid (an answer that is not vectors for the texts sent)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


class EmbeddingsClient:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dimensions: int | None = None,
        timeout_seconds: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self._client = api_client(
            base_url=base_url, api_key=api_key, timeout_seconds=timeout_seconds, transport=transport
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        body: dict[str, Any] = {
            "model": self.model,
            "input": [text[:MAX_TEXT_CHARS] for text in texts],
            "encoding_format": "float",
        }
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        try:
            response = await self._client.post("embeddings", json=body)
        except httpx.TimeoutException as error:
            raise EmbeddingsError("timeout", str(error) or "no answer in time") from error
        except httpx.TransportError as error:
            raise EmbeddingsError("transport", str(error) or type(error).__name__) from error
        if response.status_code >= 400:
            refused = 400 <= response.status_code < 500 and response.status_code not in (
                401,
                403,
                404,
                408,
                429,
            )
            raise EmbeddingsError(
                "refused" if refused else "status",
                f"HTTP {response.status_code}: {response.text[:200]}",
            )
        if len(response.content) > OFF_THE_LOOP_BYTES:
            # A batch of long messages answers megabytes of floats: parsed in a worker thread.
            return await off_the_loop(lambda: _vectors(response, len(texts)))
        return _vectors(response, len(texts))


def _vectors(response: httpx.Response, expected: int) -> list[list[float]]:
    try:
        data = orjson.loads(response.content)["data"]
        ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
        vectors = [[float(x) for x in item["embedding"]] for item in ordered]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise EmbeddingsError("invalid", f"not an embeddings answer: {error}") from error
    if len(vectors) != expected or any(not vector for vector in vectors):
        raise EmbeddingsError("invalid", f"{len(vectors)} vectors for {expected} texts")
    return vectors
