"""MkDocs hook: the reference pages written from the code (app/reference.py) at build time,
so that an error code or a setting added anywhere is on the site without another step."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

from app.reference import error_codes_page, settings_page

GENERATED = {"errors.md": error_codes_page, "configuration.md": settings_page}


def on_files(files: Files, config: Any) -> Files:
    for name, write in GENERATED.items():
        files.append(File.generated(config, name, content=write()))
    return files
