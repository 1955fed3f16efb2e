""" "Sync now" while the automatic sync is making its requests joins it instead of starting a
second sync beside it (docs/cursor-sync.md, "One sync")."""

from __future__ import annotations

import threading
import time

import pytest

from codeburn.sync import cursor_sync
from codeburn.sync.cursor_sync import SyncError, SyncOutcome, maybe_sync
from tests.sync.fake_cursor import FIXED_NOW_MS, SyncEnv
from tests.sync.test_sync_json import event

HOUR = 3_600_000
NOW = FIXED_NOW_MS
# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.usefixtures("fixed_clock"), pytest.mark.any_moment]


def _automatic_in_flight(env: SyncEnv) -> tuple[threading.Thread, dict[str, SyncOutcome]]:
    """An automatic sync started on a thread, returned once its request has reached cursor.com."""
    results: dict[str, SyncOutcome] = {}
    thread = threading.Thread(
        target=lambda: results.setdefault("auto", maybe_sync(env.db_path, now_ms=NOW))
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not env.fake.events_requests() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(env.fake.events_requests()) == 1
    return thread, results


def test_sync_now_joins_the_automatic_sync_in_flight(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [event(NOW - 2 * HOUR), event(NOW - HOUR, inp=7)]
    sync_env.fake.events_delay_s = 0.5
    thread, results = _automatic_in_flight(sync_env)

    forced = maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    thread.join(10)

    assert forced.summary is not None and forced.summary["added"] == 2
    assert forced == results["auto"]
    assert len(sync_env.fake.events_requests()) == 1  # one sync, not two

    sync_env.fake.events_delay_s = 0.0  # nothing in flight: "Sync now" makes its own request
    again = maybe_sync(sync_env.db_path, force=True, now_ms=NOW + 1)
    assert again.summary is not None and again.summary["skipped"] == 2
    assert len(sync_env.fake.events_requests()) == 2


def test_sync_now_joining_a_failing_sync_reports_its_failure(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [event(NOW - HOUR)]
    sync_env.fake.events_mode, sync_env.fake.events_delay_s = "500", 0.5
    thread, _ = _automatic_in_flight(sync_env)

    with pytest.raises(SyncError, match="HTTP 500"):
        maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
    thread.join(10)
    assert len(sync_env.fake.events_requests()) == 1


def test_sync_now_joins_an_automatic_sync_that_has_claimed_but_not_yet_asked(
    sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between recording its attempt and its first request the automatic sync is already in
    flight: a "Sync now" then must not run a second sync beside it (a later "Sync now" would
    join that one and miss what changed meanwhile, such as an expired login)."""
    sync_env.fake.events = [event(NOW - HOUR)]
    claimed, release = threading.Event(), threading.Event()
    real_email = cursor_sync.signed_in_email

    def paused_first_time(db_path: object) -> str | None:
        if not claimed.is_set():
            claimed.set()
            release.wait(10)
        return real_email(db_path)  # type: ignore[arg-type]

    monkeypatch.setattr(cursor_sync, "signed_in_email", paused_first_time)
    results: dict[str, SyncOutcome] = {}
    auto = threading.Thread(
        target=lambda: results.setdefault("auto", maybe_sync(sync_env.db_path, now_ms=NOW))
    )
    auto.start()
    assert claimed.wait(10)
    forced = threading.Thread(
        target=lambda: results.setdefault(
            "forced", maybe_sync(sync_env.db_path, force=True, now_ms=NOW)
        )
    )
    forced.start()
    forced.join(0.5)  # a forced sync of its own would have asked cursor.com by now
    release.set()
    auto.join(10)
    forced.join(10)

    assert len(sync_env.fake.events_requests()) == 1  # one sync, not two
    assert results["forced"] == results["auto"]


def test_an_automatic_sync_that_read_the_clock_before_a_forced_claim_is_not_due(
    sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forced sync claims its attempt with a clock read a moment after the automatic sync
    read its own: that later attempt is not a clock that went back, so no second sync runs
    beside the forced one (whose result a later "Sync now" would then join)."""
    sync_env.fake.events = [event(NOW - HOUR)]
    monkeypatch.setattr(cursor_sync.random, "randint", lambda low, high: high)  # jitter at most
    maybe_sync(sync_env.db_path, force=True, now_ms=NOW + 2_000)
    auto = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert not auto.attempted
    assert len(sync_env.fake.events_requests()) == 1
