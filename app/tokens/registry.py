"""Loading tokenizers and handing out counters: the I/O side of token counting.

The counting rules are pure (:mod:`app.budget.tokens`); what they count with is loaded here,
once per process: tiktoken's BPE files, an operator's ``tokenizer.json``. The registry also
owns the memo of short texts' counts per encoding (a process-wide cache, so it lives with
the runtime, not in the budget core).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.budget.tokens import (
    BUILTIN_REGISTRY,
    FALLBACK_ESTIMATOR,
    ContentAwareCounter,
    Encoding,
    FallbackCounter,
    HuggingFaceCounter,
    HuggingFaceTokenizer,
    ModelRegistry,
    ModelSpec,
    ScaledCounter,
    TiktokenCounter,
    TokenCounter,
)
from app.caches import LRU

logger = logging.getLogger(__name__)

#: Short texts remembered per encoding.
MEMO_ENTRIES = 16_384


def load_tiktoken_encoding(name: str) -> Encoding:
    import tiktoken

    return tiktoken.get_encoding(name)


def load_tokenizer_file(path: str) -> HuggingFaceTokenizer:
    """A Hugging Face ``tokenizer.json``, with the optional ``tokenizers`` library."""
    try:
        from tokenizers import Tokenizer
    except ImportError as error:
        raise RuntimeError(
            "counting with a tokenizer.json needs the tokenizers library: "
            "pip install 'contextd[hf]'"
        ) from error
    tokenizer: HuggingFaceTokenizer = Tokenizer.from_file(path)
    return tokenizer


def tokenizer_label(spec: ModelSpec) -> str:
    """``<entry>@<digest of the file>``: a new file is a new estimator (and a recount)."""
    assert spec.tokenizer_file is not None
    digest = hashlib.sha256(Path(spec.tokenizer_file).read_bytes()).hexdigest()[:12]
    return f"{(spec.entry or spec.name)[:40]}@{digest}"


@dataclass
class _Loaded:
    encodings: dict[str, Encoding | None] = field(default_factory=dict)
    memos: dict[str, LRU[str, int]] = field(default_factory=dict)
    families: dict[str, Encoding | None] = field(default_factory=dict)
    tokenizers: dict[str, tuple[str, HuggingFaceTokenizer] | None] = field(default_factory=dict)


def load_family_tokenizer(family: str) -> Encoding:
    """A family's real tokenizer from its optional package (:mod:`app.tokens.families`)."""
    from app.tokens.families import load_family

    return load_family(family)


class TokenizerRegistry:
    """Knows the models and hands out their counters, loading each encoding once.

    A failed load is remembered (and logged once): every later request gets the fallback
    counter at once instead of retrying a download that cannot succeed.
    """

    def __init__(
        self,
        load_encoding: Callable[[str], Encoding] = load_tiktoken_encoding,
        *,
        models: ModelRegistry = BUILTIN_REGISTRY,
        load_tokenizer: Callable[[str], HuggingFaceTokenizer] = load_tokenizer_file,
        load_family: Callable[[str], Encoding] = load_family_tokenizer,
    ) -> None:
        self.models = models
        self._load_family = load_family
        self._load_encoding = load_encoding
        self._load_tokenizer = load_tokenizer
        self._lock = threading.Lock()
        self._loaded = _Loaded()

    def _encoding(self, encoding_name: str) -> Encoding | None:
        with self._lock:
            if encoding_name in self._loaded.encodings:
                return self._loaded.encodings[encoding_name]
            try:
                encoding: Encoding | None = self._load_encoding(encoding_name)
            except Exception as error:
                # One line: offline, this is the expected outcome, not a crash to debug (the
                # traceback is there at debug level).
                logger.warning(
                    "token encoding %s could not be loaded (%s: %s); counting with %s instead "
                    "(offline: set TIKTOKEN_CACHE_DIR, or write it in .env; `contextd "
                    "tokenizers` checks)",
                    encoding_name,
                    type(error).__name__,
                    str(error)[:200],
                    FALLBACK_ESTIMATOR,
                )
                logger.debug("loading %s failed", encoding_name, exc_info=True)
                encoding = None
            self._loaded.encodings[encoding_name] = encoding
            return encoding

    def _tokenizer(self, spec: ModelSpec) -> tuple[str, HuggingFaceTokenizer] | None:
        path = str(spec.tokenizer_file)
        with self._lock:
            if path in self._loaded.tokenizers:
                return self._loaded.tokenizers[path]
            try:
                loaded: tuple[str, HuggingFaceTokenizer] | None = (
                    tokenizer_label(spec),
                    self._load_tokenizer(path),
                )
            except Exception:
                logger.warning(
                    "tokenizer file %s could not be loaded; counting with %s instead",
                    path,
                    FALLBACK_ESTIMATOR,
                    exc_info=True,
                )
                loaded = None
            self._loaded.tokenizers[path] = loaded
            return loaded

    def family_tokenizer(self, family: str) -> Encoding | None:
        """The family's real tokenizer, or None when its package is not installed."""
        with self._lock:
            if family in self._loaded.families:
                return self._loaded.families[family]
            try:
                encoding: Encoding | None = self._load_family(family)
            except Exception as error:
                # Expected on a base install: the family is counted with its proxy.
                logger.info("no %s tokenizer (%s); counting with the proxy", family, error)
                encoding = None
            self._loaded.families[family] = encoding
            return encoding

    def _memo(self, name: str) -> LRU[str, int]:
        return self._loaded.memos.setdefault(name, LRU(MEMO_ENTRIES))

    def preload_tokenizer(self, spec: ModelSpec) -> None:
        """Load a model's tokenizer file now, raising why it cannot be used."""
        assert spec.tokenizer_file is not None
        loaded = (tokenizer_label(spec), self._load_tokenizer(spec.tokenizer_file))
        loaded[1].encode("check", add_special_tokens=False)
        with self._lock:
            self._loaded.tokenizers[spec.tokenizer_file] = loaded

    def counter_for(self, spec: ModelSpec) -> tuple[TokenCounter, bool]:
        """The counter for a model and whether it is the fallback estimator."""
        base: TokenCounter
        if spec.tokenizer_family and not spec.tokenizer_file:
            family = self.family_tokenizer(spec.tokenizer_family)
            if family is not None:
                memo = self._memo(f"family:{spec.tokenizer_family}")
                return TiktokenCounter(spec.tokenizer_family, family, spec.rules, memo), False
        if spec.tokenizer_file:
            tokenizer = self._tokenizer(spec)
            if tokenizer is None:
                return FallbackCounter(spec.rules), True
            label, loaded = tokenizer
            if spec.exact:
                return HuggingFaceCounter(label, loaded, spec.rules), False
            base = HuggingFaceCounter(label, loaded)
        else:
            encoding = self._encoding(spec.encoding)
            if encoding is None:
                return FallbackCounter(spec.rules), True
            memo = self._memo(spec.encoding)
            if spec.exact:
                return TiktokenCounter(spec.encoding, encoding, spec.rules, memo), False
            base = TiktokenCounter(spec.encoding, encoding, memo=memo)
        if spec.margins is not None:
            return ContentAwareCounter(base, spec.margins, spec.rules), False
        return ScaledCounter(base, spec.safety_factor, spec.rules), False

    def lookup(self, name: str, *, default_context_limit: int = 8192) -> ModelSpec:
        """A model's spec from this registry's table."""
        return self.models.lookup(name, default_context_limit=default_context_limit)
