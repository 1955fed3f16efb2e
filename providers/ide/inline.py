"""Composers of builds 0.44–0.45: messages inline in the global database's
`composerData.conversation[]`, with no bubble rows (docs/local-data.md#window-and-scan-budget).

Each message is bubble-shaped (`type` 1 user / 2 assistant, `bubbleId`, `text`, `tokenCount`,
`timingInfo.clientRpcSendTime`); they are read as bubble rows of the same shape as
`cursor_scan.BUBBLE_COLUMNS`, so the same rules date, count and price them. Their call key is
the one a bubble row of that id would have (`cursor:bubble:bubbleId:<composer>:<bubbleId>`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.paths import DB_NAME, default_db_path

# Inline messages have no ROWID of their own: one above any real ROWID, in message order
# (composerData ROWID, then index). The query orders by that number, which is the order of
# (ROWID, index) for fewer than 2**20 messages a composer: ordering by `c.rowid` makes SQLite
# scan the whole table in ROWID order instead of the composerData key range.
ROWID_BASE: Final = 1 << 50
_PER_COMPOSER: Final = 1 << 20
NO_DATE: Final = "no date"

_RPC_MS = "json_extract(m.value, '$.timingInfo.clientRpcSendTime')"
_CREATED = "json_extract(m.value, '$.createdAt')"
_INLINE_SQL: Final = f"""
SELECT {ROWID_BASE} + c.rowid * {_PER_COMPOSER} + m.key,
  '{scan.CALL_KEY_PREFIX}bubbleId:' || substr(c.key, 14) || ':'
    || coalesce(json_extract(m.value, '$.bubbleId'), m.key),
  json_extract(m.value, '$.type'),
  coalesce({_CREATED}, strftime('%Y-%m-%dT%H:%M:%fZ', {_RPC_MS} / 1000.0, 'unixepoch')),
  coalesce(
    CAST(round((julianday({_CREATED}) - 2440587.5) * 86400000.0) AS INTEGER),
    CASE WHEN {_CREATED} IS NULL
         AND json_type(m.value, '$.timingInfo.clientRpcSendTime') IN ('integer', 'real')
    THEN CAST({_RPC_MS} AS INTEGER) END),
  json_extract(m.value, '$.requestId'),
  json_extract(m.value, '$.tokenCount.inputTokens'),
  json_extract(m.value, '$.tokenCount.outputTokens'),
  json_extract(m.value, '$.modelInfo.modelName'),
  CAST(json_extract(m.value, '$.text') AS BLOB),
  NULL
FROM cursorDiskKV AS c, json_each(c.value, '$.conversation') AS m
WHERE c.key >= '{scan.COMPOSER_PREFIX}' AND c.key < 'composerData;' AND json_valid(c.value)
  AND json_type(c.value, '$.conversation') = 'array' AND m.type = 'object'
  AND NOT EXISTS (SELECT 1 FROM cursorDiskKV AS b
                  WHERE b.key >= 'bubbleId:' || substr(c.key, 14) || ':'
                    AND b.key < 'bubbleId:' || substr(c.key, 14) || ';')
ORDER BY 1 DESC
"""


def inline_rows(conn: sqlite3.Connection) -> list[scan.BubbleRow]:
    """The inline messages of composers that have no bubble rows, newest first, as bubble
    rows (`BubbleScan.add`)."""
    return scan.fetch(conn, _INLINE_SQL)


# ItemTable keys only a workspace database holds (its conversations, before 0.43 and after).
_WORKSPACE_KEYS: Final = ("composer.composerData", "aichat.chatdata",
                          "workbench.panel.aichat.view.aichat.chatdata")  # fmt: skip


def workspace_db_message(conn: sqlite3.Connection, db_path: Path) -> str | None:
    """The db-unrecognized message for a workspace database given as the database path (it
    holds one folder's state, never its conversations' messages), naming the global database
    to use instead; None when this is not one."""
    in_workspaces = db_path.parent.parent.name == "workspaceStorage"
    if not in_workspaces:
        try:
            marks = ",".join("?" * len(_WORKSPACE_KEYS))
            row = conn.execute(
                f"SELECT 1 FROM ItemTable WHERE key IN ({marks}) LIMIT 1", _WORKSPACE_KEYS
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None:
            return None
    user = db_path.parent.parent.parent if in_workspaces else None
    global_db = user / "globalStorage" / DB_NAME if user is not None else default_db_path()
    return (
        f"Cursor storage format not recognized: {db_path} is a workspace database (one"
        f" folder's state); use the global database {global_db}"
    )
