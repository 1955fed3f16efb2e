"""Alerts end to end: two language servers sharing a cache folder, a loopback cursor.com serving
the usage summary; each condition is shown once per cycle, by whichever window sees it first."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
from lsprotocol import types

from tests.server.conftest import WAIT_S, ServerEnv, lsp_session, write_profile
from tests.sync.fake_cursor import FakeCursor

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


REFRESH = "codeburn.server.refresh"


@pytest.fixture
def signed_in(signed_in: ServerEnv, fake: FakeCursor) -> ServerEnv:
    """Signed in (conftest); Cursor models at 85 %, on demand billing 42 cents of a $50 limit."""
    fake.summary["individualUsage"]["plan"]["autoPercentUsed"] = 85
    fake.summary["individualUsage"]["onDemand"]["used"] = 42
    return signed_in


def _ids(status: dict[str, Any]) -> set[str]:
    return {a["id"].split(":")[0] + ":" + a["id"].split(":")[1] for a in status["alerts"]}


async def _until_messages(client: Any, count: int) -> None:
    async def check() -> None:
        while len(client.messages) < count:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(check(), WAIT_S)


@pytest.mark.clock
async def test_alerts_show_once_per_condition_across_two_servers(signed_in: ServerEnv) -> None:
    expected = {"pool-cursor-models:80", "on-demand:started"}
    async with lsp_session(signed_in) as first:
        status = await first.statuses.wait(lambda st: expected <= _ids(st))
        assert status["cycle"]["source"] == "cursor"  # the summary's cycle, carried on
        report = await first.command("codeburn.server.report", {"period": "cycle"})
        assert report["period"]["label"] == "cycle"
        assert report["period"]["from"] == status["cycle"]["start"]
        levels = {a["id"].split(":")[0]: a["level"] for a in status["alerts"]}
        assert levels == {"pool-cursor-models": "warning", "on-demand": "warning"}
        await _until_messages(first.client, 1)
        (message,) = first.client.messages
        assert message.type == types.MessageType.Warning  # approaching: no error
        assert message.message == (
            "CodeBurn: Cursor models has used 85% of its included usage; "
            "Cursor is now billing on-demand: $0.42 so far this cycle"
        )
        async with lsp_session(signed_in) as second:
            again = await second.statuses.wait(lambda st: expected <= _ids(st))
            assert {a["id"] for a in again["alerts"]} == {a["id"] for a in status["alerts"]}
            await second.command(REFRESH)
            await first.command(REFRESH)
            # the conditions still hold, but every window has seen them
            assert second.client.messages == []
        assert len(first.client.messages) == 1


async def test_alerts_off_lists_them_but_shows_nothing(signed_in: ServerEnv) -> None:
    async with lsp_session(signed_in, settings={"alerts": {"enabled": False}}) as s:
        await s.statuses.wait(lambda st: "on-demand:started" in _ids(st))
        await s.command(REFRESH)
        assert s.client.messages == []


async def test_no_alert_from_the_cached_figures_at_start_up(server_env: ServerEnv) -> None:
    """The cached figures a starting server shows first are over the budget, the full read that
    follows is not: no message (partial or stale totals never alert)."""
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait(lambda st: st["today"]["calls"] > 0)
    budget = first["today"]["cost"] / 2
    # Cursor's data is now smaller than what the caches hold (a new profile at the same place)
    shutil.rmtree(server_env.root / "Cursor")
    write_profile(server_env.root, conversations=0)
    settings = {"budget": {"daily": budget}}
    async with lsp_session(server_env, settings=settings, init_options=settings) as s:
        cached = await s.statuses.wait()
        assert cached["budget"]["level"] == "over"  # the caches' figures, shown at once
        assert [a["id"].split(":")[:2] for a in cached["alerts"]] == [
            ["budget-daily", "warning"],
            ["budget-daily", "over"],
        ]
        fresh = await s.statuses.wait(lambda st: st["today"]["calls"] == 0)
        assert fresh["alerts"] == []
        await s.command(REFRESH)
        assert s.client.messages == []


async def test_a_full_read_equal_to_the_cached_figures_still_alerts(server_env: ServerEnv) -> None:
    """A restart whose full read finds what the caches showed (the usual case): that read's
    budget crossing is shown once, though its payload equals the one already sent."""
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait(lambda st: st["today"]["calls"] > 0)
    settings = {"budget": {"daily": first["today"]["cost"] / 2}}
    async with lsp_session(server_env, settings=settings, init_options=settings) as s:
        await s.statuses.wait(lambda st: st["budget"]["level"] == "over")
        await _until_messages(s.client, 1)
        await s.command(REFRESH)
        assert len(s.client.messages) == 1
        assert "daily budget" in s.client.messages[0].message
        assert s.client.messages[0].type == types.MessageType.Error
