"""The application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker

from app import __version__
from app.audit.endpoints import router as audit_router
from app.auth.dependencies import require
from app.auth.service import Scope, check_open_mode
from app.budget.tokens import TokenizerRegistry, lookup_model
from app.db import create_engine, ensure_schema
from app.errors import (
    ERROR_RESPONSES,
    DatabaseUnavailableError,
    error_body,
    install_error_handlers,
)
from app.limits import BodySizeLimit, FinishDespiteHangUp
from app.metrics import Metrics, install_metrics
from app.runtime import Runtime
from app.sessions.endpoints import router as sessions_router
from app.settings import Settings, get_settings
from app.summarize import ExtractiveSummarizer, Summarizer
from app.turns.endpoints import router as turns_router


def create_app(
    settings: Settings | None = None,
    *,
    summarizer: Summarizer | None = None,
    tokenizers: TokenizerRegistry | None = None,
) -> FastAPI:
    """Build the app. The engine is made at start-up (lifespan), never at import."""
    settings = settings or get_settings()
    runtime = Runtime(
        settings=settings,
        tokenizers=tokenizers or TokenizerRegistry(),
        summarizer=summarizer or ExtractiveSummarizer(),
        metrics=Metrics(),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(
            settings.database_url, connect_timeout=settings.database_connect_timeout
        )
        try:
            await ensure_schema(engine, auto_migrate=settings.migrates_at_startup)
            sessionmaker = async_sessionmaker(engine, expire_on_commit=False)
            async with sessionmaker() as db:
                await check_open_mode(db, settings)
            # Load the default encodings now rather than on the first turn.
            for model in ("gpt-4o", "gpt-4"):
                spec = lookup_model(model)
                await anyio.to_thread.run_sync(runtime.tokenizers.counter_for, spec)
            app.state.engine = engine
            app.state.sessionmaker = sessionmaker
            yield
        finally:
            await engine.dispose()

    app = FastAPI(
        title="contextd",
        version=__version__,
        summary="Context assembly for LLM agents: every prompt fits, is valid, and is audited.",
        lifespan=lifespan,
    )
    app.state.runtime = runtime
    install_error_handlers(app)
    # Innermost first: the metrics middleware cancels the app when the client disconnects,
    # so the request's work is shielded inside it.
    app.add_middleware(FinishDespiteHangUp)
    install_metrics(app, runtime.metrics, read_scope=Depends(require(Scope.OPS)))
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.include_router(sessions_router)
    app.include_router(turns_router)
    app.include_router(audit_router)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: ERROR_RESPONSES[503]})
    async def readyz(request: Request) -> JSONResponse:
        """The database answers (503 ``database_unavailable`` with Retry-After when not)."""
        try:
            async with request.app.state.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as error:
            return JSONResponse(
                error_body("database_unavailable", f"the database does not answer: {error}"),
                status_code=503,
                headers=DatabaseUnavailableError.headers,
            )
        return JSONResponse({"status": "ready"})

    return app
