"""The ``contextd`` command: ``serve``, ``migrate``, ``keys``, ``sessions assign-tenant``,
``inspect SESSION``, ``purge-audit`` and ``tokenizers``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TextIO, TypeVar

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.logs import configure_logging
from app.settings import Settings, export_tiktoken_cache_dir
from app.tokens.models_file import ModelsFileError

logger = logging.getLogger("contextd.cli")
T = TypeVar("T")


def _say(message: str, *, stream: TextIO | None = None) -> None:
    print(message, file=stream or sys.stdout)


def _sqlite_file(url: URL) -> Path | None:
    """The file an SQLite URL names, absolute; None for other databases and in-memory ones."""
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).resolve()


def _use_database(settings: Settings, *, create: bool, offer_create: bool = True) -> None:
    """Say on stderr which database the command works on (its password hidden), and exit 2
    rather than make a new, empty SQLite file unless ``create``: a command run from another
    directory would otherwise write a key, or a migration, into a database nobody serves."""
    try:
        url = make_url(settings.database_url)
    except ArgumentError as error:
        # The error quotes the URL, password and all: it is not shown.
        _say(
            "contextd: CONTEXTD_DATABASE_URL is not a database URL (e.g. "
            "sqlite+aiosqlite:///./contextd.db or postgresql+asyncpg://user:pass@host/db)",
            stream=sys.stderr,
        )
        raise SystemExit(2) from error
    path = _sqlite_file(url)
    shown = url.render_as_string(hide_password=True)
    _say(f"contextd: database {shown}" + (f" ({path})" if path else ""), stream=sys.stderr)
    if path is None or path.exists() or create:
        return
    _say(
        f"contextd: there is no database at {path}, and this command would create a new, "
        "empty one there. Point at yours with CONTEXTD_DATABASE_URL (e.g. "
        "CONTEXTD_DATABASE_URL=sqlite+aiosqlite:////path/to/contextd.db), or run from the "
        "directory that holds it (and its .env)"
        + ("; add --create to start a new database here." if offer_create else "."),
        stream=sys.stderr,
    )
    raise SystemExit(2)


def _migrate(settings: Settings) -> None:
    from app.db import create_engine, migrate

    async def run() -> None:
        engine = create_engine(settings.database_url)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    asyncio.run(run())


def _with_database(settings: Settings, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction on a database whose schema is ready; exit 2 if not."""
    from app.db import SchemaNotReadyError, create_engine, ensure_schema

    async def run() -> T:
        engine = create_engine(settings.database_url)
        try:
            await ensure_schema(engine, auto_migrate=settings.migrates_at_startup)
            async with async_sessionmaker(engine, expire_on_commit=False)() as db:
                result = await work(db)
                await db.commit()
                return result
        finally:
            await engine.dispose()

    try:
        return asyncio.run(run())
    except SchemaNotReadyError as error:
        _say(f"contextd: {error}", stream=sys.stderr)
        raise SystemExit(2) from error


def _open_mode_sessions_note(tenant_id: str, open_sessions: int) -> str:
    """What the first key means for the sessions made while the service ran open."""
    from app.auth.service import DEFAULT_TENANT

    closed = "contextd: this is the first active key: from now on every call needs a key."
    if not open_sessions:
        return f"{closed} No session was made while the service ran open."
    made = (
        f"The {open_sessions} session(s) made while it ran open belong to tenant {DEFAULT_TENANT!r}"
    )
    if tenant_id == DEFAULT_TENANT:
        return f"{closed} {made}, this key's tenant: it reaches them."
    return (
        f"{closed} {made}: this key (tenant {tenant_id!r}) does not reach them (404), and no "
        f"key will unless you hand them to a tenant:\n"
        f"  contextd sessions assign-tenant --from {DEFAULT_TENANT} --to {tenant_id}"
    )


