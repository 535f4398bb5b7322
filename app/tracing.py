"""OpenTelemetry traces: a span per request, per assembly and per database statement.

Off unless the standard ``OTEL_*`` variables configure an exporter (``OTEL_EXPORTER_OTLP_ENDPOINT``,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_TRACES_EXPORTER``); ``OTEL_SDK_DISABLED=true``
turns it off again. These are the OpenTelemetry specification's variables, which the SDK and its
exporters read themselves; contextd only looks whether any is set. Exporting needs the ``otel``
extra (the official SDK and OTLP/HTTP exporter); the API alone is enough to import this module.

Off, nothing of this runs on the request path: no middleware, no engine listeners, and the
assembly hook hands back the work it was given. On, the spans carry figures, never content:
no message text, no SQL parameters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi.telemetry import TelemetryConfig
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from collections.abc import Iterator

    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider

T = TypeVar("T")

TRACER_NAME = "contextd"
#: Where the tracer lives while the app runs (None: tracing is off).
STATE_ATTRIBUTE = "tracer"
_EXPORTER_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)


#: FastAPI's own request spans off (it makes them since 0.165 whenever the process's global
#: tracer provider is configured, which ``tracing_from_environment`` does): contextd's
#: ``TracingMiddleware`` makes the request's one SERVER span, with the path and never the
#: query string (a search's words are the user's text), and only when contextd traces.
FASTAPI_TELEMETRY: TelemetryConfig = {"tracing": False}


class TracingUnavailableError(RuntimeError):
    """OTEL_* asks for traces but the ``otel`` extra is not installed."""


def tracing_requested(environ: Mapping[str, str]) -> bool:
    """Whether the OTEL_* variables configure a trace exporter."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return any(environ.get(name, "").strip() for name in _EXPORTER_VARIABLES)


@dataclass
class Tracing:
    """The tracer of one app and, when contextd built the provider, the provider to flush."""

    tracer: Tracer
    owned_provider: SdkTracerProvider | None = None

    @classmethod
    def for_provider(cls, provider: TracerProvider) -> Tracing:
        from app import __version__

        return cls(provider.get_tracer(TRACER_NAME, __version__))

    def shutdown(self) -> None:
        """Export what is still buffered (the batch processor's queue) before exiting."""
        if self.owned_provider is not None:
            self.owned_provider.shutdown()


def tracing_from_environment(environ: Mapping[str, str] | None = None) -> Tracing | None:
    """Tracing as OTEL_* configures it, or None when it does not ask for traces."""
    environ = os.environ if environ is None else environ
    if not tracing_requested(environ):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SpanExporter,
        )
    except ImportError as error:
        raise TracingUnavailableError(
            f"OTEL_* configures trace export but the OpenTelemetry SDK is missing ({error}): "
            'pip install "contextd[otel]", or unset the OTEL_* variables'
        ) from error

    from app import __version__

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; contextd names
    # itself only when they do not.
    resource = Resource.create({"service.version": __version__})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "contextd"}))
    provider = TracerProvider(resource=resource)
    names = environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    for name in (n.strip() for n in names.split(",")):
        exporter: SpanExporter
        if name == "otlp":
            # OTLP over HTTP/protobuf; the endpoint, headers and timeout come from OTEL_*.
            exporter = OTLPSpanExporter()
        elif name == "console":
            exporter = ConsoleSpanExporter()
        else:
            raise TracingUnavailableError(
                f"OTEL_TRACES_EXPORTER={name!r}: contextd exports with 'otlp' (HTTP/protobuf) "
                "or 'console'"
            )
        provider.add_span_processor(BatchSpanProcessor(exporter))
    # Libraries that trace through the global provider (an httpx instrumentation, say) join
    # the same traces.
    trace.set_tracer_provider(provider)
    tracing = Tracing.for_provider(provider)
    tracing.owned_provider = provider
    return tracing


