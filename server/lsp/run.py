"""The language server's entry: its LSP handlers, and serving over stdio (or TCP) until the
client exits, with the cache files written and nothing left running (docs/lsp.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import Any, Final

from lsprotocol import types

from codeburn.providers import (
    enable_write_behind,
    flush_write_behind,
)
from codeburn.server.lsp.commands import register_commands
from codeburn.server.lsp.log import setup_logging
from codeburn.server.lsp.protocol import CheckedProtocol, QuietParseErrors
from codeburn.server.lsp.server import CodeBurnServer

log = logging.getLogger(__name__)

EXIT_FLUSH_S: Final = 2.0


def build_server() -> CodeBurnServer:
    """The server with its LSP handlers and commands."""
    server = CodeBurnServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: CodeBurnServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.init_options = params.initialization_options
        ls.parse_progress.bind(ls.loop, enabled=ls.supports_progress())

    @server.feature(types.INITIALIZED)
    def initialized(ls: CodeBurnServer, params: types.InitializedParams) -> None:
        if getattr(ls.protocol, "client_capabilities", None) is None:
            log.warning(
                "the editor sent `initialized` without an accepted `initialize`; "
                "going on with no client capabilities and the default settings"
            )
        ls.spawn(ls.start())

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: CodeBurnServer, params: types.DidChangeConfigurationParams
    ) -> None:
        ls.spawn(ls.settings_changed())

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: CodeBurnServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.tool_logs_changed([change.uri for change in params.changes])

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: CodeBurnServer, *args: Any) -> None:
        ls.shut_down = True
        ls.stop_background()
        if isinstance(ls.protocol, CheckedProtocol):
            ls.protocol.cancel_pending()

    @server.feature(types.EXIT)
    def exit_(ls: CodeBurnServer, *args: Any) -> None:
        ls.stop_background()
        _hard_exit(0 if ls.shut_down else 1)

    register_commands(server)
    return server


def _hard_exit(code: int) -> None:
    """Exit now: a worker stuck in a network call must not keep the process alive. The cache
    files queued to be written are written first (a bounded wait)."""
    flush_write_behind(EXIT_FLUSH_S)
    logging.shutdown()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


def _parse_tcp(tcp: str) -> tuple[str, int]:
    host, sep, port = tcp.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise SystemExit(f"codeburn serve: --tcp expects HOST:PORT, got {tcp!r}")
    return host.strip("[]"), int(port)


def run_server(
    tcp: str | None,
    *,
    stdin: Any = None,
    stdout: Any = None,
    early_status: dict[str, Any] | None = None,
) -> None:
    """Serve LSP over stdio (or TCP on `HOST:PORT`, for debugging) until the client exits.

    `stdin`/`stdout`/`early_status` come from the hand-made handshake in `lsp_bootstrap`.
    """
    server = build_server()
    enable_write_behind()  # cache files after the status, not before it
    setup_logging(server)
    logging.getLogger("pygls.server").addFilter(QuietParseErrors())
    if early_status is not None:
        server.seed(early_status)
    if tcp:
        host, port = _parse_tcp(tcp)
        server.start_tcp(host, port)
    else:
        lsp_in = stdin or sys.stdin.buffer
        lsp_out = stdout or sys.stdout.buffer
        sys.stdout = sys.stderr  # a stray print() must never corrupt the LSP stream
        server.start_io(lsp_in, lsp_out)
    _hard_exit(0 if server.shut_down else 1)
