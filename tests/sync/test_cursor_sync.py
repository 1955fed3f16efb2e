"""maybe_sync against a real loopback cursor.com: window, throttle, accounts, forced sync."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest

from codeburn.cache.config import set_config_value
from codeburn.cache.imports.store import store_path
from codeburn.providers.localtime import iso_utc, local_day, local_midnight_ms, now_ms
from codeburn.sync.auth import account_of
from codeburn.sync.cursor_sync import SyncError, maybe_sync
from codeburn.sync.state import load_state, state_path
from tests.csv_fixtures import ExportRow
from tests.sync.fake_cursor import TEST_SUB, SyncEnv

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

HOUR = 3_600_000
PAST_THROTTLE = HOUR + 5 * 60_000 + 1
ACCOUNT = account_of(TEST_SUB)


def row(ms: int, model: str = "claude-4.5-sonnet", output: int = 50) -> ExportRow:
    return ExportRow(iso_utc(ms), model, input=100, cache_read=1000, output=output)


def store() -> dict:
    return json.loads(store_path().read_bytes())


def test_first_sync_window_cookie_and_origin(sync_env: SyncEnv) -> None:
    now = now_ms()
    sync_env.fake.rows = [row(now - 2 * HOUR), row(now - 26 * HOUR)]
    outcome = maybe_sync(sync_env.db_path, now_ms=now)

    [request] = sync_env.fake.export_requests()
    today = local_day(now)
    first = min(today.replace(day=1), today - timedelta(days=30))
    assert request.start_ms == local_midnight_ms(first)
    assert request.end_ms == now
    assert request.query["strategy"] == "tokens"
    assert request.headers["cookie"] == (
        f"WorkosCursorSessionToken=user_sync_test%3A%3A{sync_env.token}"
    )
    assert request.headers["origin"] == "https://cursor.com"
    assert request.headers["accept"] == "text/csv"

    assert outcome.attempted and outcome.changed and outcome.error_code is None
    assert outcome.summary is not None
    assert outcome.summary["added"] == 2
    assert outcome.summary["empty"] is False
    assert outcome.summary["window"] == {
        "start": iso_utc(local_midnight_ms(first)),
        "end": iso_utc(now),
    }
    assert outcome.covered_days is not None and outcome.covered_days[0] == first
    events = store()["events"]
    assert len(events) == 2
    assert {e["account"] for e in events} == {ACCOUNT}


def test_state_file_holds_hash_never_identity(sync_env: SyncEnv) -> None:
    now = now_ms()
    sync_env.fake.rows = [row(now - HOUR)]
    maybe_sync(sync_env.db_path, now_ms=now)
    text = state_path().read_text()
    data = json.loads(text)
    assert re.fullmatch(r"[0-9a-f]{16}", data["account"])
    assert data["account"] == ACCOUNT
    assert data["lastAttemptAt"] == iso_utc(now)
    assert data["lastSuccessAt"] == iso_utc(now)
    assert data["failures"] == 0 and data["errorCode"] is None and data["backoffUntil"] is None
    next_at = load_state().next_attempt_ms
    assert next_at is not None and now + HOUR <= next_at <= now + HOUR + 5 * 60_000
    assert data["through"] == {ACCOUNT: iso_utc(now - HOUR)}
    for secret in ("user_sync_test", TEST_SUB, sync_env.token):
        assert secret not in text


def test_second_call_within_the_hour_makes_no_request(sync_env: SyncEnv) -> None:
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    written = state_path().read_bytes(), state_path().stat().st_mtime_ns
    outcome = maybe_sync(sync_env.db_path, now_ms=now + HOUR - 1)
    assert outcome.attempted is False
    assert len(sync_env.fake.export_requests()) == 1
    assert (state_path().read_bytes(), state_path().stat().st_mtime_ns) == written


def test_after_the_hour_window_starts_the_day_before_newest_event(sync_env: SyncEnv) -> None:
    now = now_ms()
    newest = now - 3 * HOUR
    sync_env.fake.rows = [row(newest), row(now - 50 * HOUR)]
    maybe_sync(sync_env.db_path, now_ms=now)
    later = now + PAST_THROTTLE
    sync_env.fake.rows.append(row(now + HOUR))
    outcome = maybe_sync(sync_env.db_path, now_ms=later)
    assert outcome.attempted and outcome.error_code is None
    second = sync_env.fake.export_requests()[1]
    assert second.start_ms == local_midnight_ms(local_day(newest) - timedelta(days=1))
    assert second.end_ms == later
    assert len(store()["events"]) == 3


def test_rows_before_the_window_are_ignored(sync_env: SyncEnv) -> None:
    now = now_ms()
    sync_env.fake.filter_window = False
    sync_env.fake.rows = [row(now - HOUR), row(now - 90 * 24 * HOUR)]
    outcome = maybe_sync(sync_env.db_path, now_ms=now)
    assert outcome.summary is not None and outcome.summary["added"] == 1
    assert len(store()["events"]) == 1


def test_empty_export_still_creates_the_store_and_remembers_the_day(sync_env: SyncEnv) -> None:
    now = now_ms()
    outcome = maybe_sync(sync_env.db_path, now_ms=now)
    assert outcome.attempted and outcome.error_code is None
    assert outcome.summary is not None and outcome.summary["empty"] is True
    assert store_path().exists()
    assert store()["events"] == []
    assert load_state().through == {ACCOUNT: local_midnight_ms(local_day(now))}
    maybe_sync(sync_env.db_path, now_ms=now + PAST_THROTTLE)
    second = sync_env.fake.export_requests()[1]
    assert second.start_ms == local_midnight_ms(local_day(now) - timedelta(days=1))


def test_token_expiring_within_a_minute_makes_no_request(sync_env: SyncEnv) -> None:
    now = now_ms()
    sync_env.sign_in(TEST_SUB, now // 1000 + 30, "user_sync_test")
    outcome = maybe_sync(sync_env.db_path, now_ms=now)
    assert (outcome.attempted, outcome.error_code) == (False, "login")
    with pytest.raises(SyncError, match="sign in"):
        maybe_sync(sync_env.db_path, force=True, now_ms=now)
    assert sync_env.fake.requests == []
    assert not state_path().exists()


def test_no_token_makes_no_request(sync_env: SyncEnv) -> None:
    sync_env.sign_out()
    outcome = maybe_sync(sync_env.db_path)
    assert (outcome.attempted, outcome.error_code) == (False, "login")
    with pytest.raises(SyncError, match="not signed in"):
        maybe_sync(sync_env.db_path, force=True)
    assert sync_env.fake.requests == []


def test_account_change_keeps_first_accounts_rows(sync_env: SyncEnv) -> None:
    now = now_ms()
    first_newest = now - 5 * HOUR
    sync_env.fake.rows = [row(now - 30 * HOUR), row(first_newest)]
    maybe_sync(sync_env.db_path, now_ms=now)

    sync_env.sign_in("google-oauth2|user_other", sync_env.exp + 10, "user_other")
    sync_env.fake.rows = [row(now - 30 * HOUR), row(first_newest), row(now - HOUR, output=7)]
    outcome = maybe_sync(sync_env.db_path, now_ms=now + PAST_THROTTLE)
    assert outcome.attempted and outcome.error_code is None, outcome
    second = sync_env.fake.export_requests()[1]
    assert second.start_ms == first_newest + 1
    assert second.headers["cookie"].startswith("WorkosCursorSessionToken=user_other%3A%3A")
    events = store()["events"]
    by_account: dict[str, int] = {}
    for event in events:
        by_account[event["account"]] = by_account.get(event["account"], 0) + 1
    assert by_account == {ACCOUNT: 2, account_of("google-oauth2|user_other"): 1}
    assert load_state().account == account_of("google-oauth2|user_other")


def test_off_switch_config_and_env(sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    set_config_value("cursorSync", False)
    assert maybe_sync(sync_env.db_path).attempted is False
    set_config_value("cursorSync", True)
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    assert maybe_sync(sync_env.db_path).attempted is False
    assert sync_env.fake.requests == []
    assert not state_path().exists()


def test_forced_sync_ignores_throttle_backoff_and_off_switch(
    sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    assert maybe_sync(sync_env.db_path, force=True, now_ms=now + 1).attempted  # throttled
    sync_env.fake.mode = "429"
    maybe_sync(sync_env.db_path, force=False, now_ms=now + PAST_THROTTLE)
    assert load_state().backoff_until_ms is not None
    sync_env.fake.mode = "ok"
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    set_config_value("cursorSync", False)
    sync_env.fake.rows = [row(now - HOUR)]
    outcome = maybe_sync(sync_env.db_path, force=True, now_ms=now + PAST_THROTTLE + 2)
    assert outcome.attempted and outcome.changed and outcome.error_code is None
    assert len(sync_env.fake.export_requests()) == 4
    state = load_state()
    assert state.backoff_until_ms is None and state.failures == 0
    assert state.last_attempt_ms == now + PAST_THROTTLE + 2


def test_forced_sync_failure_raises_a_readable_error(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "500"
    with pytest.raises(SyncError) as caught:
        maybe_sync(sync_env.db_path, force=True)
    message = str(caught.value)
    assert "cursor.com" in message and "500" in message
    assert "SERVER SECRET TEXT" not in message and "\n" not in message
    state = load_state()
    assert (state.failures, state.error_code) == (1, "network")
    assert len(sync_env.fake.export_requests()) == 1


def test_forced_sync_after_login_rejection_says_sign_in(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "401"
    with pytest.raises(SyncError, match="sign in again"):
        maybe_sync(sync_env.db_path, force=True)


def test_refused_base_url_makes_no_request(
    sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBURN_CURSOR_BASE_URL", "http://example.com")
    assert maybe_sync(sync_env.db_path).attempted is False
    with pytest.raises(SyncError, match="https://"):
        maybe_sync(sync_env.db_path, force=True)
    assert sync_env.fake.requests == []


def test_unreadable_store_is_never_replaced(sync_env: SyncEnv) -> None:
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().write_bytes(b"{ not json")
    outcome = maybe_sync(sync_env.db_path)
    assert outcome.error_code is None and outcome.changed is False
    with pytest.raises(SyncError, match="--remove"):
        maybe_sync(sync_env.db_path, force=True)
    assert store_path().read_bytes() == b"{ not json"


def test_sync_state_write_does_not_touch_store_mtime(sync_env: SyncEnv, tmp_path: Path) -> None:
    now = now_ms()
    sync_env.fake.rows = [row(now - HOUR)]
    maybe_sync(sync_env.db_path, now_ms=now)
    before = store_path().stat().st_mtime_ns
    outcome = maybe_sync(sync_env.db_path, now_ms=now + PAST_THROTTLE)
    assert outcome.attempted and outcome.changed is False
    assert store_path().stat().st_mtime_ns == before
