"""Parseable but malformed language-server input (issue 20): each gets the JSON-RPC error its
kind calls for, with a message a person can act on and never a traceback, and the server keeps
serving. Raw bytes over stdio against a real `python -m codeburn.server`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.server.conftest import ServerEnv
from tests.server.test_lsp_wire import (
    GOODBYE,
    HANDSHAKE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RawServer,
    frame,
    raw_server,
    request,
)

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

IMPORT = "codeburn.server.importCursorCsv"
REPORT = "codeburn.server.report"
REFRESH = {"command": "codeburn.server.refresh", "arguments": []}


def body(text: str) -> bytes:
    data = text.encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def command(msg_id: int, name: str, options_json: str) -> bytes:
    """An executeCommand whose options object is given as JSON text (for 1e400 and NaN)."""
    return body(
        f'{{"jsonrpc": "2.0", "id": {msg_id}, "method": "workspace/executeCommand", '
        f'"params": {{"command": "{name}", "arguments": [{options_json}]}}}}'
    )


async def still_serving(server: RawServer, msg_id: int) -> None:
    await server.send(request(msg_id, "workspace/executeCommand", REFRESH))
    assert (await server.reply(msg_id))["result"]["schema"] == "codeburn.status/1"


def no_traceback(error: dict[str, Any]) -> None:
    text = json.dumps(error)
    assert "Traceback" not in text and "traceback" not in text and 'File "' not in text, text
    assert "unexpectedly" not in error["message"], error


async def finish_cleanly(server: RawServer) -> str:
    await server.send(GOODBYE)
    code, stderr = await server.finish()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    return stderr


@pytest.mark.parametrize(
    "params",
    [
        [1],
        "x",
        5,
        None,
        {"capabilities": 5},
        {"capabilities": {"general": {"positionEncodings": "utf-8"}}},
        {"capabilities": {"general": {"positionEncodings": 5}}},
        {"capabilities": {"general": 5}},
    ],
    ids=[
        "list",
        "string",
        "number",
        "null",
        "capabilities-5",
        "encodings-str",
        "encodings-5",
        "general-5",
    ],
)
async def test_initialize_with_params_not_of_its_type(server_env: ServerEnv, params: Any) -> None:
    async with raw_server(server_env) as server:
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        await server.send(frame(message))
        error = (await server.reply(1))["error"]
        assert error["code"] == INVALID_PARAMS and "initialize params" in error["message"]
        no_traceback(error)
        await server.send(HANDSHAKE)  # the client may try again
        assert "capabilities" in (await server.reply(1))["result"]
        await still_serving(server, 2)
        await finish_cleanly(server)


async def test_settings_no_float_can_hold_fall_back_to_defaults(server_env: ServerEnv) -> None:
    huge = "4" * 400
    init = body(
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, '
        f'"initializationOptions": {{"budget": {{"daily": {huge}, "monthly": -{huge}}}, '
        f'"refreshIntervalSeconds": {huge}}}}}}}'
    )
    async with raw_server(server_env) as server:
        await server.send(init + frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        await server.reply(1)
        await still_serving(server, 2)
        statuses = [m for m in server.seen if m.get("method") == "codeburn/status"]
        assert statuses and statuses[-1]["params"]["budget"]["daily"] is None
        logs = " ".join(
            m["params"]["message"] for m in server.seen if m.get("method") == "window/logMessage"
        )
        assert "setting codeburn.budget.daily" in logs and "ignored" in logs
        stderr = await finish_cleanly(server)
    assert "setting codeburn.refreshIntervalSeconds" in stderr


async def test_messages_that_are_not_requests_get_invalid_request(server_env: ServerEnv) -> None:
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        await server.reply(1)
        object_id = {"jsonrpc": "2.0", "id": {"a": 1}, "method": "workspace/executeCommand"}
        await server.send(frame({**object_id, "params": REFRESH}))
        error = (await server.reply(None))["error"]
        assert error["code"] == INVALID_REQUEST and "id" in error["message"]
        no_traceback(error)
        await server.send(frame({"jsonrpc": "2.0", "id": 9}))
        error = (await server.reply(9))["error"]
        assert error["code"] == INVALID_REQUEST and "method" in error["message"]
        await server.send(frame({"jsonrpc": "2.0", "id": 10, "method": 5}))
        error = (await server.reply(10))["error"]
        assert error["code"] == INVALID_REQUEST and "method" in error["message"]
        deep = 100_000
        await server.send(body("[" * deep + "]" * deep))
        error = (await server.reply(None))["error"]
        assert error["code"] == PARSE_ERROR and "nested" in error["message"]
        await server.send(body('{"a":' * deep + "1" + "}" * deep))
        assert await server.error_code(None) == PARSE_ERROR
        await still_serving(server, 11)
        await finish_cleanly(server)


@pytest.mark.parametrize(
    ("name", "options", "named"),
    [
        (IMPORT, '{"path": "/tmp/a\\u0000b.csv"}', '"path"'),
        (IMPORT, '{"path": "/tmp/\\ud800.csv"}', '"path"'),
        (IMPORT, '{"path": "file:///a%00b"}', '"path"'),
        (IMPORT, '{"path": "~nosuchuser/x.csv"}', "nosuchuser"),
        (IMPORT, '{"path": "/tmp/x.csv", "from": 1e400}', '"from"'),
        (IMPORT, '{"path": "/tmp/x.csv", "to": NaN}', '"to"'),
        (REPORT, '{"from": 1e400}', '"from"'),
        (REPORT, '{"from": "2026-11-01", "to": -1e400}', '"to"'),
        (REPORT, '{"to": NaN}', '"to"'),
    ],
    ids=[
        "nul",
        "surrogate",
        "uri-nul",
        "no-such-user",
        "from-inf",
        "to-nan",
        "report-inf",
        "report-minus-inf",
        "report-nan",
    ],
)
async def test_odd_command_arguments_get_invalid_params(
    server_env: ServerEnv, name: str, options: str, named: str
) -> None:
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        await server.reply(1)
        await server.send(command(2, name, options))
        error = (await server.reply(2))["error"]
        assert error["code"] == INVALID_PARAMS, error
        assert named in error["message"], error
        no_traceback(error)
        await still_serving(server, 3)
        stderr = await finish_cleanly(server)
    assert "failed unexpectedly" not in stderr


async def test_unusable_cache_folder_still_serves_figures(server_env: ServerEnv) -> None:
    regular = server_env.root / "a-file"
    regular.write_text("not a folder")
    server_env.env["CODEBURN_CACHE_DIR"] = str(regular / "cache")
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        await server.reply(1)
        for n in (2, 3):  # read afresh each time
            await server.send(request(n, "workspace/executeCommand", REFRESH))
            status = (await server.reply(n))["result"]
            assert status["state"] == "ok" and status["today"]["calls"] == 4, status
        stderr = await finish_cleanly(server)
    assert stderr.count(f"{regular} is not a folder") == 1, stderr
    assert regular.read_text() == "not a folder"


INITIALIZED = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})


@pytest.mark.parametrize(
    "params",
    [None, [1], 5, {"capabilities": 5}],
    ids=["null", "list", "number", "capabilities-5"],
)
async def test_initialized_after_a_refused_initialize_logs_no_traceback(
    server_env: ServerEnv, params: Any
) -> None:
    """A client that goes on after the -32602 (sends `initialized`): the settings are pulled
    without the client's capabilities (none were taken), with one clear line, never a traceback."""
    async with raw_server(server_env) as server:
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        await server.send(frame(message) + INITIALIZED)
        assert (await server.reply(1))["error"]["code"] == INVALID_PARAMS
        await still_serving(server, 2)
        stderr = await finish_cleanly(server)
    assert "AttributeError" not in stderr and "client_capabilities" not in stderr, stderr


@pytest.mark.parametrize(
    "options",
    [
        {"cursor": {"databasePath": "/tmp/a\u0000b/state.vscdb"}},
        {"cursor.databasePath": "/tmp/\ud800/state.vscdb"},
        {"cursor": {"databasePath": "~nosuchuser\u0000/x"}, "python.interpreter": "py\u0000"},
    ],
    ids=["nul", "surrogate", "nul-home"],
)
async def test_an_unusable_path_in_the_settings_is_one_clear_line(
    server_env: ServerEnv, options: dict[str, Any]
) -> None:
    init = request(1, "initialize", {"capabilities": {}, "initializationOptions": options})
    async with raw_server(server_env) as server:
        await server.send(init + INITIALIZED)
        assert "capabilities" in (await server.reply(1))["result"]
        await still_serving(server, 2)
        stderr = await finish_cleanly(server)
    assert "embedded null byte" not in stderr and "ValueError" not in stderr, stderr
    assert "setting codeburn.cursor.databasePath" in stderr, stderr
    assert "ignored (expected a file path" in stderr, stderr
