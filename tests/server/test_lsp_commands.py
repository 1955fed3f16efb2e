"""`workspace/executeCommand` end to end: every command with `arguments: []` and with arguments,
imports and removals that move the figures, and errors a person can act on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from codeburn.cache.imports.store import STORE_FILE
from codeburn.providers.localtime import today
from tests.csv_fixtures import ExportRow, write_export
from tests.server.conftest import (
    WAIT_S,
    ServerEnv,
    Session,
    lsp_session,
    recent,
    same_figures,
    without,
    write_profile,
)

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


IMPORT = "codeburn.server.importCursorCsv"
REMOVE = "codeburn.server.removeCursorImport"
SYNC = "codeburn.server.syncCursor"
REFRESH = "codeburn.server.refresh"
REPORT = "codeburn.server.report"
SET_SYNC = "codeburn.server.setCursorSync"
INVALID_PARAMS = -32602
REQUEST_FAILED = -32803


async def failure(session: Session, name: str, *arguments: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await session.command(name, *arguments)
    error = caught.value
    assert "\n" not in error.message and "Traceback" not in error.message
    assert error.data is None
    return error


def export_today(path: Path) -> Path:
    """One billed and one included row, both minutes ago (today, before the file's mtime)."""
    rows = [
        ExportRow(recent(20), "gpt-5", input=1200, cache_read=3000, output=400, cost="$1.25"),
        ExportRow(recent(10), "auto", input=900, cache_read=8000, output=300),
    ]
    return write_export(path, rows)


async def until(condition: Callable[[], bool]) -> None:
    """Poll a file-system effect of a notification (which has no reply to wait for)."""

    async def check() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(check(), WAIT_S)


async def cli_status(env: ServerEnv) -> dict[str, Any]:
    return without(await env.cli("status", "--no-sync"), "generatedAt")


async def test_every_command_accepts_empty_arguments(server_env: ServerEnv) -> None:
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait()
        assert set(s.capabilities.execute_command_provider.commands) == {
            IMPORT,
            REMOVE,
            SYNC,
            REFRESH,
            REPORT,
            SET_SYNC,
        }
        error = await failure(s, IMPORT)
        assert error.code == INVALID_PARAMS and '"path"' in error.message
        assert await s.command(REMOVE) == {"removed": False, "ranges": []}
        error = await failure(s, SYNC)  # forced: the off switch does not stop it, no login does
        assert error.code == REQUEST_FAILED
        assert error.message.startswith("Cursor is not signed in on this machine")
        refreshed = await s.command(REFRESH)
        assert without(refreshed, "generatedAt") == without(first, "generatedAt")
        report = await s.command(REPORT)
        assert report["schema"] == "codeburn.report/1" and report["period"]["label"] == "month"
        same_figures(
            without(await server_env.cli("report", "--no-sync"), "cursorSync"),
            without(report, "cursorSync"),
        )
        assert await s.command(SET_SYNC) == {"enabled": True, "disabledByEnv": True}
        # no `arguments` at all is the same as []
        no_args = types.ExecuteCommandParams(command=REMOVE)
        assert await s.client.workspace_execute_command_async(no_args) == {
            "removed": False,
            "ranges": [],
        }


@pytest.mark.clock
async def test_import_then_remove_moves_the_figures(server_env: ServerEnv) -> None:
    csv = export_today(server_env.root / "usage-events.csv")
    async with lsp_session(server_env) as s:
        before = await s.statuses.wait()
        mark = s.statuses.mark()
        summary = await s.command(IMPORT, {"path": str(csv)})
        assert summary["changed"] is True
        assert (summary["added"], summary["skipped"], summary["total"]) == (2, 0, 2)
        assert summary["coverage"]["inferred"] is True
        assert summary["replaced"] == ["cursor", "cursor-agent"]
        assert summary["tokens"] == 1200 + 3000 + 400 + 900 + 8000 + 300
        imported = await s.statuses.wait(after=mark)
        assert imported["today"]["calls"] == 2  # the export stands for the local estimates
        assert imported["today"]["cost"] != before["today"]["cost"]
        same_figures(await cli_status(server_env), without(imported, "generatedAt", "env"))

        again = await s.command(IMPORT, [{"path": str(csv)}][0])
        assert (again["changed"], again["added"], again["skipped"]) == (False, 0, 2)

        mark = s.statuses.mark()
        removed = await s.command(REMOVE, {})
        assert removed["removed"] is True
        assert [r["source"] for r in removed["ranges"]] == ["import"]
        restored = await s.statuses.wait(after=mark)
        assert restored["today"] == before["today"]
        titles = [r[0].title for r in s.progress_titles().values()]
        assert "Importing usage-events.csv" in titles
        assert "Removing imported Cursor usage" in titles


async def test_import_with_a_range_and_a_file_uri(server_env: ServerEnv) -> None:
    csv = export_today(server_env.root / "export.csv")
    day = today().isoformat()
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        summary = await s.command(IMPORT, {"path": csv.as_uri(), "from": day, "to": day})
        assert summary["added"] == 2 and summary["coverage"]["inferred"] is False


async def test_import_errors_are_actionable(server_env: ServerEnv) -> None:
    missing = server_env.root / "nowhere.csv"
    not_export = server_env.root / "notes.csv"
    not_export.write_text("name,amount\nlunch,12\n")
    outside = export_today(server_env.root / "outside.csv")
    yesterday = (today() - timedelta(days=1)).isoformat()
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        error = await failure(s, IMPORT, {"path": str(missing)})
        assert error.code == REQUEST_FAILED and str(missing) in error.message
        error = await failure(s, IMPORT, {"path": str(not_export)})
        assert error.code == REQUEST_FAILED and error.message
        error = await failure(s, IMPORT, {"path": str(outside), "to": yesterday})
        assert error.code == REQUEST_FAILED
        error = await failure(s, IMPORT, {"path": 42})
        assert error.code == INVALID_PARAMS
        error = await failure(s, IMPORT, "a.csv", "b.csv")
        assert error.code == INVALID_PARAMS
        assert s.client.messages == []  # the command's caller shows the error, not the server
    assert not (server_env.cache / "imports" / "cursor-usage.v3.json").exists()


@pytest.mark.clock
async def test_report_arguments(server_env: ServerEnv) -> None:
    day = today().isoformat()
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        report = await s.command(REPORT, {"period": "today"})
        assert report["period"]["label"] == "today"
        same_figures(
            without(await server_env.cli("report", "--period", "today", "--no-sync"), "cursorSync"),
            without(report, "cursorSync"),
        )
        custom = await s.command(REPORT, {"from": day, "to": day})
        assert custom["period"] == {**report["period"], "label": "custom"}
        assert custom["totals"] == report["totals"]
        agent = await s.command(REPORT, {"period": "week", "provider": "cursor-agent"})
        assert agent["totals"]["calls"] == 0
        error = await failure(s, REPORT, {"period": "decade"})
        assert error.code == INVALID_PARAMS and "unknown period" in error.message
        error = await failure(s, REPORT, {"from": "30/11/2026"})
        assert error.code == INVALID_PARAMS and '"from"' in error.message


async def test_days_outside_2000_to_2100_are_one_line_errors(server_env: ServerEnv) -> None:
    """`9999-12-31` overflowed a local day's end: "failed unexpectedly" (issue 20, items 6, 16)."""
    csv = export_today(server_env.root / "usage.csv")
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        error = await failure(s, REPORT, {"to": "9999-12-31"})
        assert error.code == INVALID_PARAMS
        assert '"to" 9999-12-31 is outside 2000–2100' in error.message
        error = await failure(s, REPORT, {"from": "1970-01-01"})
        assert error.code == INVALID_PARAMS and "outside 2000–2100" in error.message
        error = await failure(s, IMPORT, {"path": str(csv), "to": "9999-12-31"})
        assert error.code == REQUEST_FAILED and "from 2000 to 2100" in error.message
        error = await failure(s, IMPORT, {"path": str(csv), "from": "000000000000"})
        assert error.code == REQUEST_FAILED and "from 2000 to 2100" in error.message
    assert not (server_env.cache / "imports" / STORE_FILE).exists()


async def test_set_cursor_sync_writes_the_config(server_env: ServerEnv) -> None:
    config = server_env.config / "config.json"
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        assert await s.command(SET_SYNC, {"enabled": False}) == {
            "enabled": False,
            "disabledByEnv": True,
        }
        assert json.loads(config.read_text())["cursorSync"] is False
        assert await s.command(SET_SYNC) == {"enabled": False, "disabledByEnv": True}
        error = await failure(s, SET_SYNC, {"enabled": "yes"})
        assert error.code == INVALID_PARAMS


async def test_sync_setting_is_written_only_when_the_user_changes_it(
    server_env: ServerEnv,
) -> None:
    config = server_env.config / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"cursorSync": False}))  # chosen from the CLI
    async with lsp_session(server_env, settings={"cursorSync": {"enabled": True}}) as s:
        await s.command(REFRESH)
        assert json.loads(config.read_text()) == {"cursorSync": False}  # start-up keeps it
        for n, enabled in enumerate((False, True), 1):
            s.client.set_configuration({"cursorSync": {"enabled": enabled}}, section="codeburn")
            s.client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=None)
            )
            await until(lambda n=n: sum("codeburn.cursorSync.enabled" in m for m in s.logs()) == n)
        assert await s.command(SET_SYNC) == {"enabled": True, "disabledByEnv": True}
        assert json.loads(config.read_text()) == {"cursorSync": True}


async def test_database_path_setting_switches_databases(server_env: ServerEnv) -> None:
    other = write_profile(server_env.root / "other", conversations=5)
    async with lsp_session(server_env, settings={"cursor": {"databasePath": str(other)}}) as s:
        first = await s.statuses.wait()
        assert first["today"]["calls"] == 10
        mark = s.statuses.mark()
        s.client.set_configuration({"cursor": {"databasePath": ""}}, section="codeburn")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=None)
        )
        switched = await s.statuses.wait(after=mark)
        assert switched["today"]["calls"] == 4  # CODEBURN_CURSOR_DB's profile
        mark = s.statuses.mark()
        missing = server_env.root / "missing" / "state.vscdb"
        s.client.set_configuration({"cursor": {"databasePath": str(missing)}}, section="codeburn")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=None)
        )
        gone = await s.statuses.wait(after=mark)
        assert gone["state"] == "no-data" and str(missing) in gone["message"]
        assert gone["today"]["calls"] == 0
