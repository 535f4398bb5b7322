"""The built-in extractive summariser: what it keeps, that it fits, how it folds."""

from __future__ import annotations

from collections import Counter

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from app.budget.statements import ROUTINE_SHAPE_MENTIONS, Tier, asks, shape, tier
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import FallbackCounter, TiktokenCounter, TokenCounter
from app.summarize import ExtractiveSummarizer, SourceMessage, SummaryRequest
from app.summarize.extractive import (
    TOOL_LABEL,
    USER_BLOCK_SHARE,
    split_sentences,
    summarize_extractive,
)

O200K = TiktokenCounter("o200k_base", tiktoken.get_encoding("o200k_base"))
FIELDS = ("key_facts", "decisions", "open_questions", "action_items")


def summarise(
    *messages: SourceMessage,
    target: int = 2000,
    previous: SummaryContent | None = None,
    counter: TokenCounter = O200K,
) -> SummaryContent:
    return summarize_extractive(
        SummaryRequest(previous=previous, messages=messages, target_tokens=target, counter=counter)
    )


def texts(items: tuple[SummaryItem, ...]) -> list[str]:
    return [item.text for item in items]


def all_items(content: SummaryContent) -> list[SummaryItem]:
    return [item for field in FIELDS for item in getattr(content, field)]


def all_texts(content: SummaryContent) -> list[str]:
    return [item.text for item in all_items(content)]


# --------------------------------------------------------------------------- what is kept


def test_sentences_with_numbers_identifiers_and_dates_become_key_facts() -> None:
    content = summarise(
        SourceMessage(
            7,
            "user",
            "Thanks for the help so far. The invoice total is 1250 EUR. "
            "The handler lives in services/billing_api.py now. "
            "The launch date is 2025-03-14. That sounds fine to me.",
        )
    )
    facts = texts(content.key_facts)
    assert "The invoice total is 1250 EUR." in facts
    assert "The handler lives in services/billing_api.py now." in facts
    assert "The launch date is 2025-03-14." in facts
    assert all(item.source_message_ids == (7,) for item in content.key_facts)
    # Small talk is not a fact, nor anything else.
    assert "Thanks for the help so far." not in all_texts(content)
    assert "That sounds fine to me." not in all_texts(content)


def test_we_decided_sentences_become_decisions() -> None:
    content = summarise(
        SourceMessage(3, "user", "After the review we decided to keep Postgres as the store."),
        SourceMessage(4, "assistant", "Okay. Let's go with weekly releases from now on."),
    )
    assert content.decisions == (
        SummaryItem(
            "After the review we decided to keep Postgres as the store.", (3,), from_user=True
        ),
        SummaryItem("Let's go with weekly releases from now on.", (4,)),
    )


def test_questions_become_open_questions() -> None:
    content = summarise(
        SourceMessage(5, "user", "Here is the plan. What is the retry limit for the payments API?")
    )
    assert content.open_questions == (
        SummaryItem("What is the retry limit for the payments API?", (5,), from_user=True),
    )


def test_need_to_sentences_become_action_items() -> None:
    content = summarise(
        SourceMessage(9, "assistant", "Good progress. We need to rotate the signing keys soon.")
    )
    assert content.action_items == (SummaryItem("We need to rotate the signing keys soon.", (9,)),)


def test_each_item_cites_the_message_it_came_from() -> None:
    messages = (
        SourceMessage(101, "user", "The budget is 40000 USD for the quarter."),
        SourceMessage(102, "assistant", "We decided to hire two contractors."),
        SourceMessage(103, "user", "Who signs off on the vendor contract?"),
        SourceMessage(104, "assistant", "We need to send the draft to legal."),
        SourceMessage(105, "tool", '{"ticket": "OPS-7781", "status": "open", "sla_hours": 48}'),
    )
    content = summarise(*messages)
    by_id = {m.message_id: m.text for m in messages}
    items = all_items(content)
    assert {item.source_message_ids for item in items} == {(101,), (102,), (103,), (104,), (105,)}
    for item in items:
        (source,) = item.source_message_ids
        assert item.text.removeprefix(TOOL_LABEL) in by_id[source]
    # What a tool returned says so, and comes after what was said in the conversation.
    assert texts(content.key_facts) == [
        "The budget is 40000 USD for the quarter.",
        'Tool output: {"ticket": "OPS-7781", "status": "open", "sla_hours": 48}',
    ]


