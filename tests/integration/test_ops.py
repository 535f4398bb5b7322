"""What the people who run contextd rely on: the unit of work, metrics, logs, the command
line and retention."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import socket
import sys
from collections import Counter as CounterOf
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text, update

from app.cli import _share_metrics_between_workers, main
from app.db import create_engine
from app.logs import JsonFormatter
from app.models import AuditRecord
from app.models.base import utcnow
from tests.conftest import REPO, RunningApp
from tests.support import audit_rows, complete_turn, create_session, start_turn, stored_messages
from tests.traffic import eventful_session

POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


@POSTGRES_ONLY
async def test_a_response_is_sent_only_after_its_writes_are_committed(apps: RunningApp) -> None:
    app, _ = await apps.start()
    body = json.dumps({"id": "committed-first", "model": "gpt-4"}).encode()
    seen_when_answered: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            # Another connection: it sees only what has been committed.
            async with app.state.engine.connect() as connection:
                found = await connection.scalar(
                    text("SELECT count(*) FROM sessions WHERE id = 'committed-first'")
                )
            seen_when_answered.append(found)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/sessions",
        "raw_path": b"/v1/sessions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"contextd.test")],
        "client": ("127.0.0.1", 1),
        "server": ("contextd.test", 80),
        "state": {},
    }
    await app(scope, receive, send)

    assert seen_when_answered == [1]


# -- metrics ---------------------------------------------------------------------------------


def _families(text_format: str) -> dict[str, Metric]:
    return {family.name: family for family in text_string_to_metric_families(text_format)}


def _samples(family: Metric, suffix: str = "_total") -> dict[tuple[str, ...], float]:
    """A counter's values by label values (in label-name order)."""
    return {
        tuple(value for _, value in sorted(sample.labels.items())): sample.value
        for sample in family.samples
        if sample.name == family.name + suffix
    }


async def test_metrics_by_model_equal_the_audit_table(client: httpx.AsyncClient) -> None:
    eventful = await eventful_session(client, model="gpt-4")
    quiet = (await create_session(client, model="gpt-4o-2024-08-06"))["id"]
    unknown = (await create_session(client, model="acme-llm-7b"))["id"]
    for session_id in (quiet, unknown):
        turn = await start_turn(client, session_id, "Hello")
        await complete_turn(client, session_id, turn["turn_id"], "Hi")

    families = _families((await client.get("/metrics")).text)
    rows = [
        row
        for session_id in (eventful, quiet, unknown)
        for row in await audit_rows(client, session_id)
    ]

    family_of = {"gpt-4": "gpt-4", "gpt-4o-2024-08-06": "gpt-4o", "acme-llm-7b": "other"}
    expected_assemblies: CounterOf[tuple[str, ...]] = CounterOf(
        (family_of[r["model_alias"]], "rejected" if r["overflow_rejected"] else "accepted")
        for r in rows
    )
    events = {
        "summary": "summary_triggered",
        "prune": "prune_triggered",
        "overflow": "overflow_rejected",
        "summary_fallback": "summary_fallback",
        "estimator_fallback": "estimator_fallback",
    }
    expected_events: CounterOf[tuple[str, ...]] = CounterOf(
        (event, family_of[r["model_alias"]])
        for r in rows
        for event, column in events.items()
        if r[column]
    )
    assert _samples(families["context_assemblies"]) == expected_assemblies
    assert _samples(families["context_policy_events"]) == expected_events
    assert {("gpt-4", "rejected"), ("other", "accepted")} <= set(expected_assemblies)
    assert {("summary", "gpt-4"), ("prune", "gpt-4")} <= set(expected_events)
    tokens = _samples(families["context_prompt_tokens"], "_count")
    assert tokens == {("gpt-4",): 20.0, ("gpt-4o",): 1.0, ("other",): 1.0}


