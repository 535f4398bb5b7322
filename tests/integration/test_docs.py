"""``/docs`` and ``/redoc`` work without internet: every asset they load is served here."""

from __future__ import annotations

import re

import httpx
import pytest

_REFERENCE = re.compile(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""")


def _references(page: str) -> list[str]:
    """The URLs a page loads: script sources, stylesheets, icons and the OpenAPI document."""
    return _REFERENCE.findall(page)


@pytest.mark.parametrize(
    ("page", "assets"),
    [
        ("/docs", {".js": "javascript", ".css": "css", ".png": "image/png"}),
        ("/redoc", {".js": "javascript", ".png": "image/png"}),
    ],
)
async def test_the_docs_page_loads_only_assets_the_service_serves(
    client: httpx.AsyncClient, page: str, assets: dict[str, str]
) -> None:
    response = await client.get(page)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "cdn" not in response.text.lower()
    assert not re.search(r"https?://", response.text)
    references = _references(response.text)
    assert "/openapi.json" in references
    for suffix, media_type in assets.items():
        url = next(ref for ref in references if ref.endswith(suffix))
        asset = await client.get(url)
        assert asset.status_code == 200, url
        assert media_type in asset.headers["content-type"], url
        assert len(asset.content) > 1000, url


async def test_the_swagger_ui_oauth2_redirect_page_is_served(client: httpx.AsyncClient) -> None:
    response = await client.get("/docs/oauth2-redirect")

    assert response.status_code == 200
    assert "oauth2" in response.text