def test_tool_output_never_becomes_a_decision_or_question() -> None:
    content = summarise(
        SourceMessage(1, "tool", "We decided nothing here. Should this be a question?"),
    )
    assert content.decisions == ()
    assert content.open_questions == ()


def test_the_same_sentence_is_kept_once_citing_its_first_source() -> None:
    sentence = "The staging host is db-02.internal on port 5433."
    content = summarise(
        SourceMessage(1, "user", sentence),
        SourceMessage(2, "assistant", sentence),
    )
    assert texts(content.key_facts).count(sentence) == 1
    assert content.key_facts[0].source_message_ids == (1,)


def test_summary_text_says_what_was_summarised() -> None:
    content = summarise(
        SourceMessage(1, "user", "Please plan the migration."),
        SourceMessage(2, "assistant", "Sure."),
    )
    assert "1 user request(s)" in content.summary_text
    assert "Please plan the migration." in content.summary_text
    assert render_summary(content).startswith(content.summary_text)


def test_anchor_ids_are_the_sources_of_facts_decisions_and_questions() -> None:
    content = summarise(
        SourceMessage(1, "user", "The cluster has 64 nodes."),
        SourceMessage(2, "user", "We decided to shard by tenant."),
        SourceMessage(3, "user", "Is the backup job still failing?"),
        SourceMessage(4, "user", "We need to renew the TLS certificate."),
    )
    # Action items are not anchors: pruning may drop the message an action item came from.
    assert content.anchor_message_ids() == frozenset({1, 2, 3})


# --------------------------------------------------------------------------- target


def _huge_input() -> tuple[SourceMessage, ...]:
    sentences = [
        "The order A-{i} ships on 2025-0{m}-1{m} to warehouse WH{i}.",
        "We decided to route batch {i} through region eu-west-{m}.",
        "Does job {i} still need the legacy adapter?",
        "We need to archive bucket logs-{i} by Friday.",
        "Nothing much happened in step {i}.",
    ]
    return tuple(
        SourceMessage(
            i,
            ("user", "assistant", "tool")[i % 3],
            " ".join(s.format(i=i, m=1 + i % 9) for s in sentences) * 3,
        )
        for i in range(300)
    )


def test_render_fits_a_tiny_target_with_huge_input() -> None:
    # 60 messages, 11,000 tokens that render to ~2,400 uncut: ten times the largest target
    # here. All 300 cost fifteen times as much (the summariser weighs every pair of
    # statements) and find nothing more about a target the render must cut to.
    messages = _huge_input()[:60]
    for target in (0, 1, 5, 12, 40, 100, 250):
        for counter in (O200K, FallbackCounter()):
            content = summarise(*messages, target=target, counter=counter)
            assert counter.count_text(render_summary(content)) <= target, (target, counter.name)


def test_render_uses_a_generous_target_for_items() -> None:
    content = summarise(*_huge_input(), target=1500)
    rendered = O200K.count_text(render_summary(content))
    assert rendered <= 1500
    assert rendered > 1000  # not trivially small: the room is used
    # Decisions rank first; with hundreds of them they take the room.
    assert len(content.decisions) > 20


@given(
    texts_=st.lists(st.text(max_size=400), min_size=1, max_size=20),
    roles=st.lists(st.sampled_from(["user", "assistant", "tool"]), min_size=20, max_size=20),
    target=st.integers(min_value=0, max_value=300),
    use_fallback=st.booleans(),
)
@settings(max_examples=150, deadline=None)
def test_render_fits_any_target_for_any_text(
    texts_: list[str], roles: list[str], target: int, use_fallback: bool
) -> None:
    counter: TokenCounter = FallbackCounter() if use_fallback else O200K
    messages = tuple(SourceMessage(i, roles[i], text) for i, text in enumerate(texts_))
    content = summarise(*messages, target=target, counter=counter)
    assert counter.count_text(render_summary(content)) <= target


# --------------------------------------------------------------------------- folding

