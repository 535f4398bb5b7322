"""What ``Retry-After`` says while the database is away (app/recovery.py): what recovery has
taken here, in whole seconds, never 0, never past the cap."""

from __future__ import annotations

from app.recovery import RETRY_AFTER_MAX_SECONDS, DatabaseRecovery


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def outage(recovery: DatabaseRecovery, clock: Clock, seconds: float) -> None:
    recovery.unreachable()
    clock.now += seconds
    recovery.reachable()


def test_a_first_outage_is_told_to_wait_one_second() -> None:
    recovery = DatabaseRecovery(Clock())

    recovery.unreachable()

    assert recovery.retry_after() == 1


def test_outages_of_tens_of_milliseconds_round_up_to_one_second() -> None:
    clock = Clock()
    recovery = DatabaseRecovery(clock)
    for _ in range(3):
        outage(recovery, clock, 0.04)

    recovery.unreachable()

    assert recovery.retry_after() == 1


def test_the_wait_is_what_is_left_of_the_usual_recovery() -> None:
    clock = Clock()
    recovery = DatabaseRecovery(clock)
    for seconds in (4.0, 5.0, 6.0):
        outage(recovery, clock, seconds)

    recovery.unreachable()
    clock.now += 1.5

    assert recovery.retry_after() == 4  # 5 s usually, 1.5 s gone: 3.5 s, rounded up


def test_an_outage_longer_than_usual_waits_as_long_again() -> None:
    clock = Clock()
    recovery = DatabaseRecovery(clock)
    outage(recovery, clock, 0.05)

    recovery.unreachable()
    clock.now += 7.2

    assert recovery.retry_after() == 8


def test_the_wait_never_passes_the_cap() -> None:
    clock = Clock()
    recovery = DatabaseRecovery(clock)

    recovery.unreachable()
    clock.now += 3600

    assert recovery.retry_after() == RETRY_AFTER_MAX_SECONDS
