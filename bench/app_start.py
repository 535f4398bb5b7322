"""What starting an app costs a test: the start (lifespan), the first request, and the stop,
in CPU seconds of this process, on a SQLite database copied from a migrated template.

FastAPI builds an included router's routes (their dependants, and a pydantic TypeAdapter for
every parameter and response model) on the first request of each app that reaches that
router: a first request to the first router builds one router, one to a route declared after
every router builds them all. The integration tests start an app each, so this is paid once
per test.

    python -m bench app-start [--apps 20] [--path /v1/sessions/x --path /healthz]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path

import httpx

from app.db import create_engine, migrate
from app.main import create_app
from app.settings import Settings


async def _migrated(path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{path}")
    try:
        await migrate(engine)
    finally:
        await engine.dispose()


async def _one_app(template: Path, copy: Path, path: str) -> tuple[float, float, float]:
    """CPU seconds of one app's start, first request to ``path``, and stop."""
    shutil.copyfile(template, copy)
    settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{copy}")
    started = time.process_time()
    app = create_app(settings)
    lifespan = app.router.lifespan_context(app)
    await lifespan.__aenter__()
    ready = time.process_time()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://contextd.test"
    ) as client:
        await client.get(path)
        answered = time.process_time()
    await lifespan.__aexit__(None, None, None)
    stopped = time.process_time()
    return ready - started, answered - ready, stopped - answered


async def _measure(apps: int, paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        template = Path(folder) / "template.db"
        await _migrated(template)
        # One app first: imports, tiktoken's encodings and the template's pages are loaded
        # once per process, not per app.
        await _one_app(template, Path(folder) / "warm.db", paths[0])
        print(f"{'first request':<28} {'start':>8} {'request':>8} {'stop':>8}  (CPU s per app)")  # noqa: T201
        for path in paths:
            totals = [0.0, 0.0, 0.0]
            for number in range(apps):
                spent = await _one_app(template, Path(folder) / f"{number}.db", path)
                totals = [total + part for total, part in zip(totals, spent, strict=True)]
            start, request, stop = (total / apps for total in totals)
            print(f"GET {path:<24} {start:8.4f} {request:8.4f} {stop:8.4f}")  # noqa: T201


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--apps", type=int, default=20, help="apps per path")
    parser.add_argument("--path", action="append", help="the first request's path (repeat)")
    arguments = parser.parse_args(argv)
    asyncio.run(_measure(arguments.apps, arguments.path or ["/v1/sessions/x", "/healthz"]))


if __name__ == "__main__":
    main()
