"""The two reference pages of the documentation site, written from the code itself so that
they cannot fall behind it: the error codes (from ``ERROR_CODES``) and the settings (from
:class:`app.settings.Settings`). The site's build hook (docs/hooks/reference.py) adds them."""

from __future__ import annotations

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app.errors import ERROR_CODES
from app.settings import Settings

ERRORS_INTRO = """# Error codes

Every error has one shape, `{"error": {"code", "message", "details"?}}`, and its `message`
says what is wrong and where (the first field at fault, a byte that is not UTF-8, the character
where JSON stops parsing). The codes are stable; the OpenAPI document (`/openapi.json`) lists
them too.

"""

ERRORS_OUTRO = """
`invalid_request` lists every field at fault in `details.errors` (`location`, `problem`);
`context_budget_exceeded` has the estimated tokens, the input budget, the per-block breakdown,
the audit id, and what to do (`details.guidance`); `tool_call_id_reused` stores nothing of the
step. `database_unavailable` comes with `Retry-After`.
"""

SETTINGS_INTRO = """# Configuration

Every setting is an environment variable with the `CONTEXTD_` prefix, or a line in a `.env`
file in the working directory (`.env.example` lists them). The environment wins over `.env`.
This page is written from the settings class itself (`app/settings.py`).

"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def error_codes_page() -> str:
    """The error codes as a Markdown page: code, HTTP status, meaning."""
    rows = "\n".join(
        f"| `{error.code}` | {error.status} | {_cell(error.meaning)} |" for error in ERROR_CODES
    )
    return f"{ERRORS_INTRO}| code | status | meaning |\n|---|---|---|\n{rows}\n{ERRORS_OUTRO}"


def environment_names(name: str, field: FieldInfo) -> list[str]:
    """The variables a setting is read from, in the order they are looked for."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    prefix = Settings.model_config.get("env_prefix", "")
    return [f"{prefix}{name}".upper()]


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "(computed)"
    value = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"`{value}`"


def settings_page() -> str:
    """Every setting as a Markdown table: variables, default, meaning."""
    rows = []
    for name, field in Settings.model_fields.items():
        variables = " or ".join(f"`{variable}`" for variable in environment_names(name, field))
        meaning = _cell(field.description or "")
        rows.append(f"| {variables} | {_cell(_default(field))} | {meaning} |")
    table = "| variable | default | meaning |\n|---|---|---|\n" + "\n".join(rows)
    return f"{SETTINGS_INTRO}{table}\n"
