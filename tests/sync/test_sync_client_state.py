"""Base URL rules, Retry-After, and the state file."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from codeburn.sync.client import BaseUrlError, base_url, parse_retry_after
from codeburn.sync.state import SyncState, load_state, save_state, state_path, update_state

STATE_FIELDS = {
    "lastAttemptAt",
    "nextAttemptAt",
    "lastSuccessAt",
    "backoffUntil",
    "failures",
    "lastError",
    "errorCode",
    "account",
    "through",
    "rejectedExp",
    "source",
    "incomplete",
    "exactThrough",
}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "https://cursor.com"),
        ("", "https://cursor.com"),
        ("https://staging.example.com/", "https://staging.example.com"),
        ("http://127.0.0.1:8123", "http://127.0.0.1:8123"),
        ("http://localhost:9/", "http://localhost:9"),
        ("http://[::1]:8123", "http://[::1]:8123"),
        ("http://127.8.9.10:1", "http://127.8.9.10:1"),
    ],
)
def test_base_url_allowed(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: str
) -> None:
    if value is None:
        monkeypatch.delenv("CODEBURN_CURSOR_BASE_URL", raising=False)
    else:
        monkeypatch.setenv("CODEBURN_CURSOR_BASE_URL", value)
    assert base_url() == expected


@pytest.mark.parametrize(
    "value",
    ["http://cursor.com", "http://10.0.0.1:80", "ftp://127.0.0.1", "http://127.0.0.1.evil.com"],
)
def test_base_url_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CODEBURN_CURSOR_BASE_URL", value)
    with pytest.raises(BaseUrlError, match="https://"):
        base_url()


def test_retry_after_forms() -> None:
    assert parse_retry_after(None) is None
    assert parse_retry_after(" ") is None
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("soon") is None
    when = parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now_s=1445412400.0)
    assert when == 80.0


def test_state_round_trip_has_exact_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path))
    state = SyncState(
        last_attempt_ms=1_700_000_000_000,
        next_attempt_ms=1_700_003_600_000,
        last_success_ms=1_700_000_000_123,
        backoff_until_ms=None,
        failures=2,
        last_error="could not reach cursor.com",
        error_code="network",
        account="0123456789abcdef",
        through={"0123456789abcdef": 1_699_999_000_000},
        rejected_exp=1_800_000_000,
    )
    save_state(state)
    assert state_path() == tmp_path / "imports" / "cursor-sync.v1.json"
    assert stat.S_IMODE(state_path().stat().st_mode) == 0o600
    data = json.loads(state_path().read_text())
    assert set(data) == STATE_FIELDS
    assert data["lastAttemptAt"] == "2023-11-14T22:13:20.000Z"
    assert data["lastSuccessAt"] == "2023-11-14T22:13:20.123Z"
    assert data["through"] == {"0123456789abcdef": "2023-11-14T21:56:40.000Z"}
    assert load_state() == state


@pytest.mark.parametrize(
    "content", [b"", b"{", b"[]", b"null", b'"x"', b"\xff\xfe", b'{"failures": "many"}']
)
def test_corrupt_state_reads_as_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path))
    state_path().parent.mkdir(parents=True)
    state_path().write_bytes(content)
    assert load_state() == SyncState()


def test_foreign_values_are_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path))
    state_path().parent.mkdir(parents=True)
    state_path().write_text(
        json.dumps(
            {
                "account": "auth0|user_sync_test",
                "errorCode": "teapot",
                "failures": True,
                "through": {"auth0|user_sync_test": "2024-01-01T00:00:00Z", "x": 5},
                "lastAttemptAt": "yesterday",
            }
        )
    )
    assert load_state() == SyncState()


def test_update_state_saves_under_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path))
    with update_state() as state:
        state.failures = 1
    with update_state() as state:
        state.failures += 1
    assert load_state().failures == 2
