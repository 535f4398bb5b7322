"""A model's summary beside the user's block: restatements and corrected values left out,
the two held to the target with the user's words last to go."""

from __future__ import annotations

from app.budget.summary import SummaryContent, SummaryItem
from app.budget.tokens import FallbackCounter
from app.summarize.base import SourceMessage, SummaryRequest
from app.summarize.beside_block import UserWords, merged, within_target, without_user_words
from app.summarize.extractive import user_block

COUNTER = FallbackCounter()
MESSAGES = (
    SourceMessage(1, "user", "The team offsite is in Lyon. Can you find hotels?"),
    SourceMessage(2, "assistant", "Hotel Bellecour has rooms from 120 EUR."),
    SourceMessage(3, "user", "I fly from Ljubljana, my daughter Zoë comes along."),
    SourceMessage(4, "user", "Scratch that, the team offsite is in Porto now."),
)


def block_of(messages: tuple[SourceMessage, ...] = MESSAGES, limit: int = 400) -> SummaryContent:
    return user_block(SummaryRequest(None, messages, 600, COUNTER), limit).content


def test_the_block_keeps_the_users_statements_and_the_correction_only() -> None:
    request = SummaryRequest(None, MESSAGES, 600, COUNTER)
    block = user_block(request, 400)

    texts = [item.text for item in block.content.key_facts]
    assert "Scratch that, the team offsite is in Porto now." in texts
    assert not any("Lyon" in text for text in texts)
    assert [item.text for item in block.revised] == ["The team offsite is in Lyon."]
    assert all(item.from_user for item in block.content.key_facts)


def test_a_restatement_and_a_corrected_value_leave_the_models_part() -> None:
    request = SummaryRequest(None, MESSAGES, 600, COUNTER)
    words = UserWords(user_block(request, 400), MESSAGES)
    model = SummaryContent(
        summary_text="Hotels were searched. The offsite is in Lyon.",
        key_facts=(
            SummaryItem("I fly from Ljubljana", (3,), from_user=True),
            SummaryItem("Offsite venue: Lyon"),
            SummaryItem("Hotel Bellecour has rooms from 120 EUR.", (2,)),
            SummaryItem("The offsite moved from Lyon to Porto.", (4,)),
        ),
    )

    kept = without_user_words(model, words)

    assert kept.summary_text == "Hotels were searched."
    assert [item.text for item in kept.key_facts] == [
        "Hotel Bellecour has rooms from 120 EUR.",
        "The offsite moved from Lyon to Porto.",
    ]
    assert not any(item.from_user for item in kept.key_facts)


def test_a_correction_held_by_the_block_outlasts_the_fold_that_made_it() -> None:
    # A later fold: the statement the correction replaced is gone from the messages, and the
    # model repeats the old value from what it remembers.
    previous = user_block(SummaryRequest(None, MESSAGES, 600, COUNTER), 400).content
    later = (SourceMessage(9, "user", "Book the train to the airport, please."),)
    block = user_block(SummaryRequest(previous, later, 600, COUNTER), 400)

    words = UserWords(block, later)

    assert words.stale("The team offsite is in Lyon")
    assert not words.stale("The team offsite is in Porto")
    assert not words.stale("Hotel Bellecour has rooms from 120 EUR.")


def test_over_the_target_the_model_gives_way_before_the_users_words() -> None:
    block = block_of()
    model = SummaryContent(
        summary_text="A long narrative of the search for hotels and trains. " * 20,
        key_facts=tuple(SummaryItem(f"Hotel {i} has rooms.", (2,)) for i in range(30)),
    )
    target = merged(block, SummaryContent(summary_text="")).tokens(COUNTER) + 12

    fitted_block, fitted_model = within_target(block, model, target, COUNTER)

    assert fitted_block == block
    assert len(fitted_model.key_facts) < 30
    assert merged(fitted_block, fitted_model).tokens(COUNTER) <= target


def test_a_statement_pushed_out_is_counted_and_listed() -> None:
    block = block_of()
    target = merged(block, SummaryContent(summary_text="")).tokens(COUNTER) - 5

    fitted_block, _ = within_target(block, SummaryContent(summary_text=""), target, COUNTER)
    content = merged(fitted_block, SummaryContent(summary_text=""))

    gone = fitted_block.left_out
    assert gone[0].source_message_ids == (1,)  # the oldest goes first
    assert not set(gone) & set(content.key_facts)
    ids = ", ".join(f"#{item.source_message_ids[0]}" for item in gone)
    assert f"{len(gone)} user statement(s) left out for room (messages {ids})" in (
        content.summary_text
    )
    assert content.tokens(COUNTER) <= target