async def test_http_metrics_are_labelled_by_route_template(client: httpx.AsyncClient) -> None:
    session_id = (await create_session(client))["id"]
    await start_turn(client, session_id, "Hello")
    await client.get("/v1/sessions/no-such-session")
    await client.get("/nowhere")

    requests = _samples(_families((await client.get("/metrics")).text)["http_requests"])

    assert requests == {
        ("POST", "/v1/sessions", "201"): 1.0,
        ("POST", "/v1/sessions/{session_id}/turns", "201"): 1.0,
        ("GET", "/v1/sessions/{session_id}", "404"): 1.0,
        ("GET", "unmatched", "404"): 1.0,
    }


async def test_a_body_refused_as_too_large_is_counted_logged_and_given_a_request_id(
    apps: RunningApp, log_records: list[logging.LogRecord]
) -> None:
    _, client = await apps.start(max_body_bytes=2000)

    refused = await client.post("/v1/sessions", json={"model": "gpt-4o", "goal": "x" * 3000})

    requests = _samples(_families((await client.get("/metrics")).text)["http_requests"])
    line = next(r.line for r in log_records if r.name == "contextd.request")  # type: ignore[attr-defined]
    assert refused.status_code == 413
    assert requests[("POST", "unmatched", "413")] == 1.0
    assert (line["status"], line["request_id"]) == (413, refused.headers["x-request-id"])


async def test_a_server_error_is_counted_and_logged_as_one_request(
    apps: RunningApp, log_records: list[logging.LogRecord]
) -> None:
    app, _ = await apps.start()

    @app.get("/v1/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
        base_url="http://contextd.test",
    )
    async with client:
        failed = await client.get("/v1/broken")
        requests = _samples(_families((await client.get("/metrics")).text)["http_requests"])

    line = next(r.line for r in log_records if r.name == "contextd.request")  # type: ignore[attr-defined]
    assert failed.status_code == 500
    assert failed.json()["error"]["code"] == "internal_error"
    assert requests[("GET", "/v1/broken", "500")] == 1.0
    assert (line["route"], line["status"]) == ("/v1/broken", 500)


