"""The HTTP client for the OpenAI-compatible APIs contextd calls: chat completions for LLM
summaries, embeddings for search and recall."""

from __future__ import annotations

import httpx


def api_client(
    *,
    base_url: str,
    api_key: str | None,
    timeout_seconds: float,
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """A client whose relative paths (``"embeddings"``, ``"chat/completions"``) go under
    ``base_url`` (``…/v1`` with or without its slash), sending the key as a bearer token."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/") + "/",
        headers=headers,
        timeout=timeout_seconds,
        transport=transport,
    )
