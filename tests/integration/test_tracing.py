"""OpenTelemetry traces: the spans a request and an assembly emit (the SDK's in-memory
exporter), export over OTLP to a collector on 127.0.0.1, and nothing at all when off."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.main import create_app
from app.tracing import (
    TracingMiddleware,
    annotate_assembly,
    traced_assembly,
    tracing_requested,
)
from contextd_client import AsyncContextd
from tests.conftest import make_settings
from tests.servers import serve_in_thread
from tests.support import create_session, start_turn, words

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN_ID}-01"
SECRET = "my passport number is X1234567"


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://contextd.test"
        ) as client,
    ):
        yield client


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
async def traced_client(
    database_url: str, exporter: InMemorySpanExporter
) -> AsyncIterator[httpx.AsyncClient]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app(make_settings(database_url), tracer_provider=provider)
    async with running(app) as client:
        yield client
    provider.shutdown()


def _named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    matches = [span for span in spans if span.name == name]
    assert len(matches) == 1, [span.name for span in spans]
    return matches[0]


def _children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


async def test_an_assembly_emits_request_assembly_and_database_spans_in_the_callers_trace(
    traced_client: httpx.AsyncClient, exporter: InMemorySpanExporter
) -> None:
    session = await create_session(traced_client, model="gpt-4o")
    exporter.clear()
    response = await traced_client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": SECRET}},
        headers={"traceparent": TRACEPARENT},
    )
    assert response.status_code == 201
    prompt = response.json()

    spans = exporter.get_finished_spans()
    request = _named(spans, "POST /v1/sessions/{session_id}/turns")
    assembly = _named(spans, "contextd.assemble start_turn")
    statements = _children(spans, assembly)
    assert request.kind is SpanKind.SERVER
    assert request.context is not None
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert request.parent is not None
    assert format(request.parent.span_id, "016x") == CALLER_SPAN_ID
    assert request.attributes is not None
    assert request.attributes["http.response.status_code"] == 201
    assert assembly.parent is not None
    assert request.context.span_id == assembly.parent.span_id
    assert assembly.attributes is not None
    assert assembly.attributes["contextd.budget.input_budget"] == prompt["budget"]["input_budget"]
    assert (
        assembly.attributes["contextd.budget.estimated_input_tokens"]
        == prompt["budget"]["estimated_input_tokens"]
    )
    assert (
        assembly.attributes["contextd.budget.blocks.current"]
        == prompt["budget"]["blocks"]["current"]
    )
    assert assembly.attributes["contextd.policy.summary_triggered"] is False
    assert assembly.attributes["contextd.policy.overflow_rejected"] is False
    assert assembly.attributes["contextd.audit.id"] == prompt["audit_id"]
    # The assembly's writes: INSERTs, sent as one statement of CTEs on Postgres.
    assert any(
        s.kind is SpanKind.CLIENT
        and "INSERT INTO messages" in str((s.attributes or {}).get("db.query.text"))
        for s in statements
    )
    every_value = [str(v) for span in spans for v in (span.attributes or {}).values()]
    assert not any("X1234567" in value for value in every_value)


async def test_a_request_has_one_server_span_when_the_process_traces_globally(
    database_url: str, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when OTEL_* configure tracing: the provider is the process's global one too, which
    # FastAPI's own telemetry would otherwise use for a second request span.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    app = create_app(make_settings(database_url), tracer_provider=provider)
    async with running(app) as client:
        session = await create_session(client, model="gpt-4o")
        exporter.clear()
        await client.post(
            f"/v1/sessions/{session['id']}/turns",
            json={"message": {"role": "user", "content": "hello"}},
            headers={"traceparent": TRACEPARENT},
        )
    provider.shutdown()

    spans = exporter.get_finished_spans()
    servers = [span for span in spans if span.kind is SpanKind.SERVER]
    assert [span.name for span in servers] == ["POST /v1/sessions/{session_id}/turns"]
    assert servers[0].parent is not None
    assert format(servers[0].parent.span_id, "016x") == CALLER_SPAN_ID
    assert {span.instrumentation_scope.name for span in spans if span.instrumentation_scope} == {
        "contextd"
    }


async def test_a_rejected_assembly_records_its_budget_figures(
    traced_client: httpx.AsyncClient, exporter: InMemorySpanExporter
) -> None:
    session = await create_session(traced_client, model="gpt-4")
    exporter.clear()
    response = await traced_client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": words(7000)}},
    )
    assert response.status_code == 422
    details = response.json()["error"]["details"]

    assembly = _named(exporter.get_finished_spans(), "contextd.assemble start_turn")
    assert assembly.attributes is not None
    assert assembly.attributes["contextd.policy.overflow_rejected"] is True
    assert assembly.attributes["contextd.budget.input_budget"] == details["input_budget"] == 5530
    assert (
        assembly.attributes["contextd.budget.estimated_input_tokens"]
        == details["estimated_input_tokens"]
    )
    assert assembly.attributes["contextd.audit.id"] == details["audit_id"]
    assert assembly.status.status_code is StatusCode.ERROR


async def test_a_step_has_its_own_assembly_span(
    traced_client: httpx.AsyncClient, exporter: InMemorySpanExporter
) -> None:
    session = await create_session(traced_client, model="gpt-4o")
    turn = await start_turn(traced_client, session["id"], "Weather?")
    exporter.clear()
    call = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
    response = await traced_client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {"tool_calls": [call]},
            "tool_results": [{"tool_call_id": "c1", "content": "21C"}],
        },
    )
    assert response.status_code == 200

    spans = exporter.get_finished_spans()
    assembly = _named(spans, "contextd.assemble step")
    assert assembly.attributes is not None
    assert assembly.attributes["contextd.turn.step"] == 1
    _named(spans, "POST /v1/sessions/{session_id}/turns/{turn_id}/steps")


async def test_the_client_carries_the_agents_trace_into_contextd(
    database_url: str, exporter: InMemorySpanExporter
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = create_app(make_settings(database_url), tracer_provider=provider)
    agent_tracer = provider.get_tracer("agent")
    async with (
        app.router.lifespan_context(app),
        AsyncContextd("http://contextd.test", transport=httpx.ASGITransport(app=app)) as ctx,
    ):
        session = await ctx.create_session(model="gpt-4o")
        with agent_tracer.start_as_current_span("agent step") as agent_span:
            await ctx.start_turn(session["id"], "hello")
    provider.shutdown()

    request = _named(exporter.get_finished_spans(), "POST /v1/sessions/{session_id}/turns")
    assert request.parent is not None
    assert request.parent.span_id == agent_span.get_span_context().span_id


async def test_the_assembly_code_can_name_the_model_on_the_assembly_span(
    exporter: InMemorySpanExporter,
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def assemble() -> None:
        annotate_assembly(model="gpt-4o")

    await traced_assembly(provider.get_tracer("test"), "start_turn", "s1", assemble)()

    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.request.model"] == "gpt-4o"


def test_tracing_is_requested_only_by_an_exporter_variable() -> None:
    assert not tracing_requested({})
    assert not tracing_requested({"OTEL_SERVICE_NAME": "contextd"})
    assert tracing_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing_requested({"OTEL_TRACES_EXPORTER": "console"})
    assert not tracing_requested({"OTEL_TRACES_EXPORTER": "none"})
    assert not tracing_requested(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
    )


def test_without_otel_variables_the_app_has_no_tracing_at_all(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    app = create_app(make_settings(f"sqlite+aiosqlite:///{tmp_path / 'off.db'}"))

    assert app.state.tracer is None
    middleware: list[object] = [m.cls for m in app.user_middleware]
    assert TracingMiddleware not in middleware


@contextmanager
def collector() -> Iterator[tuple[str, list[ExportTraceServiceRequest]]]:
    """An OTLP/HTTP trace collector on 127.0.0.1 that keeps what it receives."""
    received: list[ExportTraceServiceRequest] = []

    async def traces(request: Request) -> Response:
        export = ExportTraceServiceRequest()
        export.ParseFromString(await request.body())
        received.append(export)
        return Response(b"", media_type="application/x-protobuf")

    app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
    with serve_in_thread(app) as url:
        yield url, received


async def test_otel_variables_export_the_spans_over_otlp(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    with collector() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "contextd-test")
        app = create_app(make_settings(f"sqlite+aiosqlite:///{tmp_path / 'otlp.db'}"))
        async with running(app) as client:
            session = await create_session(client, model="gpt-4o")
            await start_turn(client, session["id"], "hello")
        # Leaving the lifespan flushed the batch processor.

    resources = [r for export in received for r in export.resource_spans]
    names = {s.name for r in resources for scope in r.scope_spans for s in scope.spans}
    services = {
        a.value.string_value
        for r in resources
        for a in r.resource.attributes
        if a.key == "service.name"
    }
    assert "contextd.assemble start_turn" in names
    assert "POST /v1/sessions/{session_id}/turns" in names
    assert services == {"contextd-test"}