PLANTED = (
    SourceMessage(
        1,
        "user",
        "The customer account id is ACME-0042. We decided to bill quarterly in EUR. "
        "What discount applies above 500 seats?",
    ),
    SourceMessage(
        2,
        "assistant",
        "The contract renewal date is 2026-01-31. Let's go with the Enterprise plan for ACME.",
    ),
)


def fold_material(fold: int) -> tuple[SourceMessage, ...]:
    """New, fact-dense material for one fold: every fold has more than the target holds."""
    return tuple(
        SourceMessage(
            100 * fold + k,
            "user" if k % 2 == 0 else "assistant",
            f"Server srv-{fold}-{k} has {fold * 10 + k} GB of RAM. "
            f"Ticket OPS-{fold}{k} was filed on 2025-0{k % 9 + 1}-1{fold % 10}. "
            f"We decided to retire host h{fold}{k} next week. "
            f"Is rack R{fold}{k} still on the old firmware?",
        )
        for k in range(6)
    )


def fold_ten_times(target: int) -> tuple[SummaryContent, SummaryContent]:
    first = summarise(*PLANTED, target=target)
    summary = first
    for fold in range(2, 11):
        summary = summarise(*fold_material(fold), previous=summary, target=target)
        assert O200K.count_text(render_summary(summary)) <= target
    return first, summary


def test_fold_puts_previous_items_first_in_every_section() -> None:
    previous = summarise(*PLANTED)
    folded = summarise(*fold_material(2), previous=previous)
    for field in FIELDS:
        before, after = getattr(previous, field), getattr(folded, field)
        assert after[: len(before)] == before, field
    # ... and the new material is there too.
    assert len(folded.key_facts) > len(previous.key_facts)
    assert len(folded.decisions) > len(previous.decisions)
    assert "on top of an earlier summary" in folded.summary_text


def _routine(text: str, fold: int) -> bool:
    """Whether the fold takes ``text`` for routine: judged so on its own, or a request or a
    question whose shape the user said again and again in the folds so far ("Is rack R35
    still on the old firmware?")."""
    if tier(text) > Tier.PLAIN:
        return True
    shapes = Counter(
        shape(sentence)
        for f in range(2, fold + 1)
        for message in fold_material(f)
        if message.role == "user"
        for sentence in split_sentences(message.text)
        if asks(sentence)
    )
    return bool(shape(text)) and shapes[shape(text)] >= ROUTINE_SHAPE_MENTIONS


def test_what_leaves_a_fold_is_listed_never_dropped_silently() -> None:
    """Folded ten times at a fixed target with more new statements than fit: every user
    statement of the previous summary is in the new one or in what it left out, and the
    summary's text counts and lists what left."""
    target = 300
    summary = summarise(*PLANTED, target=target)
    for fold in range(2, 11):
        previous = summary
        summary = summarise(*fold_material(fold), previous=previous, target=target)
        kept = all_texts(summary)
        gone = [
            item
            for item in all_items(previous)
            if item.from_user and item.text not in kept and not _routine(item.text, fold)
        ]
        assert all(item in summary.left_out for item in gone), f"fold {fold} lost one silently"
        if summary.left_out:
            assert f"{len(summary.left_out)} user statement(s) left out for room" in (
                summary.summary_text
            )
            first = min(i for item in summary.left_out for i in item.source_message_ids)
            assert f"#{first}" in summary.summary_text
        assert O200K.count_text(render_summary(summary)) <= target
    # The newest statements are the ones kept.
    assert any(text.startswith("We decided to retire host h10") for text in all_texts(summary))


@pytest.mark.parametrize("target", [140, 220, 300])
def test_a_statement_leaves_only_when_its_block_or_the_summary_is_full(target: int) -> None:
    """A statement is left out only when putting it back would overflow the user block's
    share of the target, or the target. Checked over nine folds, tight to comfortable."""
    summary = summarise(*PLANTED, target=target)
    for fold in range(2, 11):
        summary = summarise(*fold_material(fold), previous=summary, target=target)
        theirs = [item for item in all_items(summary) if item.from_user]
        # (A routine request or question leaves once the block is half full, and so does one
        # said again and again with other values: "Is rack R35 still on the old firmware?")
        for item in (i for i in summary.left_out if not _routine(i.text, fold)):
            block = "\n".join(f"- {i.text}" for i in (*theirs, item))
            restored = SummaryContent(
                summary.summary_text,
                **{f: tuple(getattr(summary, f)) for f in FIELDS if f != "key_facts"},
                key_facts=(*summary.key_facts, item),
            )
            assert (
                O200K.count_text(block) > target * USER_BLOCK_SHARE - 40
                or O200K.count_text(render_summary(restored)) > target
            ), f"fold {fold} left out {item.text!r} with room for it"


