"""The command line as a user meets it: which database a command works on, no database made
by accident, the first key and the sessions made before it, and settings from ``.env``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import REPO, Contextd, RunningApp
from tests.processes import stop_process
from tests.support import audit_rows, complete_turn, create_session, start_turn


@pytest.fixture
def empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with no database and no ``.env``, as the command's working directory, and
    no database URL in the environment: the default ``./contextd.db`` applies."""
    directory = tmp_path / "elsewhere"
    directory.mkdir()
    monkeypatch.chdir(directory)
    monkeypatch.delenv("CONTEXTD_DATABASE_URL", raising=False)
    return directory


def _files(directory: Path) -> list[Path]:
    return list(directory.iterdir())


# -- which database --------------------------------------------------------------------------


async def test_a_command_names_the_sqlite_file_it_works_on(
    contextd: Contextd, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sqlite_template: Path
) -> None:
    database = tmp_path / "here.db"
    shutil.copyfile(sqlite_template, database)
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", f"sqlite+aiosqlite:///{database}")

    listed = await contextd("keys", "list")

    assert listed.code == 0, listed.err
    assert f"contextd: database sqlite+aiosqlite:///{database}" in listed.err


@pytest.mark.postgres
async def test_a_command_names_the_postgres_database_with_its_password_hidden(
    contextd: Contextd, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    url = make_url(postgres_url)
    # A password the server does not ask for (trust) is ignored; one it asks for is the real one.
    with_password = url.set(password=url.password or "s3cret-word")
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", with_password.render_as_string(hide_password=False))

    listed = await contextd("keys", "list")

    assert listed.code == 0, listed.err
    assert f"contextd: database {with_password.render_as_string(hide_password=True)}" in listed.err
    assert ":***@" in listed.err
    assert str(with_password.password) not in listed.err + listed.out


# -- no new database by accident ---------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("keys", "create", "--tenant", "acme", "--scope", "agent"),
        ("keys", "list"),
        ("migrate",),
        ("inspect", "trip-42"),
        ("purge-audit", "--older-than-days", "30"),
        ("sessions", "assign-tenant", "--from", "default", "--to", "acme"),
    ],
)
async def test_a_command_refuses_to_create_a_new_sqlite_file(
    contextd: Contextd, empty_directory: Path, argv: tuple[str, ...]
) -> None:
    refused = await contextd(*argv)

    assert refused.code == 2
    assert f"no database at {empty_directory / 'contextd.db'}" in refused.err
    assert "CONTEXTD_DATABASE_URL" in refused.err
    assert "run from the directory that holds it" in refused.err
    assert refused.out == ""
    assert _files(empty_directory) == []


async def test_create_makes_the_new_database_and_the_key_lands_in_it(
    contextd: Contextd, empty_directory: Path
) -> None:
    refused = await contextd("keys", "create", "--tenant", "acme", "--scope", "agent")
    created = await contextd("keys", "create", "--tenant", "acme", "--scope", "agent", "--create")
    listed = await contextd("keys", "list")

    assert "add --create" in refused.err
    assert created.code == 0, created.err
    assert created.out.startswith("ctxd_")
    assert (empty_directory / "contextd.db").is_file()
    assert listed.code == 0, listed.err
    assert created.out.split("_")[1] in listed.out


async def test_migrate_with_create_starts_a_database(
    contextd: Contextd, empty_directory: Path
) -> None:
    migrated = await contextd("migrate", "--create")

    assert migrated.code == 0, migrated.err
    assert "up to date" in migrated.out
    assert (empty_directory / "contextd.db").is_file()


