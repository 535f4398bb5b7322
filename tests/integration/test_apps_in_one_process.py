"""Several apps in one process serve the same routes (built once, app/routes.py), and each
keeps what is its own: its dependency overrides, its settings and its database."""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path

import httpx
import pytest

from app.db import DbSession
from app.runtime import RuntimeDep
from app.sessions.endpoints import get_session_service
from app.sessions.service import SessionService
from tests.conftest import RunningApp
from tests.support import create_session


async def _another_tenants_service(db: DbSession, runtime: RuntimeDep) -> SessionService:
    return SessionService(db, tenant_id="another-tenant", runtime=runtime)


async def test_an_apps_dependency_overrides_apply_to_that_app_only(apps: RunningApp) -> None:
    overridden, overridden_client = await apps.start()
    _, other_client = await apps.start()
    session = await create_session(other_client)
    path = f"/v1/sessions/{session['id']}"

    overridden.dependency_overrides[get_session_service] = _another_tenants_service
    try:
        through_override = await overridden_client.get(path)
        through_other = await other_client.get(path)
    finally:
        overridden.dependency_overrides.clear()
    after_clearing = await overridden_client.get(path)

    assert through_override.status_code == 404
    assert through_override.json()["error"]["code"] == "session_not_found"
    assert through_other.status_code == 200
    assert after_clearing.status_code == 200


@pytest.fixture
def other_sqlite_url(tmp_path: Path, sqlite_template: Path) -> str:
    """A second fresh, migrated SQLite database."""
    path = tmp_path / "other.db"
    shutil.copyfile(sqlite_template, path)
    return f"sqlite+aiosqlite:///{path}"


async def test_apps_on_two_databases_each_serve_their_own(
    database_url: str, other_sqlite_url: str
) -> None:
    first, second = RunningApp(database_url), RunningApp(other_sqlite_url)
    try:
        _, first_client = await first.start()
        _, second_client = await second.start(max_body_bytes=2048)
        session = await create_session(first_client)

        on_first = await first_client.get(f"/v1/sessions/{session['id']}")
        on_second = await second_client.get(f"/v1/sessions/{session['id']}")
        large = (
            await _create_with_goal(first_client, "g" * 4096),
            await _create_with_goal(second_client, "g" * 4096),
        )
    finally:
        await first.stop_all()
        await second.stop_all()

    assert on_first.status_code == 200
    assert on_second.status_code == 404
    assert [response.status_code for response in large] == [201, 413]


async def _create_with_goal(client: httpx.AsyncClient, goal: str) -> httpx.Response:
    return await client.post("/v1/sessions", json={"model": "gpt-4o-mini", "goal": goal})


async def test_an_app_that_stopped_is_not_kept_in_memory(database_url: str) -> None:
    running = RunningApp(database_url)
    app, client = await running.start()
    for page in ("/docs", "/redoc", "/docs/oauth2-redirect", "/healthz", "/readyz"):
        assert (await client.get(page)).status_code == 200, page
    await create_session(client)
    await running.stop_all()
    app_ref = weakref.ref(app)

    del app, client
    gc.collect()

    assert app_ref() is None
