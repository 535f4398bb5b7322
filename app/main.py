"""The application factory."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING

import anyio.to_thread
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlalchemy.orm import Session

from app import __version__
from app.audit.retention import purge_periodically
from app.audit.telemetry import watch_audit_rows
from app.auth.cache import ApiKeyCache
from app.auth.dependencies import require
from app.auth.service import Scope, check_open_mode
from app.caches import TTLCache
from app.db import create_engine, ensure_schema
from app.docs import install_assets
from app.errors import ERROR_RESPONSES, error_body, install_error_handlers
from app.limits import BodySizeLimit, FinishDespiteHangUp
from app.logs import configure_logging, install_request_logging
from app.metrics import Metrics, install_metrics
from app.proxy.endpoints import close_upstream_client
from app.recovery import DatabaseRecovery
from app.routes import ServingApp, api_routes
from app.runtime import Runtime
from app.settings import Settings, export_tiktoken_cache_dir, get_settings
from app.summarize import ExtractiveSummarizer, Summarizer
from app.summarize.llm import LLMSummarizer
from app.summary_jobs.service import SummaryJobWorker
from app.tokens.models_file import check_tokenizer_files, model_registry
from app.tokens.registry import TokenizerRegistry
from app.tracing import (
    FASTAPI_TELEMETRY,
    Tracing,
    TracingMiddleware,
    instrument_engine,
    tracing_from_environment,
)
from app.turns.kept_rows import KeptRowsCache

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from app.embeddings.client import EmbeddingsClient


def _summarizer(settings: Settings, metrics: Metrics) -> Summarizer:
    if settings.summarizer == "llm":
        # Both are checked by the settings' validator.
        assert settings.summarizer_base_url is not None
        assert settings.summarizer_model is not None
        key = settings.summarizer_api_key
        return LLMSummarizer(
            base_url=settings.summarizer_base_url,
            model=settings.summarizer_model,
            api_key=key.get_secret_value() if key else None,
            timeout_seconds=settings.summarizer_timeout_seconds,
            max_attempts=settings.summarizer_max_attempts,
            shorten_attempts=settings.summarizer_shorten_attempts,
            metrics=metrics,
        )
    return ExtractiveSummarizer()


def _embedder(settings: Settings) -> EmbeddingsClient | None:
    """The embeddings API client, when one is configured (nothing is loaded otherwise)."""
    if not settings.embeds:
        return None
    from app.embeddings.client import EmbeddingsClient

    assert settings.embeddings_base_url is not None  # settings.embeds says both are set
    assert settings.embeddings_model is not None
    key = settings.embeddings_api_key
    return EmbeddingsClient(
        base_url=settings.embeddings_base_url,
        model=settings.embeddings_model,
        api_key=key.get_secret_value() if key else None,
        dimensions=settings.embeddings_dimensions,
        timeout_seconds=settings.embeddings_timeout_seconds,
    )


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
    tracer_provider: TracerProvider | None = None,
) -> FastAPI:
    """Build the app. The engine is made at start-up (lifespan), never at import.

    Traces go to ``tracer_provider`` when given, else wherever the OTEL_* variables say
    (:mod:`app.tracing`); neither: no tracing at all.

    A models file that cannot be used raises :class:`app.tokens.models_file.ModelsFileError`
    here, before anything serves.
    """
    settings = settings or get_settings()
    export_tiktoken_cache_dir(settings)
    metrics = Metrics()
    if tokenizers is None:
        tokenizers = TokenizerRegistry(models=model_registry(settings.models_file))
        check_tokenizer_files(tokenizers, settings.models_file)
    runtime = Runtime(
        settings=settings,
        tokenizers=tokenizers,
        summarizer=summarizer or _summarizer(settings, metrics),
        metrics=metrics,
        api_keys=ApiKeyCache(ttl_seconds=settings.api_key_cache_seconds),
        calibrations=TTLCache(settings.calibration_cache_seconds),
        kept_rows=KeptRowsCache(int(settings.kept_rows_mib * 2**20)),
        embedder=_embedder(settings),
    )
    tracing = (
        Tracing.for_provider(tracer_provider)
        if tracer_provider is not None
        else tracing_from_environment()
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks: list[asyncio.Task[None]] = []
        engine = create_engine(
            settings.database_url,
            connect_timeout=settings.database_connect_timeout,
            pool_size=settings.database_pool_size,
        )
        if tracing is not None:
            instrument_engine(engine, tracing.tracer)
        try:
            await ensure_schema(engine, auto_migrate=settings.migrates_at_startup)
            sessionmaker = async_sessionmaker(engine, expire_on_commit=False)
            async with sessionmaker() as db:
                await check_open_mode(db, settings)
            # Load the default encodings now rather than on the first turn.
            for model in ("gpt-4o", "gpt-4"):
                spec = runtime.tokenizers.lookup(model)
                await anyio.to_thread.run_sync(runtime.tokenizers.counter_for, spec)
            # A session class of this app's own, so that its audit rows reach its metrics.
            session_class: type[Session] = type("ContextdSession", (Session,), {})
            watch_audit_rows(session_class, runtime.metrics)
            app.state.engine = engine
            app.state.sessionmaker = async_sessionmaker(
                engine, expire_on_commit=False, sync_session_class=session_class
            )
            workers = settings.summary_workers if settings.summarizes_in_background else 0
            for number in range(workers):
                worker = SummaryJobWorker(sessionmaker=app.state.sessionmaker, runtime=runtime)
                tasks.append(
                    asyncio.create_task(worker.run_forever(), name=f"summary-worker-{number}")
                )
            if runtime.embedder is not None:
                from app.embeddings.lease import embedding_lease
                from app.embeddings.worker import EmbeddingWorker

                embedding_worker = EmbeddingWorker(
                    sessionmaker=app.state.sessionmaker,
                    client=runtime.embedder,
                    settings=settings,
                    metrics=runtime.metrics,
                    lease=embedding_lease(engine, runtime.embedder.model),
                )
                tasks.append(
                    asyncio.create_task(embedding_worker.run_forever(), name="embedding-worker")
                )
            async with _audit_retention(app, settings):
                yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with suppress(asyncio.CancelledError):
                    await task
            await runtime.folds_ahead.close()
            if isinstance(runtime.summarizer, LLMSummarizer):
                await runtime.summarizer.aclose()
            if runtime.embedder is not None:
                await runtime.embedder.aclose()
            await close_upstream_client(app)
            await engine.dispose()
            if tracing is not None:
                tracing.shutdown()

    # FastAPI's own /docs and /redoc load their assets from a CDN; app/docs.py serves both
    # pages with the assets from this process.
    app = FastAPI(
        title="contextd",
        version=__version__,
        summary="Context assembly for LLM agents: every prompt fits, is valid, and is audited.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        telemetry=FASTAPI_TELEMETRY,
    )
    install_assets(app)
    app.state.runtime = runtime
    app.state.database_recovery = DatabaseRecovery()
    install_error_handlers(app)
    # Innermost first. The shared routes read this app's dependency overrides through
    # ServingApp (app/routes.py). Whatever cancels a request (a server or a client transport on
    # hang-up) does so from outside, so its work is shielded innermost; the request line and
    # metrics are outermost, so that a body refused as too large is logged and counted too.
    app.add_middleware(ServingApp, serving=app)
    app.add_middleware(FinishDespiteHangUp)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    install_request_logging(app, observe=runtime.metrics.observe_request)
    install_metrics(app, runtime.metrics, read_scope=Depends(require(Scope.OPS)))
    # Outermost, so that the request's span covers everything else; absent when tracing is
    # off, so that it costs nothing then.
    app.state.tracer = tracing.tracer if tracing is not None else None
    if tracing is not None:
        app.add_middleware(TracingMiddleware, tracer=tracing.tracer)
    # The routers' routes are built once per process and shared by its apps (app/routes.py):
    # a process that builds many apps (the test suite) would otherwise build them for each.
    app.router.routes.extend(api_routes())

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: ERROR_RESPONSES[503]})
    async def readyz(request: Request) -> JSONResponse:
        """The database answers (503 ``database_unavailable`` with Retry-After when not)."""
        recovery: DatabaseRecovery = request.app.state.database_recovery
        try:
            async with request.app.state.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as error:
            recovery.unreachable()
            return JSONResponse(
                error_body("database_unavailable", f"the database does not answer: {error}"),
                status_code=503,
                headers={"Retry-After": str(recovery.retry_after())},
            )
        recovery.reachable()
        return JSONResponse({"status": "ready"})

    return app


def create_served_app() -> FastAPI:
    """The app as ``contextd serve`` runs it in each worker process: settings from the
    environment, and logging set up in the worker itself (workers are fresh interpreters)."""
    settings = get_settings()
    configure_logging(level=settings.log_level, log_format=settings.log_format)
    app = create_app(settings)
    started = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with started(app):
            collect_garbage_for_serving()
            yield

    app.router.lifespan_context = lifespan
    return app


#: Allocations between two collections of the youngest generation (Python's default: 700).
SERVED_GC_THRESHOLD = 10_000


def collect_garbage_for_serving() -> None:
    """Once a worker has started: what start-up built (modules, the app, the tokenizers)
    is set apart from the cyclic garbage collector for good, and the youngest generation is
    collected after 10,000 allocations rather than 700.

    Every collection of the youngest generation walks the objects of the requests under way,
    and every collection of the oldest walks everything start-up built. With 16 agents in one
    process, at 700 the collector ran about once every four requests and took ~1.4 ms of CPU
    a turn (one walk of the oldest generation ~200 ms); at 10,000, ~0.15 ms a turn
    (docs/benchmarks.md, "Server CPU per turn"). Cycles are still collected, less often;
    what reference counting frees is freed at once, as before.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(SERVED_GC_THRESHOLD, middle, oldest)
