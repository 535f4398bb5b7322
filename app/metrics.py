"""Prometheus metrics. Labels are bounded (model alias, outcome, route template): never a
session or tenant id."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response, params
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from starlette.routing import Match

# The *_created series double every counter's output and no dashboard of ours reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

TOKEN_BUCKETS = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576)
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """One registry per app, so that tests and embedded apps never share counters."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.summary_count = Counter(
            "context_summary_count", "Summaries made by context assembly.", ["reason"], registry=r
        )
        self.prune_count = Counter(
            "context_prune_count", "Assemblies that pruned messages.", registry=r
        )
        self.overflow_reject_count = Counter(
            "context_overflow_reject_count",
            "Assemblies rejected with context_budget_exceeded.",
            registry=r,
        )
        self.prompt_tokens = Histogram(
            "context_prompt_tokens",
            "Estimated input tokens of each assembled prompt.",
            ["model"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self.assembly_latency = Histogram(
            "context_assembly_duration_seconds",
            "Time to assemble one prompt (turn start or step), database included.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.summarizer_fallback_count = Counter(
            "context_summarizer_fallback_count",
            "Summariser failures answered by deterministic truncation.",
            registry=r,
        )
        self.estimator_fallback_count = Counter(
            "context_estimator_fallback_count",
            "Assemblies counted with the fallback estimator because no tokenizer loaded.",
            registry=r,
        )
        self.http_requests = Counter(
            "http_requests",
            "HTTP requests served.",
            ["method", "route", "status"],
            registry=r,
        )
        self.http_latency = Histogram(
            "http_request_duration_seconds",
            "HTTP request latency.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _route_template(request: Request) -> str:
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match == Match.FULL:
            return str(getattr(route, "path", "unmatched"))
    return "unmatched"


def install_metrics(app: FastAPI, metrics: Metrics, *, read_scope: params.Depends) -> None:
    """Count every request; serve ``/metrics`` to callers that pass ``read_scope``."""

    @app.middleware("http")
    async def _measure(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        route = _route_template(request)
        metrics.http_requests.labels(request.method, route, str(response.status_code)).inc()
        metrics.http_latency.labels(request.method, route).observe(time.perf_counter() - started)
        return response

    @app.get("/metrics", include_in_schema=False, dependencies=[read_scope])
    async def _metrics() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)
