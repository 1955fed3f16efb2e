"""`codeburn/status` end to end: first figures, refinement, settings, database changes, locks."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from lsprotocol import types

from codeburn.cache.results_cache import results_object
from tests.server.conftest import (
    TICK_S,
    ServerEnv,
    add_conversation,
    lsp_session,
    same_figures,
    without,
    write_profile,
)

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


CLI_STATUS = ("status", "--no-sync")


async def cli_status(env: ServerEnv) -> dict[str, object]:
    return await env.cli(*CLI_STATUS, "--cursor-db", str(env.db))


@pytest.mark.clock
async def test_first_status_equals_the_cli_on_a_cold_cache(server_env: ServerEnv) -> None:
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait()
        assert first["schema"] == "codeburn.status/1"
        assert first["state"] == "ok" and first["today"]["calls"] > 0
        assert first["env"] == {"cursorSyncDisabledByEnv": True}
        assert first["budget"] == {"daily": None, "monthly": None, "level": "ok"}
        same_figures(
            without(await cli_status(server_env), "generatedAt"),
            without(first, "generatedAt", "env"),
        )
        registered = [r.method for p in s.registrations for r in p.registrations]
        assert registered == [types.WORKSPACE_DID_CHANGE_CONFIGURATION]
        assert s.client.messages == []


@pytest.mark.clock
async def test_warm_cache_first_status_equals_the_cli_and_is_not_resent(
    server_env: ServerEnv,
) -> None:
    expected = without(await cli_status(server_env), "generatedAt")  # warms every cache
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait()
        same_figures(expected, without(first, "generatedAt", "env"))
        refreshed = await s.command("codeburn.server.refresh")
        same_figures(without(first, "generatedAt"), without(refreshed, "generatedAt"))
        assert len(s.statuses.items) == 1  # identical payloads are not sent again


async def test_settings_change_sends_a_new_status(server_env: ServerEnv) -> None:
    async with lsp_session(server_env, settings={"budget": {"daily": 0}}) as s:
        first = await s.statuses.wait()
        assert first["budget"]["daily"] is None
        mark = s.statuses.mark()
        s.client.set_configuration({"budget": {"daily": 1000, "monthly": 0}}, section="codeburn")
        s.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=None)
        )
        changed = await s.statuses.wait(after=mark)
        assert changed["budget"] == {"daily": 1000.0, "monthly": None, "level": "ok"}
        assert without(changed, "generatedAt", "budget") == without(first, "generatedAt", "budget")


async def test_initialization_options_and_dotted_keys_are_settings(server_env: ServerEnv) -> None:
    async with lsp_session(
        server_env,
        init_options={"budget": {"monthly": 500, "daily": 1}},
        settings={"budget.daily": 7},
    ) as s:
        first = await s.statuses.wait()
        assert first["budget"]["monthly"] == 500.0  # from initializationOptions
        assert first["budget"]["daily"] == 7.0  # the pulled settings win


async def test_without_workspace_configuration_the_init_options_are_used(
    server_env: ServerEnv,
) -> None:
    capabilities = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True)
    )
    async with lsp_session(
        server_env, init_options={"budget": {"daily": 3}}, capabilities=capabilities
    ) as s:
        first = await s.statuses.wait()
        assert first["budget"]["daily"] == 3.0
        assert s.registrations == []  # the client cannot register dynamically


async def test_bad_settings_fall_back_to_defaults_with_a_warning(server_env: ServerEnv) -> None:
    bad = {
        "refreshIntervalSeconds": 0,  # below the least accepted, the test seam's too
        "budget": {"daily": "lots", "monthly": -5},
        "statusBar": {"show": "never"},
        "cursorSync": {"enabled": "yes"},
    }
    async with lsp_session(server_env, settings=bad) as s:
        first = await s.statuses.wait()
        assert first["state"] == "ok"
        assert first["budget"] == {"daily": None, "monthly": None, "level": "ok"}
        warnings = [m.message for m in s.client.log_messages if m.type == types.MessageType.Warning]
        for name in (
            "refreshIntervalSeconds",
            "budget.daily",
            "budget.monthly",
            "statusBar.show",
            "cursorSync.enabled",
        ):
            assert any(f"codeburn.{name}" in w for w in warnings), (name, warnings)
        assert not (server_env.config / "config.json").exists()


@pytest.mark.clock
async def test_database_growth_sends_new_figures(server_env: ServerEnv) -> None:
    async with lsp_session(server_env, settings={"refreshIntervalSeconds": TICK_S}) as s:
        await s.statuses.wait()
        first = await s.command("codeburn.server.refresh")  # start-up work is over now
        mark = s.statuses.mark()
        add_conversation(server_env.db, "later")  # only the timer can notice this
        grown = await s.statuses.wait(
            lambda st: st["today"]["calls"] > first["today"]["calls"], after=mark
        )
        assert grown["today"]["cost"] > first["today"]["cost"]
        same_figures(
            without(await cli_status(server_env), "generatedAt"),
            without(grown, "generatedAt", "env"),
        )


def _lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, timeout=0, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def _touch(db: Path) -> None:
    stat = os.stat(db)
    os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


async def test_locked_database_keeps_last_figures_and_recovers(server_env: ServerEnv) -> None:
    db = write_profile(server_env.root / "delete", journal_mode="delete")
    async with lsp_session(
        server_env, settings={"refreshIntervalSeconds": TICK_S, "cursor": {"databasePath": str(db)}}
    ) as s:
        good = await s.statuses.wait()
        assert good["state"] == "ok" and good["today"]["calls"] > 0
        holder = _lock(db)
        try:
            mark = s.statuses.mark()
            _touch(db)  # the fingerprint changes, so the next tick reads (and hits the lock)
            locked = await s.statuses.wait(after=mark)
        finally:
            holder.rollback()
            holder.close()
        assert locked["state"] == "db-locked"
        assert locked["message"] == "Cursor database busy, retrying"
        assert (locked["today"], locked["month"]) == (good["today"], good["month"])
        mark = s.statuses.mark()
        recovered = await s.statuses.wait(after=mark)  # retried on the next tick, no change needed
        assert recovered["state"] == "ok"
        assert recovered["today"] == good["today"]
        assert s.client.messages == []  # a background failure is not shown as a message


async def test_database_locked_from_the_start_says_so(server_env: ServerEnv) -> None:
    db = write_profile(server_env.root / "delete", journal_mode="delete")
    holder = _lock(db)
    try:
        async with lsp_session(server_env, settings={"cursor": {"databasePath": str(db)}}) as s:
            first = await s.statuses.wait()
            assert first["state"] == "db-locked"
            assert first["today"]["calls"] == 0 and first["message"]
            assert any("busy" in line for line in s.logs())
    finally:
        holder.rollback()
        holder.close()


@pytest.mark.clock
async def test_budget_crossing_is_shown_once(server_env: ServerEnv) -> None:
    async with lsp_session(server_env, settings={"budget": {"daily": 0.000001}}) as s:
        first = await s.statuses.wait()
        assert first["budget"]["level"] == "over"
        await s.command("codeburn.server.refresh")
        mark = s.statuses.mark()
        add_conversation(server_env.db, "more")
        await s.command("codeburn.server.refresh")
        await s.statuses.wait(after=mark)
        shown = [m for m in s.client.messages if "budget" in m.message]
        assert len(shown) == 1, shown
        assert shown[0].type == types.MessageType.Error
        assert "over your" in shown[0].message and "daily budget" in shown[0].message
    notices = json.loads((server_env.cache / "alert-notices.v1.json").read_text())
    # the warning and the over of the daily budget held at once: both remembered, one shown
    assert [key.split(":")[:2] for key in notices] == [
        ["budget-daily", "warning"],
        ["budget-daily", "over"],
    ]


async def test_codeburn_serve_is_the_same_server(server_env: ServerEnv) -> None:
    serve = (
        "-c",
        "import sys; from codeburn.server.cli.main import main; sys.exit(main())",
        "serve",
    )
    async with lsp_session(server_env, command=serve) as s:
        first = await s.statuses.wait()
        assert first["state"] == "ok" and first["today"]["calls"] > 0


async def test_the_results_cache_of_the_last_refresh_is_written_by_exit(
    server_env: ServerEnv,
) -> None:
    """The server writes its results cache behind its statuses; exit writes what is queued."""
    async with lsp_session(server_env) as s:
        await s.statuses.wait()
        add_conversation(server_env.db, "late-conversation")
        refreshed = await s.command("codeburn.server.refresh")
        assert refreshed["today"]["calls"] >= 1
    files = list(server_env.cache.glob("cursor-results.v*.json"))
    assert len(files) == 1
    keys = [row[0] for row in results_object(files[0].read_bytes())["calls"]]
    assert any("late-conversation" in str(key) for key in keys)