async def test_the_dashboard_only_queries_metrics_that_contextd_exposes(
    client: httpx.AsyncClient,
) -> None:
    await eventful_session(client)
    exposed = {
        sample.name
        for family in _families((await client.get("/metrics")).text).values()
        for sample in family.samples
    }
    dashboard = json.loads((REPO / "deploy/grafana/dashboards/contextd.json").read_text())

    # A metric in PromQL is a name followed by a selector ({…}) or a range ([…]).
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\b([a-z_][a-z0-9_]*)\s*[{\[]", target["expr"])
    }
    assert queried - exposed == set()
    assert {"context_summary_count_total", "context_prune_count_total"} <= queried
    assert {"context_overflow_reject_count_total", "context_prompt_tokens_bucket"} <= queried


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _wait_until_ready(base_url: str, process: asyncio.subprocess.Process) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for _ in range(600):
            if process.returncode is not None:
                raise AssertionError(f"contextd exited with {process.returncode}")
            try:
                if (await client.get("/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"{base_url} did not become ready")


async def test_metrics_of_several_processes_add_up(sqlite_template: Path, tmp_path: Path) -> None:
    """Two servers on one database and one metrics directory, each given its own traffic:
    either one's /metrics counts both (as the workers of one server do)."""
    database = tmp_path / "contextd.db"
    shutil.copyfile(sqlite_template, database)
    metrics_directory = tmp_path / "metrics"
    metrics_directory.mkdir()
    environment = {
        **os.environ,
        "CONTEXTD_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_directory),
        "CONTEXTD_LOG_LEVEL": "warning",
    }
    ports = [_free_port(), _free_port()]
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "app", "serve", "--port", str(port)),
            env=environment,
            cwd=REPO,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for port in ports
    ]
    try:
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        await asyncio.gather(
            *(_wait_until_ready(url, p) for url, p in zip(urls, processes, strict=True))
        )
        for turns, url in enumerate(urls * 2, start=1):
            async with httpx.AsyncClient(base_url=url) as client:
                session_id = (await create_session(client))["id"]
                for index in range(turns):
                    turn = await start_turn(client, session_id, f"Turn {index}")
                    await complete_turn(client, session_id, turn["turn_id"], "Done")

        async with httpx.AsyncClient(base_url=urls[1]) as client:
            families = _families((await client.get("/metrics")).text)
            audit = (await client.get("/v1/audit", params={"limit": 500})).json()["items"]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            await process.wait()

    assert sum(_samples(families["context_assemblies"]).values()) == len(audit) == 1 + 2 + 3 + 4
    requests = _samples(families["http_requests"])
    assert requests[("POST", "/v1/sessions/{session_id}/turns", "201")] == 10
    assert requests[("POST", "/v1/sessions", "201")] == 4


def test_several_workers_get_a_shared_metrics_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    # setenv first so that monkeypatch restores the variable's absence afterwards: the code
    # under test sets it, and left set it would put every later app in multiprocess mode.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")

    made = _share_metrics_between_workers()

    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    assert made == str(directory)
    assert directory.is_dir()
    assert list(directory.iterdir()) == []
    directory.rmdir()


# -- logs ------------------------------------------------------------------------------------


@pytest.fixture
def log_records() -> Iterator[list[logging.LogRecord]]:
    """Every record of contextd's loggers, debug included, as the request's JSON line
    would carry it."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            record.line = json.loads(JsonFormatter().format(record))
            records.append(record)

    handler = Keep()
    logger = logging.getLogger("contextd")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)


async def test_the_request_line_of_an_assembly_names_tenant_session_and_turn(
    client: httpx.AsyncClient, log_records: list[logging.LogRecord]
) -> None:
    session_id = (await create_session(client))["id"]
    turn = await start_turn(client, session_id, "Hello")

    line = next(
        r.line  # type: ignore[attr-defined]
        for r in log_records
        if r.name == "contextd.request" and r.route == "/v1/sessions/{session_id}/turns"  # type: ignore[attr-defined]
    )
    assert line["tenant"] == "default"
    assert line["session"] == session_id
    assert line["turn"] == turn["turn_id"]
    assert (line["turn_seq"], line["step"], line["audit_id"]) == (1, 0, turn["audit_id"])
    assert line["status"] == 201


async def test_budget_telemetry_gives_tokens_per_block_before_and_after_at_debug(
    client: httpx.AsyncClient, log_records: list[logging.LogRecord]
) -> None:
    session_id = await eventful_session(client, reject=False)
    rows = await audit_rows(client, session_id)

    telemetry = [r for r in log_records if r.name == "contextd.budget"]
    assert [r.levelno for r in telemetry] == [logging.DEBUG] * len(rows)
    summarised = next(
        (r.line, row)  # type: ignore[attr-defined]
        for r, row in zip(telemetry, rows, strict=True)
        if row["summary_id"] is not None
    )
    line, row = summarised
    blocks = line["budget"]["blocks"]
    assert {name: block["after"] for name, block in blocks.items()} == row["blocks"]
    assert blocks["summary"]["before"] < blocks["summary"]["after"]
    assert blocks["history"]["before"] > blocks["history"]["after"]
    assert sum(block["before"] for block in blocks.values()) == row["estimated_input_tokens_before"]
    assert line["session"] == session_id
    assert line["budget"]["tokens_after_prune"] == row["estimated_input_tokens_after_prune"]


# -- command line and retention ----------------------------------------------------------------


@pytest.fixture
def command_line(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Awaitable[int]]]:
    """Runs ``contextd …`` in a thread (it runs its own event loop) on the test's database,
    leaving the logging set-up it changes as it was."""
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", database_url)
    monkeypatch.setenv("CONTEXTD_LOG_FORMAT", "text")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level

    def run(*argv: str) -> int:
        try:
            main(list(argv))
        except SystemExit as exit_:
            return int(exit_.code or 0)
        return 0

    async def contextd(*argv: str) -> int:
        return await asyncio.to_thread(run, *argv)

    try:
        yield contextd
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


async def test_inspect_prints_the_sessions_context_by_block_summary_and_turn(
    client: httpx.AsyncClient,
    command_line: Callable[..., Awaitable[int]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    session_id = await eventful_session(client)
    rows = await audit_rows(client, session_id)
    last_accepted = next(r for r in reversed(rows) if not r["overflow_rejected"])
    messages = await stored_messages(client, session_id)
    summary = (await client.get(f"/v1/sessions/{session_id}/summaries")).json()["summaries"][0]

    exit_code = await command_line("inspect", session_id)

    report = capsys.readouterr().out
    assert exit_code == 0
    assert f"Session {session_id}" in report
    assert "input budget 5,530 tokens" in report
    assert f"audit #{last_accepted['id']}, turn 10 step 1" in report
    for block, tokens in last_accepted["blocks"].items():
        assert re.search(rf"^  {block} +{tokens:,} ", report, re.MULTILINE), block
    assert f"then rejected: audit #{rows[-1]['id']}" in report
    assert f"Latest summary #{summary['id']}" in report
    assert summary["summary_text"][:40] in report
    by_turn = CounterOf((m["turn_seq"], m["state"]) for m in messages)
    for turn_seq in range(1, 11):
        counts = [by_turn[turn_seq, state] for state in ("active", "summarised", "pruned")]
        expected = rf"^ +{turn_seq} +{sum(counts)} +{counts[0]} +{counts[1]} +{counts[2]} +"
        assert re.search(expected, report, re.MULTILINE), f"turn {turn_seq}"


async def test_inspect_of_an_unknown_session_says_so(
    command_line: Callable[..., Awaitable[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    exit_code = await command_line("inspect", "no-such-session")

    assert exit_code == 1
    assert "no session 'no-such-session'" in capsys.readouterr().err


async def _age_audit_rows(database_url: str, ids: list[int], days: int) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                update(AuditRecord)
                .where(AuditRecord.id.in_(ids))
                .values(created_at=utcnow() - timedelta(days=days))
            )
    finally:
        await engine.dispose()


async def test_purge_audit_deletes_old_rows_in_batches_with_progress(
    client: httpx.AsyncClient,
    database_url: str,
    command_line: Callable[..., Awaitable[int]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    session_id = (await create_session(client))["id"]
    for index in range(7):
        turn = await start_turn(client, session_id, f"Turn {index}")
        await complete_turn(client, session_id, turn["turn_id"], "Done")
    rows = await audit_rows(client, session_id)
    await _age_audit_rows(database_url, [r["id"] for r in rows[:5]], days=40)

    exit_code = await command_line("purge-audit", "--older-than-days", "30", "--batch-size", "2")

    output = capsys.readouterr()
    assert exit_code == 0
    assert "purged 5 audit rows older than 30 days" in output.out
    assert [line for line in output.err.splitlines() if line.startswith("purging")] == [
        "purging audit rows: 2/5 (40%)",
        "purging audit rows: 4/5 (80%)",
        "purging audit rows: 5/5 (100%)",
    ]
    assert [r["id"] for r in await audit_rows(client, session_id)] == [r["id"] for r in rows[5:]]


async def test_purge_audit_needs_an_age(
    command_line: Callable[..., Awaitable[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    exit_code = await command_line("purge-audit")

    assert exit_code == 2
    assert "CONTEXTD_AUDIT_RETENTION_DAYS" in capsys.readouterr().err


async def test_the_service_purges_audit_rows_past_retention_by_itself(
    apps: RunningApp, database_url: str
) -> None:
    _, client = await apps.start()
    session_id = (await create_session(client))["id"]
    for index in range(4):
        turn = await start_turn(client, session_id, f"Turn {index}")
        await complete_turn(client, session_id, turn["turn_id"], "Done")
    rows = await audit_rows(client, session_id)
    await _age_audit_rows(database_url, [r["id"] for r in rows[:3]], days=31)

    await apps.start(audit_retention_days=30, audit_purge_interval_seconds=0.05)

    remaining = rows
    for _ in range(200):  # the purge runs at start-up, then every 0.05 s
        remaining = await audit_rows(client, session_id)
        if len(remaining) < len(rows):
            break
        await asyncio.sleep(0.05)
    assert [r["id"] for r in remaining] == [rows[3]["id"]]
