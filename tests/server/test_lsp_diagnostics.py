"""Facts of the local read that are not warnings (issue 18, item 6): in the status object's
`diagnostics` and the server's log, never among the `warnings` the editor shows."""

from __future__ import annotations

import json

import pytest

from tests.cursor_fixtures import NOW_MS, ago, profile
from tests.server.conftest import ServerEnv
from tests.server.test_lsp_wire import GOODBYE, HANDSHAKE, raw_server, request

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

REFRESH = {"command": "codeburn.server.refresh", "arguments": []}
METER = "skipped 1 Cursor context meter above 10 M tokens (not a context size)"


async def test_diagnostics_go_to_the_status_object_and_the_log_not_the_warnings(
    server_env: ServerEnv,
) -> None:
    with profile(server_env.root / "meter") as p:
        p.composer("c1", created_at_ms=NOW_MS - 60_000, context_tokens_used=10**30)
        p.bubble("c1", "u", role="user", text="u" * 400, created_at=ago(1))
    server_env.env["CODEBURN_CURSOR_DB"] = str(p.db_path)
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        await server.reply(1)
        await server.send(request(2, "workspace/executeCommand", REFRESH))
        status = (await server.reply(2))["result"]
        await server.send(GOODBYE)
        code, _ = await server.finish()
    assert code == 0
    assert status["state"] == "ok" and status["today"]["calls"] == 1
    assert status["diagnostics"] == [METER] and status["warnings"] == []
    logged = [m["params"]["message"] for m in server.seen if m.get("method") == "window/logMessage"]
    assert sum(f"local read: {METER}" in line for line in logged) == 1, json.dumps(logged)
