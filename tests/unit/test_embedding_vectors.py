"""How messages become passages and vectors, and how rankings are fused."""

from __future__ import annotations

from app.embeddings.vectors import (
    MAX_PASSAGES,
    PASSAGE_WORDS,
    fuse,
    nearest,
    pack,
    passages,
    tied_ranks,
    unpack,
)


def test_a_short_message_is_one_passage() -> None:
    assert passages("  We adopted a puppy.\n It is called Biscuit!  ") == [
        "We adopted a puppy. It is called Biscuit!"
    ]
    assert passages(" \n ") == []


def test_sentences_are_packed_into_passages_and_never_split_but_when_too_long() -> None:
    long = " ".join(["filler"] * (PASSAGE_WORDS + 10)) + "."
    fact = "My loyalty number is 4471."
    other = " ".join(["other"] * (PASSAGE_WORDS - 3)) + "."

    parts = passages(f"{long} {fact} {other}")

    assert parts == [
        " ".join(["filler"] * PASSAGE_WORDS),
        " ".join(["filler"] * 10) + ". " + fact,
        other,
    ]
    assert all(len(part.split()) <= PASSAGE_WORDS for part in parts)
    assert " ".join(parts).split() == f"{long} {fact} {other}".split()


def test_a_huge_message_is_cut_to_its_first_passages() -> None:
    parts = passages("word " * (PASSAGE_WORDS * (MAX_PASSAGES + 5)))
    assert len(parts) == MAX_PASSAGES


def test_a_message_is_as_near_as_its_nearest_passage() -> None:
    stored = [
        (1, pack([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])),
        (2, pack([0.6, 0.8, 0.0])),
        (3, pack([0.0, 0.0, 1.0])),
        (4, pack([1.0, 0.0])),  # another model's length: skipped
    ]

    hits = nearest([0.0, 2.0, 0.0], stored, limit=10, min_similarity=0.5)

    assert [(key, passage) for key, _, passage in hits] == [(1, 1), (2, 0)]
    assert round(hits[0][1], 5) == 1.0
    assert len(unpack(stored[0][1])) == 6


def test_fusion_rewards_what_both_rankings_found() -> None:
    fused = [key for key, _ in fuse(([10, 20, 30], 1.0), ([30, 40], 1.0))]
    assert fused[0] == 30
    assert set(fused) == {10, 20, 30, 40}


def test_a_lighter_ranking_yields_its_first_places() -> None:
    assert [key for key, _ in fuse(([10, 20], 1.0), ([30, 40], 1.0))][:2] == [10, 30]
    assert [key for key, _ in fuse(([10, 20], 0.5), ([30, 40], 1.0))][:2] == [30, 40]


def test_equal_fused_scores_go_to_the_first_ranking_not_the_newer_message() -> None:
    assert [key for key, _ in fuse(([5, 6], 1.0), ([90, 80], 1.0))] == [5, 90, 6, 80]


def test_equal_scores_share_a_rank() -> None:
    assert tied_ranks([0.9, 0.5, 0.5, 0.5, 0.1]) == [1, 2, 2, 2, 5]
    assert tied_ranks([]) == []


def test_a_ranking_that_ties_every_id_leaves_the_other_ranking_s_order() -> None:
    words = [10, 20, 30, 40]
    tied = ([40, 30, 20, 10], 1.0, [1, 1, 1, 1])

    assert [key for key, _ in fuse((words, 1.0), tied)] == words
