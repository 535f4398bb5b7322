"""Folds made between turns: taken only for the work they were made for, one at a time, and
holding a bounded amount of text."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping

from app.budget.decision import SourceText, SummaryWork
from app.budget.summary import SummaryContent, SummaryItem
from app.offload import between_turns, off_the_loop
from app.summarize.ahead import FoldKey, FoldsAhead
from app.summarize.base import SummaryRequest
from app.summarize.extractive import summarize_extractive, texts_read
from tests.unit.test_decision_properties import COUNTER

SOURCES = (
    SourceText(1, "user", "My name is Ana and I live in Porto."),
    SourceText(2, "assistant", "Noted: you live in Porto."),
    SourceText(3, "user", "I never fly before 9am."),
)


def _key(
    sources: tuple[SourceText, ...] = SOURCES, *, session_id: str = "s1", tenant_id: str = "t1"
) -> FoldKey:
    return FoldKey.of(
        tenant_id=tenant_id,
        session_id=session_id,
        previous_id=None,
        sources=sources,
        target_tokens=400,
        counter=COUNTER.name,
    )


def _work(sources: tuple[SourceText, ...] = SOURCES) -> SummaryWork:
    return SummaryWork(previous=None, sources=sources, target_tokens=400, bounded=False)


async def _made(folds: FoldsAhead, *, chars_below: int) -> None:
    """Wait until the folds are made (not taking them): they hold fewer than ``chars_below``
    characters."""
    for _ in range(500):
        await asyncio.sleep(0.01)
        if folds.chars_held < chars_below:
            return
    raise AssertionError("the folds were never made")


def _ready(content: SummaryContent) -> Mapping[str, str]:
    return {"key_facts": str(len(content.key_facts))}


async def test_a_fold_is_the_summary_the_summariser_makes_for_its_work() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")

    made = await folds.take(_key())

    assert made is not None
    expected = summarize_extractive(SummaryRequest(None, SOURCES, 400, COUNTER))
    assert made.content == expected
    assert made.items_json == {"key_facts": str(len(expected.key_facts))}
    assert not folds.holds("t1", "s1")


async def test_a_fold_for_other_work_is_not_taken() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")
    edited = (*SOURCES[:2], SourceText(3, "user", "I never fly before 10am."))

    assert await folds.take(_key(edited)) is None
    # Asked once: a later turn start of the session finds nothing.
    assert await folds.take(_key()) is None


async def test_a_fold_never_started_is_not_taken() -> None:
    # Its turn completed on another worker: the turn start folds itself.
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)

    assert await folds.take(_key()) is None


async def test_the_oldest_session_gives_way_when_too_many_wait() -> None:
    folds = FoldsAhead(max_sessions=2)
    for session_id in ("s1", "s2", "s3"):
        folds.prepare(_key(session_id=session_id), _work(), counter=COUNTER, ready=_ready)
        folds.start("t1", session_id)

    assert [folds.holds("t1", s) for s in ("s1", "s2", "s3")] == [False, True, True]
    await folds.close()
    assert not folds.holds("t1", "s3")
    assert folds.chars_held == 0


async def test_two_tenants_sessions_of_the_same_id_each_keep_their_fold() -> None:
    folds = FoldsAhead()
    theirs = (SourceText(9, "user", "I am Bo and I live in Oslo."),)
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")
    folds.prepare(_key(theirs, tenant_id="t2"), _work(theirs), counter=COUNTER, ready=_ready)
    folds.start("t2", "s1")
    await _made(folds, chars_below=len(theirs[0].text))

    made_theirs = await folds.take(_key(theirs, tenant_id="t2"))
    made_ours = await folds.take(_key())

    assert made_theirs is not None
    assert made_ours is not None
    assert "Oslo" in made_theirs.content.rendered
    assert "Porto" in made_ours.content.rendered


async def test_the_oldest_folds_give_way_past_the_characters_held() -> None:
    chars = sum(len(s.text) for s in SOURCES)
    folds = FoldsAhead(max_chars=2 * chars)
    for session_id in ("s1", "s2", "s3"):
        folds.prepare(_key(session_id=session_id), _work(), counter=COUNTER, ready=_ready)

    assert [folds.holds("t1", s) for s in ("s1", "s2", "s3")] == [False, True, True]
    assert folds.chars_held == 2 * chars


async def test_a_fold_of_too_much_text_is_not_prepared() -> None:
    chars = sum(len(s.text) for s in SOURCES)
    folds = FoldsAhead(max_fold_chars=chars - 1)
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)

    assert not folds.holds("t1", "s1")
    assert folds.chars_held == 0


async def test_a_made_fold_holds_its_summary_not_its_messages() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")

    await _made(folds, chars_below=sum(len(s.text) for s in SOURCES))

    # What ``_ready`` made of the summary, nothing of the messages' text.
    assert folds.chars_held == len(
        _ready(summarize_extractive(SummaryRequest(None, SOURCES, 400, COUNTER)))["key_facts"]
    )
    assert await folds.take(_key()) is not None
    assert folds.chars_held == 0


async def test_a_dropped_fold_lets_go_of_its_text() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")

    folds.drop("t1", "s1")

    assert not folds.holds("t1", "s1")
    assert folds.chars_held == 0
    assert await folds.take(_key()) is None


def _hold(release: threading.Event, ran: list[str], name: str) -> str:
    """Record ``name``, then hold the thread until ``release`` (a name in capitals: never
    released)."""
    ran.append(name)
    return name if release.wait(10) else name.upper()


async def test_work_between_turns_runs_one_at_a_time_and_never_delays_a_request() -> None:
    release = threading.Event()
    ran: list[str] = []
    first = asyncio.ensure_future(between_turns(lambda: _hold(release, ran, "first")))
    second = asyncio.ensure_future(between_turns(lambda: _hold(release, ran, "second")))
    await asyncio.sleep(0.1)
    assert ran == ["first"]

    # A request's heavy work runs while the first holds its thread and the second waits:
    # it is what lets the first go.
    await off_the_loop(release.set)

    assert list(await asyncio.gather(first, second)) == ["first", "second"]
    assert ran == ["first", "second"]


async def test_work_between_turns_cancelled_while_waiting_never_runs() -> None:
    release = threading.Event()
    ran: list[str] = []
    first = asyncio.ensure_future(between_turns(lambda: _hold(release, ran, "first")))
    second = asyncio.ensure_future(between_turns(lambda: _hold(release, ran, "second")))
    await asyncio.sleep(0.1)

    # Cancelled, the running one lets its caller go at once; the waiting one never starts.
    first.cancel()
    second.cancel()
    await asyncio.gather(first, second, return_exceptions=True)
    assert first.cancelled()
    assert second.cancelled()
    release.set()
    assert await between_turns(lambda: "after") == "after"
    assert ran == ["first"]


async def test_a_fold_still_waiting_behind_another_is_not_waited_for() -> None:
    release = threading.Event()

    def held(content: SummaryContent) -> Mapping[str, str]:
        release.wait(10)
        return _ready(content)

    folds = FoldsAhead()
    folds.prepare(_key(session_id="s2"), _work(), counter=COUNTER, ready=held)
    folds.start("t1", "s2")
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")
    await asyncio.sleep(0.1)

    # The turn start folds itself at once rather than queue behind another session's fold.
    assert await asyncio.wait_for(folds.take(_key()), 5) is None
    release.set()
    assert await folds.take(_key(session_id="s2")) is not None
    assert folds.chars_held == 0


def _carried_summary(words: str) -> SummaryContent:
    """A summary carrying three of the user's statements of its own (``words`` makes them
    texts no other test has read)."""
    return SummaryContent(
        summary_text="Earlier conversation.",
        key_facts=tuple(
            SummaryItem(f"My {thing} is {words} {number}.", (number,), from_user=True)
            for number, thing in enumerate(("locker", "desk", "badge"), start=1)
        ),
    )


async def test_a_summary_loaded_and_not_made_here_is_read_once_its_turn_is_over() -> None:
    folds = FoldsAhead()
    before = texts_read()
    folds.read_ahead("t1", "s1", 41, _carried_summary("Quillon"), COUNTER)
    await folds.settled()
    assert texts_read() == before  # the turn is not over yet
    folds.start_reading("t1", "s1")
    await folds.settled()
    assert texts_read() == before + 3


async def test_a_summary_this_worker_made_is_not_read_again() -> None:
    folds = FoldsAhead()
    folds.made_here(42)
    before = texts_read()
    folds.read_ahead("t1", "s1", 42, _carried_summary("Vessany"), COUNTER)
    folds.start_reading("t1", "s1")
    await folds.settled()
    assert texts_read() == before


async def test_summaries_waiting_to_be_read_are_bounded_by_the_sessions_kept() -> None:
    folds = FoldsAhead(max_sessions=2)
    for number, session in enumerate(("s1", "s2", "s3")):
        folds.read_ahead("t1", session, 50 + number, _carried_summary(f"Orrin{number}"), COUNTER)
    before = texts_read()
    for session in ("s1", "s2", "s3"):
        folds.start_reading("t1", session)
    await folds.settled()
    # The oldest gave way: two summaries of three statements each were read.
    assert texts_read() == before + 6


async def test_a_fold_queued_behind_a_summary_read_ahead_is_not_waited_for() -> None:
    release = threading.Event()
    holding = asyncio.ensure_future(between_turns(lambda: release.wait(10)))
    folds = FoldsAhead()
    folds.read_ahead("t1", "s2", 60, _carried_summary("Pellam"), COUNTER)
    folds.start_reading("t1", "s2")
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("t1", "s1")
    await asyncio.sleep(0.1)

    # Another session's summary read ahead is queued before the fold: the turn start folds
    # itself at once rather than wait for that read.
    assert await asyncio.wait_for(folds.take(_key()), 5) is None
    release.set()
    await holding
    await folds.settled()


async def test_an_erased_session_has_no_summary_left_to_read() -> None:
    folds = FoldsAhead()
    folds.read_ahead("t1", "s1", 61, _carried_summary("Brannoc"), COUNTER)
    folds.erase("t1", "s1")
    before = texts_read()
    folds.start_reading("t1", "s1")
    await folds.settled()
    assert texts_read() == before
