"""The agent stream's rows in Cursor's IDE database: paged reads, in process or in a forked child.

The stream's format (records → requests) is `agent.stream`; this module only pages through the
`agentKv:blob:*` rows of `cursorDiskKV` (SQL in `ide.sql`) and feeds them to a walker.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Final

from codeburn.providers.agent import StreamWalker
from codeburn.providers.ide import sql as scan
from codeburn.providers.runtime import Aside
from codeburn.providers.sqlite_ro import open_readonly

# A whole walk reads its rows by ROWID when agent rows are under this share of the table.
BY_ROWID_SHARE: Final = 0.5


def walk_pages(
    conn: sqlite3.Connection,
    walker: StreamWalker,
    after: int,
    upto: int,
    page_rows: int,
    skip: frozenset[int] = frozenset(),
) -> None:
    """Feed the agent rows with after < ROWID <= upto to `walker`, one short read per page;
    rows in `skip` (blobs of decoded conversation graphs) are left out."""
    while True:
        rows = scan.agent_page(conn, after, upto, page_rows)
        walker.feed([r for r in rows if r[0] not in skip] if skip else rows)
        if len(rows) < page_rows:
            return
        after = rows[-1][0]


def walk_whole(
    conn: sqlite3.Connection,
    walker: StreamWalker,
    upto: int,
    page_rows: int,
    skip: frozenset[int] = frozenset(),
    *,
    by_rowid: bool = False,
) -> None:
    """Feed every agent row with ROWID <= upto to `walker` (as `walk_pages` from 0).

    `by_rowid` (agent rows a minority of the table, see `BY_ROWID_SHARE`): the rows' ROWIDs
    come from the key index and each page is read by ROWID; a ROWID range reads the pages of
    every other row in the range too (bubbles, in a database of older builds)."""
    if not by_rowid:
        walk_pages(conn, walker, 0, upto, page_rows, skip)
        return
    rowids = scan.agent_rowids(conn, upto)
    if skip:
        rowids = [r for r in rowids if r not in skip]
    for start in range(0, len(rowids), page_rows):
        walker.feed(scan.agent_rows_by_rowid(conn, rowids[start : start + page_rows]))


def by_rowid(agent_rows: int, total_rows: int) -> bool:
    """Whether a whole walk reads its rows by ROWID: agent rows under `BY_ROWID_SHARE` of the
    table: below that share reading by ROWID is faster than by key, above it slower (the
    measurements: bench/README.md)."""
    return agent_rows < total_rows * BY_ROWID_SHARE


class WalkAside(Aside[StreamWalker]):
    """Walks the agent stream in a forked child while the caller reads bubbles; the child
    opens its own connection (never the parent's) and sends the finished walker back."""

    def __init__(
        self,
        db_path: Path,
        upto: int,
        page_rows: int,
        skip: frozenset[int] = frozenset(),
        *,
        rowids: bool = False,
    ) -> None:
        super().__init__(lambda: walk_all(db_path, upto, skip, page_rows, rowids=rowids))


def walk_all(
    db_path: Path,
    upto: int,
    skip: frozenset[int] = frozenset(),
    page_rows: int = 2_000,
    *,
    rowids: bool = False,
) -> StreamWalker:
    """The agent stream up to ROWID `upto`, walked on a connection of its own (`rowids`:
    read by ROWID, see `walk_whole`)."""
    walker = StreamWalker()
    with open_readonly(db_path) as conn:
        walk_whole(conn, walker, upto, page_rows, skip, by_rowid=rowids)
    return walker
