"""The hand-made handshake must say exactly what pygls would, and replay bytes faithfully."""

from __future__ import annotations

import io
import json

import pytest
from lsprotocol import types
from pygls.capabilities import ServerCapabilitiesBuilder

from codeburn.server.lsp.bootstrap import (
    ReplayReader,
    SwallowingWriter,
    bootstrap,
    capabilities,
    read_message,
)
from codeburn.server.lsp.run import build_server

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def _frame(obj: dict) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_capabilities_equal_what_pygls_builds() -> None:
    server = build_server()
    fm = server.protocol.fm
    built = ServerCapabilitiesBuilder(
        types.ClientCapabilities(),
        set({**fm.features, **fm.builtin_features}.keys()),
        fm.feature_options,
        list(fm.commands.keys()),
        types.TextDocumentSyncKind.None_,
        None,
        types.PositionEncodingKind.Utf16,
    ).build()
    assert server.protocol._converter.unstructure(built) == capabilities("utf-16")


def test_replay_reader_serves_the_prefix_then_the_stream() -> None:
    first, second = _frame({"id": 1, "method": "initialize"}), _frame({"method": "initialized"})
    reader = ReplayReader(first, io.BytesIO(second))
    one = read_message(reader)  # type: ignore[arg-type]
    two = read_message(reader)  # type: ignore[arg-type]
    assert one is not None and one[1]["method"] == "initialize"
    assert two is not None and two[1]["method"] == "initialized"
    assert read_message(reader) is None  # type: ignore[arg-type]


def test_writer_drops_only_the_duplicate_initialize_answer() -> None:
    out = io.BytesIO()
    writer = SwallowingWriter(out, swallow_id=7)
    writer.write(_frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}))
    writer.write(_frame({"jsonrpc": "2.0", "id": 7, "result": {"capabilities": {}}}))
    writer.write(_frame({"jsonrpc": "2.0", "id": 7, "result": None}))
    assert out.getvalue().count(b"Content-Length") == 2
    assert len(writer.swallowed) == 1


def test_a_client_that_does_not_start_with_initialize_is_left_to_pygls() -> None:
    stray = _frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
    out = io.BytesIO()
    replay = bootstrap(io.BytesIO(stray), out)
    assert replay.prefix == stray and replay.swallow_id is None and out.getvalue() == b""
