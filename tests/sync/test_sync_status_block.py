"""The cursorSync block (docs/report-json.md): every state, computed without a request."""

from __future__ import annotations

import json

import pytest

from codeburn.cache.config import set_config_value
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.sync.cursor_sync import maybe_sync
from codeburn.sync.state import SyncState, save_state, state_path
from codeburn.sync.status_block import cursor_sync_block
from tests.sync.fake_cursor import TEST_SUB, SyncEnv, write_global_db

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

LOGIN = "Cursor login expired, open Cursor to sign in again"
NETWORK = "Couldn't reach cursor.com, will retry"
EXPORT = "Couldn't read the usage export from cursor.com, will retry"


def block(env: SyncEnv) -> dict | None:
    before = len(env.fake.requests)
    result = cursor_sync_block(env.db_path)
    assert len(env.fake.requests) == before, "the block must not touch the network"
    return result


def test_signed_out_and_never_synced_is_absent(sync_env: SyncEnv) -> None:
    sync_env.sign_out()
    assert block(sync_env) is None


def test_signed_out_after_a_sync_is_no_login(sync_env: SyncEnv) -> None:
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    sync_env.sign_out()
    assert block(sync_env) == {
        "enabled": True,
        "state": "no-login",
        "lastSuccessAt": iso_utc(now),
        "exactThrough": None,
        "errorCode": "login",
        "error": LOGIN,
    }


def test_signed_in_never_synced(sync_env: SyncEnv) -> None:
    assert block(sync_env) == {
        "enabled": True,
        "state": "syncing-never",
        "lastSuccessAt": None,
        "exactThrough": None,
    }


def test_ok_after_success(sync_env: SyncEnv) -> None:
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    assert block(sync_env) == {
        "enabled": True,
        "state": "ok",
        "lastSuccessAt": iso_utc(now),
        "exactThrough": None,
    }


@pytest.mark.parametrize("how", ["config", "env"])
def test_off(sync_env: SyncEnv, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    now = now_ms()
    sync_env.fake.mode = "500"
    maybe_sync(sync_env.db_path, now_ms=now)
    if how == "config":
        set_config_value("cursorSync", False)
    else:
        monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    assert block(sync_env) == {
        "enabled": False,
        "state": "off",
        "lastSuccessAt": None,
        "exactThrough": None,
    }


def test_off_wins_over_no_login(sync_env: SyncEnv) -> None:
    sync_env.sign_in(TEST_SUB, now_ms() // 1000 - 5, "user_sync_test")
    set_config_value("cursorSync", False)
    result = block(sync_env)
    assert result is not None and result["state"] == "off"


@pytest.mark.parametrize("token", ["not-a-jwt", "a.e30.b"])
def test_invalid_token_is_no_login(sync_env: SyncEnv, token: str) -> None:
    write_global_db(sync_env.db_path, token)
    result = block(sync_env)
    assert result is not None
    assert (result["state"], result["errorCode"], result["error"]) == ("no-login", "login", LOGIN)


def test_expired_token_is_no_login(sync_env: SyncEnv) -> None:
    sync_env.sign_in(TEST_SUB, now_ms() // 1000 - 5, "user_sync_test")
    result = block(sync_env)
    assert result is not None and result["state"] == "no-login"


@pytest.mark.parametrize(
    ("mode", "code", "text"),
    [
        ("401", "login", LOGIN),
        ("500", "network", NETWORK),
        ("429", "network", NETWORK),
        ("not-csv", "export", EXPORT),
        ("stall", "network", NETWORK),
    ],
)
def test_error_after_failed_attempt(sync_env: SyncEnv, mode: str, code: str, text: str) -> None:
    now = now_ms()
    maybe_sync(sync_env.db_path, now_ms=now)
    sync_env.fake.mode = mode  # type: ignore[assignment]
    # Only the stalled server needs a short budget; a generous one elsewhere keeps a loaded
    # machine from turning a refused export into a time-out.
    budget_s = 0.3 if mode == "stall" else 15.0
    maybe_sync(sync_env.db_path, now_ms=now + 2 * 3_600_000, budget_s=budget_s)
    assert block(sync_env) == {
        "enabled": True,
        "state": "error",
        "lastSuccessAt": iso_utc(now),
        "exactThrough": None,
        "errorCode": code,
        "error": text,
    }


def test_login_error_for_an_older_token_is_ignored(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "401"
    maybe_sync(sync_env.db_path)
    result = block(sync_env)
    assert result is not None and result["state"] == "error"
    sync_env.sign_in(TEST_SUB, sync_env.exp + 100, "user_sync_test")
    assert block(sync_env) == {
        "enabled": True,
        "state": "syncing-never",
        "lastSuccessAt": None,
        "exactThrough": None,
    }


def test_block_never_carries_identity_or_server_text(sync_env: SyncEnv) -> None:
    sync_env.fake.mode = "not-csv"
    maybe_sync(sync_env.db_path)
    text = json.dumps(block(sync_env))
    state = json.loads(state_path().read_text())
    for secret in (sync_env.token, TEST_SUB, "user_sync_test", state["account"], "SECRET"):
        assert secret not in text


def test_corrupt_state_reads_as_never_synced(sync_env: SyncEnv) -> None:
    save_state(SyncState(failures=1))
    state_path().write_bytes(b"\x00garbage")
    assert block(sync_env) == {
        "enabled": True,
        "state": "syncing-never",
        "lastSuccessAt": None,
        "exactThrough": None,
    }
    sync_env.sign_out()
    assert block(sync_env) is None
