/**
 * Every name the extension and the language server must spell the same way (docs/lsp.md), once.
 * The server's copy is `server/names.py`; a Python test reads this file and holds the two equal.
 *
 * Kept simple to parse on purpose: `PROTOCOL` is a flat object literal, one `key: "value",` per
 * line, string values only (test/protocol.test.ts checks that this stays true).
 * No `vscode` here.
 */

export const PROTOCOL = {
  /** Notification (server → client) carrying the status object (docs/report-json.md). */
  statusMethod: "codeburn/status",
  /** Settings section the server pulls with `workspace/configuration` (docs/editor.md#settings). */
  settingsSection: "codeburn",
  /** Module the extension runs (`python -P -m codeburn.server`) to start the server over stdio. */
  serverModule: "codeburn.server",
  /** `schema` of the status object (`codeburn/status` and `codeburn.server.refresh`). */
  statusSchema: "codeburn.status/1",
  /** `schema` of the report object (`codeburn.server.report`). */
  reportSchema: "codeburn.report/1",
  /** Command: `[{"path", "from"?, "to"?, "user"?}]` → the import summary (or `chooseUser`). */
  importCursorCsv: "codeburn.server.importCursorCsv",
  /** Command: no arguments → `{"removed", "ranges"}`. */
  removeCursorImport: "codeburn.server.removeCursorImport",
  /** Command: no arguments → the sync summary, or an error naming the cause. */
  syncCursor: "codeburn.server.syncCursor",
  /** Command: no arguments → the status object (re-read now). */
  refresh: "codeburn.server.refresh",
  /** Command: `[{"period"?, "from"?, "to"?}]` → the report object. */
  report: "codeburn.server.report",
  /** Command: `[{"enabled": bool}]` → `{"enabled", "disabledByEnv"}`; writes `cursorSync` in config.json. */
  setCursorSync: "codeburn.server.setCursorSync",
} as const;

export type ServerCommand = Extract<(typeof PROTOCOL)[keyof typeof PROTOCOL], `codeburn.server.${string}`>;

/** The `codeburn.server.*` commands, in the order the server advertises them. */
export const SERVER_COMMANDS: readonly ServerCommand[] = [
  PROTOCOL.importCursorCsv,
  PROTOCOL.removeCursorImport,
  PROTOCOL.syncCursor,
  PROTOCOL.refresh,
  PROTOCOL.report,
  PROTOCOL.setCursorSync,
];
