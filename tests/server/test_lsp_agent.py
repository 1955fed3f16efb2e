"""The language server follows transcripts and CLI sessions under the user's ~/.cursor."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.localtime import now_ms
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    TurnSpec,
    assistant,
    turn_ended,
    user,
)
from tests.server.conftest import ServerEnv, lsp_session

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


REFRESH = "codeburn.server.refresh"


def cursor_home(env: ServerEnv) -> AgentHomeWriter:
    return AgentHomeWriter(Path(env.env["HOME"]) / ".cursor")


async def test_a_new_transcript_and_an_unreadable_session_reach_the_status(
    server_env: ServerEnv,
) -> None:
    async with lsp_session(server_env) as s:
        first = await s.statuses.wait()
        assert first["unreadable"] == {"count": 0, "reasons": {}}
        home = cursor_home(server_env)
        # Written now, no header time: dated today by the file's first-seen mtime.
        home.transcript("t-new", [user("q" * 40), assistant("a" * 80), turn_ended()])
        home.cli_session("s-enc", [TurnSpec("x", ["y"])], created_ms=now_ms(), encrypt_blobs=True)
        refreshed = await s.command(REFRESH)
        assert refreshed["today"]["calls"] == first["today"]["calls"] + 1
        # 10 input + 20 output tokens of cursor-auto ($3 / $15 per million).
        added = refreshed["today"]["cost"] - first["today"]["cost"]
        assert abs(added - (10 * 3e-6 + 20 * 15e-6)) < 1e-12
        assert refreshed["unreadable"] == {"count": 1, "reasons": {"encrypted": 1}}
        assert any("could not be read (1 encrypted)" in w for w in refreshed["warnings"])
