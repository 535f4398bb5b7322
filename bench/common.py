"""What the benchmarks share: an app on a fresh database, in-process over ASGI."""

from __future__ import annotations

import os
import platform
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

_OFFLINE_BPE = Path(__file__).resolve().parent.parent.parent / "shared" / "tiktoken-cache"
if "TIKTOKEN_CACHE_DIR" not in os.environ and _OFFLINE_BPE.is_dir():
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_OFFLINE_BPE)

from app.budget.tokens import TokenizerRegistry  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


@asynccontextmanager
async def running_app(
    database_url: str | None = None, *, tokenizers: TokenizerRegistry | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """The real app (lifespan, migrations) on ``database_url`` or a throwaway SQLite file."""
    with tempfile.TemporaryDirectory() as folder:
        url = database_url or f"sqlite+aiosqlite:///{folder}/bench.db"
        settings = Settings(_env_file=None, database_url=url, auto_migrate=True)
        app = create_app(settings, tokenizers=tokenizers)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench"
            ) as client,
        ):
            yield client


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]
