"""The recall block and search queries, as pure functions: what comes back, within what room,
and where in the prompt."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from app.budget.assembly import chat_problems
from app.budget.decision import (
    Message,
    PolicySettings,
    SessionBlocks,
    Snapshot,
    decide,
    plan_assembly,
    with_recall,
)
from app.budget.policy import Budget
from app.budget.recall import (
    EXCERPT_SCAN_CHARS,
    EXCERPT_WORD_CHARS,
    EXCERPT_WORDS,
    INDEXED_CHARS,
    MAX_TOOL_RESULTS,
    RECALL_BLOCK,
    RECALL_HEADING,
    Candidate,
    RecallHit,
    excerpt_window,
    held_text,
    locate,
    previous_recall,
    rank,
    recall_block,
    recall_room,
    shown_again,
    with_replies,
)
from app.search.terms import (
    MAX_QUERY_CHARS,
    MAX_RECALL_TERMS,
    InvalidSearchQueryError,
    fts5_match,
    recall_query,
    recall_terms,
    search_terms,
)
from tests.unit.test_decision_properties import COUNTER

HITS = (
    RecallHit(message_id=30, seq=3, role="user", text="the locker code is 4471"),
    RecallHit(message_id=10, seq=1, role="assistant", text="the ferry leaves at nine"),
    RecallHit(message_id=50, seq=5, role="user", text="window seats please"),
)


def test_the_best_hits_are_shown_oldest_first_within_max_hits() -> None:
    block = recall_block(HITS, room=1000, max_hits=2, counter=COUNTER)

    assert block is not None
    assert block.message_ids == (10, 30)
    assert block.text.splitlines() == [
        RECALL_HEADING,
        "[message 1, assistant] the ferry leaves at nine",
        "[message 3, user] the locker code is 4471",
    ]


def test_the_room_is_the_share_or_what_the_ceiling_leaves_never_more_than_the_prompt_does() -> None:
    # A prompt far under the ceiling: the block may fill up to it.
    assert recall_room(whole=1000, prompt=200, share=0.15, ceiling=0.5) == 300
    # Near or past the ceiling: the share, as long as the prompt leaves it.
    assert recall_room(whole=1000, prompt=450, share=0.15, ceiling=0.5) == 150
    assert recall_room(whole=1000, prompt=900, share=0.15, ceiling=0.5) == 100
    # No ceiling: the share alone.
    assert recall_room(whole=1000, prompt=100, share=0.15, ceiling=0) == 150


def test_a_reply_follows_the_hit_it_answers_unless_ranked_before_it() -> None:
    asked = RecallHit(message_id=70, seq=7, role="user", text="what did you do at the picnic?")
    reply = RecallHit(message_id=80, seq=8, role="assistant", text="charades and a hunt")

    assert [h.message_id for h in with_replies([asked, *HITS], {7: reply})] == [70, 80, 30, 10, 50]
    assert [h.message_id for h in with_replies([reply, asked], {7: reply})] == [80, 70]


def test_the_block_never_exceeds_its_room() -> None:
    for room in range(0, 60):
        block = recall_block(HITS, room=room, max_hits=5, counter=COUNTER)
        assert block is None or block.tokens <= room


def test_a_hit_too_long_for_what_is_left_is_cut() -> None:
    long = RecallHit(message_id=1, seq=1, role="user", text=" ".join(["word"] * 500))
    heading = recall_block([HITS[0]], room=1000, max_hits=1, counter=COUNTER)
    assert heading is not None

    block = recall_block([long], room=heading.tokens + 40, max_hits=1, counter=COUNTER)

    assert block is not None
    assert block.text.endswith("…")
    assert block.tokens <= heading.tokens + 40


def test_a_hit_too_long_shows_the_passage_that_matched_instead() -> None:
    fact = "My loyalty number is FACT-01."
    long = RecallHit(
        message_id=1,
        seq=1,
        role="user",
        text=" ".join(["word"] * 500) + " " + fact,
        excerpt=fact,
        passage=10,
    )
    heading = recall_block([HITS[0]], room=1000, max_hits=1, counter=COUNTER)
    assert heading is not None

    block = recall_block([long], room=heading.tokens + 40, max_hits=1, counter=COUNTER)

    assert block is not None
    assert block.text.splitlines()[-1] == f"[message 1, user] … {fact} …"
    # With room for all of it, the whole message.
    whole = recall_block([long], room=2000, max_hits=1, counter=COUNTER)
    assert whole is not None
    assert whole.text.endswith("word " + fact)


def test_a_block_is_shown_again_word_for_word_from_its_fingerprint_entry() -> None:
    fact = "My loyalty number is FACT-01, " + " ".join(["digits"] * 40)
    hits = (
        RecallHit(9, 9, "user", " ".join(["word"] * 300) + " " + fact, fact, 7),
        RecallHit(4, 4, "assistant", " ".join(["other"] * 300)),
        *HITS,
    )
    by_id = {hit.message_id: hit for hit in hits}
    shown = set()
    for room in range(0, 900, 7):
        block = recall_block(hits, room=room, max_hits=3, counter=COUNTER)
        if block is None:
            continue
        previous = previous_recall(["s:0", "q:1", block.fingerprint(), "q:2"])
        assert previous is not None
        entry, recalled = previous
        assert entry == block.fingerprint()
        assert shown_again(recalled, by_id, COUNTER) == block
        shown.update(entry.split(":")[2].split(","))
    # Whole, excerpts, and cuts of either were all shown (and shown again).
    assert {"9", "4", "30", "9p7"} <= shown
    assert any(item.startswith("9p7k") for item in shown)
    assert any(item.startswith("4k") for item in shown)


def listing(detail: str, *, rows: int = 40) -> str:
    lines = [f"host web-{n} state ok load 0.{n % 9} zone b" for n in range(rows)]
    lines.insert(rows // 2, detail)
    return "\n".join(lines)


def test_a_long_tool_result_is_shown_by_the_words_around_what_was_asked() -> None:
    text = listing("host ledger-db state ok listens on port 6543")
    hit = RecallHit(message_id=9, seq=4, role="tool", text=text)

    block = recall_block([hit], room=2000, max_hits=5, counter=COUNTER, terms=("ledger", "ports"))

    assert block is not None
    assert "[message 4, tool result] … " in block.text
    assert "host ledger-db state ok listens on port 6543" in block.text
    assert "web-0 " not in block.text
    assert "web-39 " not in block.text
    assert len(block.text.splitlines()[1].split()) <= EXCERPT_WORDS + 6


def test_the_window_of_a_tool_result_is_shown_again_from_its_fingerprint_entry() -> None:
    hit = RecallHit(message_id=9, seq=4, role="tool", text=listing("port 6543 for ledger"))
    block = recall_block([hit], room=2000, max_hits=5, counter=COUNTER, terms=("ledger",))
    assert block is not None

    previous = previous_recall([block.fingerprint()])

    assert previous is not None
    assert shown_again(previous[1], {9: hit}, COUNTER) == block


def test_a_window_holds_most_of_the_words_asked_for_not_the_first_one_said() -> None:
    text = listing("ledger is mentioned here alone") + "\n" + listing("the ledger port is 6543")
    start = excerpt_window(text, ("ledger", "port"))

    assert start is not None
    assert "the ledger port is 6543" in " ".join(text.split()[start : start + EXCERPT_WORDS])


def test_a_short_tool_result_is_shown_whole() -> None:
    assert excerpt_window("the ledger port is 6543", ("ledger",)) is None


def test_a_block_shows_a_few_tool_results_at_most() -> None:
    hits = [
        RecallHit(message_id=n, seq=n, role="tool", text=f"ledger port {n}") for n in range(1, 9)
    ]
    hits.append(RecallHit(message_id=20, seq=20, role="user", text="the ledger port moved"))

    block = recall_block(hits, room=4000, max_hits=20, counter=COUNTER, terms=("ledger",))

    assert block is not None
    assert block.message_ids.count(20) == 1
    assert len(block.message_ids) == MAX_TOOL_RESULTS + 1


def test_a_window_of_a_huge_result_without_white_space_is_a_bounded_line() -> None:
    # A 10 MB base64 blob: one "word". Shown whole, it took whatever room was left.
    blob = "result: " + "QUJD" * 2_500_000 + " port 6543"
    hit = RecallHit(message_id=9, seq=4, role="tool", text=blob)

    block = recall_block([hit], room=1_000_000, max_hits=5, counter=COUNTER, terms=("port",))

    assert block is not None
    line = block.text.splitlines()[1]
    assert len(line) <= EXCERPT_WORDS * (EXCERPT_WORD_CHARS + 2) + 40
    assert line.endswith("… …")
    again = previous_recall([block.fingerprint()])
    assert again is not None
    assert shown_again(again[1], {9: RecallHit(9, 4, "tool", held_text(blob))}, COUNTER) == block


def test_a_huge_message_of_any_role_is_shown_by_its_window() -> None:
    text = listing("host ledger-db listens on port 6543") + " filler" * 2 * EXCERPT_SCAN_CHARS
    hit = RecallHit(message_id=9, seq=4, role="user", text=text)

    block = recall_block([hit], room=100_000, max_hits=5, counter=COUNTER, terms=("ledger",))

    assert block is not None
    assert "host ledger-db listens on port 6543" in block.text
    assert len(block.text.splitlines()[1].split()) <= EXCERPT_WORDS + 6


def test_ranking_keeps_no_huge_message_in_memory() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        for n in range(5):
            text = listing(f"host ledger-{n} port {n}") * 2_000  # about 1.6 MB each
            rank([Candidate(RecallHit(n, n, "tool", text), 1.0)], "which port did ledger use?")
            del text
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert held < 1_000_000


def test_a_recall_hit_holds_what_a_block_reads_of_a_message_and_no_more() -> None:
    assert held_text("short") == "short"
    assert len(held_text("x" * 10 * EXCERPT_SCAN_CHARS)) == EXCERPT_SCAN_CHARS + 1


@pytest.mark.parametrize("entry", ["9w" + "9" * 5000, "9" * 5000, "9p1k" + "1" * 10])
def test_a_fingerprint_entry_with_too_many_digits_shows_no_block_again(entry: str) -> None:
    assert previous_recall(["s:0", f"c:0123456789abcdef:4,{entry}"]) is None


def test_a_prompt_without_a_recall_block_has_none_to_show_again() -> None:
    assert previous_recall(["s:0", "q:1", "q:2"]) is None
    assert previous_recall(None) is None


def test_the_recall_block_goes_just_before_the_current_turn_and_is_counted() -> None:
    stored = tuple(
        Message(id=seq, seq=seq, turn_seq=(seq + 1) // 2, role=role, content=f"said {seq}")
        for seq, role in zip(range(1, 5), ("user", "assistant") * 2, strict=True)
    )
    new = (Message(id=5, seq=5, turn_seq=3, role="user", content="what was the code?"),)
    recall = recall_block(HITS[:1], room=100, max_hits=1, counter=COUNTER)
    snapshot = Snapshot(
        settings=PolicySettings(),
        budget=Budget(8000, 1000, 500, 6500),
        counter=COUNTER,
        blocks=SessionBlocks(system_layers=("Be brief.",)),
        stored=stored,
        new=new,
        turn_seq=3,
        step=0,
    )
    assert recall is not None
    alone = decide(plan_assembly(snapshot))

    decision = with_recall(alone, recall, snapshot.previous_fingerprint)

    assert decision.accepted
    assert [m["content"] for m in decision.messages[-2:]] == [recall.text, "what was the code?"]
    roles = [m["role"] for m in decision.messages]
    assert roles == ["system", "user", "assistant", "user", "assistant", "user", "user"]
    assert chat_problems(decision.messages) == []
    assert decision.blocks[RECALL_BLOCK] == recall.tokens
    assert decision.fingerprint[-2] == recall.fingerprint()
    assert decision.figures.final == alone.figures.final + recall.tokens


@pytest.mark.parametrize("query", ["", "  ", '"*"', "(:)", "_", "x" * (MAX_QUERY_CHARS + 1)])
def test_a_query_without_words_is_refused(query: str) -> None:
    with pytest.raises(InvalidSearchQueryError):
        search_terms(query)


def test_query_words_are_quoted_for_fts5() -> None:
    terms = search_terms('NEAR(gate "flight") OR -x*')

    assert terms == ("near", "gate", "flight", "or", "x")
    assert fts5_match(terms, match_any=False) == '"near" "gate" "flight" "or" "x"'
    assert fts5_match(terms, match_any=True) == '"near" OR "gate" OR "flight" OR "or" OR "x"'


def test_recall_terms_leave_out_words_that_say_nothing() -> None:
    assert recall_terms("What was the locker code for the flat?", drop_stop_words=True) == (
        "locker",
        "code",
        "flat",
    )


def test_a_possessive_or_a_contraction_leaves_no_fragment_to_look_for() -> None:
    terms, _ = recall_query("What's Caroline's bike? She hadn't said, I'd guess.")

    assert terms == ("caroline", "bike", "said", "guess")


def test_what_was_said_outranks_a_tool_result_that_says_as_much() -> None:
    tool = RecallHit(message_id=1, seq=1, role="tool", text="ledger port 6543 on db-2")
    said = RecallHit(message_id=2, seq=2, role="user", text="the ledger port is 6543 on db-2")

    ranked = rank([Candidate(tool, 1.0), Candidate(said, 1.0)], "which ledger port?")

    assert [hit.message_id for hit in ranked] == [2, 1]


def test_a_recall_looks_for_the_first_words_of_a_long_message() -> None:
    words = [f"topic{n}" for n in range(40)]

    terms, _ = recall_query(" ".join(words))

    assert terms == tuple(words[:MAX_RECALL_TERMS])


def deploy_log(planted_at: int, lines: int) -> str:
    """A deployer's log: other services' failed deploys, and the payments one at line
    ``planted_at``."""
    made = [
        f"ERROR deployer {('billing', 'search')[n % 2]} deploy failed: error_code=E-{n}"
        for n in range(lines)
    ]
    made.insert(planted_at, "ERROR deployer payments deploy failed: error_code=PAY-4821")
    return "\n".join(made)


def test_a_window_holds_the_line_that_says_the_rare_word_among_many_that_say_the_common_ones() -> (
    None
):
    text = deploy_log(planted_at=400, lines=600)  # past the first dozen of each common word
    terms = ("error", "code", "payments", "deploy")

    start = excerpt_window(text, terms)

    assert start is not None
    shown = " ".join(text.split()[start : start + EXCERPT_WORDS])
    assert "payments deploy failed: error_code=PAY-4821" in shown


def test_a_detail_deeper_than_a_hit_holds_is_shown_and_shown_again_from_its_entry() -> None:
    text = deploy_log(planted_at=3_000, lines=3_400)  # the detail at about 170 kB
    terms = ("error", "code", "payments", "deploy")
    offset = locate(text, terms)
    assert offset > EXCERPT_SCAN_CHARS
    hit = RecallHit(9, 4, "tool", held_text(text, offset), offset=offset)

    block = recall_block([hit], room=2000, max_hits=5, counter=COUNTER, terms=terms)

    assert block is not None
    assert "payments deploy failed: error_code=PAY-4821" in block.text
    again = previous_recall([block.fingerprint()])
    assert again is not None
    assert again[1][0].offset == offset
    rebuilt = RecallHit(9, 4, "tool", held_text(text, again[1][0].offset or 0), offset=offset)
    assert shown_again(again[1], {9: rebuilt}, COUNTER) == block


def test_a_detail_past_what_the_index_holds_is_not_looked_for() -> None:
    text = "x " * (INDEXED_CHARS // 2) + "\n" + deploy_log(planted_at=0, lines=10)

    assert locate(text, ("payments", "deploy")) == 0


def test_a_detail_near_the_start_of_a_long_message_keeps_the_message_from_its_start() -> None:
    text = deploy_log(planted_at=5, lines=3_400)

    assert locate(text, ("payments", "deploy")) == 0


def test_a_detail_deep_in_turkish_text_is_held_where_it_was_found() -> None:
    # "İ" lowers to two characters: a place found in the lowered text must still be the
    # place in the text itself, or the held text starts past the detail.
    line = "İade İşlemi İptal edildi: İstanbul deposu, sipariş bekliyor\n"
    text = line * 1_150 + "payments deploy failed: error_code=PAY-4821\n" + line * 100
    terms = ("error", "code", "payments", "deploy")

    offset = locate(text, terms)

    assert offset > EXCERPT_SCAN_CHARS
    assert held_text(text, offset).startswith("payments deploy failed: error_code=PAY-4821")


def test_a_word_said_inside_every_number_still_lets_the_detail_be_found() -> None:
    # "7" is inside every number of the dump and a whole word nowhere: the scan for it is
    # bounded, and the words that are said still find their line.
    dump = "".join(f"{n:012d} 7{n % 97:05d}77 {n * 7:09d}\n" for n in range(6_000))
    text = dump + "payments deploy failed: error_code=PAY-4821\n" + dump[:20_000]
    terms = ("7", "payments", "deploy", "error")

    offset = locate(text, terms)

    assert "payments deploy failed" in held_text(text, offset)[:3_000]
