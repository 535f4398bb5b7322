"""``/docs`` (Swagger UI) and ``/redoc`` with their scripts, styles and icon served from this
process: FastAPI's own pages load them from a CDN, blank on an air-gapped install. The assets
are the ``fastapi-offline`` package's, which follows the Swagger UI and ReDoc releases.

The pages are plain endpoints that read the app from the request. ``FastAPIOffline`` made them
closures over each app, and FastAPI keeps every endpoint it classifies in a module-level cache
(``fastapi.dependencies.models``, 4,096 entries): each app a process had ever built stayed in
memory with everything it held, ~1,000 of them in a test worker (docs/benchmarks.md,
"The suite's CPU doubled").
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
SWAGGER_UI_URL = "/docs"
OAUTH2_REDIRECT_URL = "/docs/oauth2-redirect"
REDOC_URL = "/redoc"
_ASSETS = Path(fastapi_offline.__file__).parent / "static"

router = APIRouter(include_in_schema=False)


def install_assets(app: FastAPI) -> None:
    """Serve the pages' assets under :data:`ASSETS_URL`."""
    app.mount(ASSETS_URL, StaticFiles(directory=_ASSETS), name="static-offline-docs")


def _assets(request: Request) -> str:
    return f"{request.scope.get('root_path', '')}{ASSETS_URL}"


def _openapi_url(request: Request) -> str:
    return f"{request.scope.get('root_path', '')}{request.app.openapi_url}"


@router.get(SWAGGER_UI_URL)
async def swagger_ui(request: Request) -> HTMLResponse:
    """The API as Swagger UI."""
    assets = _assets(request)
    return get_swagger_ui_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - Swagger UI",
        oauth2_redirect_url=OAUTH2_REDIRECT_URL,
        swagger_js_url=f"{assets}/swagger-ui-bundle.js",
        swagger_css_url=f"{assets}/swagger-ui.css",
        swagger_favicon_url=f"{assets}/favicon.png",
        swagger_ui_parameters=request.app.swagger_ui_parameters,
    )


@router.get(OAUTH2_REDIRECT_URL)
async def swagger_ui_oauth2_redirect() -> HTMLResponse:
    """Swagger UI's OAuth2 redirect page."""
    return get_swagger_ui_oauth2_redirect_html()


@router.get(REDOC_URL)
async def redoc(request: Request) -> HTMLResponse:
    """The API as ReDoc."""
    assets = _assets(request)
    return get_redoc_html(
        openapi_url=_openapi_url(request),
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{assets}/redoc.standalone.js",
        with_google_fonts=False,
        redoc_favicon_url=f"{assets}/favicon.png",
    )
