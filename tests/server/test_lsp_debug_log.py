"""The language server with `CODEBURN_LOG=debug` never logs the session token: not on stderr,
not in `window/logMessage`, even when cursor.com echoes the cookie back."""

from __future__ import annotations

import json
import re

import pytest

from codeburn.providers.localtime import now_ms
from tests.csv_fixtures import ExportRow
from tests.server.conftest import ServerEnv, recent
from tests.server.test_lsp_wire import GOODBYE, HANDSHAKE, raw_server, request
from tests.sync.fake_cursor import TEST_USER_ID, FakeCursor, cookie_for, make_jwt, write_global_db

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


SYNC = {"command": "codeburn.server.syncCursor", "arguments": []}


async def test_debug_log_of_a_sync_holds_no_token(server_env: ServerEnv) -> None:
    token = make_jwt(exp=now_ms() // 1000 + 7 * 24 * 3600)
    write_global_db(server_env.db, token)
    server_env.env.pop("CODEBURN_CURSOR_SYNC")
    server_env.env["CODEBURN_LOG"] = "debug"
    with FakeCursor(expected_cookie=cookie_for(token), echo_cookie=True) as fake:
        fake.rows = [ExportRow(recent(30), "gpt-5", input=10, output=3)]
        server_env.env["CODEBURN_CURSOR_BASE_URL"] = fake.url
        async with raw_server(server_env) as server:
            await server.send(HANDSHAKE)
            await server.reply(1)
            await server.send(request(2, "workspace/executeCommand", SYNC))
            summary = (await server.reply(2))["result"]
            assert summary["total"] == 1  # the automatic pass may have added it first
            fake.mode = "401"
            # "Sync now" joins a sync already asking cursor.com (one the timer started before
            # the login expired): pressed again, it makes its own request and says why it failed.
            replies = []
            for attempt in range(3):
                await server.send(request(3 + attempt, "workspace/executeCommand", SYNC))
                replies.append(await server.reply(3 + attempt))
                if "error" in replies[-1]:
                    break
            assert "sign in again" in replies[-1]["error"]["message"], replies
            await server.send(GOODBYE)
            code, stderr = await server.finish()
    assert code == 0
    assert fake.export_requests()
    logged = json.dumps([m for m in server.seen if m.get("method") == "window/logMessage"])
    assert re.search(r"cursor.com sync \(\w+\): 1 new", logged)  # debug logging was on, and seen
    for secret in (token, token.split(".")[1], TEST_USER_ID, "WorkosCursorSessionToken"):
        assert secret not in stderr and secret not in logged
