"""The application factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import Session

from app import __version__
from app.audit.endpoints import router as audit_router
from app.audit.retention import purge_periodically
from app.audit.telemetry import watch_audit_rows
from app.budget.tokens import TokenizerRegistry, lookup_model
from app.db import create_engine, ensure_schema
from app.errors import error_body, install_error_handlers
from app.logs import configure_logging, install_request_logging
from app.metrics import Metrics, install_metrics
from app.runtime import Runtime
from app.sessions.endpoints import router as sessions_router
from app.settings import Settings, get_settings
from app.summarize import ExtractiveSummarizer, Summarizer
from app.turns.endpoints import router as turns_router


@asynccontextmanager
async def _audit_retention(app: FastAPI, settings: Settings) -> AsyncIterator[None]:
    """The periodic audit purge, while the app runs, when retention and an interval are set."""
    if settings.audit_retention_days is None or not settings.audit_purge_interval_seconds:
        yield
        return
    task = asyncio.create_task(
        purge_periodically(
            app.state.sessionmaker,
            retention_days=settings.audit_retention_days,
            interval_seconds=settings.audit_purge_interval_seconds,
            batch_size=settings.audit_purge_batch_size,
        ),
        name="contextd-audit-purge",
    )
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


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
        engine = create_engine(settings.database_url)
        try:
            await ensure_schema(engine, auto_migrate=settings.migrates_at_startup)
            # Load the default encodings now rather than on the first turn.
            for model in ("gpt-4o", "gpt-4"):
                spec = lookup_model(model)
                await anyio.to_thread.run_sync(runtime.tokenizers.counter_for, spec)
            # A session class of this app's own, so that its audit rows reach its metrics.
            session_class: type[Session] = type("ContextdSession", (Session,), {})
            watch_audit_rows(session_class, runtime.metrics)
            app.state.engine = engine
            app.state.sessionmaker = async_sessionmaker(
                engine, expire_on_commit=False, sync_session_class=session_class
            )
            async with _audit_retention(app, settings):
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
    install_metrics(app, runtime.metrics)
    install_request_logging(app)
    app.include_router(sessions_router)
    app.include_router(turns_router)
    app.include_router(audit_router)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    async def readyz(request: Request) -> JSONResponse:
        """The database answers."""
        try:
            async with request.app.state.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as error:
            return JSONResponse(
                error_body("database_unavailable", f"the database does not answer: {error}"),
                status_code=503,
            )
        return JSONResponse({"status": "ready"})

    return app


def create_served_app() -> FastAPI:
    """The app as ``contextd serve`` runs it in each worker process: settings from the
    environment, and logging set up in the worker itself (workers are fresh interpreters)."""
    settings = get_settings()
    configure_logging(level=settings.log_level, log_format=settings.log_format)
    return create_app(settings)