def test_fold_keeps_previous_items_at_the_default_target_when_requests_are_token_heavy() -> None:
    """The service's target for an 8192-token model is 0.15 x 5530 = 829 tokens. Three new user
    requests written in emoji must not push the earlier facts out of a summary that has room."""
    target = int(0.15 * 5530)
    previous = summarise(*PLANTED, target=target)
    assert len(all_items(previous)) == 5
    requests = tuple(SourceMessage(10 + k, "user", "🧑\u200d💻🦄🫠🪐🧬 " * 30) for k in range(3))
    folded = summarise(*requests, previous=previous, target=target)
    rendered = O200K.count_text(render_summary(folded))
    assert rendered <= target
    kept = [text for text in all_texts(previous) if text in all_texts(folded)]
    assert len(kept) == 5, (
        f"kept {len(kept)}/5 previous items; the summary is {rendered} of {target} tokens, "
        f"{O200K.count_text(folded.summary_text)} of them the summary text"
    )


def test_fold_deduplicates_items_already_in_the_previous_summary() -> None:
    previous = summarise(*PLANTED)
    folded = summarise(*PLANTED, previous=previous)
    for field in FIELDS:
        assert getattr(folded, field) == getattr(previous, field), field


# --------------------------------------------------------------------------- determinism


def test_same_input_gives_the_same_summary() -> None:
    messages = _huge_input()[:40]
    previous = summarise(*PLANTED)
    first = summarise(*messages, previous=previous, target=400)
    second = summarise(*messages, previous=previous, target=400)
    assert first == second
    assert render_summary(first) == render_summary(second)


async def test_async_summarizer_matches_the_sync_function() -> None:
    summarizer = ExtractiveSummarizer()
    assert summarizer.name == "extractive"
    request = SummaryRequest(
        previous=None, messages=_huge_input()[:20], target_tokens=300, counter=O200K
    )
    assert await summarizer.summarize(request) == summarize_extractive(request)


# --------------------------------------------------------------------------- a long session


def tool_rows(fold: int, calls: int = 6) -> tuple[SourceMessage, ...]:
    """Search results: every row dense in specifics, as tool output usually is."""
    return tuple(
        SourceMessage(
            10_000 + 100 * fold + call,
            "tool",
            "\n".join(
                f"{row}. H-{fold}{call}{row:02d} {100 + 7 * row} EUR quiet room near the station"
                for row in range(8)
            ),
        )
        for call in range(calls)
    )


def chatter(fold: int) -> SourceMessage:
    return SourceMessage(
        20_000 + fold,
        "user",
        f"Turn {fold}: " + "please check the hotel and the train near the station again " * 6,
    )


def test_facts_and_questions_the_user_states_survive_a_tool_heavy_session() -> None:
    """What a user sees: at the service's default target for an 8k model (829 tokens),
    summary after summary of tool output and chatter, the loyalty number they gave and the
    question they left open are still in the fortieth summary, though the first summary had
    already filled up with search results before they said either."""
    target = int(0.15 * 5530)
    summary = summarise(*tool_rows(0, calls=30), chatter(0), target=target)
    assert O200K.count_text(render_summary(summary)) > target * 0.8  # full of tool output
    fact = "For the record, my loyalty number for Bilbao bookings is LOY-4471-QZ."
    question = "Still open: should the day 3 transfer leave at 7am or later?"
    stated = SourceMessage(5, "user", f"Noted. {fact} {question}")
    summary = summarise(stated, *tool_rows(2), previous=summary, target=target)
    for fold in range(3, 40):
        summary = summarise(chatter(fold), *tool_rows(fold), previous=summary, target=target)
        assert O200K.count_text(render_summary(summary)) <= target
        assert fact in texts(summary.key_facts), f"fold {fold} lost the user's fact"
        assert question in texts(summary.open_questions), f"fold {fold} lost the question"
    # What a tool returned is labelled, and still fills the room that is left.
    tool_facts = [t for t in texts(summary.key_facts) if t.startswith(TOOL_LABEL)]
    assert tool_facts
    assert all(t.startswith(TOOL_LABEL) or "H-" not in t for t in texts(summary.key_facts))


