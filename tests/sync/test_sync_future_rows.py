"""Rows dated in the future (issue 10, defect 1): refused and counted, never moving coverage."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from codeburn.cache.files import write_json_atomic
from codeburn.cache.imports.store import store_path
from codeburn.providers.localtime import iso_utc, local_day, local_midnight_ms
from codeburn.sync.auth import account_of
from codeburn.sync.cursor_sync import maybe_sync
from codeburn.sync.state import load_state, update_state
from tests.csv_fixtures import ExportRow
from tests.sync.fake_cursor import FIXED_NOW_MS, TEST_SUB, SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = [pytest.mark.any_moment, pytest.mark.usefixtures("fixed_clock")]

HOUR = 3_600_000
NOW = FIXED_NOW_MS  # 2026-11-18T08:26:40Z, the clock for every step below
YEAR_2099 = 4_070_908_800_000  # 2099-01-01T00:00:00Z
ACCOUNT = account_of(TEST_SUB)


def _row(ms: int, output: int = 50) -> ExportRow:
    return ExportRow(iso_utc(ms), "claude-4.5-sonnet", input=100, cache_read=1000, output=output)


def _store() -> dict:
    return json.loads(store_path().read_bytes())


def test_future_rows_are_refused_counted_and_never_move_coverage(sync_env: SyncEnv) -> None:
    sync_env.fake.filter_window = False
    sync_env.fake.rows = [_row(NOW - HOUR), _row(YEAR_2099), _row(NOW + 25 * HOUR)]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None
    assert (outcome.summary["added"], outcome.summary["future"]) == (1, 2)
    doc = _store()
    assert [e["time"] for e in doc["events"]] == [iso_utc(NOW - HOUR)]
    assert [r["end"] for r in doc["ranges"]] == [iso_utc(NOW - HOUR)]
    assert load_state().through == {ACCOUNT: NOW - HOUR}


def test_a_row_within_a_day_ahead_is_kept_but_coverage_stops_at_the_sync(
    sync_env: SyncEnv,
) -> None:
    sync_env.fake.filter_window = False
    sync_env.fake.rows = [_row(NOW + 2 * HOUR)]  # a clock a little ahead of ours
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)
    assert outcome.summary is not None and outcome.summary["future"] == 0
    doc = _store()
    assert len(doc["events"]) == 1
    assert [r["end"] for r in doc["ranges"]] == [iso_utc(NOW)]
    assert load_state().through == {ACCOUNT: NOW}


def test_a_store_damaged_by_a_2099_row_heals_on_the_next_sync(sync_env: SyncEnv) -> None:
    damaged = ExportRow(iso_utc(YEAR_2099), "gpt-5", input=7)
    good = _row(NOW - 30 * HOUR)
    sync_env.fake.rows = [damaged, good]
    sync_env.fake.filter_window = False
    maybe_sync(sync_env.db_path, now_ms=NOW - 29 * HOUR)  # stores `good`, refuses 2099
    doc = _store()
    # What an older version left behind: the 2099 event, coverage and `through` in 2099.
    event = dict(doc["events"][0], time=iso_utc(YEAR_2099), date=iso_utc(YEAR_2099), hash="f" * 32)
    doc["events"].append(event)
    doc["ranges"][0]["end"] = iso_utc(YEAR_2099)
    write_json_atomic(store_path(), doc)
    with update_state() as state:
        state.through[ACCOUNT] = YEAR_2099
        state.next_attempt_ms = None

    sync_env.fake.rows = [good, _row(NOW - HOUR, output=9)]
    outcome = maybe_sync(sync_env.db_path, now_ms=NOW)

    request = sync_env.fake.export_requests()[-1]
    # The damaged mark counts as "now": the window starts the day before, not in 2099 (which
    # would be an empty window, forever).
    assert request.start_ms == local_midnight_ms(local_day(NOW) - timedelta(days=1))
    assert request.end_ms == NOW
    assert outcome.summary is not None and outcome.summary["added"] == 1
    healed = _store()
    assert sorted(e["time"] for e in healed["events"]) == [
        iso_utc(NOW - 30 * HOUR),
        iso_utc(NOW - HOUR),
    ]
    assert max(r["end"] for r in healed["ranges"]) == iso_utc(NOW)  # clipped to the sync
    assert load_state().through == {ACCOUNT: NOW}  # never after the sync's own time
