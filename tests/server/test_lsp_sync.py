"""cursor.com through the language server, against a loopback fake: the automatic pass, the forced
sync command, `$/progress` while it is slow, one request for concurrent commands, the quota."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.csv_fixtures import ExportRow
from tests.server.conftest import (
    WAIT_S,
    ServerEnv,
    Session,
    lsp_session,
    recent,
    same_figures,
    without,
)
from tests.sync.fake_cursor import FakeCursor

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


SYNC = "codeburn.server.syncCursor"
REPORT = "codeburn.server.report"
SYNC_TITLE = "Syncing Cursor usage from cursor.com"


async def until(condition: Callable[[], bool]) -> None:
    async def check() -> None:
        while not condition():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(check(), WAIT_S)


def sync_sessions(session: Session) -> list[list[Any]]:
    return [r for r in session.progress_titles().values() if r[0].title == SYNC_TITLE]


@pytest.mark.clock
async def test_automatic_sync_quota_and_forced_sync(signed_in: ServerEnv, fake: FakeCursor) -> None:
    fake.rows.append(
        ExportRow(recent(15), "gpt-5", input=5000, cache_read=20_000, output=900, cost="$2.50")
    )
    async with lsp_session(signed_in) as s:
        synced = await s.statuses.wait(
            lambda st: (st["cursorSync"] or {}).get("state") == "ok" and st["quota"] is not None
        )
        assert synced["env"] == {"cursorSyncDisabledByEnv": False}
        assert synced["quota"]["available"] is True
        assert len(fake.summary_requests()) == 1  # at most every 5 minutes
        expected = await signed_in.cli("status", "--no-sync")
        # the CLI reads no quota without --quota: its alerts have none of the quota's conditions
        same_figures(
            without(expected, "generatedAt", "quota", "alerts"),
            without(synced, "generatedAt", "env", "quota", "alerts"),
        )
        assert synced["cycle"]["source"] == "cursor"  # the summary's, read from its cache
        assert [a["id"].split(":")[0] for a in synced["alerts"]] == ["on-demand"]
        assert synced["today"]["calls"] >= 1 and synced["today"]["cost"] >= 2.5

        summary = await s.command(SYNC)
        assert (summary["added"], summary["skipped"], summary["empty"]) == (0, 1, False)
        assert set(summary["window"]) == {"start", "end"}
        assert len(fake.export_requests()) == 2
        assert len(sync_sessions(s)) == 1
    blob = json.dumps(s.statuses.items) + "\n".join(s.logs())
    assert fake.expected_cookie is not None
    assert fake.expected_cookie.split("%3A%3A")[1] not in blob  # the token never leaks


async def test_slow_sync_reports_progress_joins_and_keeps_serving(
    signed_in: ServerEnv, fake: FakeCursor
) -> None:
    config = signed_in.config / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"cursorSync": False}))  # no automatic pass: only ours
    fake.mode = "stall"
    async with lsp_session(signed_in) as s:
        await s.statuses.wait()
        first = asyncio.ensure_future(s.command(SYNC))
        await until(lambda: len(sync_sessions(s)) == 1)
        report = await s.command(REPORT)  # the message loop is not blocked by the sync
        assert report["schema"] == "codeburn.report/1"
        second = asyncio.ensure_future(s.command(SYNC))
        await until(lambda: len(fake.export_requests()) == 1)
        await s.command(REPORT, {"period": "today"})  # the second command is in by now
        assert not first.done() and not second.done()
        fake._release.set()  # the stalled response hangs up
        errors = await asyncio.gather(first, second, return_exceptions=True)
        assert all(isinstance(e, JsonRpcException) for e in errors), errors
        assert errors[0].message == errors[1].message
        assert "try again" in errors[0].message and "\n" not in errors[0].message
        assert len(fake.export_requests()) == 1  # the second command joined the first
        (session,) = sync_sessions(s)
        assert session[-1].kind == "end"
        assert s.client.messages == []
