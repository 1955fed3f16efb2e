"""Every name on the wire between the language server and its clients, once (docs/lsp.md).

No pygls here: the bootstrap answers `initialize` from these before pygls is imported. The
extension's `vscode-client/src/protocol.ts` holds the same values; tests/server/test_names.py
keeps the two equal.
"""

from __future__ import annotations

from typing import Final

STATUS_METHOD: Final = "codeburn/status"
"""Server → client notification: the status object (docs/report-json.md), whenever it changes."""
SETTINGS_SECTION: Final = "codeburn"
"""The settings section the server pulls with `workspace/configuration` (docs/editor.md)."""
SERVER_MODULE: Final = "codeburn.server"
"""What the extension runs (`python -P -m codeburn.server`) to start the server over stdio."""
STATUS_SCHEMA: Final = "codeburn.status/1"
"""`schema` of the status object (`codeburn/status` and the refresh command)."""
REPORT_SCHEMA: Final = "codeburn.report/1"
"""`schema` of the report object (the report command, `codeburn report --format json`)."""

IMPORT_CSV: Final = "codeburn.server.importCursorCsv"
"""Import a usage export: `[{"path", "from"?, "to"?, "user"?}]` → docs/import.md#summary."""
REMOVE_IMPORT: Final = "codeburn.server.removeCursorImport"
"""Forget imported and synced usage → `{"removed", "ranges"}`."""
SYNC_CURSOR: Final = "codeburn.server.syncCursor"
"""Sync from cursor.com now → the sync summary."""
REFRESH: Final = "codeburn.server.refresh"
"""Read again now → the status object."""
REPORT: Final = "codeburn.server.report"
"""`[{"period"?, "from"?, "to"?, "provider"?}]` → the report object."""
SET_CURSOR_SYNC: Final = "codeburn.server.setCursorSync"
"""`[{"enabled": bool}]` writes `cursorSync` in config.json; `[]` only reads it."""

COMMANDS: Final = (IMPORT_CSV, REMOVE_IMPORT, SYNC_CURSOR, REFRESH, REPORT, SET_CURSOR_SYNC)
"""Every `workspace/executeCommand` id the server offers, in the order it advertises them."""

PROVIDER_CHOICES: Final = ("all", "cursor", "cursor-agent", "grokbot", "claude-code", "codex")
"""The `provider` filter of reports (CLI `--provider`, the report command's option)."""
