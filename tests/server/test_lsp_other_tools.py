"""The language server counts Claude Code's and Codex's logs: an appended line shows at the next
refresh, and `codeburn.providers` chooses what the status counts (docs/other-tools.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from codeburn.providers.agents.watch import LISTING_NS
from codeburn.providers.localtime import iso_utc, now_ms
from tests.agent_fixtures import SESSION, assistant, jsonl, usage, write
from tests.server.conftest import TICK_S, ServerEnv, lsp_session

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


async def _watch_registered(s: Any) -> list[types.FileSystemWatcher]:
    """The file watch the server asked for (it asks beside its first status)."""
    for _ in range(100):
        for params in s.registrations:
            for r in params.registrations:
                if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                    options = r.register_options
                    watchers = (
                        options["watchers"] if isinstance(options, dict) else options.watchers
                    )
                    return list(watchers)
        await asyncio.sleep(0.05)
    raise AssertionError("no file watch registered")


async def test_the_editors_file_watch_brings_an_append_at_the_next_tick(
    server_env: ServerEnv,
) -> None:
    """The server asks the editor to watch the tools' log folders. Until the editor reports a
    change, every read lists every log (a watch that never delivers costs nothing); from its
    first report on, a reported append shows at the next timer tick without a listing of
    every log (docs/lsp.md#file-watch)."""
    path = write(_session(server_env), [])
    # (as vscode-languageclient declares it; the captured VS Code capabilities predate it)
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.workspace is not None
    capabilities.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True, relative_pattern_support=True
    )
    settings = {"refreshIntervalSeconds": TICK_S}
    # Well before the listing of every log a watching server makes each minute (`LISTING_NS`).
    soon = LISTING_NS / 3e9

    def calls(n: int) -> Callable[[dict[str, Any]], bool]:
        return lambda st: (_claude(st) or {}).get("calls") == n

    def report() -> None:
        event = types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)
        s.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[event])
        )

    async with lsp_session(server_env, settings=settings, capabilities=capabilities) as s:
        await s.statuses.wait()
        watchers = await _watch_registered(s)
        claude = Path(server_env.env["CLAUDE_CONFIG_DIR"])
        codex = Path(server_env.env["CODEX_HOME"])
        bases = [
            w["globPattern"]["baseUri"] if isinstance(w, dict) else w.glob_pattern.base_uri
            for w in watchers
        ]
        assert bases == [
            (claude / "projects").as_uri(),
            (codex / "sessions").as_uri(),
            (codex / "archived_sessions").as_uri(),
        ]
        with path.open("ab") as fh:  # no report yet: found by the listing of the next tick
            fh.write(_line(1))
        await asyncio.wait_for(s.statuses.wait(calls(1)), soon)
        report()  # the editor's first report: from now on, reported logs only
        await s.command(REFRESH)  # (a listing of every log; the next one a minute later)
        mark = s.statuses.mark()
        with path.open("ab") as fh:
            fh.write(_line(2))
        report()
        await asyncio.wait_for(s.statuses.wait(calls(2), after=mark), soon)
