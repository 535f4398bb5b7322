"""Databases for the tests: every test gets a database of its own, migrated, as the template left
it; a run drops every database it made.

SQLite always runs. Postgres comes from, in this order: ``CONTEXTD_TEST_POSTGRES_URL`` (a
server URL such as ``postgresql+asyncpg://postgres@127.0.0.1:5432/postgres``; the run creates
its test databases on it, empties each for the next test, and drops them all at the end); a
server answering on the conventional local address; or, where a Docker engine exists,
testcontainers. With none, the Postgres tests fail (they never skip silently) and the run ends
by saying once what was tried. ``-m "not postgres"`` leaves them out on purpose.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import async_sessionmaker

REPO = Path(__file__).resolve().parent.parent
_OFFLINE_BPE = REPO.parent / "shared" / "tiktoken-cache"
if "TIKTOKEN_CACHE_DIR" not in os.environ and _OFFLINE_BPE.is_dir():
    # Machines without internet cannot download tiktoken's BPE files.
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_OFFLINE_BPE)


def _require_tiktoken_files() -> None:
    """The suite counts with tiktoken's cl100k_base and o200k_base: without their BPE files
    nothing can run, so say what to do once instead of failing every module's import."""
    import tiktoken

    from app.settings import Settings, export_tiktoken_cache_dir

    export_tiktoken_cache_dir(Settings())  # a folder written in .env counts, as for the service
    try:
        for name in ("cl100k_base", "o200k_base"):
            tiktoken.get_encoding(name)
    except Exception as error:
        pytest.exit(
            f"tiktoken cannot load its BPE files ({type(error).__name__}). With internet it "
            "downloads them once; offline, put cl100k_base and o200k_base in the folder "
            f"TIKTOKEN_CACHE_DIR names (now {os.environ.get('TIKTOKEN_CACHE_DIR', 'unset')}; "
            "set it in the environment or in .env; docs/counting.md: Air-gapped installs) and run "
            "again.",
            returncode=4,
        )


def pytest_configure(config: pytest.Config) -> None:
    # Before collection: test modules count with tiktoken when they are imported.
    _require_tiktoken_files()


from app.auth.service import KeyService, Scope  # noqa: E402
from app.db import create_engine, migrate  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.summarize import Summarizer  # noqa: E402
from app.tokens.registry import TokenizerRegistry  # noqa: E402
from tests.databases import PostgresDatabases, execute_admin  # noqa: E402

POSTGRES_URL_ENV = "CONTEXTD_TEST_POSTGRES_URL"
#: Where a Postgres server usually answers on a developer's machine (trust auth).
LOCAL_POSTGRES_URLS = (
    "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres",
    f"postgresql+asyncpg://{os.environ.get('USER', 'postgres')}@127.0.0.1:5432/postgres",
)
#: Why the Postgres tests could not run, said once at the end of the run.
_POSTGRES_MISSING: list[str] = []
T = TypeVar("T")


