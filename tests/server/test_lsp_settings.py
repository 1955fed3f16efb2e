"""Settings parsing (nested, dotted, wrapped, bad values), budget notices, and `--tcp`."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from codeburn.cache.config import Budget
from codeburn.providers import local_midnight_ms
from codeburn.server.lsp.settings import (
    MIN_REFRESH_ENV,
    Settings,
    changed_settings,
    flatten,
    parse_settings,
)
from codeburn.server.lsp.status import AlertNotices, payload_key
from codeburn.server.service.alerts import alert_conditions, combined_message
from tests.server.conftest import WAIT_S, ServerEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def test_defaults() -> None:
    settings, warnings = parse_settings(None)
    assert settings == Settings()
    assert (settings.refresh_interval_seconds, settings.status_bar_show) == (30, "both")
    assert settings.cursor_sync_enabled is True and settings.budget() == Budget(None, None)
    assert warnings == []


def test_nested_dotted_and_wrapped_forms_agree() -> None:
    nested = {
        "cursorSync": {"enabled": False},
        "cursor": {"databasePath": " /x/state.vscdb "},
        "refreshIntervalSeconds": 45,
        "statusBar": {"show": "month"},
        "budget": {"daily": 5, "monthly": 120.5},
        "python": {"interpreter": "/usr/bin/python3"},
    }
    dotted = flatten(nested)
    assert dotted == {
        "cursorSync.enabled": False,
        "cursor.databasePath": " /x/state.vscdb ",
        "refreshIntervalSeconds": 45,
        "statusBar.show": "month",
        "budget.daily": 5,
        "budget.monthly": 120.5,
        "python.interpreter": "/usr/bin/python3",
    }
    expected = Settings(False, "/x/state.vscdb", 45, "month", 5.0, 120.5, "/usr/bin/python3")
    for form in (
        nested,
        dotted,
        {"codeburn": nested},
        {f"codeburn.{k}": v for k, v in dotted.items()},
    ):
        assert parse_settings(form) == (expected, [])
    assert expected.budget() == Budget(5.0, 120.5)


def test_later_layers_win_key_by_key() -> None:
    settings, _ = parse_settings({"budget": {"daily": 1, "monthly": 2}}, {"budget.daily": 3})
    assert (settings.budget_daily, settings.budget_monthly) == (3.0, 2.0)
    settings, _ = parse_settings({"budget": {"daily": 1}}, None)
    assert settings.budget_daily == 1.0


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ({"refreshIntervalSeconds": 9}, "refreshIntervalSeconds"),
        ({"refreshIntervalSeconds": "30"}, "refreshIntervalSeconds"),
        ({"refreshIntervalSeconds": float("nan")}, "refreshIntervalSeconds"),
        ({"budget": {"daily": -1}}, "budget.daily"),
        ({"budget": {"monthly": True}}, "budget.monthly"),
        ({"budget": {"monthly": float("inf")}}, "budget.monthly"),
        ({"statusBar": {"show": "week"}}, "statusBar.show"),
        ({"cursorSync": {"enabled": 1}}, "cursorSync.enabled"),
        ({"cursor": {"databasePath": ["/x"]}}, "cursor.databasePath"),
        ({"cursorSync": {"intervalMinutes": 1}}, "cursorSync.intervalMinutes"),
        ({"cursorSync.intervalMinutes": "5"}, "cursorSync.intervalMinutes"),
        ({"providers": ["cursor", "copilot"]}, "providers"),
        ({"providers": "codex"}, "providers"),
    ],
)
def test_bad_values_fall_back_to_the_default_with_a_warning(raw: object, name: str) -> None:
    settings, warnings = parse_settings(raw)
    assert settings == Settings()
    (warning,) = warnings
    assert warning.startswith(f"setting codeburn.{name} = ") and "using the default" in warning


def test_the_sync_interval_is_minutes_from_two() -> None:
    assert Settings().cursor_sync_interval_minutes == 5
    settings, warnings = parse_settings({"cursorSync": {"intervalMinutes": 2, "enabled": True}})
    assert (settings.cursor_sync_interval_minutes, warnings) == (2, [])


@pytest.mark.parametrize(("seam", "least"), [("1", 1), ("9", 9), ("0", 10), ("30", 10), ("x", 10)])
def test_the_least_refresh_interval_is_lowered_only_by_the_test_seam(
    monkeypatch: pytest.MonkeyPatch, seam: str, least: int
) -> None:
    monkeypatch.setenv(MIN_REFRESH_ENV, seam)
    assert parse_settings({"refreshIntervalSeconds": least})[0].refresh_interval_seconds == least
    settings, warnings = parse_settings({"refreshIntervalSeconds": least - 1})
    assert settings == Settings() and f"at least {least} seconds" in warnings[0]


def test_nulls_and_unknown_keys_are_ignored() -> None:
    assert parse_settings({"budget": {"daily": None}, "future": {"thing": 1}}) == (Settings(), [])
    assert parse_settings("not an object") == (Settings(), [])


def test_changed_settings_names() -> None:
    new = Settings(budget_daily=4, refresh_interval_seconds=60)
    assert changed_settings(Settings(), new) == [
        "codeburn.refreshIntervalSeconds",
        "codeburn.budget.daily",
    ]


def _status(today_cost: float, month_cost: float, daily: float | None, monthly: float | None):  # type: ignore[no-untyped-def]
    return {
        "generatedAt": "x",
        "today": {"cost": today_cost, "estimatedCost": 0.0},
        "month": {"cost": month_cost, "estimatedCost": month_cost / 2},
        "budget": {"daily": daily, "monthly": monthly},
    }


def _due(notices: AlertNotices, status: dict[str, Any], day: date) -> list[dict[str, Any]]:
    alerts = alert_conditions(status, today=day)
    return notices.due(alerts, local_midnight_ms(day) + 3_600_000)


def test_budget_notices_once_per_crossing_per_period(tmp_path: Path) -> None:
    path = tmp_path / "notices.json"
    notices = AlertNotices(path)
    day = date(2026, 11, 30)
    assert _due(notices, _status(1, 10, 10, 100), day) == []
    (warning,) = _due(notices, _status(8.5, 10, 10, 100), day)
    assert (warning["id"], warning["level"]) == ("budget-daily:warning:2026-11-30:10.0", "warning")
    assert "80% of your $10.00 daily budget" in warning["message"]
    assert _due(notices, _status(9, 10, 10, 100), day) == []
    due = _due(notices, _status(12, 100, 10, 100), day)
    assert [a["level"] for a in due] == ["error", "warning", "error"]  # daily over, monthly both
    level, text = combined_message(due)
    # one message, the worst level, one phrase per budget, the estimated month keeps its `~`
    assert level == "error"
    assert text == (
        "CodeBurn: today's Cursor spend $12.00 is over your $10.00 daily budget; "
        "this month's Cursor spend ~$100 is over your $100 monthly budget"
    )
    # a second window (another process) shares the file
    others = AlertNotices(path)
    assert _due(others, _status(12, 100, 10, 100), day) == []
    # a new day is a new period for the daily budget only
    nxt = date(2026, 12, 1)
    ids = [a["id"] for a in _due(others, _status(12, 100, 10, 100), nxt)]
    assert ids == [
        "budget-daily:warning:2026-12-01:10.0",
        "budget-daily:over:2026-12-01:10.0",
        "budget-monthly:warning:2026-12:100.0",
        "budget-monthly:over:2026-12:100.0",
    ]
    assert len(json.loads(path.read_text())) == 8  # both days, every id


def test_payload_key_ignores_generated_at_only() -> None:
    a = {"generatedAt": "1", "state": "ok", "today": {"cost": 1.0}}
    assert payload_key(a) == payload_key({**a, "generatedAt": "2"})
    assert payload_key(a) != payload_key({**a, "state": "db-locked"})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_tcp_mode_serves_the_same_protocol(server_env: ServerEnv) -> None:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "codeburn.server", "--tcp", f"127.0.0.1:{port}"],
        env=server_env.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    client = LanguageClient()
    register_lsp_features(client)
    statuses: list[object] = []
    client.feature("codeburn/status")(lambda ls, params: statuses.append(params))
    try:
        for _ in range(400):  # until the server listens
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        result = await client.initialize_session(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        assert "codeburn.server.refresh" in result.capabilities.execute_command_provider.commands
        params = types.ExecuteCommandParams(command="codeburn.server.refresh", arguments=[])
        status = await asyncio.wait_for(client.workspace_execute_command_async(params), WAIT_S)
        assert status["schema"] == "codeburn.status/1"
        await client.shutdown_async(None)
        client.exit(None)
        assert process.wait(WAIT_S) == 0
        assert process.stdout is not None and process.stdout.read() == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        await client.stop()


def test_providers_setting_chooses_the_counted_tools() -> None:
    settings, warnings = parse_settings({"providers": ["cursor", "claude-code", "cursor"]})
    assert warnings == []
    assert settings.providers == ("cursor", "claude-code")
    assert settings.counted() == frozenset({"cursor", "claude-code"})
    assert parse_settings({"providers": []})[0].counted() is None  # every tool found
    assert parse_settings({})[0].counted() is None
