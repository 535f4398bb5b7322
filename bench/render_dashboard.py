"""Render the Grafana dashboard's main panels from real metrics, without Grafana.

Drives scripted agent traffic through the real app (in-process, on a throwaway SQLite file:
sessions on four models, tool results that grow until the policy summarises, prunes and
finally rejects), scrapes ``/metrics`` after every round, and draws six panels of
``deploy/grafana/dashboards/contextd.json`` with matplotlib: each panel's PromQL evaluated
over the scrapes (``rate`` over a window of scrapes, ``histogram_quantile`` with Prometheus'
interpolation). Needs the ``dashboard`` extra: ``pip install -e ".[dashboard]"``.

    python -m bench.render_dashboard [--rounds 48] [--out docs/dashboard.png]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench.common import running_app

REPO = Path(__file__).resolve().parent.parent
DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "contextd.json"
#: Scrapes a rate is taken over (Grafana's $__rate_interval is four scrape intervals).
RATE_WINDOW = 4
MODELS = ("gpt-4", "gpt-4o", "claude-3-5-sonnet", "acme-llm-7b")
WORDS = ("alpha", "delta", "echo", "golf", "hotel", "river", "stone", "cloud")

Labels = tuple[tuple[str, str], ...]


@dataclass
class Scrape:
    at: float
    #: sample name → labels → value
    samples: dict[str, dict[Labels, float]]

    def total(self, name: str, keep: Callable[[dict[str, str]], bool] = lambda _: True) -> float:
        return sum(v for labels, v in self.samples.get(name, {}).items() if keep(dict(labels)))

    def by(self, name: str, *label_names: str) -> dict[tuple[str, ...], float]:
        grouped: dict[tuple[str, ...], float] = defaultdict(float)
        for labels, value in self.samples.get(name, {}).items():
            as_dict = dict(labels)
            grouped[tuple(as_dict.get(n, "") for n in label_names)] += value
        return grouped


def parse(text_format: str, at: float) -> Scrape:
    samples: dict[str, dict[Labels, float]] = defaultdict(dict)
    for family in text_string_to_metric_families(text_format):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return Scrape(at, samples)


def histogram_quantile(quantile: float, buckets: dict[float, float]) -> float:
    """Prometheus' estimate: linear interpolation inside the bucket holding the rank."""
    bounds = sorted(buckets)
    total = buckets[bounds[-1]]
    if total <= 0:
        return math.nan
    rank = quantile * total
    previous_bound, previous_count = 0.0, 0.0
    for bound in bounds:
        count = buckets[bound]
        if count >= rank:
            if math.isinf(bound):
                return previous_bound
            within = count - previous_count
            share = (rank - previous_count) / within if within > 0 else 0.0
            return previous_bound + (bound - previous_bound) * share
        previous_bound, previous_count = bound, count
    return previous_bound


class Series:
    """PromQL over the scrapes: each function gives one value per scrape (after the window)."""

    def __init__(self, scrapes: list[Scrape]) -> None:
        self.scrapes = scrapes
        self.points = range(RATE_WINDOW, len(scrapes))
        self.minutes = [(scrapes[i].at - scrapes[0].at) / 60 for i in self.points]

    def _windows(self) -> Iterable[tuple[Scrape, Scrape, float]]:
        for i in self.points:
            old, new = self.scrapes[i - RATE_WINDOW], self.scrapes[i]
            yield old, new, new.at - old.at

    def rate_by(self, name: str, *labels: str) -> dict[tuple[str, ...], list[float]]:
        keys = {key for scrape in self.scrapes for key in scrape.by(name, *labels)}
        series: dict[tuple[str, ...], list[float]] = {key: [] for key in keys}
        for old, new, seconds in self._windows():
            before, after = old.by(name, *labels), new.by(name, *labels)
            for key in keys:
                series[key].append((after.get(key, 0.0) - before.get(key, 0.0)) / seconds)
        return series

    def rate(self, name: str) -> list[float]:
        return [(new.total(name) - old.total(name)) / s for old, new, s in self._windows()]

    def quantile(self, quantile: float, histogram: str) -> list[float]:
        values = []
        for old, new, _ in self._windows():
            deltas = {
                float(dict(labels)["le"]): value - old.samples[histogram + "_bucket"].get(labels, 0)
                for labels, value in new.samples[histogram + "_bucket"].items()
            }
            merged: dict[float, float] = defaultdict(float)
            for bound, count in deltas.items():
                merged[bound] += count
            values.append(histogram_quantile(quantile, merged))
        return values


def _words(count: int, seed: int) -> str:
    return " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(count))


async def _round(client: httpx.AsyncClient, sessions: list[tuple[str, str]], number: int) -> None:
    """One turn on every session: a user message, a tool step whose result grows with the
    round (so windows fill, summaries and prunes follow), an answer; now and then an input
    too big for the smallest model."""
    for index, (session_id, model) in enumerate(sessions):
        size = 150 + (number * 37 + index * 53) % 900 + (600 if 16 <= number < 32 else 0)
        started = await client.post(
            f"/v1/sessions/{session_id}/turns",
            json={"message": {"content": f"Round {number}: search for option {index}."}},
        )
        if started.status_code != 201:
            continue
        turn_id = started.json()["turn_id"]
        call = f"call_{number}_{index}"
        await client.post(
            f"/v1/sessions/{session_id}/turns/{turn_id}/steps",
            json={
                "assistant": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"q": "options"}'},
                        }
                    ],
                },
                "tool_results": [{"tool_call_id": call, "content": _words(size, number)}],
            },
        )
        await client.post(
            f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
            json={"assistant": {"content": f"Option {index} noted."}, "status": "completed"},
        )
        if model == "gpt-4" and (number + index) % 11 == 0:
            await client.post(
                f"/v1/sessions/{session_id}/turns",
                json={"message": {"content": _words(7000, index)}},
            )


