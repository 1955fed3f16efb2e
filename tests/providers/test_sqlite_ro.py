"""Read-only opening, including folders where SQLite cannot create its side files.

As root, a read-only folder cannot be simulated with permissions; a dangling symlink in place
of a side file makes its creation fail the same way (ENOENT instead of EACCES).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from codeburn.providers.sqlite_ro import (
    DatabaseLockedError,
    DatabaseMissingError,
    open_readonly,
)


def _wal_database(folder: Path, rows: int) -> tuple[Path, sqlite3.Connection]:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "state.vscdb"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE, value BLOB)")
    conn.executemany("INSERT INTO cursorDiskKV VALUES (?, 'v')", [(f"k{i}",) for i in range(rows)])
    conn.commit()
    return db, conn


def _unwritable_side_files(source: Path, target: Path, *, with_wal: bool) -> Path:
    target.mkdir()
    db = target / "state.vscdb"
    shutil.copyfile(source, db)
    if with_wal:
        shutil.copyfile(str(source) + "-wal", str(db) + "-wal")
    else:
        os.symlink("/nonexistent/codeburn/wal", str(db) + "-wal")
    os.symlink("/nonexistent/codeburn/shm", str(db) + "-shm")
    return db


def _count(db: Path) -> int:
    with open_readonly(db) as conn:
        return int(conn.execute("SELECT count(*) FROM cursorDiskKV").fetchone()[0])


def test_plain_read_only_open_never_writes(tmp_path: Path) -> None:
    db, writer = _wal_database(tmp_path / "a", 3)
    with open_readonly(db) as conn:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO cursorDiskKV VALUES ('x', 'y')")
        assert conn.execute("SELECT count(*) FROM cursorDiskKV").fetchone()[0] == 3
    writer.close()


def test_uncreatable_wal_and_no_wal_falls_back_to_immutable(tmp_path: Path) -> None:
    source, writer = _wal_database(tmp_path / "src", 4)
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = _unwritable_side_files(source, tmp_path / "ro", with_wal=False)
    writer.close()
    assert _count(db) == 4


def test_wal_with_frames_is_read_from_a_private_snapshot(tmp_path: Path) -> None:
    source, writer = _wal_database(tmp_path / "src", 5)
    assert os.path.getsize(str(source) + "-wal") > 0
    db = _unwritable_side_files(source, tmp_path / "ro", with_wal=True)
    writer.close()
    before = set(Path(tempfile.gettempdir()).glob("codeburn-snapshot-*"))
    assert _count(db) == 5  # rows only in the WAL are seen
    assert set(Path(tempfile.gettempdir()).glob("codeburn-snapshot-*")) == before


def test_missing_database(tmp_path: Path) -> None:
    with pytest.raises(DatabaseMissingError), open_readonly(tmp_path / "none.vscdb"):
        pass


def test_rollback_journal_lock_is_reported_as_locked(tmp_path: Path) -> None:
    db = tmp_path / "state.vscdb"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE, value BLOB)")
    conn.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseLockedError), open_readonly(db) as reader:
            reader.execute("SELECT count(*) FROM cursorDiskKV").fetchone()
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_without_fallback_a_folder_sqlite_cannot_write_raises_and_copies_nothing(
    tmp_path: Path,
) -> None:
    """`fallback=False` (the refresh's count on a thread, `ide.row_count`): never a snapshot
    copy of a read-only folder's database; the caller does without."""
    from codeburn.providers.sqlite_ro import CursorDbError  # noqa: PLC0415

    source, writer = _wal_database(tmp_path / "src", 5)
    db = _unwritable_side_files(source, tmp_path / "ro", with_wal=True)
    writer.close()
    before = set(Path(tempfile.gettempdir()).glob("codeburn-snapshot-*"))
    with pytest.raises(CursorDbError), open_readonly(db, fallback=False):
        pass
    assert set(Path(tempfile.gettempdir()).glob("codeburn-snapshot-*")) == before
    assert _count(db) == 5  # with the fallback, as before
