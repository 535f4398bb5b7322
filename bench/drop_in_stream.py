"""What contextd adds to a streamed call: time to first byte and to the whole answer, through
contextd minus direct, side by side in one run, with LiteLLM's proxy in front of the same
model when it is installed.

The model is tests/fake_upstream.py on 127.0.0.1, streaming an OpenAI chat-completions answer
of 40 events, ``--gap`` ms apart. contextd is ``create_app`` served by uvicorn on 127.0.0.1
(one worker, a fresh SQLite file), reached over real HTTP like the model. Each round sends one
request to every target in turn, so all see the same machine; the figures are medians over
the rounds.

* ``direct``: the model itself.
* ``contextd``: ``X-Contextd-Session``: each call starts a turn (stored, budgeted, audited) and
  its answer completes it.
* ``contextd stateless``: no session header: the request is fitted and forwarded, nothing
  stored.
* ``litellm``: ``litellm --config`` (its proxy server, from a virtualenv of its own given with
  ``--litellm``), the model as an ``openai/`` deployment at the fake's base URL.

Each proxy also reports its own time in a header (``x-contextd-overhead-duration-ms``,
``x-litellm-overhead-duration-ms``).

    python -m bench.drop_in_stream [--rounds 60] [--gap 5] [--litellm /tmp/litellm-venv/bin/litellm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tests.fake_upstream import PROVIDER_KEY, serve_fake_upstream

#: The key LiteLLM's proxy is started with (its own, like contextd's X-Contextd-Key).
LITELLM_KEY = "sk-bench-" + "0" * 32


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serve_contextd(upstream_url: str, folder: Path) -> Iterator[str]:
    """contextd over real HTTP on 127.0.0.1, in a thread of its own."""
    from app.main import create_app
    from app.settings import Settings

    settings = Settings(
        _env_file=None,
        database_url=f"sqlite+aiosqlite:///{folder}/bench.db",
        auto_migrate=True,
        proxy_openai_base_url=f"{upstream_url}/v1",
        log_level="warning",
    )
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=0, log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serve_litellm(binary: str, upstream_url: str, folder: Path) -> Iterator[str | None]:
    if not binary or not Path(binary).exists():
        yield None
        return
    config = folder / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        "  - model_name: gpt-4\n"
        "    litellm_params:\n"
        "      model: openai/gpt-4\n"
        f"      api_base: {upstream_url}/v1\n"
        f"      api_key: {PROVIDER_KEY}\n",
        encoding="utf-8",
    )
    port = _free_port()
    log = (folder / "litellm.log").open("wb")
    process = subprocess.Popen(
        [binary, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={
            **os.environ,
            "LITELLM_LOG": "ERROR",
            "DISABLE_SCHEMA_UPDATE": "true",
            # LiteLLM refuses to start open; its clients send this key.
            "LITELLM_MASTER_KEY": LITELLM_KEY,
        },
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health/liveliness", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                break
            time.sleep(0.5)
        else:
            yield None
            return
        yield f"{url}/v1" if process.poll() is None else None
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


async def _one_call(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], number: int
) -> tuple[float, float, str | None]:
    body = {
        "model": "gpt-4",
        "stream": True,
        "messages": [{"role": "user", "content": f"Question number {number}: what is new?"}],
    }
    started = time.perf_counter()
    async with client.stream(
        "POST",
        f"{url}/chat/completions",
        content=json.dumps(body),
        headers={
            "Authorization": f"Bearer {PROVIDER_KEY}",
            "content-type": "application/json",
            **headers,
        },
    ) as response:
        first = None
        async for _ in response.aiter_raw():
            if first is None:
                first = time.perf_counter() - started
        total = time.perf_counter() - started
        assert response.status_code == 200, response.status_code
        overhead = response.headers.get("x-contextd-overhead-duration-ms") or response.headers.get(
            "x-litellm-overhead-duration-ms"
        )
    return (first or total) * 1000, total * 1000, overhead


async def measure(targets: dict[str, tuple[str, dict[str, str]]], rounds: int) -> dict[str, Any]:
    figures: dict[str, dict[str, list[float]]] = {
        name: {"ttfb": [], "total": [], "own": []} for name in targets
    }
    async with httpx.AsyncClient(timeout=60) as client:
        for number in range(rounds + 3):
            for name, (url, headers) in targets.items():
                ttfb, total, own = await _one_call(client, url, headers, number)
                if number < 3:  # warm-up: connections, first tokenizer loads
                    continue
                figures[name]["ttfb"].append(ttfb)
                figures[name]["total"].append(total)
                if own is not None:
                    figures[name]["own"].append(float(own))
    return figures


def table(figures: dict[str, Any], gap: float, rounds: int) -> str:
    direct_ttfb = statistics.median(figures["direct"]["ttfb"])
    direct_total = statistics.median(figures["direct"]["total"])
    lines = [
        f"{rounds} rounds, 40 streamed events {gap:g} ms apart; medians in ms\n",
        "| target | TTFB | TTFB added | whole answer | whole answer added | own header |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, values in figures.items():
        ttfb = statistics.median(values["ttfb"])
        total = statistics.median(values["total"])
        own = f"{statistics.median(values['own']):.2f}" if values["own"] else "-"
        lines.append(
            f"| {name} | {ttfb:.2f} | {ttfb - direct_ttfb:+.2f} | {total:.2f} "
            f"| {total - direct_total:+.2f} | {own} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--gap", type=float, default=5.0, help="ms between streamed events")
    parser.add_argument("--litellm", default="/tmp/litellm-venv/bin/litellm")
    arguments = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        serve_fake_upstream(tool_rounds=0, answer_chars=600) as upstream,
        serve_contextd(upstream.url, Path(folder)) as contextd_url,
        serve_litellm(arguments.litellm, upstream.url, Path(folder)) as litellm_url,
    ):
        upstream.event_gap = arguments.gap / 1000
        targets: dict[str, tuple[str, dict[str, str]]] = {
            "direct": (f"{upstream.url}/v1", {}),
            "contextd": (contextd_url, {"X-Contextd-Session": "bench-stream"}),
            "contextd stateless": (contextd_url, {}),
        }
        if litellm_url is not None:
            targets["litellm"] = (litellm_url, {"Authorization": f"Bearer {LITELLM_KEY}"})
        figures = asyncio.run(measure(targets, arguments.rounds))
    print(table(figures, arguments.gap, arguments.rounds))  # noqa: T201


if __name__ == "__main__":
    main()
