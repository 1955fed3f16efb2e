"""The token, the cookie and the sub never reach a file we write, a log or an error message."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from codeburn.cache.config import set_config_value
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.sync import client
from codeburn.sync.cursor_sync import SyncError, maybe_sync
from codeburn.sync.quota import read_quota
from codeburn.sync.status_block import cursor_sync_block
from tests.csv_fixtures import ExportRow
from tests.sync.fake_cursor import TEST_SUB, TEST_USER_ID, SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


HOUR = 3_600_000


def _every_file(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


def test_no_secret_in_files_logs_or_errors(
    sync_env: SyncEnv, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    now = now_ms()
    set_config_value("budget", {"daily": 5})
    sync_env.fake.rows = [ExportRow(iso_utc(now - HOUR), "gpt-5", input=10, output=3)]
    assert maybe_sync(sync_env.db_path, now_ms=now).changed
    sync_env.fake.mode = "not-csv"
    maybe_sync(sync_env.db_path, now_ms=now + 2 * HOUR)
    errors = []
    for mode in ("401", "500", "429", "truncated"):
        sync_env.fake.mode = mode  # type: ignore[assignment]
        with pytest.raises(SyncError) as caught:
            maybe_sync(sync_env.db_path, force=True, now_ms=now + 3 * HOUR)
        errors.append(str(caught.value))
    assert read_quota(sync_env.db_path) is not None
    block = json.dumps(cursor_sync_block(sync_env.db_path))

    files = _every_file(sync_env.cache_dir, sync_env.config_dir)
    names = {p.name for p in files}
    assert {"cursor-sync.v1.json", "cursor-usage.v3.json", "cursor-quota.v1.json"} <= names
    assert "config.json" in names
    secrets = {
        "token": sync_env.token.encode(),
        "cookie": sync_env.fake.expected_cookie.encode() if sync_env.fake.expected_cookie else b"",
        "sub": TEST_SUB.encode(),
        "user id": TEST_USER_ID.encode(),
        "JWT payload": sync_env.token.split(".")[1].encode(),
        "server text": b"SERVER SECRET TEXT",
    }
    assert all(secrets.values())
    for path in files:
        data = path.read_bytes()
        for what, secret in secrets.items():
            assert secret not in data, f"{what} found in {path}"
    texts = {
        "logs": caplog.text + "".join(r.getMessage() for r in caplog.records),
        "errors": "\n".join(errors),
        "block": block,
    }
    assert "HTTP Request" in texts["logs"]  # httpx's own logging was captured too
    for where, text in texts.items():
        for what, secret in secrets.items():
            assert secret.decode() not in text, f"{what} found in {where}"


def test_no_secret_from_the_json_events_in_files_logs_or_errors(
    sync_env: SyncEnv, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(client, "EVENTS_PAGE_SIZE", 1)  # two pages: a count that can change
    now = now_ms()
    sync_env.fake.events = [
        {
            "timestamp": str(now - HOUR),
            "model": "gpt-5",
            "owningUser": TEST_USER_ID,
            "tokenUsage": {"inputTokens": "10"},
            "conversationId": "conv-1",
        },
        {"timestamp": str(now - 2 * HOUR), "model": "gpt-5", "owningUser": "user_other"},
    ]
    assert maybe_sync(sync_env.db_path, now_ms=now).changed
    errors = []
    for mode in ("401", "500", "429", "truncated", "count-changes", "too-large", "html"):
        sync_env.fake.events_mode = mode  # type: ignore[assignment]
        sync_env.fake.mode = "not-csv"
        with pytest.raises(SyncError) as caught:
            maybe_sync(sync_env.db_path, force=True, now_ms=now + 3 * HOUR)
        errors.append(str(caught.value))

    secrets = {
        "token": sync_env.token.encode(),
        "sub": TEST_SUB.encode(),
        "user id": TEST_USER_ID.encode(),
        "server text": b"SERVER SECRET",
    }
    files = _every_file(sync_env.cache_dir, sync_env.config_dir)
    assert "cursor-usage.v3.json" in {p.name for p in files}
    for path in files:
        data = path.read_bytes()
        for what, secret in secrets.items():
            assert secret not in data, f"{what} found in {path}"
    text = caplog.text + "\n".join(errors)
    for what, secret in secrets.items():
        assert secret.decode() not in text, f"{what} found in logs or errors"
