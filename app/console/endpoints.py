"""``/console``: the console's page and its two assets, read from the installed package.

The files hold no data, so they are served without a key; the data comes from the audit and
session APIs, which check the key the page sends like any other caller's.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fastapi import APIRouter
from fastapi.responses import Response

router = APIRouter(prefix="/console", include_in_schema=False)

#: The page's own files, and the type each is served as.
ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}
#: Nothing but this origin: the page loads no script, style, font or image from elsewhere.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@cache
def _asset(name: str) -> bytes:
    return files("app.console").joinpath(name).read_bytes()


def _served(name: str) -> Response:
    return Response(
        _asset(name),
        media_type=ASSETS[name],
        headers={
            "content-security-policy": CONTENT_SECURITY_POLICY,
            "x-content-type-options": "nosniff",
            "cache-control": "no-cache",
        },
    )


@router.get("")
async def console_page() -> Response:
    """The console: sessions, one session's timeline, and the prompt of any assembly."""
    return _served("index.html")


@router.get("/console.js")
async def console_script() -> Response:
    """The console's script: draws the pages from the audit and session APIs."""
    return _served("console.js")


@router.get("/console.css")
async def console_style() -> Response:
    """The console's stylesheet (system fonts: nothing is loaded from elsewhere)."""
    return _served("console.css")
