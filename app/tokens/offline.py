"""Which encodings this machine can count with, without the internet.

tiktoken downloads an encoding's BPE file on first use and keeps it in ``TIKTOKEN_CACHE_DIR``
under the SHA-1 of its URL. An air-gapped install copies those files there; this module
checks that they are present and load, without ever starting a download.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.budget.tokens import Encoding, ModelRegistry
from app.tokens.registry import TokenizerRegistry, load_tiktoken_encoding

_BLOBS = "https://openaipublic.blob.core.windows.net"
#: The files each tiktoken encoding is built from (tiktoken_ext.openai_public).
TIKTOKEN_FILES: dict[str, tuple[str, ...]] = {
    "o200k_base": (f"{_BLOBS}/encodings/o200k_base.tiktoken",),
    "o200k_harmony": (f"{_BLOBS}/encodings/o200k_base.tiktoken",),
    "cl100k_base": (f"{_BLOBS}/encodings/cl100k_base.tiktoken",),
    "p50k_base": (f"{_BLOBS}/encodings/p50k_base.tiktoken",),
    "p50k_edit": (f"{_BLOBS}/encodings/p50k_base.tiktoken",),
    "r50k_base": (f"{_BLOBS}/encodings/r50k_base.tiktoken",),
    "gpt2": (
        f"{_BLOBS}/gpt-2/encodings/main/vocab.bpe",
        f"{_BLOBS}/gpt-2/encodings/main/encoder.json",
    ),
}


def tiktoken_cache_dir(configured: Path | None) -> Path:
    """Where tiktoken looks: ``TIKTOKEN_CACHE_DIR``, else its default temporary folder."""
    return configured or Path(tempfile.gettempdir()) / "data-gym-cache"


def cached_file(cache_dir: Path, url: str) -> Path:
    return cache_dir / hashlib.sha1(url.encode()).hexdigest()


@dataclass(frozen=True)
class TokenizerStatus:
    #: "tiktoken:<encoding>" or "tokenizer.json".
    kind: str
    name: str
    available: bool
    #: Where it is (or would have to be).
    location: str
    models: tuple[str, ...]
    #: An optional family tokenizer: without it, its models are counted with their proxy.
    optional: bool = False


def tokenizer_statuses(
    models: ModelRegistry,
    *,
    cache_dir: Path,
    load_encoding: Callable[[str], Encoding] = load_tiktoken_encoding,
) -> list[TokenizerStatus]:
    """Every encoding and tokenizer file the model table uses, and whether it loads here."""
    by_encoding: dict[str, list[str]] = {}
    statuses: list[TokenizerStatus] = []
    tokenizers = TokenizerRegistry(models=models)
    for spec in models.entries():
        if spec.tokenizer_file:
            try:
                tokenizers.preload_tokenizer(spec)
                available = True
            except Exception:
                available = False
            statuses.append(
                TokenizerStatus(
                    "tokenizer.json", spec.name, available, spec.tokenizer_file, (spec.name,)
                )
            )
        else:
            by_encoding.setdefault(spec.encoding, []).append(spec.name)
    for encoding, names in sorted(by_encoding.items(), key=lambda item: -len(item[1])):
        urls = TIKTOKEN_FILES.get(encoding, ())
        files = [cached_file(cache_dir, url) for url in urls]
        available = bool(files) and all(path.is_file() for path in files)
        if available:
            try:
                load_encoding(encoding)
            except Exception:
                available = False
        location = ", ".join(str(path) for path in files) or "(not a file-based encoding)"
        statuses.append(
            TokenizerStatus(f"tiktoken:{encoding}", encoding, available, location, tuple(names))
        )
    statuses += family_statuses(models)
    return statuses


def family_statuses(models: ModelRegistry) -> list[TokenizerStatus]:
    """The open-weight families' real tokenizers (optional extras) and whether they load."""
    from app.tokens.families import FAMILY_PACKAGES, load_family

    by_family: dict[str, list[str]] = {}
    for spec in models.entries():
        if spec.tokenizer_family and not spec.tokenizer_file:
            by_family.setdefault(spec.tokenizer_family, []).append(spec.name)
    statuses = []
    for family, names in sorted(by_family.items()):
        extra, package = FAMILY_PACKAGES.get(family, ("", family))
        try:
            load_family(family)
            available = True
        except Exception:
            available = False
        statuses.append(
            TokenizerStatus(
                f"family:{family}",
                family,
                available,
                f"{package} (pip install 'contextd[{extra}]')",
                tuple(names),
                optional=True,
            )
        )
    return statuses
