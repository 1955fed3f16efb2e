"""Answer `initialize` and send cached figures before pygls is imported.

Importing pygls and lsprotocol takes longer than the whole cached status. So the stdio server
first reads `initialize` itself, answers it with the capabilities pygls would advertise, waits
for `initialized`, sends `codeburn/status` from the caches, and only then imports pygls,
replaying both messages to it and swallowing its duplicate answer to `initialize`.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Final

from codeburn.server import VERSION
from codeburn.server.lsp.initialize import answerable
from codeburn.server.lsp.wire import FrameReader, FramingError, LineReader, read_frame
from codeburn.server.names import COMMANDS, STATUS_METHOD

log = logging.getLogger(__name__)

SERVER_INFO: Final = {"name": "codeburn", "version": VERSION}


def capabilities(position_encoding: str) -> dict[str, Any]:
    """What pygls builds for this server (a test keeps the two equal)."""
    return {
        "positionEncoding": position_encoding,
        "textDocumentSync": {"openClose": True, "change": 0, "save": False},
        "executeCommandProvider": {"commands": list(COMMANDS)},
        "workspace": {
            "workspaceFolders": {"supported": True, "changeNotifications": True},
            "fileOperations": {},
        },
    }


def position_encoding(params: dict[str, Any]) -> str:
    general = (params.get("capabilities") or {}).get("general") or {}
    offered = general.get("positionEncodings") or ["utf-16"]
    for choice in ("utf-16", "utf-32", "utf-8"):
        if choice in offered:
            return choice
    return "utf-16"


def read_message(stream: LineReader) -> tuple[bytes, dict[str, Any]] | None:
    """One framed message: its raw bytes (to replay) and its parsed body; None at EOF."""
    frame = read_frame(stream)
    if frame is None:
        return None
    raw, body = frame
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        parsed = {}
    return raw, parsed if isinstance(parsed, dict) else {}


def write_message(stream: BinaryIO, obj: dict[str, Any]) -> None:
    body = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


@dataclass
class Replay:
    """What pygls must see again, and which of its answers to drop."""

    prefix: bytes = b""
    swallow_id: Any = None
    early_status: dict[str, Any] | None = None
    init_options: Any = None


class ReplayReader:
    """Serves the replayed bytes first, then the real stdin (readline/read as pygls uses them)."""

    def __init__(self, prefix: bytes, stream: BinaryIO) -> None:
        self._prefix = prefix
        self._stream = stream

    def readline(self, size: int = -1) -> bytes:
        if self._prefix:
            end = self._prefix.find(b"\n")
            end = len(self._prefix) if end < 0 else end + 1
            if size >= 0:
                end = min(end, size)
            line, self._prefix = self._prefix[:end], self._prefix[end:]
            return line
        return self._stream.readline(size)

    def read(self, n: int) -> bytes:
        if self._prefix:
            chunk, self._prefix = self._prefix[:n], self._prefix[n:]
            if len(chunk) < n:
                chunk += self._stream.read(n - len(chunk))
            return chunk
        return self._stream.read(n)


@dataclass
class SwallowingWriter:
    """Drops pygls's answer to the replayed `initialize`; passes everything else through."""

    stream: BinaryIO
    swallow_id: Any
    swallowed: list[dict[str, Any]] = field(default_factory=list)

    def write(self, data: bytes) -> None:
        if self.swallow_id is not None:
            _, _, body = data.partition(b"\r\n\r\n")
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            if (
                isinstance(message, dict)
                and message.get("id") == self.swallow_id
                and ("result" in message or "error" in message)
            ):
                self.swallow_id = None
                self.swallowed.append(message)
                if "error" in message:  # answered already; say why pygls would not have
                    log.error(
                        "pygls refused the initialize answered at start: %s", message["error"]
                    )
                return
        self.stream.write(data)
        self.stream.flush()

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()


def _early_status(init_options: Any) -> dict[str, Any] | None:
    """The cached status for the settings the client sent with `initialize` (never a parse)."""
    from codeburn.providers import resolve_db_path  # noqa: PLC0415
    from codeburn.server.lsp.settings import parse_settings  # noqa: PLC0415
    from codeburn.server.lsp.status import with_env  # noqa: PLC0415
    from codeburn.server.service import UsageService  # noqa: PLC0415

    settings, _ = parse_settings(init_options, None)
    db = resolve_db_path(setting=settings.cursor_database_path or None)
    status = UsageService(db).status(budget=settings.budget(), sync=False, cached_only=True)
    return with_env({**status, "quota": None}) if status is not None else None


def bootstrap(stdin: BinaryIO, stdout: BinaryIO) -> Replay:
    """Handle the handshake by hand; on anything unexpected, leave it all to pygls."""
    first = read_message(stdin)
    if first is None:
        return Replay()
    raw_init, init = first
    msg_id = init.get("id")
    if (
        init.get("method") != "initialize"
        or not isinstance(msg_id, int | str)
        or isinstance(msg_id, bool)
        or not answerable(init.get("params"))
    ):
        return Replay(prefix=raw_init)
    params = init["params"]
    result = {"capabilities": capabilities(position_encoding(params)), "serverInfo": SERVER_INFO}
    write_message(stdout, {"jsonrpc": "2.0", "id": init["id"], "result": result})
    replay = Replay(
        prefix=raw_init, swallow_id=init["id"], init_options=params.get("initializationOptions")
    )
    second = read_message(stdin)
    if second is None:
        return replay
    raw_next, message = second
    replay.prefix += raw_next
    if message.get("method") == "initialized":
        try:
            replay.early_status = _early_status(replay.init_options)
        except Exception as exc:  # the real start-up reports it; never fail the handshake
            log.warning("cached figures unavailable at start: %s", exc)
        if replay.early_status is not None:
            write_message(
                stdout, {"jsonrpc": "2.0", "method": STATUS_METHOD, "params": replay.early_status}
            )
    return replay


def serve(tcp: str | None) -> None:
    """`python -m codeburn.server` / `codeburn serve`: stdio with the fast handshake, or TCP."""
    if tcp:
        from codeburn.server.lsp.run import run_server  # noqa: PLC0415

        run_server(tcp)
        return
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the LSP stream
    try:
        replay = bootstrap(stdin, stdout)
    except FramingError as exc:
        sys.stderr.write(f"codeburn serve: the client sent {exc} (LSP framing); exiting\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
    from codeburn.server.lsp.run import run_server  # noqa: PLC0415

    run_server(
        None,
        stdin=FrameReader(ReplayReader(replay.prefix, stdin)),
        stdout=SwallowingWriter(stdout, replay.swallow_id),
        early_status=replay.early_status,
    )