def run_in_thread(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run database set-up on a loop of its own, away from the tests' loop."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _migrate(url: str) -> None:
    engine = create_engine(url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()


def _database_url(server_url: str, database: str) -> str:
    return (
        make_url(server_url)
        .set(drivername="postgresql+asyncpg", database=database)
        .render_as_string(hide_password=False)
    )


def _admin_dsn(server_url: str) -> str:
    return make_url(server_url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(server_url: str, statement: str) -> None:
    await execute_admin(_admin_dsn(server_url), statement)


def _answers(url: str) -> str | None:
    """Why ``url`` does not answer, or None when it does."""
    try:
        run_in_thread(_admin(url, "SELECT 1"))
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def _docker_engine() -> bool:
    return bool(os.environ.get("DOCKER_HOST")) or Path("/var/run/docker.sock").exists()


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    url = os.environ.get(POSTGRES_URL_ENV)
    if url:
        refused = _answers(url)
        if refused:
            _POSTGRES_MISSING.append(f"{POSTGRES_URL_ENV}={url} does not answer: {refused}")
            pytest.fail(_POSTGRES_MISSING[-1], pytrace=False)
        yield url
        return
    tried = []
    for local in dict.fromkeys(LOCAL_POSTGRES_URLS):
        refused = _answers(local)
        if refused is None:
            yield local
            return
        tried.append(f"{local}: {refused}")
    if _docker_engine():
        try:
            with warnings.catch_warnings():
                # testcontainers' own imports raise deprecation warnings of its dependencies,
                # which this suite's filterwarnings = error would turn into a failure.
                warnings.simplefilter("ignore", DeprecationWarning)
                from testcontainers.postgres import PostgresContainer

                container = PostgresContainer("postgres:16-alpine", driver="asyncpg")
                container.start()
        except Exception as error:
            tried.append(f"testcontainers: {type(error).__name__}: {error}")
        else:
            try:
                yield str(container.get_connection_url())
            finally:
                container.stop()
            return
    else:
        tried.append("testcontainers: no Docker engine (no DOCKER_HOST, no /var/run/docker.sock)")
    _POSTGRES_MISSING.append(
        "the Postgres tests need a server, and none answered. Tried:\n  - "
        + "\n  - ".join(tried)
        + f"\nSet {POSTGRES_URL_ENV} to a server you can create databases on, run one on "
        '127.0.0.1:5432, or start Docker; or leave these tests out with -m "not postgres".'
    )
    # The whole reason, not a pointer to the end of the run: under pytest-xdist this runs in
    # a worker, whose terminal summary nobody sees.
    pytest.fail(_POSTGRES_MISSING[-1], pytrace=False)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for reason in dict.fromkeys(_POSTGRES_MISSING):
        terminalreporter.section("Postgres")
        terminalreporter.write_line(reason)


@pytest.fixture(scope="session")
def postgres_template(postgres_server_url: str) -> Iterator[str]:
    """A migrated database that each test's database is copied from."""
    name = f"contextd_template_{uuid.uuid4().hex[:12]}"
    run_in_thread(_admin(postgres_server_url, f'CREATE DATABASE "{name}"'))
    try:
        run_in_thread(_migrate(_database_url(postgres_server_url, name)))
        yield name
    finally:
        run_in_thread(_admin(postgres_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "contextd.db"
    run_in_thread(_migrate(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database for one test, on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "contextd.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite+aiosqlite:///{path}"
        return
    yield request.getfixturevalue("postgres_url")


@pytest.fixture(scope="session")
def postgres_databases(
    postgres_server_url: str, postgres_template: str
) -> Iterator[PostgresDatabases]:
    """Databases as the template left them for this worker's tests: copies made ahead, and
    each test's database emptied for the next one behind it (dropped if its schema changed)."""
    databases = PostgresDatabases(_admin_dsn(postgres_server_url), postgres_template)
    try:
        yield databases
    finally:
        databases.close()


@pytest.fixture
def postgres_url(postgres_server_url: str, postgres_databases: PostgresDatabases) -> Iterator[str]:
    """A migrated Postgres database as the template left it, touched by no other test (for
    tests that are about Postgres only; mark them ``postgres``)."""
    name = postgres_databases.take()
    try:
        yield _database_url(postgres_server_url, name)
    finally:
        postgres_databases.give_back(name)


def make_settings(database_url: str, **overrides: Any) -> Settings:
    return Settings(_env_file=None, database_url=database_url, **overrides)


async def issue_key(database_url: str, tenant: str, *scopes: str) -> str:
    """An API key, made as `contextd keys create` makes it."""
    engine = create_engine(database_url)
    try:
        async with async_sessionmaker(engine)() as db:
            issued = await KeyService(db).create(
                tenant_id=tenant, scopes=[Scope(scope) for scope in scopes or ("agent",)]
            )
            await db.commit()
            return issued.key
    finally:
        await engine.dispose()


class RunningApp:
    """Starts apps (lifespan included) on a database and closes them at the end."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._stack: list[Any] = []
        self._clients: list[httpx.AsyncClient] = []

    async def key(self, tenant: str, *scopes: str) -> str:
        """An API key on this database (``agent`` scope unless told)."""
        return await issue_key(self.database_url, tenant, *scopes)

    def client(self, app: FastAPI, key: str | None = None) -> httpx.AsyncClient:
        """Another client of a started app, sending ``key`` with every request."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://contextd.test", headers=headers
        )
        self._clients.append(client)
        return client

    async def start(
        self,
        *,
        summarizer: Summarizer | None = None,
        tokenizers: TokenizerRegistry | None = None,
        overrides: dict[str, Any] | None = None,
        **settings: Any,
    ) -> tuple[FastAPI, httpx.AsyncClient]:
        """``overrides``: settings whose names clash with this method's (``summarizer``)."""
        app = create_app(
            make_settings(self.database_url, **settings, **(overrides or {})),
            summarizer=summarizer,
            tokenizers=tokenizers,
        )
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://contextd.test"
        )
        self._stack.append((lifespan, client))
        return app, client

    async def stop_all(self) -> None:
        while self._clients:
            await self._clients.pop().aclose()
        while self._stack:
            lifespan, client = self._stack.pop()
            await client.aclose()
            await lifespan.__aexit__(None, None, None)


@pytest.fixture
async def apps(database_url: str) -> AsyncIterator[RunningApp]:
    running = RunningApp(database_url)
    try:
        yield running
    finally:
        await running.stop_all()


@pytest.fixture
async def client(apps: RunningApp) -> httpx.AsyncClient:
    _, client = await apps.start()
    return client


@dataclass(frozen=True)
class Ran:
    """What a ``contextd`` command did: its exit code and what it printed."""

    code: int
    out: str
    err: str


Contextd = Callable[..., Awaitable[Ran]]


@pytest.fixture
def contextd(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Contextd]:
    """Runs ``contextd …`` in this process, in a thread (it runs its own event loop), with
    whatever environment and directory the test set; logging is left as it was. The command's
    own code, without a new interpreter's start (about 3 s of CPU: the app's imports and
    tiktoken); tests of what only a new process shows (the entry point, settings read at
    start-up) run ``python -m app`` instead."""
    from app.cli import main

    monkeypatch.setenv("CONTEXTD_LOG_FORMAT", "text")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level

    def run(*argv: str) -> int:
        try:
            main(list(argv))
        except SystemExit as exit_:
            return int(exit_.code or 0)
        return 0

    async def command(*argv: str) -> Ran:
        code = await asyncio.to_thread(run, *argv)
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    try:
        yield command
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema at all, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
        return
    server = request.getfixturevalue("postgres_server_url")
    name = f"contextd_empty_{uuid.uuid4().hex[:12]}"
    run_in_thread(_admin(server, f'CREATE DATABASE "{name}"'))
    try:
        yield _database_url(server, name)
    finally:
        # Through the admin connection: the copies' machinery would build and migrate a
        # template only to drop a database that never had a schema.
        run_in_thread(_admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
