"""What the benchmarks share: an app on a fresh database, in-process over ASGI; a fresh
Postgres database; the machine they ran on."""

from __future__ import annotations

import os
import platform
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy import make_url

_OFFLINE_BPE = Path(__file__).resolve().parent.parent.parent / "shared" / "tiktoken-cache"
if "TIKTOKEN_CACHE_DIR" not in os.environ and _OFFLINE_BPE.is_dir():
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_OFFLINE_BPE)

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.tokens.registry import TokenizerRegistry  # noqa: E402

#: The Postgres server the benchmarks make their databases on.
DEFAULT_SERVER = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
#: Packages whose versions a benchmark page names.
PACKAGES = ("fastapi", "uvicorn", "sqlalchemy", "asyncpg", "langchain-core", "llama-index-core")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return None


def package_versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def _plain_dsn(server_url: str, database: str | None = None) -> str:
    url = make_url(server_url).set(drivername="postgresql")
    if database is not None:
        url = url.set(database=database)
    return url.render_as_string(hide_password=False)


async def postgres_version(server_url: str) -> str:
    connection = await asyncpg.connect(_plain_dsn(server_url))
    try:
        shown: str = await connection.fetchval("SHOW server_version")
        return shown
    finally:
        await connection.close()


async def machine_details(server_url: str | None) -> dict[str, str]:
    """What a results page says about where it was measured."""
    ram = memory_gib()
    details = {
        "cpu": f"{cpu_model()} ({os.cpu_count()} logical cores)",
        "ram": f"{ram:.1f} GiB" if ram else "unknown",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "postgres": await postgres_version(server_url) if server_url else "not used",
    }
    details.update(package_versions())
    return details


@asynccontextmanager
async def fresh_database(server_url: str, prefix: str = "contextd_bench") -> AsyncIterator[str]:
    """A new, empty Postgres database on ``server_url`` (an asyncpg URL), dropped after."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(_plain_dsn(server_url))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield (
            make_url(server_url)
            .set(drivername="postgresql+asyncpg", database=name)
            .render_as_string(hide_password=False)
        )
    finally:
        admin = await asyncpg.connect(_plain_dsn(server_url))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@asynccontextmanager
async def running_app(
    database_url: str | None = None,
    *,
    tokenizers: TokenizerRegistry | None = None,
    settings: dict[str, Any] | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """The real app (lifespan, migrations) on ``database_url`` or a throwaway SQLite file,
    with ``settings`` over the defaults."""
    with tempfile.TemporaryDirectory() as folder:
        url = database_url or f"sqlite+aiosqlite:///{folder}/bench.db"
        configured = Settings(
            _env_file=None, database_url=url, auto_migrate=True, **(settings or {})
        )
        app = create_app(configured, tokenizers=tokenizers)
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


def int_list(text: str) -> list[int]:
    """A command-line list of numbers: "1,16,64"."""
    return [int(part) for part in text.split(",") if part]
