"""Sync from the command line against a loopback cursor.com (docs/cursor-sync.md,
report-json.md, cli.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from codeburn.providers.localtime import parse_iso_ms, today
from codeburn.server.cli.main import main
from codeburn.sync import client
from tests.csv_fixtures import ExportRow, iso_local
from tests.sync.fake_cursor import TEST_SUB, TEST_USER_ID, FakeCursor, SyncEnv, setup_sync_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SyncEnv]:
    with FakeCursor() as fake:
        yield setup_sync_env(tmp_path, monkeypatch, fake)


def _rows() -> list[ExportRow]:
    day = today() - timedelta(days=1)
    return [
        ExportRow(
            iso_local(day, 10), "claude-4.6-sonnet", input=1000, cache_read=20_000, output=300
        ),
        ExportRow(
            iso_local(day, 11), "gpt-5", input=400, output=100, cost="$0.40", kind="On-Demand"
        ),
    ]


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_forced_sync_imports_the_export(env: SyncEnv, capsys: pytest.CaptureFixture[str]) -> None:
    env.fake.rows.extend(_rows())
    summary = _json(capsys, ["import", "cursor", "--sync", "--format", "json"])
    assert (summary["added"], summary["total"], summary["empty"]) == (2, 2, False)
    assert len(env.fake.export_requests()) == 1
    request = env.fake.export_requests()[0]
    assert request.headers["cookie"] == f"WorkosCursorSessionToken={TEST_USER_ID}%3A%3A{env.token}"
    assert request.headers["origin"] == "https://cursor.com"
    assert not env.fake.summary_requests()  # a sync never reads the quota


@pytest.mark.clock
def test_reports_sync_first_and_then_only_hourly(
    env: SyncEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    env.fake.rows.extend(_rows())
    report = _json(capsys, ["report", "--period", "week", "--format", "json"])
    assert report["totals"]["calls"] == 2
    assert report["totals"]["billedCost"] == pytest.approx(0.40)
    assert report["cursorSync"]["state"] == "ok" and report["cursorSync"]["enabled"] is True
    status = _json(capsys, ["status", "--format", "json"])
    assert status["cursorSync"]["state"] == "ok"
    assert len(env.fake.export_requests()) == 1


def test_no_sync_flag_skips_the_request(env: SyncEnv, capsys: pytest.CaptureFixture[str]) -> None:
    report = _json(capsys, ["report", "--no-sync", "--format", "json"])
    assert env.fake.requests == []
    assert report["cursorSync"]["state"] == "syncing-never"


def test_failed_forced_sync_is_one_line_and_exit_1(
    env: SyncEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    env.fake.mode = "401"
    assert main(["import", "cursor", "--sync"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1
    assert "open Cursor to sign in again" in err
    status = _json(capsys, ["status", "--format", "json", "--no-sync"])
    assert status["cursorSync"]["state"] == "error"
    assert status["cursorSync"]["errorCode"] == "login"


def test_automatic_failure_is_silent(env: SyncEnv, capsys: pytest.CaptureFixture[str]) -> None:
    env.fake.mode = "500"
    assert main(["status", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    status = json.loads(captured.out)
    assert status["state"] == "ok" and status["cursorSync"]["errorCode"] == "network"


@pytest.mark.clock
def test_quota_in_status(env: SyncEnv, capsys: pytest.CaptureFixture[str]) -> None:
    status = _json(capsys, ["status", "--quota", "--no-sync", "--format", "json"])
    assert status["quota"]["available"] is True
    assert {p["label"] for p in status["quota"]["pools"]} >= {"Cursor models", "Other models"}
    assert _json(capsys, ["status", "--no-sync", "--format", "json"])["quota"] is None


def test_no_secret_in_any_file_or_output(
    env: SyncEnv, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    env.fake.rows.extend(_rows())
    outputs = []
    for argv in (
        ["import", "cursor", "--sync"],
        ["status", "--quota"],
        ["report", "--format", "json"],
    ):
        main(argv)
        captured = capsys.readouterr()
        outputs += [captured.out, captured.err]
    env.fake.mode = "403"
    main(["import", "cursor", "--sync"])
    captured = capsys.readouterr()
    outputs += [captured.out, captured.err]
    secrets = [env.token, TEST_SUB, TEST_USER_ID, "WorkosCursorSessionToken"]
    files = [
        p
        for d in (env.cache_dir, env.config_dir)
        if d.exists()
        for p in d.rglob("*")
        if p.is_file()
    ]
    assert files
    for secret in secrets:
        assert all(secret not in text for text in outputs), secret
        for path in files:
            assert secret.encode() not in path.read_bytes(), (secret, path)


@pytest.mark.clock
def test_text_status_says_when_it_synced(env: SyncEnv, capsys: pytest.CaptureFixture[str]) -> None:
    env.fake.rows.extend(_rows())
    assert main(["status"]) == 0
    assert "Synced from cursor.com just now" in capsys.readouterr().out


def _events() -> list[dict[str, object]]:
    """The two rows of `_rows()` as JSON usage events; the second usage-based, fee included."""
    day = today() - timedelta(days=1)
    base = {"maxMode": False, "owningUser": TEST_USER_ID}
    return [
        {
            **base,
            "timestamp": str(_ms(iso_local(day, 10))),
            "model": "claude-4.6-sonnet",
            "kind": "USAGE_EVENT_KIND_INCLUDED_IN_PRO",
            "tokenUsage": {"inputTokens": 1000, "cacheReadTokens": "20000", "outputTokens": 300},
            "conversationId": "conv-a",
        },
        {
            **base,
            "timestamp": str(_ms(iso_local(day, 11))),
            "model": "gpt-5",
            "kind": "USAGE_EVENT_KIND_USAGE_BASED",
            "tokenUsage": {"inputTokens": "400", "outputTokens": "100", "totalCents": "40"},
            "chargedCents": "49.5",
            "cursorTokenFee": "9.5",
            "conversationId": "conv-b",
        },
    ]


def _ms(text: str) -> int:
    ms = parse_iso_ms(text)
    assert ms is not None
    return ms


def test_forced_sync_reads_the_json_events_and_reports_their_charge(
    env: SyncEnv, capsys: pytest.CaptureFixture[str]
) -> None:
    env.fake.events = _events()
    env.fake.rows.extend(_rows())  # the export says $0.40: the fee is not in it
    summary = _json(capsys, ["import", "cursor", "--sync", "--format", "json"])
    assert (summary["added"], summary["total"]) == (2, 2)
    assert len(env.fake.events_requests()) == 1 and env.fake.export_requests() == []
    report = _json(capsys, ["report", "--period", "week", "--format", "json", "--no-sync"])
    assert report["totals"]["calls"] == 2
    assert report["totals"]["billedCost"] == pytest.approx(0.495)


def test_a_count_that_changes_mid_sync_is_one_line_and_exit_1(
    env: SyncEnv, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "EVENTS_PAGE_SIZE", 1)
    env.fake.events, env.fake.events_mode = _events(), "count-changes"
    assert main(["import", "cursor", "--sync"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1
    assert "changed while they were read" in err
    assert env.fake.export_requests() == []
    assert not (env.cache_dir / "imports" / "cursor-usage.v3.json").exists()
