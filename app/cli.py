"""The ``contextd`` command: ``serve`` and ``migrate``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from app.settings import Settings


def _migrate(settings: Settings) -> None:
    from app.db import create_engine, migrate

    async def run() -> None:
        engine = create_engine(settings.database_url)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    asyncio.run(run())


def _serve(settings: Settings, host: str, port: int) -> None:
    import uvicorn

    from app.db import SchemaNotReadyError, create_engine, ensure_schema
    from app.main import create_app

    async def check_schema() -> None:
        engine = create_engine(settings.database_url)
        try:
            await ensure_schema(engine, auto_migrate=settings.migrates_at_startup)
        finally:
            await engine.dispose()

    # Checked here as well as at start-up so that an unmigrated database is one clear line,
    # not a server traceback.
    try:
        asyncio.run(check_schema())
    except SchemaNotReadyError as error:
        print(f"contextd: {error}", file=sys.stderr)  # noqa: T201
        raise SystemExit(2) from error
    uvicorn.run(create_app(settings), host=host, port=port, log_level=settings.log_level.lower())


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
    args = parser.parse_args(argv)

    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if args.command == "migrate":
        _migrate(settings)
        print(f"contextd: database at {settings.database_url} is up to date")  # noqa: T201
    else:
        if args.migrate:
            settings = settings.model_copy(update={"auto_migrate": True})
        _serve(settings, args.host or settings.host, args.port or settings.port)
