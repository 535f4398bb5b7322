"""The ``contextd`` command: ``serve``, ``migrate`` and ``tokenizers``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from app.settings import Settings
from app.tokens.models_file import ModelsFileError


def _migrate(settings: Settings) -> None:
    from app.db import create_engine, migrate

    async def run() -> None:
        engine = create_engine(settings.database_url)
        try:
            await migrate(engine)
        finally:
            await engine.dispose()

    asyncio.run(run())


def _tokenizers(settings: Settings) -> int:
    """Print which encodings count offline; 1 when one the model table uses is missing."""
    from app.tokens.models_file import model_registry
    from app.tokens.offline import tiktoken_cache_dir, tokenizer_statuses

    cache_dir = tiktoken_cache_dir(settings.tiktoken_cache_dir)
    where = "TIKTOKEN_CACHE_DIR" if settings.tiktoken_cache_dir else "tiktoken's default"
    print(f"tiktoken cache: {cache_dir} ({where})")  # noqa: T201
    statuses = tokenizer_statuses(model_registry(settings.models_file), cache_dir=cache_dir)
    for status in statuses:
        state = "available offline" if status.available else "MISSING"
        shown = ", ".join(status.models[:4]) + (" …" if len(status.models) > 4 else "")
        print(  # noqa: T201
            f"  {status.kind:24} {state:18} {len(status.models):3} model(s): {shown}\n"
            f"  {'':24} {status.location}"
        )
    missing = [status for status in statuses if not status.available]
    if missing:
        print(  # noqa: T201
            "contextd counts the models of a missing encoding with chars/4 * 1.25 (it errs "
            "high, but is not exact): copy the files above into the cache folder and set "
            "TIKTOKEN_CACHE_DIR (README, Token counting)"
        )
    return 1 if missing else 0


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
    try:
        app = create_app(settings)
    except ModelsFileError as error:
        print(f"contextd: {error}", file=sys.stderr)  # noqa: T201
        raise SystemExit(2) from error
    uvicorn.run(app, host=host, port=port, log_level=settings.log_level.lower())


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
    commands.add_parser(
        "tokenizers", help="list the encodings the model table uses and whether they load offline"
    )
    args = parser.parse_args(argv)

    settings = Settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    if args.command == "tokenizers":
        try:
            raise SystemExit(_tokenizers(settings))
        except ModelsFileError as error:
            print(f"contextd: {error}", file=sys.stderr)  # noqa: T201
            raise SystemExit(2) from error
    if args.command == "migrate":
        _migrate(settings)
        print(f"contextd: database at {settings.database_url} is up to date")  # noqa: T201
    else:
        if args.migrate:
            settings = settings.model_copy(update={"auto_migrate": True})
        _serve(settings, args.host or settings.host, args.port or settings.port)
