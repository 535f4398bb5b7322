"""The wait a drop-in 502 tells the agent is the upstream's, when the upstream said one."""

from __future__ import annotations

import httpx
import pytest

from app.proxy.upstream import upstream_retry_after


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "20"}, "20"),
        ({"retry-after": "Fri, 27 Nov 2026 19:00:00 GMT"}, "Fri, 27 Nov 2026 19:00:00 GMT"),
        ({"retry-after-ms": "1500"}, "2"),
        ({"retry-after-ms": "20"}, "1"),
        ({"retry-after": "3", "retry-after-ms": "9000"}, "3"),
        ({"retry-after-ms": "soon"}, None),
        ({"retry-after-ms": "nan"}, None),
        ({}, None),
    ],
)
def test_the_upstreams_wait_is_taken_as_it_said_it(
    headers: dict[str, str], expected: str | None
) -> None:
    assert upstream_retry_after(httpx.Headers(headers)) == expected
