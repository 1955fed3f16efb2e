"""The agent stream's rows in Cursor's IDE database: paged reads, in process or in a forked child.

The stream's format (records → requests) is `agent.stream`; this module only pages through the
`agentKv:blob:*` rows of `cursorDiskKV` (SQL in `ide.sql`) and feeds them to a walker.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codeburn.providers.agent import StreamWalker
from codeburn.providers.ide import sql as scan
from codeburn.providers.runtime import Aside
from codeburn.providers.sqlite_ro import open_readonly


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


class WalkAside(Aside[StreamWalker]):
    """Walks the agent stream in a forked child while the caller reads bubbles; the child
    opens its own connection (never the parent's) and sends the finished walker back."""

    def __init__(
        self, db_path: Path, upto: int, page_rows: int, skip: frozenset[int] = frozenset()
    ) -> None:
        super().__init__(lambda: walk_all(db_path, upto, skip, page_rows))


def walk_all(
    db_path: Path, upto: int, skip: frozenset[int] = frozenset(), page_rows: int = 2_000
) -> StreamWalker:
    """The agent stream up to ROWID `upto`, walked on a connection of its own."""
    walker = StreamWalker()
    with open_readonly(db_path) as conn:
        walk_pages(conn, walker, 0, upto, page_rows, skip)
    return walker
