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


PASTED = (
    "the api timeout is 30 seconds\n"
    "```python\ndef retry_backoff(attempt): return min(2 ** attempt, 64)\n```"
)


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


def test_a_summary_stored_before_the_record_reads_as_not_knowing_what_it_held_in_part() -> None:
    assert summary_revisions(None) == {"partly_held": None}
    assert summary_revisions({}) == {"superseded": (), "partly_held": ()}
    stored = {"superseded": [[1, 5]], "partly_held": [3]}
    assert summary_revisions(stored) == {"superseded": ((1, 5),), "partly_held": (3,)}


def test_a_message_with_pasted_code_beside_its_replaced_statement_is_not_superseded() -> None:
    first = fold(None, (1, PASTED))
    second = fold(first, (5, "actually the api timeout is 45 seconds"))
    assert second.superseded == ()


def test_a_conditional_restatement_replaces_nothing() -> None:
    first = fold(None, (1, "the deadline for the Q3 report is March 3"))
    second = fold(
        first, (5, "if the client pushes back, the deadline for the Q3 report is March 10")
    )
    assert second.superseded == ()
    assert "the deadline for the Q3 report is March 3" in [i.text for i in second.action_items]


def _conversation(*said: tuple[str, str]) -> SummaryContent:
    messages = tuple(
        SourceMessage(message_id, role, text) for message_id, (role, text) in enumerate(said, 1)
    )
    return summarize_extractive(
        SummaryRequest(previous=None, messages=messages, target_tokens=2000, counter=O200K)
    )


PROPOSED = (
    ("user", "the venue for the offsite is the Marriott"),
    ("assistant", "Noted."),
    ("user", "check the booking"),
    (
        "assistant",
        "You said the venue for the offsite is the Marriott, but the booking shows the "
        "Hilton: should I update it?",
    ),
)


def test_a_confirmation_that_answers_the_proposal_just_before_it_supersedes() -> None:
    assert _conversation(*PROPOSED, ("user", "yes")).superseded == ((1, 5),)


def test_a_confirmation_after_another_exchange_supersedes_nothing() -> None:
    content = _conversation(
        *PROPOSED,
        ("user", "what time is check-in there?"),
        ("assistant", "Check-in is at 3 pm."),
        ("user", "yes, the Hilton"),
    )
    assert content.superseded == ()


def test_after_a_summary_stored_before_the_record_only_the_folds_own_messages_are_superseded() -> (
    None
):
    # A stored NULL reads back as not knowing which messages the summary held in part:
    # message 1 may have said more than the statement it holds.
    previous = SummaryContent(
        summary_text="",
        key_facts=(SummaryItem("the venue for the launch is the Corn Exchange", (1,), True),),
        partly_held=None,
    )
    content = fold(previous, (5, "actually, the launch venue is Harbour Hall"))
    assert content.superseded == ()
    assert content.partly_held == ()


def test_a_fold_on_a_summary_stored_before_the_record_supersedes_its_own_messages() -> None:
    previous = SummaryContent(summary_text="", partly_held=None)
    content = fold(
        previous,
        (5, "the venue for the launch is the Corn Exchange"),
        (9, "actually, the launch venue is Harbour Hall"),
    )
    assert content.superseded == ((5, 9),)