def test_serve_creates_the_default_database_for_a_first_run(tmp_path: Path) -> None:
    environment = {
        name: value for name, value in os.environ.items() if name != "CONTEXTD_DATABASE_URL"
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", "0"],
            env=environment,
            cwd=tmp_path,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        for _ in range(600):
            if "Uvicorn running" in log.read_text(errors="replace") or process.poll() is not None:
                break
            subprocess.run(["sleep", "0.1"], check=True)
        printed = log.read_text(errors="replace")
    finally:
        stop_process(process)

    assert "Uvicorn running" in printed, printed
    assert f"contextd: database sqlite+aiosqlite:///./contextd.db ({tmp_path / 'contextd.db'})" in (
        printed
    )
    assert (tmp_path / "contextd.db").is_file()


# -- the first key, and the sessions made before it ----------------------------------------


async def test_the_first_key_says_how_to_hand_the_open_sessions_to_its_tenant(
    apps: RunningApp, contextd: Contextd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", apps.database_url)
    app, open_client = await apps.start(api_key_cache_seconds=0)
    await create_session(open_client, id="trip-42")
    turn = await start_turn(open_client, "trip-42", "Find me a hotel in Lisbon")
    await complete_turn(open_client, "trip-42", turn["turn_id"], "Here are three.")
    await create_session(open_client, id="trip-43")

    created = await contextd("keys", "create", "--tenant", "acme", "--scope", "agent")
    second = await contextd("keys", "create", "--tenant", "acme", "--scope", "ops")

    assert created.code == 0, created.err
    assert "2 session(s) made while it ran open belong to tenant 'default'" in created.err
    assert "contextd sessions assign-tenant --from default --to acme" in created.err
    assert "assign-tenant" not in second.err  # only the first key changes anything
    agent = apps.client(app, created.out.strip())
    ops = apps.client(app, second.out.strip())
    assert (await agent.get("/v1/sessions/trip-42")).status_code == 404
    command = re.search(r"contextd (sessions assign-tenant .*)", created.err)
    assert command is not None

    handed = await contextd(*command.group(1).split())

    assert handed.code == 0, handed.err
    assert "2 session(s) of tenant 'default'" in handed.out
    session = (await agent.get("/v1/sessions/trip-42")).json()
    assert session["tenant_id"] == "acme"
    assert session["turn_count"] == 1
    messages = (await agent.get("/v1/sessions/trip-42/messages")).json()["messages"]
    assert [m["content"] for m in messages] == ["Find me a hotel in Lisbon", "Here are three."]
    assert (await agent.get("/v1/sessions/trip-43")).status_code == 200
    assert len(await audit_rows(ops, "trip-42")) == 1
    next_turn = await start_turn(agent, "trip-42", "The second one, please")
    assert next_turn["budget"]["estimated_input_tokens"] > 0


async def test_a_first_key_of_tenant_default_keeps_its_sessions(
    apps: RunningApp, contextd: Contextd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", apps.database_url)
    _, open_client = await apps.start()
    await create_session(open_client, id="trip-42")

    created = await contextd("keys", "create", "--tenant", "default", "--scope", "agent")

    assert created.code == 0, created.err
    assert "this key's tenant: it reaches them" in created.err
    assert "assign-tenant" not in created.err


async def test_assign_tenant_moves_nothing_when_the_tenant_has_a_session_of_the_same_id(
    apps: RunningApp, contextd: Contextd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", apps.database_url)
    app, open_client = await apps.start(api_key_cache_seconds=0)
    await create_session(open_client, id="trip-42", goal="the open one")
    await create_session(open_client, id="trip-43")
    acme = apps.client(app, await apps.key("acme"))
    await create_session(acme, id="trip-42", goal="acme's own")

    refused = await contextd("sessions", "assign-tenant", "--from", "default", "--to", "acme")

    assert refused.code == 1
    assert "tenant 'acme' already has sessions with the ids 'trip-42'" in refused.err
    assert (await acme.get("/v1/sessions/trip-42")).json()["goal"] == "acme's own"
    assert (await acme.get("/v1/sessions/trip-43")).status_code == 404
    default = apps.client(app, await apps.key("default"))
    assert (await default.get("/v1/sessions/trip-42")).json()["goal"] == "the open one"


async def test_assign_tenant_refuses_a_tenant_id_a_key_could_not_have(
    apps: RunningApp, contextd: Contextd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", apps.database_url)

    refused = await contextd("sessions", "assign-tenant", "--from", "default", "--to", "a b")

    assert refused.code == 1
    assert "tenant ids match" in refused.err


# -- TIKTOKEN_CACHE_DIR from .env ------------------------------------------------------------

_COUNT_THROUGH_THE_APP = """
import asyncio, json, httpx
from app.main import create_app

async def count():
    app = create_app()
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=transport, base_url="http://contextd.test"
    ) as client:
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello there"}]}
        print(json.dumps((await client.post("/v1/tokens/count", json=body)).json()))

asyncio.run(count())
"""


def test_tiktoken_cache_dir_written_in_dotenv_is_used(tmp_path: Path) -> None:
    cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]  # conftest made sure it holds the files
    (tmp_path / ".env").write_text(f"TIKTOKEN_CACHE_DIR={cache_dir}\n")
    # The real environment names no cache folder; only .env does. The package is found
    # from anywhere, as once installed.
    environment = {
        **{
            name: value
            for name, value in os.environ.items()
            if name not in ("TIKTOKEN_CACHE_DIR", "CONTEXTD_DATABASE_URL")
        },
        "PYTHONPATH": str(REPO),
    }

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *argv],
            env=environment,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    listed = run("-m", "app", "tokenizers")
    counted = run("-c", _COUNT_THROUGH_THE_APP)

    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert f"tiktoken cache: {cache_dir} (TIKTOKEN_CACHE_DIR)" in listed.stdout
    for encoding in ("o200k_base", "cl100k_base"):
        assert re.search(rf"tiktoken:{encoding} +available offline", listed.stdout), encoding
    assert "MISSING" not in listed.stdout
    assert counted.returncode == 0, counted.stderr
    count = json.loads(counted.stdout.strip().splitlines()[-1])
    assert count["method"] == "exact", count
    assert count["encoding"].startswith("tiktoken:o200k_base"), count
