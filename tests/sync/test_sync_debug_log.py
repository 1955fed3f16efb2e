"""`CODEBURN_LOG=debug` never prints the session token: a cursor.com that echoes the cookie in
`Set-Cookie`, `WWW-Authenticate` and its error bodies, at every log level, CLI and server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import timedelta

import pytest

from codeburn.providers.localtime import today
from tests.csv_fixtures import ExportRow, iso_local
from tests.sync.fake_cursor import TEST_USER_ID, SyncEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


LEVELS = ["", "debug", "DEBUG", "info", "warning"]


def _secrets(env: SyncEnv) -> list[str]:
    return [env.token, env.token.split(".")[1], TEST_USER_ID, "WorkosCursorSessionToken"]


def _cli(*argv: str, level: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        env={**os.environ, "CODEBURN_LOG": level},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("level", LEVELS, ids=lambda level: level or "unset")
def test_no_token_on_stderr_at_any_log_level(sync_env: SyncEnv, level: str) -> None:
    fake = sync_env.fake
    fake.echo_cookie = True
    fake.rows = [ExportRow(iso_local(today() - timedelta(days=1), 10), "gpt-5", input=9)]
    runs = [_cli("import", "cursor", "--sync", level=level)]
    assert runs[0].returncode == 0, runs[0].stderr
    fake.mode = "401"
    runs.append(_cli("import", "cursor", "--sync", level=level))
    assert runs[1].returncode == 1
    fake.mode, fake.summary_mode = "500", "403"
    runs.append(_cli("status", "--quota", level=level))
    assert len(fake.export_requests()) == 2 and len(fake.summary_requests()) == 1
    assert all("WorkosCursorSessionToken" in r.headers["cookie"] for r in fake.requests)
    if level.lower() == "debug":  # our own debug logging still shows
        assert re.search(r"cursor.com sync \(\w+\): 1 new", runs[0].stderr)
    for run in runs:
        for secret in _secrets(sync_env):
            assert secret not in run.stderr and secret not in run.stdout, (level, run.stderr)
