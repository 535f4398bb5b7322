"""A long text counted line by line (with remembered lines) costs exactly what the encoding
says of it whole: the premise that makes a summary's fold cost only its new lines."""

from __future__ import annotations

import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.budget.tokens import (
    LINE_ADDITIVE_ENCODINGS,
    MEMO_MAX_CHARS,
    TiktokenCounter,
    word_chunks,
)
from app.caches import LRU

#: Pieces that sit at the edges of the encodings' split patterns: line breaks before white
#: space, "/", punctuation and letters; contractions; digits; CJK; emoji.
PIECES = st.sampled_from(
    [*"ab Z9.-#:'\n\t,é中/\r_*()[]{}\"", "\n", "\n\n", "'s", "'re", "\n- ", "## ", " 123", "😀"]
)


def counters(name: str) -> tuple[TiktokenCounter, tiktoken.Encoding]:
    encoding = tiktoken.get_encoding(name)
    return TiktokenCounter(name, encoding, memo=LRU(10_000)), encoding


COUNTERS = {name: counters(name) for name in sorted(LINE_ADDITIVE_ENCODINGS)}


@settings(max_examples=1500, deadline=None, database=None)
@given(
    st.lists(PIECES, max_size=60).map("".join),
    st.integers(min_value=0, max_value=3),
)
def test_a_long_text_costs_the_same_counted_by_lines_as_whole(text: str, copies: int) -> None:
    # Past the memo's limit, so the line-by-line path runs.
    long_text = "\n".join([text] * copies + ["x" * (MEMO_MAX_CHARS + 1), text])
    for counter, encoding in COUNTERS.values():
        whole = len(encoding.encode(long_text, disallowed_special=()))
        assert counter.count_text(long_text) == whole
        assert counter.count_text(long_text) == whole  # remembered lines, same count


def test_a_summary_refolded_is_counted_from_its_remembered_lines() -> None:
    lines = [f"- The traveller's seat {n}C on flight QX-{n:04d} is confirmed." for n in range(400)]
    summary = "Key facts:\n" + "\n".join(lines)
    counter, encoding = COUNTERS["o200k_base"]
    first = counter.count_text(summary)
    calls: list[str] = []

    class Watching:
        def encode(self, text: str, *, disallowed_special: object = ()) -> list[int]:
            calls.append(text)
            return encoding.encode(text, disallowed_special=())

    again = TiktokenCounter("o200k_base", Watching(), memo=counter.memo)
    refolded = summary + "\n- A new fact."
    assert first == len(encoding.encode(summary, disallowed_special=()))
    assert again.count_text(refolded) == len(encoding.encode(refolded, disallowed_special=()))
    # Only the lines the memo had not seen were encoded.
    assert calls == [lines[-1] + "\n", "- A new fact."]


@settings(max_examples=1500, deadline=None, database=None)
@given(st.lists(PIECES, max_size=80).map("".join), st.integers(min_value=1, max_value=12))
def test_a_text_costs_the_same_counted_in_word_chunks_as_whole(text: str, size: int) -> None:
    chunks = list(word_chunks(text, size))

    assert "".join(chunks) == text
    for _, encoding in COUNTERS.values():
        whole = len(encoding.encode(text, disallowed_special=()))
        assert sum(len(encoding.encode(c, disallowed_special=())) for c in chunks) == whole


def test_a_long_line_is_counted_in_chunks_exactly() -> None:
    line = " ".join(f"w{n % 9973} Lisbon's 12.5% naïve" for n in range(20_000))
    for counter, encoding in COUNTERS.values():
        assert len(list(word_chunks(line))) > 10
        assert counter.count_text(line) == len(encoding.encode(line, disallowed_special=()))
