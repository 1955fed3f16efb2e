"""The editor's sync schedule (docs/cursor-sync.md, "Fresh in the editor"): while the JSON events
serve the account, a sync every `codeburn.cursorSync.intervalMinutes`, each a quick one from 15
minutes before the newest synced event, except the first after each full local hour. An hour at
an injected clock, counting requests."""

from __future__ import annotations

import time

import pytest

from codeburn.cache.imports.store import store_path
from codeburn.providers import DAY, local_day, local_midnight_ms
from codeburn.providers.localtime import iso_utc
from codeburn.sync.cursor_sync import maybe_sync
from codeburn.sync.state import load_state
from codeburn.sync.status_block import cursor_sync_block
from tests.sync.fake_cursor import FIXED_NOW_MS, SyncEnv
from tests.sync.test_sync_json import event

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.any_moment, pytest.mark.usefixtures("fixed_clock")]

MINUTE = 60_000
HOUR = 60 * MINUTE
INTERVAL = 5 * MINUTE
NOW = FIXED_NOW_MS
H0 = (NOW // HOUR + 1) * HOUR  # the next full hour (the test zone is a whole-hour offset)


def test_an_hour_is_eleven_quick_syncs_and_one_full_sync(sync_env: SyncEnv) -> None:
    assert time.localtime(H0 / 1000).tm_min == 0
    newest = NOW - 2 * HOUR
    sync_env.fake.events = [event(NOW - 3 * HOUR), event(newest, inp=7)]
    seeded = maybe_sync(sync_env.db_path, now_ms=H0 - INTERVAL, interval_ms=INTERVAL)
    assert seeded.summary is not None and seeded.summary["added"] == 2
    seen = len(sync_env.fake.events_requests())

    late = H0 + 28 * MINUTE  # one new event in the hour, synced by the quick sync at :30
    for k in range(12):
        at = H0 + k * INTERVAL
        if at == H0 + 30 * MINUTE:
            sync_env.fake.events.append(event(late, inp=9))
        outcome = maybe_sync(sync_env.db_path, now_ms=at, interval_ms=INTERVAL)
        assert outcome.attempted and outcome.error_code is None, k
        for between in (30_000, 150_000):  # the server's timer ticks meanwhile: nothing due
            tick = maybe_sync(sync_env.db_path, now_ms=at + between, interval_ms=INTERVAL)
            assert not tick.attempted

    requests = sync_env.fake.events_requests()[seen:]
    assert len(requests) == 12  # 1 full + 11 quick, one page each
    assert [r.body["page"] for r in requests] == [1] * 12
    assert [int(r.body["endDate"]) for r in requests] == [H0 + k * INTERVAL for k in range(12)]
    starts = [int(r.body["startDate"]) for r in requests]
    assert starts[0] == local_midnight_ms(local_day(newest) - DAY)  # the full sync's window
    quick = [newest - 15 * MINUTE] * 6 + [late - 15 * MINUTE] * 5
    assert starts[1:] == quick
    assert sync_env.fake.summary_requests() == []

    block = cursor_sync_block(sync_env.db_path, now_ms=H0 + HOUR)
    assert block is not None and block["exactThrough"] == iso_utc(late)
    assert load_state().source == "json"

    # The next hour starts with a full sync again.
    maybe_sync(sync_env.db_path, now_ms=H0 + HOUR, interval_ms=INTERVAL)
    last = sync_env.fake.events_requests()[-1]
    assert int(last.body["startDate"]) == local_midnight_ms(local_day(late) - DAY)


def test_while_the_export_serves_the_account_syncs_stay_hourly(sync_env: SyncEnv) -> None:
    sync_env.fake.events = None  # no JSON events: the CSV export
    maybe_sync(sync_env.db_path, now_ms=H0 - INTERVAL, interval_ms=INTERVAL)
    assert load_state().source == "csv"
    for k in range(12):
        maybe_sync(sync_env.db_path, now_ms=H0 + k * INTERVAL, interval_ms=INTERVAL)
    assert len(sync_env.fake.export_requests()) == 1  # the hourly throttle (and its jitter)


def test_a_back_off_holds_quick_syncs_too(sync_env: SyncEnv) -> None:
    sync_env.fake.events = [event(NOW - HOUR)]
    maybe_sync(sync_env.db_path, now_ms=H0 - INTERVAL, interval_ms=INTERVAL)
    sync_env.fake.events_mode = "429"
    sync_env.fake.retry_after = "1200"  # 20 minutes
    maybe_sync(sync_env.db_path, now_ms=H0 + INTERVAL, interval_ms=INTERVAL)
    seen = len(sync_env.fake.events_requests())
    sync_env.fake.events_mode = "ok"
    for k in range(2, 5):  # +10, +15, +20 min: backing off
        assert not maybe_sync(
            sync_env.db_path, now_ms=H0 + k * INTERVAL, interval_ms=INTERVAL
        ).attempted
    assert len(sync_env.fake.events_requests()) == seen
    assert maybe_sync(sync_env.db_path, now_ms=H0 + 26 * MINUTE, interval_ms=INTERVAL).attempted


@pytest.mark.parametrize("mode", ["500", "too-large", "truncated", "401"])
def test_a_failed_quick_sync_leaves_the_store_byte_identical(sync_env: SyncEnv, mode: str) -> None:
    sync_env.fake.events = [event(NOW - 2 * HOUR), event(NOW - HOUR, inp=7)]
    maybe_sync(sync_env.db_path, now_ms=H0, interval_ms=INTERVAL)
    before = store_path().read_bytes()
    mtime = store_path().stat().st_mtime_ns
    sync_env.fake.events.append(event(H0 + MINUTE, inp=9))
    sync_env.fake.events_mode = mode  # type: ignore[assignment]

    outcome = maybe_sync(sync_env.db_path, now_ms=H0 + INTERVAL, interval_ms=INTERVAL)

    assert outcome.attempted and outcome.error_code is not None
    request = sync_env.fake.events_requests()[-1]
    assert int(request.body["startDate"]) == NOW - HOUR - 15 * MINUTE  # it was a quick sync
    assert store_path().read_bytes() == before and store_path().stat().st_mtime_ns == mtime
    assert sync_env.fake.export_requests() == []
