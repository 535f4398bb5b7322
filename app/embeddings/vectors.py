"""Vectors as they are stored, and the ranking that combines full-text and semantic hits.
Pure: no I/O.

A message is embedded as passages of a few sentences each, not as one text: a small model
reads a few hundred tokens at most, and one vector for a long message blurs the sentence that
matters into the rest. Its vectors are stored one after the other in one value; a message is
as near to a query as its nearest passage."""

from __future__ import annotations

import math
import operator
import re
import sys
from array import array
from collections.abc import Iterable, Sequence

#: Reciprocal rank fusion's constant: a hit's share is 1 / (RRF_K + its rank), so the first
#: few ranks of either list weigh about the same and no score scale has to be compared.
RRF_K = 60
#: The weight of a full-text ranking that matched *any* of the query's words (recall): one
#: common word is enough to be in it, so its ranks say less than the semantic ones. A
#: ranking of messages that say *every* word (search) weighs as much as the semantic one.
ANY_WORD_WEIGHT = 0.5
#: Words of a passage, and passages of a message at most (the rest is not embedded).
PASSAGE_WORDS = 48
MAX_PASSAGES = 16

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def passages(text: str) -> list[str]:
    """A text as passages of whole sentences up to ``PASSAGE_WORDS`` words (a longer
    sentence is cut by words, its last piece the start of the next passage), at most
    ``MAX_PASSAGES``; none for a text with no words."""
    chunks: list[list[str]] = []
    current: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        words = sentence.split()
        if len(words) > PASSAGE_WORDS - len(current) and current:
            chunks.append(current)
            current = []
        while len(words) > PASSAGE_WORDS:
            chunks.append(words[:PASSAGE_WORDS])
            words = words[PASSAGE_WORDS:]
        current += words
        if len(chunks) >= MAX_PASSAGES:
            break
    if current:
        chunks.append(current)
    return [" ".join(chunk) for chunk in chunks[:MAX_PASSAGES]]


def pack(*vectors: Sequence[float]) -> bytes:
    """Vectors scaled to unit length (a zero vector as is), one after the other, as
    little-endian float32 bytes."""
    packed = array("f")
    for vector in vectors:
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        packed.extend(x / norm for x in vector)
    if packed.itemsize != 4:  # pragma: no cover - every supported platform has 4-byte floats
        raise RuntimeError("float32 arrays are needed to store vectors")
    return _little_endian(packed).tobytes()


def unpack(data: bytes) -> array[float]:
    packed = array("f")
    packed.frombytes(data)
    return _little_endian(packed)


def similarity(query: Sequence[float], stored: Sequence[float]) -> float:
    """Cosine similarity of two unit vectors (their dot product)."""
    return float(sum(map(operator.mul, query, stored)))


def nearest(
    query: Sequence[float],
    stored: Iterable[tuple[int, bytes]],
    *,
    limit: int,
    min_similarity: float,
) -> list[tuple[int, float, int]]:
    """The ``limit`` stored messages most like ``query`` (their nearest passage at least
    ``min_similarity``), best first, as (id, similarity, index of that passage); vectors of
    another length are skipped."""
    unit = unpack(pack(query))
    dims = len(unit)
    scored: list[tuple[int, float, int]] = []
    for key, data in stored:
        vectors = unpack(data)
        if not dims or len(vectors) % dims:
            continue
        score, passage = max(
            (similarity(unit, vectors[at : at + dims]), -(at // dims))
            for at in range(0, len(vectors), dims)
        )
        if score >= min_similarity:
            scored.append((key, score, -passage))
    scored.sort(key=lambda hit: (-hit[1], -hit[0]))
    return scored[:limit]


def tied_ranks(scores: Sequence[float]) -> list[int]:
    """Competition ranks ("1, 2, 2, 4") of best-first ``scores``: equal scores (to six
    decimals, float32's precision) share a rank. A ranking that cannot tell messages apart
    (a model, or a fake, that gives many texts the same vector) then says so in a fusion,
    instead of ordering them by id."""
    ranks: list[int] = []
    for index, score in enumerate(scores):
        tied = index and round(score, 6) == round(scores[index - 1], 6)
        ranks.append(ranks[-1] if tied else index + 1)
    return ranks


def fuse(
    *rankings: tuple[Sequence[int], float] | tuple[Sequence[int], float, Sequence[int]],
) -> list[tuple[int, float]]:
    """Weighted reciprocal rank fusion of best-first id lists, each with its weight and, if
    given, each id's rank (``tied_ranks``; else its place): each id's summed weight /
    (RRF_K + rank), best first. Ties go to the id the rankings name first (the first
    ranking's before the second's), never to the newer message: a newer one is as often a
    mention of what an older one said as the thing itself."""
    scores: dict[int, float] = {}
    for ranking, weight, *given in rankings:
        ranks = given[0] if given else range(1, len(ranking) + 1)
        for rank, key in zip(ranks, ranking, strict=True):
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank)
    order = {key: index for index, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def _little_endian(packed: array[float]) -> array[float]:
    if sys.byteorder == "big":  # pragma: no cover
        packed.byteswap()
    return packed
