"""`codeburn status` into a pipe: the lines a terminal gets, unstyled, without importing Rich."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from codeburn.providers.localtime import today
from codeburn.server.cli.lines import status_lines, write_status
from codeburn.server.cli.main import main
from codeburn.server.cli.text import print_status
from tests.csv_fixtures import ExportRow, iso_local, write_export
from tests.usage_fixtures import isolated_env

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def _status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> dict[str, Any]:
    isolated_env(tmp_path, monkeypatch)
    day = today()
    rows = [ExportRow(iso_local(day, 0, 10), "gpt-5", input=1000, output=100, cost=1.25)]
    assert main(["import", "cursor", str(write_export(tmp_path / "u.csv", rows))]) == 0
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    capsys.readouterr()
    assert main(["status", "--format", "json"]) == 0
    status: dict[str, Any] = json.loads(capsys.readouterr().out)
    return status


def _rich(status: dict[str, Any], *, verbose: bool) -> str:
    out = io.StringIO()
    options: dict[str, Any] = {"markup": False, "emoji": False, "highlight": False}
    print_status(
        status, Console(file=out, width=400, force_terminal=False, **options), verbose=verbose
    )
    return out.getvalue()


@pytest.mark.parametrize("verbose", [False, True])
def test_a_piped_status_writes_the_lines_rich_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, verbose: bool
) -> None:
    status = _status(tmp_path, monkeypatch, capsys)
    status["budget"] = {"daily": 1.0, "monthly": 50.0, "level": "over"}
    status["unreadable"] = {"count": 2, "reasons": {"encrypted": 2}}
    status["diagnostics"] = ["3 tool-call rows skipped"]
    status["cursorSync"] = {"state": "error", "error": "Cursor login expired \x1b[31m"}
    piped = io.StringIO()
    write_status(status, piped, verbose=verbose)
    lines = piped.getvalue().splitlines()
    assert piped.getvalue() == _rich(status, verbose=verbose)
    assert lines[0].endswith("today · $1.25 month") and "$1.25" in lines[0]
    assert "Over budget: $1.25 of $1.00 today, $1.25 of $50.00 this month" in lines
    assert "2 conversations in a newer Cursor format could not be read" in lines[-3]
    assert lines[-1] == "Cursor login expired \\x1b[31m"  # inert, as Rich's line
    assert ("· 3 tool-call rows skipped" in lines) is verbose
    styles = dict(status_lines(status))
    assert styles[lines[-1]] == "yellow" and styles[lines[-2]] == "red"


def _run_status(tmp_path: Path, **env: str) -> tuple[str, set[str]]:
    probe = (
        "import sys\n"
        "from codeburn.server.cli.main import main\n"
        "code = main(['status'])\n"
        "sys.stdout.flush()\n"
        "print(' '.join(sorted(sys.modules)), code, file=sys.stderr)\n"
    )
    environ = {
        **os.environ,
        "CODEBURN_CACHE_DIR": str(tmp_path / "cache"),
        "CODEBURN_CONFIG_DIR": str(tmp_path / "config"),
        "CODEBURN_CURSOR_DB": str(tmp_path / "no-cursor" / "state.vscdb"),
        "CODEBURN_CURSOR_SYNC": "0",
        **env,
    }
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        if name not in env:
            environ.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environ, check=True
    )
    *imported, code = done.stderr.split()
    assert code == "0"
    return done.stdout, set(imported)


def test_a_piped_status_does_not_import_rich(tmp_path: Path) -> None:
    out, imported = _run_status(tmp_path)
    assert out.startswith("CodeBurn: No Cursor data found at ") and "rich" not in imported
    # Nor, with the sync off, the sync; nor the Cursor 3.x conversation index's reader.
    assert not {"codeburn.sync.cursor_sync", "codeburn.providers.ide.layout3"} & imported
    assert "\n" not in out.rstrip("\n")  # one line however long the path: never wrapped
    # An environment that makes Rich style a pipe still gets Rich (which wraps at 80 then).
    forced, imported = _run_status(tmp_path, FORCE_COLOR="1")
    assert "rich" in imported and forced.startswith("CodeBurn: No Cursor data found at")
