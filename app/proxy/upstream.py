"""The upstream a drop-in request is forwarded to, and the headers that go each way.

The base URL comes from the settings only (per model, else per provider): a request never
names where it goes. The agent's provider credentials (``Authorization``, ``x-api-key``) and
the provider's own headers (``anthropic-version``, ``anthropic-beta``, ``OpenAI-Organization``…)
pass through as sent; they are never stored or logged. contextd's own headers
(``X-Contextd-*``) stop here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import httpx

from app.proxy.conversation import Protocol
from app.settings import Settings

#: Request headers that describe the hop to contextd (or that httpx sets itself for the hop
#: to the upstream), not the request to the provider.
_HOP_REQUEST_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "upgrade",
        "accept-encoding",
        "cookie",
        "idempotency-key",
    }
)
#: Response headers that describe the upstream's hop (the body comes back decoded).
_HOP_RESPONSE_HEADERS = frozenset(
    {
        "content-length",
        "content-encoding",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "date",
        "server",
    }
)
CONTEXTD_HEADER_PREFIX = "x-contextd-"


def upstream_url(settings: Settings, protocol: Protocol, model: str) -> str:
    """Where a request for ``model`` goes."""
    configured = settings.proxy_model_base_urls.get(model)
    if protocol == "openai":
        base = configured or settings.proxy_openai_base_url
        return base.rstrip("/") + "/chat/completions"
    base = configured or settings.proxy_anthropic_base_url
    return base.rstrip("/") + "/v1/messages"


def forwarded_request_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The agent's headers that go to the provider."""
    return {
        name: value
        for name, value in headers.items()
        if name.lower() not in _HOP_REQUEST_HEADERS
        and not name.lower().startswith(CONTEXTD_HEADER_PREFIX)
    }


def returned_response_headers(headers: httpx.Headers) -> dict[str, str]:
    """The provider's headers that go back to the agent (request ids, rate limits…)."""
    return {
        name: value for name, value in headers.items() if name.lower() not in _HOP_RESPONSE_HEADERS
    }


def upstream_retry_after(headers: httpx.Headers) -> str | None:
    """The wait the upstream asked for, as a ``Retry-After`` value, if it asked for one.

    Both providers send ``retry-after`` (seconds) with an answer that asks for a wait
    (Anthropic: https://docs.anthropic.com/en/api/rate-limits#response-headers; OpenAI, whose
    SDKs also read ``retry-after-ms``: https://platform.openai.com/docs/guides/rate-limits and
    openai-python's ``_calculate_retry_timeout``). ``retry-after`` passes as sent (seconds or
    an HTTP date, RFC 9110 §10.2.3); ``retry-after-ms`` alone is given in whole seconds,
    rounded up."""
    value: str | None = headers.get("retry-after")
    if value is not None and value.strip():
        return value.strip()
    milliseconds: str | None = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            seconds = float(milliseconds) / 1000
        except ValueError:
            return None
        if math.isfinite(seconds) and seconds >= 0:
            return str(max(1, math.ceil(seconds)))
    return None


def upstream_client(settings: Settings) -> httpx.AsyncClient:
    """One pooled client for every forwarded request of the process."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(
            settings.proxy_read_timeout_seconds,
            connect=settings.proxy_connect_timeout_seconds,
        ),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
        follow_redirects=False,
    )