def test_a_stated_fact_takes_the_place_of_earlier_tool_output() -> None:
    target = 300
    full = summarise(*tool_rows(0, calls=20), target=target)
    assert all(t.startswith(TOOL_LABEL) for t in texts(full.key_facts))
    fact = "My passport number is X1234567 and it expires on 2031-05-02."
    folded = summarise(SourceMessage(7, "user", fact), previous=full, target=target)
    assert fact in texts(folded.key_facts)
    assert len(folded.key_facts) <= len(full.key_facts)  # a tool row gave up its room
    assert O200K.count_text(render_summary(folded)) <= target


def test_a_standing_rule_outlasts_a_flood_of_routine_requests_and_small_talk() -> None:
    target = 220
    rule = "Never deploy on Fridays."
    summary = summarise(SourceMessage(1, "user", rule), target=target)
    for fold in range(2, 41):
        routine = (
            SourceMessage(fold * 10, "user", f"rerun job ingest-{fold} and grep trace ab{fold}f"),
            SourceMessage(fold * 10 + 1, "user", "thanks!"),
            SourceMessage(fold * 10 + 2, "user", f"Turn {fold}: please check the logs again"),
            *fold_material(fold)[1::2],  # the assistant's fact-dense answers
        )
        summary = summarise(*routine, previous=summary, target=target)
        assert rule in texts(summary.key_facts), f"fold {fold} dropped it"
        assert "thanks!" not in all_texts(summary)


