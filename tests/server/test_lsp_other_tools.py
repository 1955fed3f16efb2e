"""The language server counts Claude Code's and Codex's logs: an appended line shows at the next
refresh, and `codeburn.providers` chooses what the status counts (docs/other-tools.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.localtime import iso_utc, now_ms
from tests.agent_fixtures import SESSION, assistant, jsonl, usage, write
from tests.server.conftest import ServerEnv, lsp_session

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


REFRESH = "codeburn.server.refresh"
FOLDER = "/srv/lsp-other-tools/app"


def _session(env: ServerEnv) -> Path:
    return Path(env.env["CLAUDE_CONFIG_DIR"]) / "projects" / "-srv-app" / f"{SESSION}.jsonl"


def _line(n: int) -> bytes:
    at = iso_utc(now_ms() - 30_000)
    return jsonl([assistant(f"m{n}", f"r{n}", at, usage(inp=10, out=100, read=0), cwd=FOLDER)])


def _claude(status: dict) -> dict | None:
    return next((p for p in status["today"]["providers"] if p["id"] == "claude-code"), None)


async def test_an_appended_line_reaches_the_status_within_one_refresh(
    server_env: ServerEnv,
) -> None:
    path = write(_session(server_env), [])
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait()
        assert _claude(first) is None
        for n in (1, 2):
            with path.open("ab") as fh:
                fh.write(_line(n))
            refreshed = await s.command(REFRESH)
            claude = _claude(refreshed)
            assert claude is not None and claude["calls"] == n
            assert abs(claude["cost"] - n * (10 * 3 + 100 * 15) / 1e6) < 1e-12
            assert refreshed["today"]["calls"] == first["today"]["calls"] + n


async def test_the_providers_setting_leaves_other_tools_out_of_the_status(
    server_env: ServerEnv,
) -> None:
    path = write(_session(server_env), [])
    with path.open("ab") as fh:
        fh.write(_line(1))
    async with lsp_session(server_env, settings={"providers": ["cursor"]}) as s:
        status = await s.statuses.wait()
        assert _claude(status) is None
        assert {p["id"] for p in status["today"]["providers"]} <= {"cursor"}


async def test_a_tool_found_for_the_first_time_is_announced_once(
    server_env: ServerEnv,
) -> None:
    path = write(_session(server_env), [])
    with path.open("ab") as fh:
        fh.write(_line(1))
    for run in range(2):  # the second editor session: already announced
        async with lsp_session(server_env) as s:
            await s.statuses.wait()
            with path.open("ab") as fh:
                fh.write(_line(len(s.client.messages) + 10))
            await s.command(REFRESH)
            await s.command(REFRESH)
            shown = [m.message for m in s.client.messages if "Claude Code" in m.message]
        if run == 0:
            assert len(shown) == 1 and "codeburn.providers" in shown[0], shown
        else:
            assert shown == []
