"""The latency benchmark's filled sessions: one database per content, reused only for it."""

from __future__ import annotations

from bench.latency import filled_name


def test_the_filled_database_is_named_by_its_content_and_fits_postgres_names() -> None:
    name = filled_name("contextd_bench", [10, 10_000], 0)

    assert name == filled_name("contextd_bench", [10, 10_000], 0)
    assert name != filled_name("contextd_bench", [10, 1_000], 0)
    assert name != filled_name("contextd_bench", [10, 10_000], 1)
    # Postgres cuts names at 63 bytes: two contents must not meet in one cut name.
    assert len(name.encode()) <= 63
