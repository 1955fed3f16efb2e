"""Python logging for the language server: stderr, and `window/logMessage` for the editor's log.

Records from worker threads are handed to the event loop, which alone writes to the LSP stream.
pygls' own chatter (it logs every message it sends at INFO) stays on stderr at WARNING and up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from codeburn.server.log_filter import OwnRecordsOnly, debug_wanted

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _message_type(level: int) -> types.MessageType:
    if level >= logging.ERROR:
        return types.MessageType.Error
    if level >= logging.WARNING:
        return types.MessageType.Warning
    if level >= logging.INFO:
        return types.MessageType.Info
    return types.MessageType.Log


class _NoUserFacingTracebacks(logging.Filter):
    """A JSON-RPC error (ours, or pygls' for an unknown command) is an answer, not a crash.

    Unexpected exceptions are logged where they happen (`command_error`, pygls' internal error).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, JsonRpcException)


class LogTarget(Protocol):
    """What the handler needs of the language server."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...
    @property
    def shut_down(self) -> bool: ...
    def window_log_message(self, params: types.LogMessageParams) -> None: ...


class LspLogHandler(logging.Handler):
    """`window/logMessage` once the server has a loop; dropped before that (stderr has it)."""

    def __init__(self, server: LogTarget) -> None:
        super().__init__(logging.DEBUG)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        loop = self._server.loop
        if loop is None or loop.is_closed():
            return
        try:
            message = self.format(record)
        except Exception:
            return
        kind = _message_type(record.levelno)
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            loop.call_soon_threadsafe(self._send, kind, message)

    def _send(self, kind: types.MessageType, message: str) -> None:
        if self._server.shut_down:
            return
        with contextlib.suppress(Exception):  # a broken pipe must not recurse into logging
            self._server.window_log_message(types.LogMessageParams(type=kind, message=message))


def setup_logging(server: LogTarget) -> None:
    """`codeburn` at INFO (DEBUG with `CODEBURN_LOG=debug`) to stderr and the editor's log."""
    debug = debug_wanted()
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter(FORMAT))
    stderr.addFilter(_NoUserFacingTracebacks())
    stderr.addFilter(OwnRecordsOnly(("codeburn", "pygls")))  # never httpcore's headers
    root = logging.getLogger()
    root.handlers[:] = [stderr]
    root.setLevel(logging.WARNING)
    ours = logging.getLogger("codeburn")
    ours.setLevel(logging.DEBUG if debug else logging.INFO)
    to_editor = LspLogHandler(server)
    to_editor.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    ours.addHandler(to_editor)
    logging.getLogger("pygls").setLevel(logging.DEBUG if debug else logging.WARNING)
    asyncio_logger = logging.getLogger("asyncio")
    asyncio_logger.setLevel(logging.WARNING)
