"""``python -m bench``: every benchmark behind one command.

    python -m bench                        # what there is
    python -m bench latency --help         # one benchmark's own options
    python -m bench tokenizers --write     # run it, and put its figures in docs/benchmarks.md

A benchmark is a module with a ``main()`` that reads ``sys.argv`` and prints its figures.
With ``--write``, what it printed goes into its own section of docs/benchmarks.md, between
marks that name it, and the rest of the page stays as it was. ``report`` writes its sections
itself. Registering a benchmark is one line in ``BENCHMARKS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import io
import shlex
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from bench.page import replace_figures


@dataclass(frozen=True)
class Benchmark:
    module: str
    #: What it measures, in a line.
    about: str
    #: The ``##`` section of docs/benchmarks.md its figures belong to (None: writes none).
    section: str | None = None


# One line per benchmark: its name, its module, what it measures, and the section of
# docs/benchmarks.md its figures go to with --write (none: it writes no figures there).
# fmt: off
BENCHMARKS: dict[str, Benchmark] = {
    "report": Benchmark("bench.report", "latency, throughput, quality, user facts; plots"),
    "latency": Benchmark("bench.latency", "turn latency as stored history grows"),
    "throughput": Benchmark("bench.throughput", "turns per second under concurrent agents"),
    "quality": Benchmark("bench.quality", "what prompts hold over a long tight session"),
    "user-facts": Benchmark("bench.user_facts", "what the user said, still in the prompt"),
    "cache-stability": Benchmark("bench.cache_stability", "prompts that keep the previous as prefix", "Prompt caching: prefix kept"),
    "cache-breakpoints": Benchmark("bench.cache_breakpoints", "Anthropic breakpoints' coverage", "Prompt caching: Anthropic breakpoints"),
    "fold-cost": Benchmark("bench.fold_cost", "one extractive fold's CPU, remembering and re-reading"),
    "fold-turn": Benchmark("bench.fold_turn", "the turn-count fold turn start, folded between turns or inline"),
    "folds-ahead-load": Benchmark("bench.folds_ahead_load", "folds between turns under load: a request's wait, memory held"),
    "step-cpu": Benchmark("bench.step_cpu", "a 128-call step's CPU as the open turn grows"),
    "sqlite-driver": Benchmark("bench.sqlite_driver", "a statement on SQLite: aiosqlite's cursors against one hand-off a statement"),
    "schema-cost": Benchmark("bench.schema_cost", "Postgres CPU per turn and per step, by part of the schema"),
    "turn-cost": Benchmark("bench.turn_cost", "a turn at 10 and at 10,000 stored messages, in-process", "Turn cost"),
    "count-cost": Benchmark("bench.count_cost", "what counting costs a turn", "Counting cost"),
    "tokenizers": Benchmark("bench.tokenizers", "open-weight proxies against real tokenizers", "Counting open-weight models"),
    "search": Benchmark("bench.search", "full-text search latency (Postgres)", "Search and recall"),
    "recall": Benchmark("bench.recall", "what recall brings back, and its cost", "Search and recall"),
    "recall-scale": Benchmark("bench.recall_scale", "recall of a 5 and 20 MB tool result against a 50 kB one"),
    "llm-summaries": Benchmark("bench.llm_summaries", "LLM summaries: cost and facts kept", "LLM summaries"),
    "tool-images": Benchmark("bench.tool_images", "images in tool results", "Images in tool results"),
    "tracing-overhead": Benchmark("bench.tracing_overhead", "what tracing costs a turn", "Tracing"),
    "audit-list": Benchmark("bench.audit_list", "the audit list on a million rows", "Audit list"),
    "fault-load": Benchmark("bench.fault_load", "load with database outages", "Database outages"),
    "dashboard": Benchmark("bench.render_dashboard", "draws docs/dashboard.png from /metrics"),
    "loadgen": Benchmark("bench.loadgen", "a load generator against a running contextd"),
    "embeddings-server": Benchmark("bench.embeddings_server", "a local /embeddings server"),
    "heldout": Benchmark("bench.heldout.__main__", "held-out retention, corrections and recall, by kind (six sets, both summarisers)"),
    "replies": Benchmark("bench.replies", "answers to the assistant's questions and typo fixes, by kind"),
    "proposals": Benchmark(
        "bench.proposals", "choices and confirmations of what the assistant proposed, by kind"
    ),
    "list-facts": Benchmark("bench.list_facts", "facts in a list and inside the user's questions, by kind"),
    "shaped-facts": Benchmark("bench.shaped_facts", "names in other scripts, other questions and lists, facts said while tools run"),
    "pasted-facts": Benchmark("bench.pasted_facts", "pasted configs and CSV, odd number formats, dictation, chat threads"),
    "heldout-locomo": Benchmark("bench.heldout.locomo", "LoCoMo dialogues: evidence in each question's prompt"),
    "heldout-traffic": Benchmark("bench.heldout.traffic", "held-out long turns and a DeepSeek reasoner"),
    "summary-retention": Benchmark("bench.summary_retention", "user statements kept on tuning and reporting seeds"),
    "recall-eval": Benchmark("bench.recall_eval", "details asked about after they left the prompt"),
    "long-turns": Benchmark("bench.long_turns", "60-step turns of realistic agent traffic at 8k"),
    "cache-served": Benchmark("bench.cache_served", "prompt tokens a provider prefix cache would serve, by cause"),
    "deepseek-reasoning": Benchmark("bench.deepseek_reasoning", "prompts DeepSeek would refuse for reasoning_content"),
    "mistral-counts": Benchmark("bench.mistral_counts", "Mistral prompts by Mistral's own tokenizers"),
    "gpt-oss-counts": Benchmark("bench.gpt_oss_counts", "gpt-oss prompts by openai-harmony"),
    "drop-in-agent": Benchmark("bench.drop_in_agent", "300-turn agents through the unmodified SDKs"),
    "drop-in-node": Benchmark("bench.drop_in_node", "the same through the openai npm package"),
    "drop-in-stream": Benchmark("bench.drop_in_stream", "time to first byte added, against LiteLLM's proxy"),
    "json-columns": Benchmark("bench.json_columns", "a JSON column's text with a null in it: CPU per value"),
    "edge-cost": Benchmark("bench.edge_cost", "what routing, dependencies, validation and serialising cost a turn call"),
    "audit-indexes": Benchmark("bench.audit_indexes", "every audit statement's plan at volume, and each index set's write cost"),
    "pg-capacity": Benchmark("bench.pg_capacity", "Postgres CPU and storage per agent call"),
    "wrk-load": Benchmark("bench.wrk_load", "16 agents under wrk: turns/s and CPU per turn, with the bare stack", "Sixteen agents under wrk"),
    "profile-layers": Benchmark("bench.profile_layers", "a running worker's busy samples by layer (py-spy)"),
    "app-start": Benchmark("bench.app_start", "an app's start, first request and stop: CPU per app"),
    "neighbours": Benchmark("bench.neighbours", "a turn start beside long turns and 8 MiB bodies"),
}
# fmt: on


def usage() -> str:
    width = max(map(len, BENCHMARKS))
    lines = [f"  {name.ljust(width)}  {benchmark.about}" for name, benchmark in BENCHMARKS.items()]
    return (__doc__ or "") + "\nbenchmarks:\n" + "\n".join(lines)


def run(name: str, arguments: list[str]) -> int:
    """Run benchmark ``name`` with ``arguments``; with ``--write``, record what it printed."""
    benchmark = BENCHMARKS[name]
    write = "--write" in arguments
    arguments = [argument for argument in arguments if argument != "--write"]
    if write and benchmark.section is None:
        print(f"{name} writes no section of docs/benchmarks.md", file=sys.stderr)  # noqa: T201
        return 2
    main = importlib.import_module(benchmark.module).main
    sys.argv = [f"python -m bench {name}", *arguments]
    printed = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed) if write else sys.stdout):
        ran = main()
        if inspect.iscoroutine(ran):  # a benchmark whose main is a coroutine
            asyncio.run(ran)
    if write and benchmark.section is not None:
        command = shlex.join(["python", "-m", "bench", name, *arguments])
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        figures = f"`{command}`, {when}:\n\n```\n{printed.getvalue().strip()}\n```"
        replace_figures(name, benchmark.section, figures)
    return 0


class _Tee(io.TextIOBase):
    """What is printed goes to the terminal as it comes, and is kept for the page."""

    def __init__(self, *streams: TextIO) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "list"}:
        print(usage())  # noqa: T201
        return 0
    if argv[0] not in BENCHMARKS:
        print(f"no benchmark {argv[0]!r}\n\n{usage()}", file=sys.stderr)  # noqa: T201
        return 2
    return run(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
