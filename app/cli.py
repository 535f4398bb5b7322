"""The ``contextd`` command: ``serve``, ``migrate`` and ``keys``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.settings import Settings

T = TypeVar("T")


def _say(message: str) -> None:
    print(f"contextd: {message}", file=sys.stderr)  # noqa: T201


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
        _say(str(error))
        raise SystemExit(2) from error


def _serve(settings: Settings) -> None:
    import uvicorn

    from app.auth.service import AuthNotConfiguredError, check_open_mode
    from app.main import create_app

    # Checked here as well as at start-up so that an unmigrated database or a missing key is
    # one clear line, not a server traceback.
    try:
        _with_database(settings, lambda db: check_open_mode(db, settings, warn=False))
    except AuthNotConfiguredError as error:
        _say(str(error))
        raise SystemExit(2) from error
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
    )


def _keys(settings: Settings, args: argparse.Namespace) -> None:
    from app.auth.service import KeyService, Scope
    from app.errors import ServiceError

    try:
        if args.keys_command == "create":
            issued = _with_database(
                settings,
                lambda db: KeyService(db).create(
                    tenant_id=args.tenant, scopes=[Scope(s) for s in args.scope], name=args.name
                ),
            )
            record = issued.record
            _say(
                f"API key {record.id} for tenant {record.tenant_id!r}, scopes "
                f"{', '.join(record.scopes)}. Store it now: only a hash of it is kept, it "
                "cannot be shown again."
            )
            print(issued.key)  # noqa: T201
        elif args.keys_command == "list":
            records = _with_database(settings, lambda db: KeyService(db).list())
            print(f"{'id':<16}  {'tenant':<24}  {'scopes':<10}  {'created':<20}  state  name")  # noqa: T201
            for record in records:
                state = "revoked" if record.revoked_at else "active"
                print(  # noqa: T201
                    f"{record.id:<16}  {record.tenant_id:<24}  {','.join(record.scopes):<10}  "
                    f"{record.created_at:%Y-%m-%d %H:%M:%S}  {state:<6} {record.name or ''}"
                )
        else:
            revoked = _with_database(settings, lambda db: KeyService(db).revoke(args.key_id))
            _say(f"API key {revoked.id} of tenant {revoked.tenant_id!r} is revoked")
    except ServiceError as error:
        _say(error.message)
        raise SystemExit(1) from error


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="contextd", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="bind address (CONTEXTD_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (CONTEXTD_PORT, default 8080)")
    serve.add_argument(
        "--migrate", action="store_true", help="apply pending migrations before serving"
    )
    commands.add_parser("migrate", help="bring the database schema up to date")
    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    create = key_commands.add_parser("create", help="a new key, printed once")
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
    args = parser.parse_args(argv)

    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if args.command == "migrate":
        _migrate(settings)
        print(f"contextd: database at {settings.database_url} is up to date")  # noqa: T201
    elif args.command == "keys":
        _keys(settings, args)
    else:
        update: dict[str, object] = {}
        if args.migrate:
            update["auto_migrate"] = True
        if args.host:
            update["host"] = args.host
        if args.port is not None:
            update["port"] = args.port
        _serve(settings.model_copy(update=update))
