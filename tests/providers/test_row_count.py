"""The refresh's row count taken on a thread (`row_count`): it is used only when it must be
the refresh's own snapshot's count; otherwise the refresh's connection counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.row_count import RowCount

ROWS = 40


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.vscdb"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    rows = [(f"bubbleId:c:{i:03d}", "{}") for i in range(ROWS)]
    conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def refresh(db: Path) -> Iterator[sqlite3.Connection]:
    """The refresh's connection, its read transaction begun (its snapshot taken)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    conn.execute("BEGIN")
    scan.key_at(conn, 1)
    yield conn
    conn.execute("COMMIT")
    conn.close()


def _write(db: Path, sql: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute(sql)
    conn.commit()
    conn.close()


def test_the_threads_count_is_used_when_it_is_the_expected_total(
    db: Path, refresh: sqlite3.Connection
) -> None:
    counting = RowCount(db)
    assert counting.total(refresh, scan.newest_rowid(refresh), ROWS) == ROWS


def test_a_row_gone_is_counted_in_the_refreshs_own_snapshot(
    db: Path, refresh: sqlite3.Connection
) -> None:
    """The refresh expected one row more than its snapshot holds: its own count says so."""
    _write(db, "DELETE FROM cursorDiskKV WHERE rowid = 5")  # after the refresh's snapshot
    counting = RowCount(db)  # its snapshot: one row fewer than the refresh's
    newest = scan.newest_rowid(refresh)
    assert counting.total(refresh, newest, ROWS) == ROWS  # the refresh's snapshot has them all
    assert counting.total(refresh, newest, ROWS + 1) == ROWS


def test_rows_added_after_the_refreshs_snapshot_are_not_counted(
    db: Path, refresh: sqlite3.Connection
) -> None:
    """The refresh expects one row more than its snapshot holds (one went away before it);
    a row added after its snapshot makes the thread's count that total: not the refresh's."""
    newest = scan.newest_rowid(refresh)
    _write(db, "INSERT INTO cursorDiskKV VALUES ('bubbleId:c:new', '{}')")
    counting = RowCount(db)
    assert counting.total(refresh, newest, ROWS + 1) == ROWS  # counted on the refresh's


def test_a_database_the_thread_cannot_open_is_counted_by_the_refresh(
    tmp_path: Path, db: Path, refresh: sqlite3.Connection
) -> None:
    counting = RowCount(tmp_path / "gone.vscdb")
    assert counting.total(refresh, scan.newest_rowid(refresh), ROWS + 3) == ROWS
