"""Prometheus metrics. Labels are bounded (model family, outcome, policy event, route
template): never a session or tenant id.

Several worker processes: set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory shared by
the workers, in the environment they start with. prometheus_client then keeps every value in
a file there, and ``/metrics`` in any worker answers for all of them.
"""

from __future__ import annotations

from fastapi import FastAPI, Response, params
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    values,
)
from prometheus_client.multiprocess import MultiProcessCollector

from app.budget.tokens import model_family

# The *_created series double every counter's output and no dashboard of ours reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

TOKEN_BUCKETS = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576)
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: The label of a model the built-in table does not know: model aliases are the agents'
#: free text, so only the table's families become label values.
OTHER_MODEL = "other"


def model_label(model_alias: str) -> str:
    """A bounded label value for a session's model alias."""
    return model_family(model_alias) or OTHER_MODEL


def multiprocess_mode() -> bool:
    """Whether prometheus_client keeps values in ``PROMETHEUS_MULTIPROC_DIR`` files. It
    decides once, when imported, from the environment; this asks it rather than guessing."""
    return values.ValueClass is not values.MutexValue


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
            "Estimated input tokens of each assembled prompt, by model family.",
            ["model"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self.prompt_cache_read_tokens = Counter(
            "context_prompt_cache_read_tokens",
            "Prompt tokens the provider served from its prompt cache, as agents report them "
            "(cache_read_input_tokens or prompt_tokens_details.cached_tokens), by model family.",
            ["model"],
            registry=r,
        )
        self.assembly_latency = Histogram(
            "context_assembly_duration_seconds",
            "Time to assemble one prompt (turn start or step), database included.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.prompt_prefix = Counter(
            "context_prompt_prefix",
            "Assembled prompts by whether they kept the session's previous prompt as their "
            "prefix (kept: the provider's prefix cache hits; changed: a policy event or a "
            "session edit; first: the session's first prompt).",
            ["prefix"],
            registry=r,
        )
        self.summarizer_fallback_count = Counter(
            "context_summarizer_fallback_count",
            "Summariser failures answered by deterministic truncation.",
            registry=r,
        )
        self.summarizer_latency = Histogram(
            "context_summarizer_duration_seconds",
            "Time the LLM summariser took for one summary, repairs and re-asks included.",
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0),
            registry=r,
        )
        self.summarizer_outcomes = Counter(
            "context_summarizer_outcomes",
            "LLM summaries by outcome: ok, repaired (valid after one repair request), "
            "fallback (no usable summary: deterministic truncation stands in), timeout.",
            ["outcome"],
            registry=r,
        )
        self.summary_queue_depth = Gauge(
            "context_summary_jobs_pending",
            "Summary jobs queued or running, as the last worker poll saw them.",
            registry=r,
        )
        self.summary_job_age = Gauge(
            "context_summary_job_oldest_age_seconds",
            "Age of the oldest pending summary job, as the last worker poll saw it (0: none).",
            registry=r,
        )
        self.summary_job_wait = Histogram(
            "context_summary_job_wait_seconds",
            "Time from a summary job being queued to a worker claiming it.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.embedding_failures = Counter(
            "context_embedding_failures",
            "Embeddings API calls that gave no vectors, by stage (worker: embedding stored "
            "messages, retried later; query: a search or recall, ranked by full text alone "
            "instead) and reason (timeout, transport, refused, status, invalid).",
            ["stage", "reason"],
            registry=r,
        )
        self.embeddings_stored = Counter(
            "context_embeddings_stored",
            "Message vectors stored by the embedding worker.",
            registry=r,
        )
        self.estimator_fallback_count = Counter(
            "context_estimator_fallback_count",
            "Assemblies counted with the fallback estimator because no tokenizer loaded.",
            registry=r,
        )
        self.calibration_observations = Counter(
            "context_calibration_observation_count",
            "Usage reports seen by calibration, by verdict: taken, invalid or outlier.",
            ["verdict"],
            registry=r,
        )
        self.assemblies = Counter(
            "context_assemblies",
            "Committed assemblies (audit rows) by model family and outcome (accepted/rejected).",
            ["model", "outcome"],
            registry=r,
        )
        self.policy_events = Counter(
            "context_policy_events",
            "Committed audit rows with a policy flag set, by model family and flag: summary "
            "(summary_triggered), prune (prune_triggered), overflow (overflow_rejected), "
            "summary_fallback, estimator_fallback.",
            ["model", "event"],
            registry=r,
        )
        self.drop_in_calls = Counter(
            "context_drop_in_calls",
            "Calls to the drop-in endpoints that reached the upstream step, by protocol "
            "(openai, anthropic) and how the agent's history matched the stored one: new, "
            "extends, imported, diverged, replayed, or stateless (no session header).",
            ["protocol", "history"],
            registry=r,
        )
        self.drop_in_overhead = Histogram(
            "context_drop_in_overhead_seconds",
            "Time a drop-in call spent in contextd before its request left for the upstream "
            "(what contextd adds to the model call's time to first byte), by protocol.",
            ["protocol"],
            buckets=LATENCY_BUCKETS,
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

    def observe_audit_row(
        self,
        *,
        model_alias: str,
        overflow_rejected: bool,
        summary_triggered: bool,
        prune_triggered: bool,
        summary_fallback: bool,
        estimator_fallback: bool,
    ) -> None:
        """Count one committed audit row in the by-model view."""
        model = model_label(model_alias)
        self.assemblies.labels(model, "rejected" if overflow_rejected else "accepted").inc()
        for event, flagged in (
            ("summary", summary_triggered),
            ("prune", prune_triggered),
            ("overflow", overflow_rejected),
            ("summary_fallback", summary_fallback),
            ("estimator_fallback", estimator_fallback),
        ):
            if flagged:
                self.policy_events.labels(model, event).inc()

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request (``route`` is its template, never the raw path)."""
        self.http_requests.labels(method, route, str(status)).inc()
        self.http_latency.labels(method, route).observe(seconds)

    def render(self) -> bytes:
        if not multiprocess_mode():
            return generate_latest(self.registry)
        # Every worker's files, merged; a registry per scrape, as prometheus_client asks.
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)


def install_metrics(app: FastAPI, metrics: Metrics, *, read_scope: params.Depends) -> None:
    """Serve ``/metrics`` to callers that pass ``read_scope``. Requests are counted by the
    request middleware (:func:`app.logs.install_request_logging` with
    :meth:`Metrics.observe_request`), which sees each one to its answer anyway."""

    @app.get("/metrics", include_in_schema=False, dependencies=[read_scope])
    async def _metrics() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)
