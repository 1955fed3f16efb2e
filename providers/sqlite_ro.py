"""Opening Cursor's databases read-only, without ever blocking or writing to them."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from codeburn.providers.errors import CodeBurnError

BUSY_TIMEOUT_S = 1.0


class CursorDbError(CodeBurnError):
    """Cursor's database could not be read; the message says why."""


class DatabaseMissingError(CursorDbError):
    """There is no database at the path looked at."""


class DatabaseLockedError(CursorDbError):
    """SQLite reported busy/locked: retry later, keep the last good figures."""


class DatabaseUnrecognizedError(CursorDbError):
    """The file is a database, but not one in Cursor's storage format."""


class DatabaseReadError(CursorDbError):
    """Any other failure to read (not a database, I/O error, ...)."""


def is_lock_error(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text


def translate_error(exc: sqlite3.Error, path: Path) -> CursorDbError:
    """Map a sqlite3 error to the state a user sees."""
    if is_lock_error(exc):
        return DatabaseLockedError("Cursor database busy, retrying")
    text = str(exc)
    if "file is not a database" in text or "malformed" in text:
        return DatabaseUnrecognizedError(f"Cursor storage format not recognized: {path}")
    return DatabaseReadError(f"could not read Cursor database {path}: {text}")


def _connect(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def _probe(conn: sqlite3.Connection) -> None:
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


SNAPSHOT_PREFIX: Final = "codeburn-snapshot-"
_snapshot_folder: Callable[[], Path] | None = None


def use_snapshot_folder(folder: Callable[[], Path]) -> None:
    """Where snapshot copies are made: a folder of ours, named by the layer that owns it."""
    global _snapshot_folder  # noqa: PLW0603
    _snapshot_folder = folder


def _cannot_open_side_files(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "unable to open" in text or "readonly" in text or "read-only" in text


def _wal_has_frames(path: Path) -> bool:
    try:
        return Path(str(path) + "-wal").stat().st_size > 0
    except OSError:
        return False


@contextlib.contextmanager
def _snapshot(path: Path) -> Iterator[sqlite3.Connection]:
    """Copy db + WAL into a private folder, read the copy, delete it right after.

    The copy holds Cursor's access token, so it must never outlive the read: it is made in a
    0700 folder under our cache folder (not the shared temp folder), and a copy a killed process
    left behind is removed at the next start (cache/leftovers.py, which names the folder with
    `use_snapshot_folder`; until then mkdtemp's own 0700 folder is used).
    """
    folder: str | None = None
    try:
        where = _snapshot_folder() if _snapshot_folder is not None else None
        folder = tempfile.mkdtemp(prefix=SNAPSHOT_PREFIX, dir=where)
        copy = Path(folder) / path.name
        shutil.copyfile(path, copy)
        wal = Path(str(path) + "-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(str(copy) + "-wal"))
    except OSError as exc:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        why = exc.strerror or str(exc)
        raise DatabaseReadError(f"could not copy Cursor database {path} to read it: {why}") from exc
    try:
        conn = _connect(copy.as_uri() + "?mode=ro")
        try:
            _probe(conn)
            yield conn
        finally:
            conn.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def open_readonly(path: Path, *, fallback: bool = True) -> Iterator[sqlite3.Connection]:
    """A read-only connection with a ~1 s busy timeout; falls back for read-only folders
    (`fallback=False`: raises instead, for a reader that can do without, never copying)."""
    if not path.is_file():
        raise DatabaseMissingError(f"no Cursor database at {path}")
    uri = path.as_uri() + "?mode=ro"
    try:
        conn = _connect(uri)
        _probe(conn)
    except sqlite3.Error as exc:
        with contextlib.suppress(NameError, sqlite3.Error):
            conn.close()
        if not fallback or not _cannot_open_side_files(exc):
            raise translate_error(exc, path) from exc
        if _wal_has_frames(path):
            with _snapshot(path) as snap:
                yield snap
            return
        conn = _connect(uri + "&immutable=1")
    try:
        yield conn
    finally:
        conn.close()
