"""Every way cursor.com can fail: the backoff of docs/cursor-sync.md is set and the store stays
byte-identical."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from codeburn.cache.imports.store import store_path
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.sync.cursor_sync import maybe_sync
from codeburn.sync.state import load_state
from tests.csv_fixtures import ExportRow
from tests.sync.fake_cursor import TEST_SUB, Mode, SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


HOUR = 3_600_000
PAST_THROTTLE = HOUR + 5 * 60_000 + 1
SIX_HOURS = 6 * HOUR


@dataclass(frozen=True)
class Case:
    mode: Mode
    code: str
    backoff_ms: int | None
    retry_after: str | None = None


CASES = {
    "401": Case("401", "login", SIX_HOURS),
    "403": Case("403", "login", SIX_HOURS),
    "429-retry-after": Case("429", "network", 120_000, "120"),
    "429-retry-after-below-minimum": Case("429", "network", 60_000, "5"),
    "429-no-retry-after": Case("429", "network", 300_000),
    "429-retry-after-not-ascii-digits": Case("429", "network", 300_000, "²"),
    "429-retry-after-huge": Case("429", "network", 24 * HOUR, "9" * 400),
    "500": Case("500", "network", None),
    "not-csv": Case("not-csv", "export", None),
    "truncated": Case("truncated", "network", None),
    "stall": Case("stall", "network", None),
}


def _budget(mode: Mode) -> float:
    """A short budget only where the server stalls; elsewhere load must not turn into a time-out."""
    return 0.5 if mode == "stall" else 15.0


def _seed_store(env: SyncEnv, now: int) -> bytes:
    env.fake.rows = [ExportRow(iso_utc(now - HOUR), "gpt-5", input=10, output=5)]
    outcome = maybe_sync(env.db_path, now_ms=now)
    assert outcome.changed
    return store_path().read_bytes()


@pytest.mark.parametrize("name", list(CASES))
def test_failure_sets_backoff_and_keeps_store(sync_env: SyncEnv, name: str) -> None:
    case = CASES[name]
    now = now_ms()
    before = _seed_store(sync_env, now)
    mtime = store_path().stat().st_mtime_ns
    sync_env.fake.rows.append(ExportRow(iso_utc(now + HOUR), "gpt-5", input=20, output=9))
    sync_env.fake.mode = case.mode
    sync_env.fake.retry_after = case.retry_after
    later = now + PAST_THROTTLE

    outcome = maybe_sync(sync_env.db_path, now_ms=later, budget_s=_budget(case.mode))

    assert (outcome.attempted, outcome.changed, outcome.error_code) == (True, False, case.code)
    assert len(sync_env.fake.export_requests()) == 2
    assert store_path().read_bytes() == before
    assert store_path().stat().st_mtime_ns == mtime
    state = load_state()
    assert state.failures == 1
    assert state.error_code == case.code
    assert state.last_error and "SERVER SECRET TEXT" not in state.last_error
    assert state.last_attempt_ms == later
    expected = later + case.backoff_ms if case.backoff_ms is not None else None
    assert state.backoff_until_ms == expected
    assert state.rejected_exp == (sync_env.exp if case.code == "login" else None)
    assert state.last_success_ms == now


@pytest.mark.parametrize("name", ["500", "not-csv", "truncated", "401"])
def test_failed_first_sync_creates_no_store(sync_env: SyncEnv, name: str) -> None:
    sync_env.fake.mode = CASES[name].mode
    outcome = maybe_sync(sync_env.db_path, budget_s=_budget(CASES[name].mode))
    assert outcome.error_code == CASES[name].code
    assert not store_path().exists()


@pytest.mark.parametrize(
    ("mode", "retry_after", "backoff_ms"), [("401", None, SIX_HOURS), ("429", "7200", 2 * HOUR)]
)
def test_backoff_outlasts_the_throttle(
    sync_env: SyncEnv, mode: Mode, retry_after: str | None, backoff_ms: int
) -> None:
    sync_env.fake.mode = mode
    sync_env.fake.retry_after = retry_after
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    sync_env.fake.mode = "ok"
    assert maybe_sync(sync_env.db_path, now_ms=now + PAST_THROTTLE).attempted is False
    assert maybe_sync(sync_env.db_path, now_ms=now + backoff_ms - 1).attempted is False
    assert len(sync_env.fake.export_requests()) == 1
    assert maybe_sync(sync_env.db_path, now_ms=now + backoff_ms).attempted
    assert len(sync_env.fake.export_requests()) == 2


def test_login_backoff_ends_when_the_token_changes(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "401"
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    assert maybe_sync(sync_env.db_path, now_ms=now + 60_000).attempted is False
    sync_env.fake.mode = "ok"
    sync_env.sign_in(TEST_SUB, sync_env.exp + 3600, "user_sync_test")
    outcome = maybe_sync(sync_env.db_path, now_ms=now + 120_000)
    assert outcome.attempted and outcome.error_code is None
    state = load_state()
    assert (state.failures, state.error_code, state.backoff_until_ms) == (0, None, None)


def test_three_failures_in_a_row_back_off_six_hours_and_success_resets(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "500"
    now = now_ms()
    times = [now, now + PAST_THROTTLE, now + 2 * PAST_THROTTLE]
    for t in times:
        assert maybe_sync(sync_env.db_path, now_ms=t).attempted
    state = load_state()
    assert state.failures == 3
    assert state.backoff_until_ms == times[-1] + SIX_HOURS
    assert maybe_sync(sync_env.db_path, now_ms=times[-1] + PAST_THROTTLE).attempted is False
    sync_env.fake.mode = "ok"
    assert maybe_sync(sync_env.db_path, now_ms=times[-1] + SIX_HOURS).attempted
    state = load_state()
    assert (state.failures, state.backoff_until_ms, state.error_code) == (0, None, None)
    assert state.last_error is None
