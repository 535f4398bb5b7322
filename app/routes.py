"""The API's routers, included once per process and shared by every app it builds.

FastAPI builds an included router's routes (their dependants, and a pydantic ``TypeAdapter``
for every parameter and response model) for each inclusion, on the first request of the app
that reaches it: ~0.1 s of CPU an app for contextd's nine routers. A served process builds one
app, but the test suite builds ~1,500 (one a test), and that build was the largest share of an
integration test's CPU (docs/benchmarks.md, "The suite's CPU"). Here the routers are included
once, into a router of this module, and each app serves that router's inclusions: the first
request of the process builds them, every later app finds them built.

A shared route cannot carry its app as FastAPI's dependency-overrides provider, so the
provider it carries reads the overrides of the app serving the request (:class:`ServingApp`
says which): ``app.dependency_overrides`` keeps applying to that app only.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from functools import cache
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from app.audit.endpoints import router as audit_router
from app.console.endpoints import router as console_router
from app.context.endpoints import router as context_router
from app.docs import router as docs_router
from app.proxy.endpoints import router as drop_in_router
from app.search.endpoints import router as search_router
from app.sessions.endpoints import router as sessions_router
from app.summary_jobs.endpoints import router as summary_jobs_router
from app.tokens.endpoints import router as tokens_router
from app.turns.endpoints import router as turns_router

#: In the order they are matched.
ROUTERS = (
    sessions_router,
    turns_router,
    audit_router,
    context_router,
    tokens_router,
    summary_jobs_router,
    search_router,
    drop_in_router,
    console_router,
    docs_router,
)

_serving: ContextVar[FastAPI | None] = ContextVar("contextd_serving_app", default=None)


class ServingApp:
    """ASGI middleware that says, while its app serves a call, which app serves it."""

    def __init__(self, app: ASGIApp, *, serving: FastAPI) -> None:
        self.app = app
        self.serving = serving

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _serving.set(self.serving)
        try:
            await self.app(scope, receive, send)
        finally:
            _serving.reset(token)


class _ServingAppOverrides:
    """The dependency overrides of whichever app serves the current request."""

    @property
    def dependency_overrides(self) -> dict[Callable[..., Any], Callable[..., Any]]:
        app = _serving.get()
        return app.dependency_overrides if app is not None else {}


@cache
def api_routes() -> tuple[BaseRoute, ...]:
    """The routers' inclusions, made once per process; an app adds them to its own routes."""
    shared = APIRouter(dependency_overrides_provider=_ServingAppOverrides())
    for router in ROUTERS:
        # include_router would also hand a router's start-up and shut-down handlers (and its
        # lifespan) to the app that includes it; here no app would run them.
        assert not router.on_startup, router.prefix
        assert not router.on_shutdown, router.prefix
        shared.include_router(router)
    return tuple(shared.routes)
