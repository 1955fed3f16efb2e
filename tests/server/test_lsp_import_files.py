"""The import command over stdio: files that are not exports, and team exports (whose rows)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.csv_fixtures import ExportRow, write_export
from tests.server.conftest import ServerEnv, lsp_session, recent

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


IMPORT = "codeburn.server.importCursorCsv"
REQUEST_FAILED = -32803


def team_export(path: Path) -> Path:
    rows = [
        ExportRow(recent(30), "gpt-5", input=1000, output=100, user="ana@example.com"),
        ExportRow(recent(20), "gpt-5", input=2000, output=200, user="ben@example.com"),
        ExportRow(recent(10), "auto", input=3000, output=300, user="ana@example.com"),
    ]
    return write_export(path, rows, "team")


def sign_in_as(db: Path, email: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO ItemTable (key, value) VALUES ('cursorAuth/cachedEmail', ?)",
            (email,),
        )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no fifos on this platform")
async def test_dev_zero_and_a_fifo_are_refused_and_the_server_keeps_answering(
    server_env: ServerEnv,
) -> None:
    fifo = server_env.root / "export.csv"
    os.mkfifo(fifo)  # nobody ever writes to it: reading it would block forever
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        for path in ("/dev/zero", str(fifo), str(server_env.root)):
            with pytest.raises(JsonRpcException) as caught:
                await s.command(IMPORT, {"path": path})
            assert caught.value.code == REQUEST_FAILED
            assert "not a regular file" in caught.value.message
        ok = write_export(server_env.root / "real.csv", [ExportRow(recent(5), "gpt-5", input=10)])
        summary = await s.command(IMPORT, {"path": str(ok)})
        assert summary["added"] == 1


async def test_team_export_asks_whose_rows_then_imports_only_those(server_env: ServerEnv) -> None:
    csv = team_export(server_env.root / "team.csv")
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        ask = await s.command(IMPORT, {"path": str(csv)})
        assert ask == {"changed": False, "chooseUser": ["ana@example.com", "ben@example.com"]}
        assert not (server_env.cache / "imports" / "cursor-usage.v3.json").exists()
        summary = await s.command(IMPORT, {"path": str(csv), "user": "ben@example.com"})
        assert (summary["added"], summary["tokens"]) == (1, 2200)
    store = (server_env.cache / "imports" / "cursor-usage.v3.json").read_text()
    assert "example.com" not in store


async def test_team_export_picks_the_signed_in_users_rows(server_env: ServerEnv) -> None:
    sign_in_as(server_env.db, "Ana@Example.com")
    csv = team_export(server_env.root / "team.csv")
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        summary = await s.command(IMPORT, {"path": str(csv)})
        assert (summary["added"], summary["tokens"]) == (2, 1100 + 3300)
        logged = "\n".join(s.logs())
    assert "example.com" not in logged.lower()


async def test_control_characters_in_a_path_reach_the_editor_escaped(
    server_env: ServerEnv,
) -> None:
    """`\x1b]0;pwned\x07` in a path reached the error raw (issue 20, item 15)."""
    evil = server_env.root / "\x1b]0;pwned\x07"
    evil.mkdir()
    not_export = evil / "notes.csv"
    not_export.write_text("name,amount\nlunch,12\n")
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        for path in (evil / "missing.csv", evil):
            with pytest.raises(JsonRpcException) as caught:
                await s.command(IMPORT, {"path": str(path)})
            message = caught.value.message
            assert caught.value.code == REQUEST_FAILED
            assert "\x1b" not in message and "\x07" not in message
            assert "\\x1b]0;pwned\\x07" in message