class TracingMiddleware:
    """A SERVER span per HTTP request, continuing the caller's trace (``traceparent``).

    Named ``METHOD route`` (the route template, never the path with its ids) once routing has
    found the route; added to the app only when tracing is on."""

    def __init__(self, app: ASGIApp, *, tracer: Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from opentelemetry import propagate, trace

        carrier = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        method = scope["method"]
        with self.tracer.start_as_current_span(
            method,
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": scope["path"]},
        ) as span:

            async def send_with_status(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(trace.StatusCode.ERROR)
                await send(message)

            try:
                await self.app(scope, receive, send_with_status)
            finally:
                route = getattr(scope.get("route"), "path", None)
                if route:
                    span.set_attribute("http.route", route)
                    span.update_name(f"{method} {route}")


def instrument_engine(engine: AsyncEngine, tracer: Tracer) -> None:
    """A CLIENT span per statement the engine runs: the SQL text (parameters never), the
    database system and name. A span joins the request's trace: SQLAlchemy runs the driver in
    a greenlet that shares the request task's context."""
    from opentelemetry import trace

    sync_engine = engine.sync_engine
    system = sync_engine.dialect.name
    database = sync_engine.url.database or ""

    @event.listens_for(sync_engine, "before_cursor_execute")
    def _start(
        _connection: Any,
        _cursor: Any,
        statement: str,
        _parameters: Any,
        context: Any,
        _executemany: bool,
    ) -> None:
        operation = statement.lstrip().split(None, 1)[0].upper() if statement.strip() else "SQL"
        span = tracer.start_span(
            f"{operation} {system}",
            kind=trace.SpanKind.CLIENT,
            attributes={
                "db.system.name": system,
                "db.namespace": database,
                "db.operation.name": operation,
                "db.query.text": statement,
            },
        )
        context._contextd_span = span

    @event.listens_for(sync_engine, "after_cursor_execute")
    def _end(
        _connection: Any,
        _cursor: Any,
        _statement: str,
        _parameters: Any,
        context: Any,
        _executemany: bool,
    ) -> None:
        span = getattr(context, "_contextd_span", None)
        if span is not None:
            span.end()
            context._contextd_span = None

    @event.listens_for(sync_engine, "handle_error")
    def _failed(exception_context: Any) -> None:
        context = exception_context.execution_context
        span = getattr(context, "_contextd_span", None) if context is not None else None
        if span is not None:
            failure = type(exception_context.original_exception).__name__
            span.set_status(trace.StatusCode.ERROR, failure)
            span.end()
            context._contextd_span = None


def assembly_attributes(assembly: Any) -> dict[str, Any]:
    """The figures of an assembled prompt (an ``AssemblyOut``) as span attributes: the budget,
    the per-block tokens and the policy events. No message content."""
    budget = assembly.budget
    actions = assembly.actions
    attributes: dict[str, Any] = {
        "contextd.turn.id": assembly.turn_id,
        "contextd.turn.step": assembly.step,
        "contextd.audit.id": assembly.audit_id,
        "contextd.prompt.format": assembly.format,
        "contextd.prompt.messages": len(assembly.messages),
        "contextd.budget.model_context_limit": budget.model_context_limit,
        "contextd.budget.input_budget": budget.input_budget,
        "contextd.budget.estimated_input_tokens": budget.estimated_input_tokens,
        "contextd.budget.estimator": budget.estimator,
        "contextd.budget.calibration_ratio": budget.calibration_ratio,
        "contextd.policy.summary_triggered": actions.summary_triggered,
        "contextd.policy.summary_fallback": actions.summary_fallback,
        "contextd.policy.summary_queued": actions.summary_queued,
        "contextd.policy.prune_triggered": actions.prune_triggered,
        "contextd.policy.summarised_messages": len(actions.summarised_message_ids),
        "contextd.policy.pruned_messages": len(actions.pruned_message_ids),
        "contextd.policy.overflow_rejected": False,
    }
    if actions.summary_reason:
        attributes["contextd.policy.summary_reason"] = actions.summary_reason
    for block, tokens in budget.blocks.items():
        attributes[f"contextd.budget.blocks.{block}"] = tokens
    return attributes


_REJECTION_FIGURES = (
    "estimated_input_tokens",
    "input_budget",
    "model_context_limit",
    "calibration_ratio",
)


def rejection_attributes(details: Mapping[str, Any] | None) -> dict[str, Any]:
    """The figures of a ``context_budget_exceeded`` rejection as span attributes."""
    details = details or {}
    attributes: dict[str, Any] = {"contextd.policy.overflow_rejected": True}
    for name in _REJECTION_FIGURES:
        if isinstance(details.get(name), int | float):
            attributes[f"contextd.budget.{name}"] = details[name]
    if isinstance(details.get("audit_id"), int):
        attributes["contextd.audit.id"] = details["audit_id"]
    blocks = details.get("blocks")
    if isinstance(blocks, Mapping):
        for block, tokens in blocks.items():
            if isinstance(tokens, int):
                attributes[f"contextd.budget.blocks.{block}"] = tokens
    return attributes


@contextmanager
def assembly_span(tracer: Tracer, operation: str, session_id: str) -> Iterator[Span]:
    """An INTERNAL span around one assembly; a budget rejection records its figures."""
    from app.errors import BudgetExceededError

    with tracer.start_as_current_span(
        f"contextd.assemble {operation}",
        attributes={"contextd.operation": operation, "contextd.session.id": session_id},
        record_exception=False,
    ) as span:
        started = time.perf_counter()
        try:
            yield span
        except BudgetExceededError as rejected:
            span.set_attributes(rejection_attributes(rejected.details))
            raise
        finally:
            span.set_attribute(
                "contextd.assembly.duration_ms", (time.perf_counter() - started) * 1000
            )


#: Whether any app in this process traces: until one does, ``annotate_assembly`` returns at
#: once and never imports OpenTelemetry.
_tracing_started = False


def annotate_assembly(*, model: str) -> None:
    """For the assembly code: name the model the prompt is for on the current assembly span
    (``gen_ai.request.model``, the OpenTelemetry GenAI convention). Costs one global read
    when nothing traces."""
    if not _tracing_started:
        return
    from opentelemetry import trace

    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute("gen_ai.request.model", model)


def traced_assembly(
    tracer: Tracer | None,
    operation: str,
    session_id: str,
    work: Callable[[], Awaitable[T]],
) -> Callable[[], Awaitable[T]]:
    """``work`` (an assembly: a turn start or a step) inside an assembly span whose attributes
    are the assembled prompt's figures. Tracing off: ``work`` itself, untouched."""
    if tracer is None:
        return work
    global _tracing_started
    _tracing_started = True

    async def traced() -> T:
        with assembly_span(tracer, operation, session_id) as span:
            result = await work()
            if hasattr(result, "budget") and hasattr(result, "actions"):
                span.set_attributes(assembly_attributes(result))
            return result

    return traced