async def collect(rounds: int) -> list[Scrape]:
    scrapes: list[Scrape] = []
    async with running_app() as client:
        sessions: list[tuple[str, str]] = []
        for number in range(rounds):
            # New sessions join over the first half, so the load grows, then holds.
            if number % 4 == 0 and number < rounds // 2:
                for model in MODELS:
                    created = await client.post("/v1/sessions", json={"model": model})
                    sessions.append((created.json()["id"], model))
            await _round(client, sessions, number)
            await client.get("/v1/audit", params={"overflow_rejected": "true", "limit": 20})
            scrapes.append(parse((await client.get("/metrics")).text, time.monotonic()))
    return scrapes


def render(scrapes: list[Scrape], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    titles = {panel["title"] for panel in json.loads(DASHBOARD.read_text())["panels"]}
    series = Series(scrapes)
    x = series.minutes
    per_minute = 60.0

    def plot_assemblies(axes: Any) -> None:
        outcomes = series.rate_by("context_assemblies_total", "outcome")
        for (outcome,), values in sorted(outcomes.items()):
            axes.plot(x, values, label=outcome)

    def plot_events(axes: Any) -> None:
        for (reason,), values in series.rate_by("context_summary_count_total", "reason").items():
            axes.plot(x, [v * per_minute for v in values], label=f"summary ({reason})")
        pruned = series.rate("context_prune_count_total")
        axes.plot(x, [v * per_minute for v in pruned], label="prune")
        rejected = series.rate("context_overflow_reject_count_total")
        axes.plot(x, [v * per_minute for v in rejected], label="overflow rejection")

    def plot_tokens(axes: Any) -> None:
        axes.plot(x, series.quantile(0.5, "context_prompt_tokens"), label="p50")
        axes.plot(x, series.quantile(0.95, "context_prompt_tokens"), label="p95")
        sums = series.rate("context_prompt_tokens_sum")
        counts = series.rate("context_prompt_tokens_count")
        means = [s / c if c else math.nan for s, c in zip(sums, counts, strict=True)]
        axes.plot(x, means, label="mean")

    def plot_latency(axes: Any) -> None:
        for quantile in (0.5, 0.95):
            values = series.quantile(quantile, "context_assembly_duration_seconds")
            axes.plot(x, [v * 1000 for v in values], label=f"p{int(quantile * 100)}")
        axes.set_ylabel("ms")

    def plot_by_model(axes: Any) -> None:
        events = series.rate_by("context_policy_events_total", "model", "event")
        for (model, event), values in sorted(events.items()):
            if event in ("summary", "prune", "overflow"):
                axes.plot(x, [v * per_minute for v in values], label=f"{model} {event}")

    def plot_http(axes: Any) -> None:
        requests = series.rate_by("http_requests_total", "route", "status")
        busiest = sorted(requests.items(), key=lambda item: -sum(item[1]))[:5]
        for (route, status), values in busiest:
            short = route.removeprefix("/v1/sessions/{session_id}")
            axes.plot(x, values, label=f"{short} {status}")

    panels: list[tuple[str, str, Callable[[Any], None]]] = [
        ("Assemblies per second by outcome", "per second", plot_assemblies),
        ("Summaries, prunes and rejections per minute", "per minute", plot_events),
        ("Prompt tokens per assembly", "tokens", plot_tokens),
        ("Assembly latency", "ms", plot_latency),
        ("Policy events by model per minute", "per minute", plot_by_model),
        ("HTTP requests per second by route", "per second", plot_http),
    ]
    missing = {title for title, _, _ in panels} - titles
    if missing:
        raise SystemExit(f"not panels of {DASHBOARD.name}: {sorted(missing)}")

    plt.style.use("dark_background")
    figure, grid = plt.subplots(3, 2, figsize=(15, 12.5), facecolor="#111217")
    for axes, (title, unit, draw) in zip(grid.flat, panels, strict=True):
        axes.set_facecolor("#181b1f")
        draw(axes)
        axes.set_title(title, loc="left", fontsize=12, color="#d8d9da")
        axes.set_ylabel(unit, color="#9fa7b3")
        axes.set_xlabel("minutes", color="#9fa7b3")
        axes.grid(color="#2c3235", linewidth=0.6)
        axes.tick_params(colors="#9fa7b3", labelsize=9)
        axes.set_ylim(bottom=0)
        axes.legend(fontsize=8, loc="best", frameon=False, ncol=2)
    assemblies = scrapes[-1].total("context_assemblies_total")
    elapsed = scrapes[-1].at - scrapes[0].at
    figure.suptitle(
        f"contextd dashboard, panels computed from {len(scrapes)} scrapes of /metrics during "
        f"{elapsed:.0f} s of scripted traffic ({assemblies:.0f} assemblies, {len(MODELS)} models)",
        fontsize=13,
        color="#d8d9da",
    )
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=80, facecolor=figure.get_facecolor())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=48)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "dashboard.png")
    args = parser.parse_args()
    scrapes = asyncio.run(collect(args.rounds))
    render(scrapes, args.out)
    print(f"wrote {args.out} from {len(scrapes)} scrapes")  # noqa: T201


if __name__ == "__main__":
    main()
