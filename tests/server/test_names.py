"""Every wire name is spelled once per language: server/names.py and vscode-client/src/protocol.ts
hold the same values, and the server really uses them."""

from __future__ import annotations

import re
from pathlib import Path

from codeburn.server import names
from codeburn.server.lsp.bootstrap import capabilities
from codeburn.server.lsp.commands import HANDLERS

PROTOCOL_TS = Path(__file__).resolve().parents[2] / "vscode-client" / "src" / "protocol.ts"

# protocol.ts key -> names.py constant
PAIRS = {
    "statusMethod": "STATUS_METHOD",
    "settingsSection": "SETTINGS_SECTION",
    "serverModule": "SERVER_MODULE",
    "statusSchema": "STATUS_SCHEMA",
    "reportSchema": "REPORT_SCHEMA",
    "importCursorCsv": "IMPORT_CSV",
    "removeCursorImport": "REMOVE_IMPORT",
    "syncCursor": "SYNC_CURSOR",
    "refresh": "REFRESH",
    "report": "REPORT",
    "setCursorSync": "SET_CURSOR_SYNC",
}


def _protocol_ts() -> dict[str, str]:
    text = PROTOCOL_TS.read_text()
    found = re.search(r"export const PROTOCOL = \{\n(.*?)\n\} as const;", text, re.S)
    assert found, "protocol.ts has no flat PROTOCOL object literal"
    return dict(re.findall(r'^\s+([A-Za-z][A-Za-z0-9]*): "([^"\\]*)",$', found.group(1), re.M))


def _server_commands_ts() -> list[str]:
    text = PROTOCOL_TS.read_text()
    found = re.search(r"export const SERVER_COMMANDS[^=]*= \[\n(.*?)\n\];", text, re.S)
    assert found, "protocol.ts has no SERVER_COMMANDS list"
    return re.findall(r"PROTOCOL\.(\w+),", found.group(1))


def test_protocol_ts_and_names_py_hold_the_same_names() -> None:
    ts = _protocol_ts()
    assert set(ts) == set(PAIRS), "a name on one side only: add it to both and to PAIRS"
    for key, constant in PAIRS.items():
        assert ts[key] == getattr(names, constant), key


def test_the_commands_are_the_same_list_in_the_same_order() -> None:
    ts = _protocol_ts()
    assert [ts[k] for k in _server_commands_ts()] == list(names.COMMANDS)
    wire = {v for k, v in vars(names).items() if k.isupper() and isinstance(v, str)}
    assert {c for c in wire if c.startswith("codeburn.server.")} == set(names.COMMANDS)


def test_the_server_offers_and_handles_exactly_those_commands() -> None:
    assert capabilities("utf-16")["executeCommandProvider"]["commands"] == list(names.COMMANDS)
    assert list(HANDLERS) == list(names.COMMANDS)
