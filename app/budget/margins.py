"""Proxy margins that depend on what the text is made of.

A family counted without its own tokenizer is counted with o200k_base and a margin. One
factor for every text is either too low for some content or too high for the rest: Mistral
and Qwen split every digit where o200k_base groups three (twice the tokens on a table of
numbers), SentencePiece vocabularies spend a token or more on each CJK character, and emoji
cost several. So the estimate is a factor on the proxy's count plus an allowance per digit,
per CJK character and per emoji, each measured against the real tokenizers
(``python -m bench.tokenizers``) as the smallest that keeps every measured text under it.

Pure: counting characters of a text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_DIGITS = re.compile(r"[0-9]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_EMOJI = re.compile(r"[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]")


@dataclass(frozen=True)
class ContentMix:
    """The characters of a text that proxies undercount."""

    digits: int
    cjk: int
    emoji: int


def content_mix(text: str) -> ContentMix:
    return ContentMix(
        digits=len(_DIGITS.findall(text)),
        cjk=len(_CJK.findall(text)),
        emoji=len(_EMOJI.findall(text)),
    )


@dataclass(frozen=True)
class ContentMargins:
    """``ceil(factor * proxy + per_digit * digits + per_cjk * cjk + per_emoji * emoji)``."""

    factor: float
    per_digit: float = 0.0
    per_cjk: float = 0.0
    per_emoji: float = 0.0

    @property
    def tag(self) -> str:
        """Names the margins in a counter's name: new margins mean a recount."""
        return f"{self.factor:g}+d{self.per_digit:g}+c{self.per_cjk:g}+e{self.per_emoji:g}"

    def estimate(self, proxy_tokens: int, text: str) -> int:
        if not text:
            return math.ceil(self.factor * proxy_tokens)
        mix = content_mix(text) if self.per_digit or self.per_cjk or self.per_emoji else None
        extra = 0.0
        if mix is not None:
            extra = (
                self.per_digit * mix.digits + self.per_cjk * mix.cjk + self.per_emoji * mix.emoji
            )
        return math.ceil(self.factor * proxy_tokens + extra)
