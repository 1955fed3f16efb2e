"""(f): from starting the language server to its first `codeburn/status` notification, and
(g) its resident memory 5 s after that and after 10 refreshes (`codeburn.server.refresh`)."""

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


REFRESH = "codeburn.server.refresh"


def first_status_seconds(env: dict[str, str], timeout_s: float = 60.0) -> tuple[float, Any]:
    """Seconds from process start to the first `codeburn/status`, and that payload."""
    started = time.perf_counter()
    server = _spawn(env)
    try:
        payload = _until_status(server, started, timeout_s)
        return time.perf_counter() - started, payload
    finally:
        _stop(server)


def resident_mb(
    env: dict[str, str], refreshes: int = 10, settle_s: float = 5.0
) -> dict[str, float]:
    """The server's resident memory (VmRSS, MB) `settle_s` after its first status, and after
    `refreshes` refresh commands, each awaited."""
    started = time.perf_counter()
    server = _spawn(env)
    try:
        _until_status(server, started, 60.0)
        time.sleep(settle_s)
        first = _vm_rss_mb(server.pid)
        assert server.stdin is not None and server.stdout is not None
        for n in range(refreshes):
            ident = 100 + n
            _send(
                server.stdin,
                {"id": ident, "method": "workspace/executeCommand",
                 "params": {"command": REFRESH, "arguments": []}},
            )  # fmt: skip
            _answer_until(server, ident)
        return {"afterFirstStatus": first, "afterRefreshes": _vm_rss_mb(server.pid)}
    finally:
        _stop(server)


def _vm_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def _answer_until(server: subprocess.Popen[bytes], ident: int) -> None:
    """Serve the server's requests until the response to `ident` arrives."""
    assert server.stdin is not None and server.stdout is not None
    while True:
        message = _receive(server.stdout)
        if message.get("id") == ident and "method" not in message:
            if "error" in message:
                raise RuntimeError(f"refresh failed: {message['error']}")
            return
        if "id" in message and "method" in message:
            _reply(server, message)


def _reply(server: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert server.stdin is not None
    result: Any = None
    if message["method"] == "workspace/configuration":
        result = [None for _ in message["params"]["items"]]
    _send(server.stdin, {"id": message["id"], "result": result})


def _spawn(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "codeburn.server"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _until_status(server: subprocess.Popen[bytes], started: float, timeout_s: float) -> Any:
    """Initialize, then serve the server's requests until its first status (the payload)."""
    assert server.stdin is not None and server.stdout is not None
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
            _reply(server, message)
        elif message.get("method") == STATUS:
            return message.get("params")


def _stop(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None
    try:
        _send(server.stdin, {"id": 2, "method": "shutdown"})
        _send(server.stdin, {"method": "exit"})
        server.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        server.kill()
        server.wait()