def _keys(settings: Settings, args: argparse.Namespace) -> None:
    from app.auth.service import DEFAULT_TENANT, IssuedKey, KeyService, Scope
    from app.errors import ServiceError
    from app.sessions.service import count_sessions

    async def create(db: AsyncSession) -> tuple[IssuedKey, bool, int]:
        first = not await KeyService(db).any_active()
        issued = await KeyService(db).create(
            tenant_id=args.tenant, scopes=[Scope(s) for s in args.scope], name=args.name
        )
        open_sessions = await count_sessions(db, tenant_id=DEFAULT_TENANT) if first else 0
        return issued, first, open_sessions

    _use_database(
        settings, create=getattr(args, "create", False), offer_create=args.keys_command == "create"
    )
    try:
        if args.keys_command == "create":
            issued, first, open_sessions = _with_database(settings, create)
            record = issued.record
            _say(
                f"contextd: API key {record.id} for tenant {record.tenant_id!r}, scopes "
                f"{', '.join(record.scopes)}. Store it now: only a hash of it is kept, it "
                "cannot be shown again.",
                stream=sys.stderr,
            )
            if first:
                _say(_open_mode_sessions_note(record.tenant_id, open_sessions), stream=sys.stderr)
            _say(issued.key)
        elif args.keys_command == "list":
            records = _with_database(settings, lambda db: KeyService(db).list())
            _say(f"{'id':<16}  {'tenant':<24}  {'scopes':<10}  {'created':<20}  state  name")
            for record in records:
                state = "revoked" if record.revoked_at else "active"
                _say(
                    f"{record.id:<16}  {record.tenant_id:<24}  {','.join(record.scopes):<10}  "
                    f"{record.created_at:%Y-%m-%d %H:%M:%S}  {state:<6} {record.name or ''}"
                )
        else:
            revoked = _with_database(settings, lambda db: KeyService(db).revoke(args.key_id))
            _say(
                f"contextd: API key {revoked.id} of tenant {revoked.tenant_id!r} is revoked",
                stream=sys.stderr,
            )
    except ServiceError as error:
        _say(f"contextd: {error.message}", stream=sys.stderr)
        raise SystemExit(1) from error


def _assign_tenant(settings: Settings, *, from_tenant: str, to_tenant: str) -> int:
    from app.errors import ServiceError
    from app.sessions.service import hand_over_sessions

    _use_database(settings, create=False, offer_create=False)
    try:
        moved = _with_database(
            settings,
            lambda db: hand_over_sessions(db, from_tenant=from_tenant, to_tenant=to_tenant),
        )
    except ServiceError as error:
        _say(f"contextd: {error.message}", stream=sys.stderr)
        return 1
    _say(
        f"contextd: {moved} session(s) of tenant {from_tenant!r}, with their audit rows, now "
        f"belong to tenant {to_tenant!r}"
    )
    return 0


def _tokenizers(settings: Settings) -> int:
    """Print which encodings count offline; 1 when one the model table uses is missing."""
    from app.tokens.models_file import model_registry
    from app.tokens.offline import tiktoken_cache_dir, tokenizer_statuses

    cache_dir = tiktoken_cache_dir(settings.tiktoken_cache_dir)
    where = "TIKTOKEN_CACHE_DIR" if settings.tiktoken_cache_dir else "tiktoken's default"
    _say(f"tiktoken cache: {cache_dir} ({where})")
    statuses = tokenizer_statuses(model_registry(settings.models_file), cache_dir=cache_dir)
    for status in statuses:
        state = "available offline" if status.available else "MISSING"
        if status.optional and not status.available:
            state = "not installed"
        shown = ", ".join(status.models[:4]) + (" …" if len(status.models) > 4 else "")
        _say(
            f"  {status.kind:24} {state:18} {len(status.models):3} model(s): {shown}\n"
            f"  {'':24} {status.location}"
        )
    if any(status.optional and not status.available for status in statuses):
        _say(
            "contextd counts the models of a family whose tokenizer is not installed with "
            "its proxy (o200k_base with a margin that errs high): install the extra shown "
            "to count them exactly"
        )
    missing = [status for status in statuses if not status.available and not status.optional]
    if missing:
        _say(
            "contextd counts the models of a missing encoding with chars/4 * 1.25 (it errs "
            "high, but is not exact): copy the files above into the cache folder and set "
            "TIKTOKEN_CACHE_DIR (docs/counting.md)"
        )
    return 1 if missing else 0


