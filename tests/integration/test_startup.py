"""Start-up against databases in every state, and the command line that prepares them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.db import SchemaNotReadyError
from app.main import create_app
from tests.conftest import REPO, make_settings
from tests.support import create_session


async def test_unmigrated_database_is_refused_with_a_clear_message(
    empty_database_url: str,
) -> None:
    app = create_app(make_settings(empty_database_url, auto_migrate=False))

    with pytest.raises(SchemaNotReadyError, match="contextd migrate"):
        async with app.router.lifespan_context(app):
            pass


async def test_auto_migrate_prepares_an_empty_database(empty_database_url: str) -> None:
    app = create_app(make_settings(empty_database_url, auto_migrate=True))

    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://contextd.test"
        ) as client,
    ):
        session = await create_session(client)

    assert session["budget"]["input_budget"] == 5530


def test_embedded_sqlite_migrates_itself_and_postgres_does_not() -> None:
    assert make_settings("sqlite+aiosqlite:///x.db").migrates_at_startup
    assert not make_settings("postgresql+asyncpg://u@h/db").migrates_at_startup


def test_migrate_command_brings_an_empty_database_to_head(empty_database_url: str) -> None:
    environment = {**os.environ, "CONTEXTD_DATABASE_URL": empty_database_url}

    migrated = subprocess.run(
        [sys.executable, "-m", "app", "migrate", "--create"],  # no file yet on SQLite
        env=environment,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    again = subprocess.run(
        [sys.executable, "-m", "app", "migrate"],
        env=environment,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert migrated.returncode == 0, migrated.stderr
    assert "up to date" in migrated.stdout
    assert again.returncode == 0, again.stderr


def test_serve_on_an_unmigrated_database_exits_with_the_reason(empty_database_url: str) -> None:
    environment = {
        **os.environ,
        "CONTEXTD_DATABASE_URL": empty_database_url,
        "CONTEXTD_AUTO_MIGRATE": "false",
    }

    served = subprocess.run(
        [sys.executable, "-m", "app", "serve", "--port", "0"],
        env=environment,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert served.returncode == 2
    assert "contextd migrate" in served.stderr


_SERVED_WORKER = """
import asyncio, gc, json
import httpx
from app.main import SERVED_GC_THRESHOLD, create_served_app

async def main():
    app = create_served_app()
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://contextd.test"
    ) as client:
        created = await client.post("/v1/sessions", json={"model": "gpt-4o"})
        print(json.dumps({
            "status": created.status_code,
            "frozen": gc.get_freeze_count(),
            "threshold": gc.get_threshold()[0] == SERVED_GC_THRESHOLD,
        }))

asyncio.run(main())
"""


def test_a_served_worker_sets_what_start_up_built_apart_from_the_collector(
    tmp_path: Path,
) -> None:
    # In a process of its own: the collector's settings are the whole interpreter's.
    environment = {
        **os.environ,
        "CONTEXTD_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/served.db",
        "CONTEXTD_AUTO_MIGRATE": "true",
    }
    served = subprocess.run(
        [sys.executable, "-c", _SERVED_WORKER],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert served.returncode == 0, served.stderr
    answer = json.loads(served.stdout.strip().splitlines()[-1])
    assert answer["status"] == 201
    assert answer["frozen"] > 10_000  # the modules and the app, not a handful of objects
    assert answer["threshold"]