def test_a_long_sentence_that_merely_mentions_a_number_is_not_a_fact() -> None:
    ramble = "On day 2 " + "we walked along the river and looked at the old bridges " * 4
    content = summarise(SourceMessage(1, "assistant", ramble.strip() + "."))
    assert content.key_facts == ()
    # The user's own words are theirs to keep, long or short.
    short = summarise(SourceMessage(2, "user", "On day 2 we walked to the old bridge."))
    assert texts(short.key_facts) == ["On day 2 we walked to the old bridge."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Patel lives in the U.S. with her sister. She prefers tea.",
            ["Dr. Patel lives in the U.S. with her sister.", "She prefers tea."],
        ),
        (
            "Bring a gift, e.g. flowers. J. R. Tolkien is her favourite author!",
            ["Bring a gift, e.g. flowers.", "J. R. Tolkien is her favourite author!"],
        ),
        (
            "Pin v1.2.3 and keep 3.5 GB free. Read https://example.com/a.b now? Edit ./src/app.py.",
            [
                "Pin v1.2.3 and keep 3.5 GB free.",
                "Read https://example.com/a.b now?",
                "Edit ./src/app.py.",
            ],
        ),
        ("First line\nsecond line. Third.", ["First line", "second line.", "Third."]),
        (
            "We looked at plan b and plan a. Still open: which one? Ask J. Doe.",
            ["We looked at plan b and plan a.", "Still open: which one?", "Ask J. Doe."],
        ),
    ],
)
def test_sentences_split_at_real_ends_only(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_a_name_after_a_title_stays_in_one_item() -> None:
    content = summarise(
        SourceMessage(1, "user", "We decided Dr. Okafor will review the draft. Thanks.")
    )
    assert "We decided Dr. Okafor will review the draft." in all_texts(content)


# --------------------------------------------------------------------------- the user's words

USER_SAYS = (
    "Please call me Wren from now on.",
    "I live in Ljubljana.",
    "My sister Ines will join us.",
    "I'd much rather have aisle seats.",
    "I'm allergic to peanuts.",
    "Never book red-eye flights.",
    "Keep this in mind: no overnight layovers.",
    "We decided to take the ferry to the islands.",
)


def test_what_the_user_says_about_themselves_is_kept_verbatim_without_any_number() -> None:
    content = summarise(
        SourceMessage(1, "user", "Thanks for the help so far. " + " ".join(USER_SAYS)),
        SourceMessage(2, "assistant", "Sounds good, that is noted."),
        SourceMessage(3, "tool", "Review: I live in Tallinn and loved it. Guest on file: Odile."),
    )
    mine = [item for item in all_items(content) if item.from_user]
    assert [item.text for item in mine] == list(USER_SAYS)
    assert all(item.source_message_ids == (1,) for item in mine)
    assert "Thanks for the help so far." not in all_texts(content)
    # Somebody in a tool's output speaking in the first person is not the user.
    assert not any("Tallinn" in text or "Odile" in text for text in all_texts(content))


def test_user_statements_take_the_room_of_tool_output_summary_after_summary() -> None:
    """At the service's default target for an 8k model, folded forty times with tool
    output and chatter, what the user said in the second summary is all still there."""
    target = int(0.15 * 5530)
    summary = summarise(*tool_rows(0, calls=30), chatter(0), target=target)
    assert O200K.count_text(render_summary(summary)) > target * 0.8  # full of tool output
    stated = SourceMessage(5, "user", " ".join(USER_SAYS))
    summary = summarise(stated, *tool_rows(1), previous=summary, target=target)
    for fold in range(2, 40):
        summary = summarise(chatter(fold), *tool_rows(fold), previous=summary, target=target)
        assert O200K.count_text(render_summary(summary)) <= target
        kept = all_texts(summary)
        assert all(text in kept for text in USER_SAYS), f"fold {fold} lost a user statement"
    assert any(text.startswith(TOOL_LABEL) for text in all_texts(summary))  # room was left


#: Words that make each of a list of statements a sentence of its own (one sentence said
#: again and again with other numbers is a routine, see the test after these).
_SIDE_WORDS = "x garden river park yard pond canal square lane court mill chapel orchard"
_SIDES = _SIDE_WORDS.split()
_COACH_WORDS = (
    "quiet first second silent front rear middle upper lower family dining sleeper window "
    "aisle corner end club panorama business economy standard premium rail royal night day "
    "early late spare main side north south east west blue green red amber white black"
)
_COACHES = _COACH_WORDS.split()


def test_a_request_said_again_and_again_with_other_names_gives_way_to_facts() -> None:
    """A sentence of one shape said over and over with other names ("cancel X's 11:45,
    she's sick") is a routine of the work: short of room, the facts said once are kept."""
    names = ["Ana Lima", "Bo Chen", "Cy Okafor", "Dee Park", "Eli Roth", "Fay Nunes"]
    routine = [
        SourceMessage(10 + 2 * k, "user", f"cancel {name}'s 11:{10 + k}, she's sick")
        for k, name in enumerate(names * 3)
    ]
    facts = [
        SourceMessage(1, "user", "Our accountant is Rui Vasconcelos, invoices go to him."),
        SourceMessage(3, "user", "The practice code for the insurer is PRX-17390."),
        SourceMessage(5, "user", "My partner Inès Belkacem signs when I am away."),
    ]
    content = summarise(*facts, *routine, target=220)
    kept = all_texts(content)
    assert all(fact.text in kept for fact in facts)
    # The requests are kept only while the block has plenty of room, and none of them is
    # counted as a statement left out.
    assert sum(text.startswith("cancel") for text in kept) < len(routine)
    assert not content.left_out


def test_short_of_room_the_oldest_user_statements_leave_first_and_are_listed() -> None:
    long = [
        SourceMessage(
            k,
            "user",
            f"My colleague number {k} prefers the quiet rooms on the {_SIDES[k]} side of the "
            "old building, well away from the lifts, the bar and the busy street at the front.",
        )
        for k in range(1, 13)
    ]
    full = summarise(*long, *tool_rows(0, calls=4), target=400)
    # The block is bounded: tool output has at most the room the block leaves.
    tools = "\n".join(text for text in all_texts(full) if text.startswith(TOOL_LABEL))
    assert O200K.count_text(tools) <= 400 * (1 - USER_BLOCK_SHARE)
    kept = {item.source_message_ids[0] for item in all_items(full) if item.from_user}
    left = {item.source_message_ids[0] for item in full.left_out}
    assert kept
    assert left
    assert kept | left == set(range(1, 13))
    # The newest stay whole; the oldest leave, each listed by its message id.
    assert max(left) < min(kept)
    assert f"{len(left)} user statement(s) left out for room" in full.summary_text
    assert all(f"#{k}" in full.summary_text for k in left)
    assert O200K.count_text(render_summary(full)) <= 400


def test_a_user_statement_that_cannot_fit_is_counted_in_the_summary_text() -> None:
    many = [
        SourceMessage(k, "user", f"I prefer the seat number {k} in the {coach} coach, always.")
        for k, coach in enumerate(_COACHES[:39], start=1)
    ]
    content = summarise(*many, target=160)
    kept = [item for item in all_items(content) if item.from_user]
    assert 0 < len(kept) < 39
    assert f"{39 - len(kept)} user statement(s) left out for room" in content.summary_text
    assert O200K.count_text(render_summary(content)) <= 160


def test_a_question_the_assistant_answered_is_no_longer_open() -> None:
    asked = "Which hotel near the station has a pool?"
    open_one = "Should the transfer on day three leave early or later?"
    content = summarise(
        SourceMessage(1, "user", f"{asked} {open_one}"),
        SourceMessage(2, "assistant", "The Riverside hotel near the station has a pool."),
    )
    assert texts(content.open_questions) == [open_one]
    # What the user asked is still what they said.
    assert asked in texts(content.key_facts)
    # An open question answered in a later fold moves out of the open questions too.
    folded = summarise(
        SourceMessage(3, "assistant", "The transfer on day three should leave early."),
        previous=content,
    )
    assert open_one not in texts(folded.open_questions)
    assert open_one in texts(folded.key_facts)
    assert asked in texts(folded.key_facts)


def test_a_correction_replaces_the_statement_on_its_subject_and_nothing_else() -> None:
    content = summarise(
        SourceMessage(1, "user", "the offsite is in Lyon this year"),
        SourceMessage(2, "user", "Marguerite owns the billing service."),
        SourceMessage(3, "user", "actually, not Lyon — the offsite moved to Porto"),
    )
    theirs = all_texts(content)
    assert "actually, not Lyon — the offsite moved to Porto" in theirs
    assert "Marguerite owns the billing service." in theirs
    assert "the offsite is in Lyon this year" not in theirs
    # The correction cites the message it revises too: pruning keeps both sources.
    correction = next(i for i in all_items(content) if i.text.startswith("actually"))
    assert set(correction.source_message_ids) == {1, 3}


def test_a_correction_revises_only_its_part_of_a_run_on_message() -> None:
    content = summarise(
        SourceMessage(
            1, "user", "our new office is in Kaunas the new hire starting next month is Evangeline"
        ),
        SourceMessage(5, "user", "correction: the new hire's name is Lorcan"),
    )
    theirs = all_texts(content)
    assert "our new office is in Kaunas" in theirs
    assert "correction: the new hire's name is Lorcan" in theirs
    assert not any("Evangeline" in text for text in theirs)


def test_a_carried_correction_does_not_revise_again() -> None:
    """Once a correction has replaced what it revised, a later statement sharing its words
    is not taken for what it revises."""
    first = summarise(
        SourceMessage(1, "user", "the budget for the cluster is forty thousand euros"),
        SourceMessage(2, "user", "the load test budget is nine thousand euros"),
        SourceMessage(3, "user", "sorry, load test budget is actually six thousand euros"),
    )
    assert "the budget for the cluster is forty thousand euros" in all_texts(first)
    later = summarise(SourceMessage(9, "user", "rerun job ingest-42"), previous=first)
    theirs = all_texts(later)
    assert "the budget for the cluster is forty thousand euros" in theirs
    assert "sorry, load test budget is actually six thousand euros" in theirs


def test_a_bare_correction_of_a_fact_said_twice_tells_its_history_once() -> None:
    content = summarise(
        SourceMessage(1, "user", "the retro is on Tuesday"),
        SourceMessage(2, "assistant", "Noted."),
        SourceMessage(3, "user", "as I said, the retro is on Tuesday"),
        SourceMessage(4, "assistant", "Noted."),
        SourceMessage(5, "user", "make that Thursday instead"),
    )
    [line] = [text for text in all_texts(content) if "Thursday" in text]
    assert line.count("(was:") == 1
    assert not [text for text in all_texts(content) if "Tuesday" in text and text != line]
    assert content.superseded == ((1, 5), (3, 5))
