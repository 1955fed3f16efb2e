"""The clock seam: subprocesses honour CODEBURN_NOW, and the suite runs at its --clock."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest
import time_machine

from codeburn.providers import localtime
from codeburn.providers.localtime import CLOCK_ENV, now_ms, parse_iso_ms, timezone_name, today
from tests import clock
from tests.clock_guard import _WatchedTime

PRINT_NOW = "from codeburn.providers.localtime import iso_utc, now_ms; print(iso_utc(now_ms()))"


def _child_now(value: str) -> str:
    env = dict(os.environ, **{CLOCK_ENV: value})
    done = subprocess.run(
        [sys.executable, "-c", PRINT_NOW], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_subprocess_starts_at_the_seams_instant_and_ticks() -> None:
    child = _child_now("2031-05-06T07:08:09Z")
    start = parse_iso_ms("2031-05-06T07:08:09Z")
    shown = parse_iso_ms(child)
    assert start is not None and shown is not None
    assert (
        0 <= shown - start < 60_000
    )  # ticks on from the instant (a hang guard, not a speed limit)


def test_an_unreadable_seam_value_leaves_the_real_clock() -> None:
    assert localtime._clock_offset("next tuesday") == 0
    assert localtime._clock_offset("") == 0
    assert localtime._clock_offset(None) == 0


@pytest.mark.clock
def test_the_seam_sets_an_offset_from_the_real_clock() -> None:
    real = localtime.time.time_ns() // 1_000_000  # time-machine moves this too; offsets still add
    offset = localtime._clock_offset("2001-02-03T04:05:06Z")
    assert abs(real + offset - 981_173_106_000) < 60_000


@pytest.mark.clock
def test_the_suite_runs_at_its_clock(suite_clock: datetime | None) -> None:
    if suite_clock is None:
        assert CLOCK_ENV not in os.environ
        return
    assert today() == suite_clock.date()
    assert timezone_name() == str(suite_clock.tzinfo)
    assert os.environ[CLOCK_ENV]  # what every subprocess of this test starts at
    child = parse_iso_ms(_child_now(os.environ[CLOCK_ENV]))
    assert child is not None and abs(child - now_ms()) < 60_000


def test_the_real_clock_near_midnight_runs_at_noon_of_the_same_day() -> None:
    """A suite started at 23:58 put "a minute ago" on yesterday (three tests failed just after
    midnight): near local midnight the real clock's run moves to noon of that local day."""
    zone = timezone(timedelta(hours=-8))
    late = datetime(2026, 12, 1, 23, 58, 30, tzinfo=zone)
    early = datetime(2026, 12, 2, 0, 1, tzinfo=zone)
    assert clock.near_midnight_noon(late) == datetime(2026, 12, 1, 12, tzinfo=zone)
    assert clock.near_midnight_noon(early) == datetime(2026, 12, 2, 12, tzinfo=zone)
    assert clock.near_midnight_noon(datetime(2026, 12, 1, 9, 30, tzinfo=zone)) is None
    assert clock.near_midnight_noon(datetime(2026, 12, 1, 21, 59, tzinfo=zone)) is None


@pytest.mark.clock
def test_the_guard_sees_a_read_of_the_clock_but_not_one_at_a_moment_of_the_tests_own() -> None:
    """tests/clock_guard.py: what makes a test one that must say `clock` or `any_moment`."""
    watch = localtime.time
    assert isinstance(watch, _WatchedTime)
    watch.read = False
    with time_machine.travel(datetime(2030, 1, 2, 12, tzinfo=UTC), tick=False):
        assert today() == datetime(2030, 1, 2).date()  # noon UTC: that day from UTC-11 to UTC+11
    assert not watch.read  # the test's own moment: no moment of the suite's can change it
    with watch.paused():
        now_ms()
    assert not watch.read
    now_ms()
    assert watch.read


@pytest.mark.clock
def test_the_guard_sees_a_codeburn_subprocess_on_the_suites_clock_only() -> None:
    watch = localtime.time
    assert isinstance(watch, _WatchedTime)
    own = dict(os.environ, **{CLOCK_ENV: "2031-05-06T07:08:09Z"})
    for env, command, reads in (
        (own, PRINT_NOW, False),  # a moment of the test's own
        (None, "print(1)", False),  # not CodeBurn's
        (dict(os.environ), PRINT_NOW, True),  # the suite's moment, inherited
        (None, PRINT_NOW, True),
    ):
        watch.read = False
        subprocess.run([sys.executable, "-c", command], env=env, check=True, capture_output=True)
        assert watch.read is reads, (env is own, command)
