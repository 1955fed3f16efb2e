"""The other tools' log state (`providers.agents.state`) in an SQLite file of our cache folder.

One row per Claude Code or Codex log (its identity, offset and what its bytes said, as the
reader's JSON text) and its records in parts: a report after an append rewrites the grown log's
row and adds one part, and reads the records of only the logs it needs
(docs/caches.md#other-tools-log-state).

The state's identity (its layout and the rules that derived it) is inside; a file of another
identity, a damaged or foreign file is read as nothing and replaced at the next save. Losing it
costs time, never a figure, so nothing here raises.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from codeburn.cache.files import folder_problem

if TYPE_CHECKING:
    from codeburn.providers.agents import LogChange, Part

FILE: Final = "tool-logs.v1.sqlite"
OLD_FILES: Final = ("tool-logs.json",)  # the state's JSON file before this one: removed
BUSY_TIMEOUT_S: Final = 5.0
_BATCH: Final = 500  # keys per query (well under SQLite's bound on parameters)
# A log appended to at every save (a server's refreshes while a session runs) gets a part per
# save: more than this many at its end of one UTC day are joined into one.
JOIN_PARTS: Final = 16
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS identity (id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS logs (key TEXT PRIMARY KEY, meta TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS parts (
    key TEXT NOT NULL, records INTEGER NOT NULL, last_ms INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS parts_of_log ON parts (key);
"""
log = logging.getLogger(__name__)
T = TypeVar("T")


def tool_logs_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


class ToolLogsDb:
    """`providers.agents.ToolStore` over one SQLite file."""

    def __init__(self, cache_dir: Path) -> None:
        self.path = tool_logs_path(cache_dir)

    def load_tool_logs(self, identity: str) -> dict[str, str]:
        """Each log's row (JSON text) kept under `identity`; nothing when there is none."""

        def rows(db: sqlite3.Connection) -> dict[str, str]:
            if _identity(db) != identity:
                return {}
            return dict(db.execute("SELECT key, meta FROM logs"))

        return self._read(rows) or {}

    def tool_log_parts(self, keys: Sequence[str], low: int | None) -> dict[str, list[Part]]:
        """The records' parts (in the order written) of each of `keys` held; the text of a
        part whose records all lie before `low` is left out (None)."""
        from codeburn.providers.agents import Part  # noqa: PLC0415  (cache → providers)

        def parts(db: sqlite3.Connection) -> dict[str, list[Part]]:
            found: dict[str, list[Part]] = {}
            for start in range(0, len(keys), _BATCH):
                batch = keys[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                query = (
                    "SELECT key, records, last_ms, CASE WHEN last_ms >= ? THEN text END"
                    f" FROM parts WHERE key IN ({marks}) ORDER BY rowid"
                )
                for key, records, last_ms, text in db.execute(query, [low or 0, *batch]):
                    found.setdefault(key, []).append(Part(records, last_ms, text))
            return found

        return self._read(parts) or {}

    def save_tool_logs(self, identity: str, changes: Iterable[LogChange]) -> None:
        """Apply `changes` in one transaction. A log whose row is no longer the one a change
        was made from (another process wrote it since) is forgotten: read again next time."""
        if folder_problem(self.path.parent) is not None:
            return
        for attempt in range(2):
            try:
                self._save(identity, changes)
                self._remove_old_files()
                return
            except sqlite3.DatabaseError as exc:  # damaged or not ours: start it again, once
                if attempt or _is_busy(exc):
                    log.warning("could not save the other tools' log state: %s", exc)
                    return
                with contextlib.suppress(OSError):
                    self.path.unlink()
            except (sqlite3.Error, OSError) as exc:
                log.warning("could not save the other tools' log state: %s", exc)
                return

    def _save(self, identity: str, changes: Iterable[LogChange]) -> None:
        if not self.path.exists():  # created 0600, whatever the umask
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            db.executescript(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            if _identity(db) != identity:
                db.execute("DELETE FROM identity")
                db.execute("DELETE FROM logs")
                db.execute("DELETE FROM parts")
                db.execute("INSERT INTO identity VALUES (?)", (identity,))
            for change in changes:
                _apply(db, change)
            db.execute("COMMIT")
        finally:
            db.close()

    def _read(self, query: Callable[[sqlite3.Connection], T]) -> T | None:
        """`query` on the file opened read-only; None when there is no file or it cannot be
        read (every log is then read again)."""
        if not self.path.is_file():
            return None
        try:
            db = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        except sqlite3.Error:
            return None
        try:
            return query(db)
        except sqlite3.Error as exc:
            log.info("the other tools' log state is not readable (%s): logs are read again", exc)
            return None
        finally:
            db.close()

    def _remove_old_files(self) -> None:
        for name in OLD_FILES:
            with contextlib.suppress(OSError):
                (self.path.parent / name).unlink()


def _identity(db: sqlite3.Connection) -> str | None:
    try:
        row = db.execute("SELECT id FROM identity").fetchone()
    except sqlite3.OperationalError:  # no such table: not a state of ours
        return None
    return str(row[0]) if row else None


def _apply(db: sqlite3.Connection, change: LogChange) -> None:
    key = change.key
    if change.base is not None:
        row = db.execute("SELECT meta FROM logs WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] != change.base:  # moved on by another process: read again
            db.execute("DELETE FROM logs WHERE key = ?", (key,))
            db.execute("DELETE FROM parts WHERE key = ?", (key,))
            return
    else:
        db.execute("DELETE FROM parts WHERE key = ?", (key,))
    if change.meta is None:
        db.execute("DELETE FROM logs WHERE key = ?", (key,))
        return
    db.executemany("INSERT INTO parts VALUES (?, ?, ?, ?)", ((key, *part) for part in change.parts))
    db.execute("INSERT OR REPLACE INTO logs VALUES (?, ?)", (key, change.meta))
    if change.base is not None and change.parts:
        _join_last_day(db, key)


def _join_last_day(db: sqlite3.Connection, key: str) -> None:
    """Join the log's last parts when more than `JOIN_PARTS` of them in a row hold records of
    one UTC day (`providers.agents.joined_parts`): a read then decodes one text, not one per
    save."""
    from codeburn.providers.agents import (  # noqa: PLC0415  (cache → providers)
        Part,
        joined_parts,
        one_part_day,
    )

    # Which parts first, their texts only to join them: a log's earlier parts can be large.
    last = db.execute(
        "SELECT rowid, last_ms FROM parts WHERE key = ? ORDER BY rowid DESC LIMIT ?",
        (key, JOIN_PARTS + 1),
    ).fetchall()
    if len(last) <= JOIN_PARTS or not one_part_day(ms for _, ms in last):
        return
    rows = db.execute(
        "SELECT rowid, records, last_ms, text FROM parts WHERE key = ? AND rowid >= ?"
        " ORDER BY rowid",
        (key, last[-1][0]),
    ).fetchall()
    joined = joined_parts([Part(*row[1:]) for row in rows])
    if joined is None:
        return
    db.executemany("DELETE FROM parts WHERE rowid = ?", ((row[0],) for row in rows))
    db.execute("INSERT INTO parts VALUES (?, ?, ?, ?)", (key, *joined))


def _is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))
