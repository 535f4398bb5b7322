"""Which user messages a fold records as superseded (every statement of theirs replaced by a
later one): the record recall reads to leave them out by id, carried summary after summary."""

from __future__ import annotations

import tiktoken

from app.budget.summary import SummaryContent, SummaryItem
from app.budget.tokens import TiktokenCounter
from app.summarize import SourceMessage, SummaryRequest
from app.summarize.extractive import FoldRevisions, summarize_extractive
from app.turns.repository import summary_revisions

O200K = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))


def fold(previous: SummaryContent | None, *said: tuple[int, str]) -> SummaryContent:
    messages = tuple(SourceMessage(message_id, "user", text) for message_id, text in said)
    return summarize_extractive(
        SummaryRequest(previous=previous, messages=messages, target_tokens=2000, counter=O200K)
    )


def test_a_message_whose_only_statement_a_correction_replaces_is_superseded_by_it() -> None:
    first = fold(None, (1, "the venue for the launch is the Corn Exchange"))
    second = fold(first, (5, "actually, the launch venue is Harbour Hall"))
    assert second.superseded == ((1, 5),)
    assert second.superseded_ids == frozenset({1})


def test_a_message_that_also_says_something_else_is_not_superseded() -> None:
    first = fold(
        None,
        (1, "The venue for the launch is the Corn Exchange. My dentist is Dr Alvarez."),
    )
    second = fold(first, (5, "actually, the launch venue is Harbour Hall"))
    assert second.superseded == ()


def test_a_run_on_message_only_part_of_which_is_revised_is_not_superseded() -> None:
    first = fold(
        None, (1, "the venue for the launch is the Corn Exchange and my manager is Oyelaran Bassey")
    )
    second = fold(first, (5, "actually, the launch venue is Harbour Hall"))
    assert second.superseded == ()
    assert any("Oyelaran Bassey" in item.text for item in second.key_facts)


def test_a_twice_corrected_value_names_the_newest_correction_for_both_old_messages() -> None:
    first = fold(None, (1, "the venue for the launch is the Corn Exchange"))
    second = fold(first, (5, "actually, the launch venue is Harbour Hall"))
    third = fold(second, (9, "correction: the launch venue is the Old Mill"))
    assert third.superseded == ((1, 9), (5, 9))


def test_the_record_is_carried_by_a_fold_that_corrects_nothing() -> None:
    first = fold(None, (1, "the venue for the launch is the Corn Exchange"))
    second = fold(first, (5, "actually, the launch venue is Harbour Hall"))
    third = fold(second, (9, "my dentist is Dr Alvarez"))
    assert third.superseded == ((1, 5),)


def test_a_typo_fix_supersedes_nothing() -> None:
    content = fold(None, (1, "the locksmith we hired is Bogdan Wisniewsky"), (2, "*Wisniewski"))
    assert [item.text for item in content.key_facts] == [
        "the locksmith we hired is Bogdan Wisniewski (was: Wisniewsky)"
    ]
    assert content.superseded == ()


def test_a_message_held_only_in_part_is_not_superseded_when_the_rest_is_replaced() -> None:
    # Message 1 said two things; the summary held one of them only (the other left for
    # room): a correction of what is held does not supersede the whole message.
    previous = SummaryContent(
        summary_text="",
        key_facts=(SummaryItem("the venue for the launch is the Corn Exchange", (1,), True),),
        partly_held=(1,),
    )
    content = fold(previous, (5, "actually, the launch venue is Harbour Hall"))
    assert content.superseded == ()
    assert content.partly_held == ()  # nothing of message 1 is held any more


def test_a_statement_that_leaves_while_another_of_its_message_stays_marks_it_partly_held() -> None:
    kept = SummaryItem("the venue for the launch is the Corn Exchange", (1,), True)
    content = SummaryContent(summary_text="", key_facts=(kept,))
    fold_revisions = FoldRevisions(
        replaced={}, statements=((1, kept.text), (1, "my dentist is Dr Alvarez"))
    )
    assert fold_revisions.recorded(None, content).partly_held == (1,)


def test_a_summary_stored_before_the_record_reads_as_recording_nothing() -> None:
    assert summary_revisions(None) == {}
    stored = {"superseded": [[1, 5]], "partly_held": [3]}
    assert summary_revisions(stored) == {"superseded": ((1, 5),), "partly_held": (3,)}
