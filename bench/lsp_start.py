"""(f): from starting the language server to its first `codeburn/status` notification."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import IO, Any

STATUS = "codeburn/status"


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    pipe.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = pipe.readline()
        if not line:
            raise EOFError("the language server closed its output")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    message: dict[str, Any] = json.loads(pipe.read(length))
    return message


def first_status_seconds(env: dict[str, str], timeout_s: float = 60.0) -> tuple[float, Any]:
    """Seconds from process start to the first `codeburn/status`, and that payload."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "codeburn.server"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        _send(
            server.stdin,
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": os.getpid(),
                    "rootUri": None,
                    "capabilities": {"workspace": {"configuration": True}},
                    "initializationOptions": {},
                },
            },
        )
        while True:
            if time.perf_counter() - started > timeout_s:
                raise TimeoutError(f"no {STATUS} within {timeout_s:.0f} s")
            message = _receive(server.stdout)
            if message.get("id") == 1 and "method" not in message:
                _send(server.stdin, {"method": "initialized", "params": {}})
            elif "id" in message and "method" in message:  # a request from the server
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [None for _ in message["params"]["items"]]
                _send(server.stdin, {"id": message["id"], "result": result})
            elif message.get("method") == STATUS:
                return time.perf_counter() - started, message.get("params")
    finally:
        _stop(server)


def _stop(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None
    try:
        _send(server.stdin, {"id": 2, "method": "shutdown"})
        _send(server.stdin, {"method": "exit"})
        server.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        server.kill()
        server.wait()
