"""Folds made between turns: taken only for the work they were made for."""

from __future__ import annotations

from collections.abc import Mapping

from app.budget.decision import SourceText, SummaryWork
from app.budget.summary import SummaryContent
from app.summarize.ahead import FoldKey, FoldsAhead
from app.summarize.base import SummaryRequest
from app.summarize.extractive import summarize_extractive
from tests.unit.test_decision_properties import COUNTER

SOURCES = (
    SourceText(1, "user", "My name is Ana and I live in Porto."),
    SourceText(2, "assistant", "Noted: you live in Porto."),
    SourceText(3, "user", "I never fly before 9am."),
)


def _key(sources: tuple[SourceText, ...] = SOURCES) -> FoldKey:
    return FoldKey("s1", None, sources, 400, COUNTER.name)


def _work() -> SummaryWork:
    return SummaryWork(previous=None, sources=SOURCES, target_tokens=400, bounded=False)


def _ready(content: SummaryContent) -> Mapping[str, str]:
    return {"key_facts": str(len(content.key_facts))}


async def test_a_fold_is_the_summary_the_summariser_makes_for_its_work() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("s1")

    made = await folds.take(_key())

    assert made is not None
    expected = summarize_extractive(SummaryRequest(None, SOURCES, 400, COUNTER))
    assert made.content == expected
    assert made.items_json == {"key_facts": str(len(expected.key_facts))}
    assert not folds.holds("s1")


async def test_a_fold_for_other_work_is_not_taken() -> None:
    folds = FoldsAhead()
    folds.prepare(_key(), _work(), counter=COUNTER, ready=_ready)
    folds.start("s1")
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
        key = FoldKey(session_id, None, SOURCES, 400, COUNTER.name)
        folds.prepare(key, _work(), counter=COUNTER, ready=_ready)
        folds.start(session_id)

    assert [folds.holds(s) for s in ("s1", "s2", "s3")] == [False, True, True]
    await folds.close()
    assert not folds.holds("s3")
