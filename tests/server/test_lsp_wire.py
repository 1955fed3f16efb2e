"""Malformed LSP input: framing rules, and a JSON-RPC answer (or a logged exit) for every case.

End to end against a real `python -m codeburn.server` over stdio, driven with raw bytes: no LSP
client library sends these (pytest-lsp refuses to serialise params that are not the LSP type).
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from codeburn.server.lsp.wire import FrameReader, FramingError, read_frame
from tests.server.conftest import WAIT_S, ServerEnv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
PARSE_ERROR = -32700


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: int, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return frame(message)


HANDSHAKE = request(1, "initialize", {"capabilities": {}}) + frame(
    {"jsonrpc": "2.0", "method": "initialized", "params": {}}
)
GOODBYE = request(90, "shutdown") + frame({"jsonrpc": "2.0", "method": "exit"})


# -- framing rules (no server) ------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: 2\r\n\r\n",
        b"content-length: 2\r\n\r\n",  # names are case-insensitive, as in HTTP
        b"Content-Length:2\n\n",  # bare LF line ends
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n",
        b"\r\nContent-Length: 2\r\n\r\n",  # a stray blank line before a message
    ],
)
def test_accepted_header_blocks(header: bytes) -> None:
    assert read_frame(io.BytesIO(header + b"{}rest")) == (header + b"{}", b"{}")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'Content-Type: application/json\r\n\r\n{"id": 1}', "without Content-Length"),
        (b"Content-Length: twelve\r\n\r\n", "not one number"),
        (b"Content-Length: -1\r\n\r\n", "not one number"),
        (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "not one number"),
        (b'{"jsonrpc": "2.0", "id": 1}\r\n\r\n', "not a header line"),
        (b"Content-Length: 999999999999\r\n\r\n", "accepts up to 64 MiB"),
        (b"X-" + b"a" * 9000 + b"\r\n", "longer than 8192 bytes"),
        (b"".join(b"X-%d: 1\r\n" % n for n in range(40)), "more than 32 header lines"),
    ],
)
def test_refused_header_blocks(data: bytes, reason: str) -> None:
    with pytest.raises(FramingError, match=reason):
        read_frame(io.BytesIO(data))


@pytest.mark.parametrize("data", [b"", b"Content-Len", b"Content-Length: 5\r\n\r\n{}"])
def test_end_of_input_inside_a_message_is_the_end(data: bytes) -> None:
    assert read_frame(io.BytesIO(data)) is None


def test_frame_reader_reframes_canonically_and_stops_at_a_framing_error() -> None:
    stream = io.BytesIO(b"content-length: 2\n\n{}" + b"Content-Type: x\r\n\r\n{}")
    reader = FrameReader(stream)
    assert reader.readline() == b"Content-Length: 2\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(2) == b"{}"
    assert reader.readline() == b""  # pygls' loop ends here
    assert reader.error is not None and "without Content-Length" in str(reader.error)


# -- end to end ---------------------------------------------------------------------------------


class RawServer:
    """`python -m codeburn.server` driven with raw bytes; replies read back in order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []  # every message read, notifications included

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def reply(self, msg_id: int | None) -> dict[str, Any]:
        """The next reply with this id (notifications and server requests skipped)."""
        return await self._next(lambda m: "method" not in m and m.get("id") == msg_id)

    async def server_request(self, method: str) -> dict[str, Any]:
        """The next request of the server's with this method (left unanswered)."""
        return await self._next(lambda m: m.get("method") == method and "id" in m)

    async def _next(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        assert self.process.stdout is not None
        stdout = self.process.stdout

        async def next_message() -> dict[str, Any]:
            while True:
                header = await stdout.readuntil(b"\r\n\r\n")
                length = int(header.split(b":")[1].split(b"\r\n")[0])
                message: dict[str, Any] = json.loads(await stdout.readexactly(length))
                self.seen.append(message)
                if wanted(message):
                    return message

        return await asyncio.wait_for(next_message(), WAIT_S)

    async def error_code(self, msg_id: int | None) -> int:
        code: int = (await self.reply(msg_id))["error"]["code"]
        return code

    async def finish(self, stdin_open: bool = False) -> tuple[int, str]:
        """Exit code and stderr, once the server ends (after `exit`, EOF or an error)."""
        assert self.process.stdin is not None and self.process.stderr is not None
        if not stdin_open:
            self.process.stdin.close()
        code = await asyncio.wait_for(self.process.wait(), WAIT_S)
        return code, (await self.process.stderr.read()).decode()


@asynccontextmanager
async def raw_server(env: ServerEnv) -> AsyncIterator[RawServer]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "codeburn.server",
        env=env.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield RawServer(process)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_execute_command_with_params_not_an_object_gets_an_invalid_params_reply(
    server_env: ServerEnv,
) -> None:
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        assert "result" in await server.reply(1)
        bad: list[Any] = [["codeburn.server.refresh"], "codeburn.server.refresh", {}, [1, 2]]
        for n, params in enumerate(bad, start=2):
            await server.send(request(n, "workspace/executeCommand", params))
            error = (await server.reply(n))["error"]
            assert error["code"] == INVALID_PARAMS
            assert '{"command": "codeburn.server.…", "arguments": [...]}' in error["message"]
        refresh = {"command": "codeburn.server.refresh", "arguments": []}
        await server.send(request(10, "workspace/executeCommand", refresh))
        status = (await server.reply(10))["result"]  # still serving
        assert status["schema"] == "codeburn.status/1" and status["state"] == "ok"
        await server.send(GOODBYE)
        code, stderr = await server.finish()
    assert code == 0
    assert "refused the request workspace/executeCommand" in stderr and "Traceback" not in stderr


async def test_malformed_bodies_get_json_rpc_errors_and_the_server_goes_on(
    server_env: ServerEnv,
) -> None:
    async with raw_server(server_env) as server:
        await server.send(HANDSHAKE)
        await server.reply(1)
        await server.send(b"Content-Length: 5\r\n\r\n{abc}")
        assert await server.error_code(None) == PARSE_ERROR
        await server.send(b"Content-Length: 2\r\n\r\n\xff\xfe")
        assert await server.error_code(None) == PARSE_ERROR
        await server.send(frame([{"jsonrpc": "2.0", "id": 5, "method": "shutdown"}]))
        assert await server.error_code(None) == INVALID_REQUEST  # a batch
        await server.send(frame({"id": 6, "method": "shutdown"}))
        assert await server.error_code(6) == INVALID_REQUEST  # no "jsonrpc": "2.0"
        await server.send(request(90, "shutdown"))
        assert (await server.reply(90))["result"] is None  # a real shutdown: not the batch's
        await server.send(request(91, "workspace/executeCommand", {"command": "x"}))
        assert await server.error_code(91) == INVALID_REQUEST  # after shutdown
        await server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        code, stderr = await server.finish()
    assert code == 0
    assert "refused a message that is not JSON" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("handshake", [True, False], ids=["after-handshake", "first-message"])
async def test_a_header_block_without_content_length_ends_the_server_with_a_reason(
    server_env: ServerEnv, handshake: bool
) -> None:
    broken = b'Content-Type: application/json\r\n\r\n{"jsonrpc": "2.0", "id": 2, "method": "x"}'
    async with raw_server(server_env) as server:
        if handshake:
            await server.send(HANDSHAKE)
            await server.reply(1)
        await server.send(broken + b"\r\n")
        # stdin stays open: the server must not sit waiting for the rest of a "header block"
        code, stderr = await server.finish(stdin_open=True)
    assert code == 1
    assert "a header block without Content-Length (LSP framing)" in stderr
    assert "Traceback" not in stderr


async def test_a_shutdown_while_requests_to_the_editor_wait_is_answered(
    server_env: ServerEnv,
) -> None:
    """An editor asks the server to shut down while a command of its own is still in flight
    (waiting for the settings the editor has not sent yet): the shutdown is answered, the
    server exits 0, and no traceback is logged (pygls' own cancelling of the requests in
    flight raised "dictionary changed size during iteration")."""
    watch = {"dynamicRegistration": True, "relativePatternSupport": True}
    capabilities = {"workspace": {"configuration": True, "didChangeWatchedFiles": watch}}
    async with raw_server(server_env) as server:
        await server.send(request(1, "initialize", {"capabilities": capabilities}))
        assert "result" in await server.reply(1)
        await server.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        await server.server_request("workspace/configuration")  # (never answered)
        # A command waits for the settings meanwhile: in flight when the shutdown comes.
        refresh = {"command": "codeburn.server.refresh", "arguments": []}
        await server.send(request(5, "workspace/executeCommand", refresh))
        await server.send(GOODBYE)
        answer = await server.reply(90)
        code, stderr = await server.finish()
    assert "result" in answer and "error" not in answer, answer
    assert code == 0
    assert "Traceback" not in stderr and "dictionary changed size" not in stderr, stderr
