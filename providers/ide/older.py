"""A full parse's older bubbles, read in a forked child while the caller reads the newer ones.

A cold scan of a large database is one SQLite pass over every bubble plus Python per row, all
in one process, while the second core is idle once the agent stream is walked. So the child
(where the read's plan forks: the CLI), forked before the Cursor 3.x pass, reads the bubbles below a
split ROWID, newest first, each text already counted (`rows.counted_rows`), and sends them
page by page; then, when that is its job, it walks the agent stream, leaving out the rows the
caller's 3.x pass posts to it (`runtime.Mailbox`: its graphs' blobs). The caller reads the
bubbles above the split, then takes the child's pages as its scan reaches them. The caller
keeps every rule of the scan (floor, budget, pages): it is given exactly the rows its own SQL
would have given.
The child stops at the bottom of the table, after the rows the caller can need (the scan
budget), or at a page wholly before the floor; if the caller's scan goes on past where the
child stopped, it reads the rest itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final, cast

from codeburn.providers.agent import StreamWalker
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.rows import counted_rows
from codeburn.providers.ide.stream_rows import walk_all
from codeburn.providers.runtime import AsideParts, Mailbox
from codeburn.providers.sqlite_ro import open_readonly

# The caller's share of the rows a scan reads, so that both processes end together on two
# cores (measured: bench/README.md): the child's is less when it walks the agent stream
# after its rows, more when the caller reads a Cursor 3.x index meanwhile (its composer
# rows), more still when it has roots to follow in that pass.
SHARE_ALONE: Final = 0.5
SHARE_WITH_WALK: Final = 0.66
SHARE_WITH_WALK_AND_INDEX: Final = 0.64
SHARE_WITH_WALK_AND_ROOTS: Final = 0.55

Send = Callable[[object], None]


def caller_share(*, walk: bool, roots: bool, indexed: bool = False) -> float:
    """The caller's share of the scan (see SHARE_*)."""
    if not walk:
        return SHARE_ALONE
    if roots:
        return SHARE_WITH_WALK_AND_ROOTS
    return SHARE_WITH_WALK_AND_INDEX if indexed else SHARE_WITH_WALK


def split_rowid(last_rowid: int, bubbles: int, budget: int, share: float) -> int:
    """The ROWID under which the child reads: the caller gets about `share` of the bubbles
    a scan reads (at most the budget), taking bubbles as spread evenly over the ROWIDs."""
    if bubbles <= 0:
        return 0
    wanted = share * min(bubbles, budget)
    return max(1, last_rowid - int(last_rowid * wanted / bubbles))


def older_work(
    db_path: Path,
    *,
    upto: int,
    split: int,
    limit: int,
    page_rows: int,
    floor_iso: str,
    sparse: bool,
    skip: Mailbox | None,
    send: Send,
    walk_by_rowid: bool = False,
) -> None:
    """The child: pages of the bubbles below `split` (lists of counted rows, `page_rows` at
    most, as the caller's), then True if
    those reached the bottom (else False); then, given a `skip` mailbox, the stream walker
    over every agent row but the ones the caller posts to it (`walk_by_rowid`: see
    `stream_rows.walk_whole`)."""
    if skip is not None:
        skip.listen()
    send(_older_pages(db_path, split, limit, page_rows, floor_iso, sparse, send))
    if skip is not None:
        skipped = cast(frozenset[int], skip.receive())
        send(walk_all(db_path, upto, skipped, page_rows, rowids=walk_by_rowid))


def _older_pages(
    db_path: Path,
    split: int,
    limit: int,
    page_rows: int,
    floor_iso: str,
    sparse: bool,
    send: Send,
) -> bool:
    """Sends the pages; whether they reached the bottom of the table."""
    with open_readonly(db_path) as conn:
        rowids = scan.bubble_rowids(conn, split - 1) if sparse else None
        mode = scan.ScanMode()
        below, sent = split, 0
        while sent < limit:
            want = min(page_rows, limit - sent)
            page: list[scan.BubbleRow] = []
            for batch in scan.bubble_rows(conn, below, want, mode, rowids):
                page += counted_rows(batch)
            if page:
                send(page)
                sent += len(page)
                below = page[-1][0]
            if len(page) < want:
                return True
            if _before_floor(page, floor_iso):
                break
    return False


def _before_floor(page: list[scan.BubbleRow], floor_iso: str) -> bool:
    """Every dated row of the page is before the floor, and one is: the scan stops here."""
    before = False
    for row in page:
        created = row[3]
        if type(created) is str:
            if created >= floor_iso:
                return False
            before = True
    return before


class OlderRows:
    """The caller's side: the child's rows, taken as the scan reaches them, then its walker."""

    def __init__(self, parts: AsideParts, split: int, skip: Mailbox | None) -> None:
        self.split = split
        self._parts = parts
        self._skip = skip
        self._page: list[scan.BubbleRow] = []
        self._at = 0
        self._end: bool | None = None  # True: the child's rows reached the bottom

    @property
    def walks(self) -> bool:
        return self._skip is not None

    @property
    def complete(self) -> bool:
        """No bubble is below the child's last row (so none below what `take` gave)."""
        return self._end is True

    def post_skip(self, skip: frozenset[int]) -> None:
        """The agent rows the child's stream walk leaves out (the graphs' blobs)."""
        if self._skip is not None:
            self._skip.post(skip)

    def walker(self) -> StreamWalker:
        """The child's walker (its rows the caller did not take are passed over)."""
        while self._end is None:
            self._next_page()
        return cast(StreamWalker, self._parts.next())

    def take(self, below: int, want: int) -> list[scan.BubbleRow]:
        """Up to `want` of the child's rows with ROWID < below, newest first; fewer when its
        rows ran out (`complete` tells whether the table did too)."""
        rows: list[scan.BubbleRow] = []
        while len(rows) < want:
            if self._at >= len(self._page):
                if self._end is not None:
                    break
                self._next_page()
                continue
            if self._page[self._at][0] >= below:
                self._at += 1
                continue
            end = min(len(self._page), self._at + want - len(rows))
            rows += self._page[self._at : end]
            self._at = end
        return rows

    def close(self) -> None:
        """Stop the child (its rows are not needed any more, or the parse failed)."""
        if self._skip is not None:
            self._skip.close()
        self._parts.cancel()

    def _next_page(self) -> None:
        part = self._parts.next()
        if isinstance(part, bool):
            self._end = part
            self._page, self._at = [], 0
        else:
            self._page, self._at = cast(list[scan.BubbleRow], part), 0
