"""The operator's model file: entries that extend or override the built-in model table.

JSON (``{"models": {"name": {...}}}``) or TOML (``[models."name"]`` tables). An entry named
like a built-in one changes only the fields it sets; a new entry needs ``context_limit`` and
an ``encoding`` or a ``tokenizer_file``. Unknown keys and bad values stop start-up with every
problem listed, so that a typo never silently counts with the wrong tokenizer.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import tiktoken
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from app.budget.tokens import BUILTIN_REGISTRY, ChatRules, ModelRegistry, ModelSpec
from app.tokens.registry import TokenizerRegistry

#: The framing of current open-model chat templates (ChatML, Llama 3) around each message
#: besides its role, and before the reply: the defaults for an entry with a tokenizer file.
TEMPLATE_TOKENS_PER_MESSAGE = 4
TEMPLATE_REPLY_PRIMING = 5


class ModelsFileError(ValueError):
    """The models file cannot be used; the message says where and why."""


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context_limit: int | None = Field(default=None, gt=0, le=100_000_000)
    max_output_tokens: int | None = Field(default=None, gt=0, le=10_000_000)
    #: A tiktoken encoding: the model's own (native_encoding) or a proxy.
    encoding: str | None = None
    native_encoding: bool | None = None
    #: A Hugging Face tokenizer.json (relative paths start at the models file's folder).
    tokenizer_file: str | None = Field(default=None, min_length=1)
    #: Multiplies every count; at least 1, so that a proxy never counts low.
    safety_factor: float | None = Field(default=None, ge=1.0, le=4.0)
    tokens_per_message: int | None = Field(default=None, ge=0, le=64)
    reply_priming_tokens: int | None = Field(default=None, ge=0, le=64)
    family: str | None = Field(default=None, min_length=1, max_length=64)


ModelName = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^\S+$")]


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[ModelName, ModelEntry]


def _read(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ModelsFileError(f"models file {path}: cannot be read: {error}") from error
    try:
        if path.suffix == ".toml":
            return tomllib.loads(text)
        if path.suffix == ".json":
            return json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise ModelsFileError(
            f"models file {path}: not valid {path.suffix[1:]}: {error}"
        ) from error
    raise ModelsFileError(f"models file {path}: must end in .json or .toml")


def _spec(name: str, entry: ModelEntry, *, folder: Path) -> tuple[ModelSpec | None, list[str]]:
    problems: list[str] = []
    base = BUILTIN_REGISTRY.entry(name)
    if entry.encoding is not None and entry.encoding not in tiktoken.list_encoding_names():
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        problems.append(f"encoding {entry.encoding!r} is not a tiktoken encoding ({known})")
    tokenizer_file = None
    if entry.tokenizer_file is not None:
        tokenizer_path = Path(entry.tokenizer_file)
        if not tokenizer_path.is_absolute():
            tokenizer_path = folder / tokenizer_path
        if not tokenizer_path.is_file():
            problems.append(f"tokenizer_file {str(tokenizer_path)!r} does not exist")
        tokenizer_file = str(tokenizer_path)
    if base is None:
        if entry.context_limit is None:
            problems.append("a new model needs context_limit")
        if entry.encoding is None and entry.tokenizer_file is None:
            problems.append("a new model needs an encoding or a tokenizer_file")
    if problems:
        return None, problems

    template = bool(tokenizer_file) and (base is None or not base.tokenizer_file)
    rules = base.rules if base is not None else ChatRules()
    rules = replace(
        rules,
        tokens_per_message=entry.tokens_per_message
        if entry.tokens_per_message is not None
        else (TEMPLATE_TOKENS_PER_MESSAGE if template else rules.tokens_per_message),
        reply_priming=entry.reply_priming_tokens
        if entry.reply_priming_tokens is not None
        else (TEMPLATE_REPLY_PRIMING if template else rules.reply_priming),
    )
    spec = ModelSpec(
        name=name,
        context_limit=entry.context_limit or (base.context_limit if base else 0),
        max_output_tokens=entry.max_output_tokens
        if entry.max_output_tokens is not None
        else (base.max_output_tokens if base else None),
        encoding=entry.encoding or (base.encoding if base else "o200k_base"),
        safety_factor=entry.safety_factor
        if entry.safety_factor is not None
        else (base.safety_factor if base else 1.0),
        native_encoding=entry.native_encoding
        if entry.native_encoding is not None
        else (base.native_encoding if base else False),
        tokenizer_file=tokenizer_file or (base.tokenizer_file if base else None),
        rules=rules,
        family=entry.family or (base.family if base else "other"),
        source="operator",
    )
    return spec, []


def load_models_file(path: Path) -> list[ModelSpec]:
    """The entries of an operator's models file; :class:`ModelsFileError` lists what is wrong."""
    try:
        parsed = ModelsFile.model_validate(_read(path))
    except ValidationError as error:
        lines = [
            f"  {'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        ]
        raise ModelsFileError(f"models file {path} is invalid:\n" + "\n".join(lines)) from error
    specs: list[ModelSpec] = []
    problems: list[str] = []
    for name, entry in parsed.models.items():
        spec, wrong = _spec(name, entry, folder=path.parent)
        problems.extend(f"  models.{name}: {problem}" for problem in wrong)
        if spec is not None:
            specs.append(spec)
    if problems:
        raise ModelsFileError(f"models file {path} is invalid:\n" + "\n".join(problems))
    return specs


def model_registry(models_file: Path | None) -> ModelRegistry:
    """The built-in table extended by the operator's file, when there is one."""
    if models_file is None:
        return BUILTIN_REGISTRY
    return ModelRegistry(load_models_file(models_file))


def check_tokenizer_files(tokenizers: TokenizerRegistry, models_file: Path | None) -> None:
    """Load every tokenizer file the table names, so that a bad one stops start-up."""
    for spec in tokenizers.models.entries():
        if not spec.tokenizer_file:
            continue
        try:
            tokenizers.preload_tokenizer(spec)
        except Exception as error:
            raise ModelsFileError(
                f"models file {models_file}: models.{spec.name}: tokenizer_file "
                f"{spec.tokenizer_file!r} cannot be used: {error}"
            ) from error
