"""The rows a worker keeps between assemblies stay within their bound: the sessions used
least recently go first, and a session heavier than the whole bound is not kept."""

from __future__ import annotations

from datetime import UTC, datetime

from app.turns.kept_rows import ROW_BYTES, KeptRows, KeptRowsCache, row_bytes
from app.turns.repository import StoredRow


def _row(message_id: int, text: str) -> StoredRow:
    return StoredRow(
        message_id, message_id, 1, "tool", text, None, None, "call", None, None, 1, 10, "o200k"
    )


def _kept(*texts: str) -> KeptRows:
    rows = {index: _row(index, text) for index, text in enumerate(texts, start=1)}
    sizes = {index: row_bytes(row) for index, row in rows.items()}
    return KeptRows(
        born=datetime(2025, 1, 1, tzinfo=UTC),
        known_seq=len(texts),
        rows=rows,
        messages={},
        sizes=sizes,
        size=sum(sizes.values()),
    )


def test_a_row_weighs_its_text_and_what_keeping_it_costs() -> None:
    assert row_bytes(_row(1, "x" * 500)) == ROW_BYTES + 500


def test_the_session_used_least_recently_goes_first() -> None:
    cache = KeptRowsCache(max_bytes=3 * (ROW_BYTES + 100))
    for session in ("a", "b", "c"):
        cache.put("t", session, _kept("x" * 100))
    assert cache.get("t", "a") is not None  # "b" is now the least recently used
    cache.put("t", "d", _kept("x" * 100))
    assert cache.get("t", "b") is None
    assert all(cache.get("t", session) is not None for session in ("a", "c", "d"))
    assert cache.bytes <= cache.max_bytes


def test_a_session_heavier_than_the_bound_is_not_kept() -> None:
    cache = KeptRowsCache(max_bytes=ROW_BYTES + 10)
    cache.put("t", "a", _kept("x" * 5))
    cache.put("t", "a", _kept("x" * 100))
    assert cache.get("t", "a") is None
    assert cache.bytes == 0


def test_none_is_kept_when_the_bound_is_zero() -> None:
    cache = KeptRowsCache(max_bytes=0)
    cache.put("t", "a", _kept("x"))
    assert cache.get("t", "a") is None
