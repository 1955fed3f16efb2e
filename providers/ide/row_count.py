"""A refresh's count of the table's rows, taken on a thread of its own while the refresh reads.

A refresh tells that no row at or below the last ROWID it read went away by counting the table
(`SELECT count(*)`, SQLite walks the key index: the largest single cost of a refresh). SQLite
runs the statement without the GIL, so a second connection counts on the other core while the
refresh reads the conversation index on its own.

The two connections must agree on what they count. The count is started once the refresh's
read transaction has its snapshot, so the count's snapshot is that one or a later one. A later
one differs from the refresh's only by commits in between: rows they added have ROWIDs above
the refresh's newest (the count's newest ROWID then differs), and rows they removed make the
count smaller. The refresh's own count can only be its expected total (the last count, plus
its new rows) or less: so a count with the same newest ROWID that equals the expected total is
the refresh's own. Anything else is counted again on the refresh's connection (a row went
away, or rows came meanwhile): what the refresh keeps is always its own snapshot's count.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from codeburn.providers.ide import sql as scan
from codeburn.providers.sqlite_ro import CursorDbError, open_readonly


class RowCount:
    """`SELECT count(*)` and the newest ROWID of the table, read together on a thread."""

    def __init__(self, db_path: Path) -> None:
        self._db_path = db_path
        self._result: tuple[int, int] | None = None
        self._thread = threading.Thread(target=self._run, name="codeburn-row-count", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            # Never a snapshot copy of a read-only folder's database: the refresh counts then.
            with open_readonly(self._db_path, fallback=False) as conn:
                conn.execute("BEGIN")
                try:
                    total = scan.total_count(conn)
                    newest = scan.newest_rowid(conn)
                finally:
                    conn.execute("COMMIT")
            self._result = (total, newest)
        except (sqlite3.Error, CursorDbError, OSError):
            self._result = None  # the refresh counts on its own connection

    def close(self) -> None:
        """Wait for the thread (a refresh that gave up early): none is left running."""
        self._thread.join()

    def total(self, conn: sqlite3.Connection, newest: int, expected: int) -> int:
        """The table's rows in the refresh's snapshot (`conn`, whose newest ROWID is
        `newest`): `expected` when the thread's count says so, else counted on `conn`."""
        self._thread.join()
        result = self._result
        if result is not None and result == (expected, newest):
            return expected
        return scan.total_count(conn)