def _share_metrics_between_workers() -> str | None:
    """Several workers must keep their metrics in one directory (prometheus_client's
    multiprocess mode) or each scrape would see one worker's share. Without a directory
    from the operator, a fresh one is made and handed to the workers through their
    environment, which is where prometheus_client looks for it. Returns the directory it
    made, for removal when the server stops."""
    from app.metrics import multiprocess_mode

    if multiprocess_mode():
        return None
    directory = tempfile.mkdtemp(prefix="contextd-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    logger.info("worker metrics are shared through %s", directory)
    return directory


def _serve(settings: Settings, workers: int) -> None:
    import uvicorn

    from app.auth.service import AuthNotConfiguredError, check_open_mode
    from app.tokens.models_file import check_tokenizer_files, model_registry
    from app.tokens.registry import TokenizerRegistry

    _use_database(settings, create=True)  # a new user's first command makes the database
    # Checked here as well as at start-up so that an unmigrated database, a bad models file or
    # a public bind without keys is one clear line, not a server traceback per worker (and so
    # that workers never race to migrate).
    try:
        _with_database(settings, lambda db: check_open_mode(db, settings, warn=False))
        check_tokenizer_files(
            TokenizerRegistry(models=model_registry(settings.models_file)), settings.models_file
        )
    except (AuthNotConfiguredError, ModelsFileError) as error:
        _say(f"contextd: {error}", stream=sys.stderr)
        raise SystemExit(2) from error
    # Workers build their app from the environment: hand them what the command line chose.
    os.environ["CONTEXTD_HOST"] = settings.host
    os.environ["CONTEXTD_PORT"] = str(settings.port)
    if settings.auto_migrate is not None:
        os.environ["CONTEXTD_AUTO_MIGRATE"] = str(settings.auto_migrate).lower()
    made = _share_metrics_between_workers() if workers > 1 else None
    try:
        uvicorn.run(
            "app.main:create_served_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=workers,
            log_config=None,  # logging is ours (app.logs), in every worker
            access_log=False,  # contextd logs each request itself, with its context
        )
    finally:
        if made is not None:
            os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
            shutil.rmtree(made, ignore_errors=True)


def _inspect(settings: Settings, session_id: str, *, tenant_id: str, list_messages: bool) -> int:
    from sqlalchemy.ext.asyncio import AsyncSession

    from app.db import create_engine
    from app.errors import NotFoundError
    from app.inspection import inspect_session

    _use_database(settings, create=False, offer_create=False)

    async def run() -> str:
        engine = create_engine(settings.database_url)
        try:
            async with AsyncSession(engine) as db:
                return await inspect_session(
                    db,
                    session_id,
                    tenant_id=tenant_id,
                    settings=settings,
                    list_messages=list_messages,
                )
        finally:
            await engine.dispose()

    try:
        _say(asyncio.run(run()))
    except NotFoundError as error:
        _say(f"contextd: {error.message}", stream=sys.stderr)
        return 1
    return 0


class _ProgressLine:
    """Deleted rows so far, as one line rewritten in place on a terminal, or a line per
    tenth of the work elsewhere (logs stay short)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.interactive = stream.isatty()
        self.reported_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        share = done / total if total else 1.0
        message = f"purging audit rows: {done:,}/{total:,} ({share:.0%})"
        if self.interactive:
            self.stream.write("\r" + message)
            if done >= total:
                self.stream.write("\n")
        elif int(share * 10) > self.reported_tenth:
            self.reported_tenth = int(share * 10)
            self.stream.write(message + "\n")
        self.stream.flush()


def _purge_audit(settings: Settings, *, older_than_days: int | None, batch_size: int | None) -> int:
    from sqlalchemy.ext.asyncio import async_sessionmaker

    from app.audit.retention import purge_audit, retention_cutoff
    from app.db import create_engine

    days = older_than_days or settings.audit_retention_days
    if days is None:
        _say(
            "contextd: say how old: --older-than-days N, or set CONTEXTD_AUDIT_RETENTION_DAYS",
            stream=sys.stderr,
        )
        return 2
    cutoff = retention_cutoff(days)
    _use_database(settings, create=False, offer_create=False)

    async def run() -> int:
        engine = create_engine(settings.database_url)
        try:
            return await purge_audit(
                async_sessionmaker(engine, expire_on_commit=False),
                cutoff=cutoff,
                batch_size=batch_size or settings.audit_purge_batch_size,
                on_progress=_ProgressLine(sys.stderr),
            )
        finally:
            await engine.dispose()

    deleted = asyncio.run(run())
    _say(
        f"contextd: purged {deleted:,} audit rows older than {days} days "
        f"(created before {cutoff:%Y-%m-%d %H:%M} UTC)"
    )
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="contextd", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (CONTEXTD_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (CONTEXTD_PORT, default 8080)")
    serve.add_argument(
        "--workers", type=_positive, help="worker processes (CONTEXTD_WORKERS, default 1)"
    )
    serve.add_argument(
        "--migrate", action="store_true", help="apply pending migrations before serving"
    )
    create_database = argparse.ArgumentParser(add_help=False)
    create_database.add_argument(
        "--create",
        action="store_true",
        help="make the SQLite database file if it does not exist (refused otherwise)",
    )
    commands.add_parser(
        "migrate", parents=[create_database], help="bring the database schema up to date"
    )
    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    create = key_commands.add_parser(
        "create", parents=[create_database], help="a new key, printed once"
    )
    create.add_argument("--tenant", required=True, help="the tenant the key acts for")
    create.add_argument(
        "--scope",
        action="append",
        required=True,
        choices=["agent", "ops"],
        help="agent: sessions and turns; ops: audit and metrics (repeat for both)",
    )
    create.add_argument("--name", help="a label, e.g. the agent or team using it")
    key_commands.add_parser("list", help="every key (never their secrets)")
    revoke = key_commands.add_parser("revoke", help="refuse a key from now on")
    revoke.add_argument("key_id", metavar="ID", help="the key id shown by create or list")
    sessions = commands.add_parser("sessions", help="sessions across tenants")
    session_commands = sessions.add_subparsers(dest="sessions_command", required=True)
    assign = session_commands.add_parser(
        "assign-tenant",
        help="give every session of one tenant (e.g. default: those made while no key "
        "existed) to another",
    )
    assign.add_argument("--from", dest="from_tenant", required=True, metavar="TENANT")
    assign.add_argument("--to", dest="to_tenant", required=True, metavar="TENANT")
    inspect = commands.add_parser(
        "inspect", help="print a session's context: blocks, summary, messages by state"
    )
    inspect.add_argument("session_id", metavar="SESSION")
    inspect.add_argument(
        "--tenant", default="default", help="the tenant that owns the session (default: default)"
    )
    inspect.add_argument(
        "--messages", action="store_true", help="list every message with its state and tokens"
    )
    purge = commands.add_parser("purge-audit", help="delete old audit rows, in batches")
    purge.add_argument(
        "--older-than-days",
        type=_positive,
        help="the age to purge from (default: CONTEXTD_AUDIT_RETENTION_DAYS)",
    )
    purge.add_argument("--batch-size", type=_positive, help="rows per transaction (default 5000)")
    commands.add_parser(
        "tokenizers", help="list the encodings the model table uses and whether they load offline"
    )
    args = parser.parse_args(argv)

    settings = Settings()
    export_tiktoken_cache_dir(settings)
    configure_logging(level=settings.log_level, log_format=settings.log_format)
    if args.command == "tokenizers":
        try:
            raise SystemExit(_tokenizers(settings))
        except ModelsFileError as error:
            _say(f"contextd: {error}", stream=sys.stderr)
            raise SystemExit(2) from error
    if args.command == "migrate":
        _use_database(settings, create=args.create)
        _migrate(settings)
        _say("contextd: the database is up to date")
    elif args.command == "keys":
        _keys(settings, args)
    elif args.command == "sessions":
        raise SystemExit(
            _assign_tenant(settings, from_tenant=args.from_tenant, to_tenant=args.to_tenant)
        )
    elif args.command == "inspect":
        raise SystemExit(
            _inspect(settings, args.session_id, tenant_id=args.tenant, list_messages=args.messages)
        )
    elif args.command == "purge-audit":
        raise SystemExit(
            _purge_audit(settings, older_than_days=args.older_than_days, batch_size=args.batch_size)
        )
    else:
        update: dict[str, object] = {}
        if args.migrate:
            update["auto_migrate"] = True
        if args.host:
            update["host"] = args.host
        if args.port is not None:
            update["port"] = args.port
        _serve(settings.model_copy(update=update), args.workers or settings.workers)
