from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class SearchHit(BaseModel):
    """A stored message that matches the query."""

    message_id: int
    seq: int
    turn_id: str
    turn_seq: int
    role: str
    #: active (in the prompt), summarised or pruned (left it).
    state: str
    #: Higher is better; comparable within one answer only (full text: the database's rank;
    #: hybrid: the reciprocal rank fusion of the full-text and the semantic ranking).
    score: float
    #: The matching passage, the matched words between ``**`` (a message found by meaning
    #: alone: its first words).
    snippet: str


class SearchResult(BaseModel):
    query: str
    #: full_text: by the words alone (embeddings off, none stored yet for the session, or
    #: the embeddings API failing); hybrid: words and meaning combined.
    ranking: Literal["full_text", "hybrid"] = "full_text"
    hits: list[SearchHit]
