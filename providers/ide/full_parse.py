"""A `CursorReader`'s full parse: bubble pages newest-first, the Cursor 3.x pass and the agent
stream, split across processes where that pays (`runtime`)."""

from __future__ import annotations

import gc
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, Final, cast

from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.emit import Conversation
from codeburn.providers.ide.inline import NO_DATE, inline_rows
from codeburn.providers.ide.layout3 import (
    META_PLACES,
    TIMES_PLACES,
    UNREADABLE,
    BlobMemo,
    JsonRecords,
    PackedRecords,
    PackedRowids,
    json_records,
    memo_head_ok,
    memo_rows,
    pack_records,
    packed_blob_rowids,
    read_memo,
    rows_bytes,
    unpack_records,
    unpack_rowids,
)
from codeburn.providers.ide.older import (
    OlderRows,
    caller_share,
    older_work,
    split_rowid,
)
from codeburn.providers.ide.reader_state import ReaderState
from codeburn.providers.ide.rows import BubbleScan, ConvState, composer_of
from codeburn.providers.ide.stream_rows import WalkAside, walk_whole
from codeburn.providers.runtime import (
    AsideParts,
    Mailbox,
    freeze_state,
    thaw_state,
)
from codeburn.providers.sqlite_ro import open_readonly

# Bubbles under 1/4 of the rows (Cursor 3.x): pages ask for them by ROWID (see bubble_batches).
SPARSE_BUBBLES: Final = 4

Progress = Callable[[int, int], None]
_Prepared = deque[Conversation]  # conversations to emit once the agent stream is walked


class FullParse(ReaderState):
    """A `CursorReader`'s full parse (see `ReaderState`)."""

    def _thaw_and_reset(self) -> None:
        """What the last full parse froze goes back to the collector; once the old state is
        dropped, one collection frees any cycles that died while frozen (a first parse has
        nothing to thaw: no collection)."""
        thaw = gc.get_freeze_count() > 0
        if thaw:
            thaw_state()
        self._reset()
        if thaw:
            gc.collect()

    def _full(self, conn: sqlite3.Connection, progress: Progress | None) -> None:
        self._thaw_and_reset()
        self._ident = self._stat()
        self._count_rows(conn)
        many = self._agent_count >= self.plan.walk_rows and self.plan.may_fork()
        one_pass = self._one_blob_pass(conn)
        # With a memo the JSON rows are mostly remembered: the second process scans bubbles only.
        # Forked before the memo is decoded (not quick): its ROWIDs come sooner.
        stored = self._memo_file.load() if one_pass and self._memo_file is not None else None
        kept = memo_head_ok(stored, str(self.db_path))
        cold = _ColdSide(self, records=not kept) if many and one_pass else None
        memo = self._load_memo(stored) if one_pass else None
        del stored
        # Forked before the 3.x pass, so that its bubbles are read meanwhile (`older`).
        older = self._older_aside(conn, walk=many and not one_pass) if cold is None else None
        try:
            acc, skip, records = self._layout3_pass(conn, one_pass, cold, memo)
            if older is not None:
                older.post_skip(skip)
            prepared = self._bubbles_and_stream(
                conn, progress, acc, skip, records, older, partial(self._prepare_scan, conn)
            )
        finally:
            if older is not None:
                older.close()
        self._walker.touched.clear()
        self._finish_scan(conn, prepared)
        self._ready = True
        self._full_at = time.monotonic()
        # Hundreds of thousands of long-lived, acyclic objects: keep later collections (in
        # the report that follows, or a server's next hour) from walking them again.
        freeze_state()

    def _layout3_pass(
        self,
        conn: sqlite3.Connection,
        one_pass: bool,
        cold: _ColdSide | None,
        memo: BlobMemo | None,
    ) -> tuple[BubbleScan | None, frozenset[int], JsonRecords | None]:
        """The 3.x pass of a full parse: the bubble scan when the cold side made it, the agent
        rows the graphs own, and the JSON records when the one pass read them."""
        # What the cold side sends first was chosen before the memo was read: a memo that
        # looked kept and is not (damaged, rare) leaves the JSON rows to the pass, here.
        sends_records = cold is not None and cold.sends_records
        rowids_aside = cold.rowids if cold and not sends_records and memo else None
        acc: BubbleScan | None = None
        try:
            self._read_layout3(
                conn,
                scan_upto=self._last_rowid if one_pass else None,
                json_aside=cold.records if cold and sends_records and not memo else None,
                memo=memo,
                rowids_aside=rowids_aside,
                remember=self.plan.long_lived,
            )
            skip, records = self._l3.skip_rowids, self._l3.records
            self._l3.records = None
            if not self.plan.long_lived:
                self._l3.forget_memos()
            if records is not None:  # the 3.x pass read the agent rows already
                self._walker.feed_records(r for i, r in reversed(records) if i not in skip)
            self._save_memo(memo)
            if cold is not None:
                acc = cold.bubbles(self)
        finally:
            if cold is not None:
                cold.cancel()
        return acc, skip, records

    def _bubbles_and_stream(
        self,
        conn: sqlite3.Connection,
        progress: Progress | None,
        acc: BubbleScan | None,
        skip: frozenset[int],
        records: JsonRecords | None,
        older: OlderRows | None,
        meanwhile: Callable[[BubbleScan], _Prepared],
    ) -> _Prepared:
        """The bubble scan (unless the cold side made it) and the agent stream's walk (unless
        the 3.x pass fed it): here, in the older-bubbles child or in a walk of its own.
        `meanwhile(scan)` (what of the installs needs no stream) runs once the scan is done
        and before the walker is taken from another process, which is then still walking."""
        walks = older is not None and older.walks  # then records is None: no one pass
        aside = None
        if (
            records is None
            and self._agent_count >= self.plan.walk_rows
            and not walks
            and self.plan.may_fork()
        ):
            aside = WalkAside(
                self.db_path,
                self._last_rowid,
                self.plan.page_rows,
                skip,
                rowids=self._agents_by_rowid(),
            )
        try:
            if acc is None:
                acc = self._scan_bubbles(conn, progress, older)
            prepared = meanwhile(acc)
            if walks and older is not None:
                self._walker = older.walker()
            elif aside is not None:
                self._walker, aside = aside.result(), None
            elif records is None:
                walk_whole(
                    conn, self._walker, self._last_rowid, self.plan.page_rows, skip,
                    by_rowid=self._agents_by_rowid(),
                )  # fmt: skip
        finally:
            if aside is not None:
                aside.cancel()
        return prepared

    def _load_memo(self, stored: bytes | None) -> BlobMemo | None:
        """The blob memo kept for this database in `stored` (the memo file's content; empty:
        none or unusable); None: none is kept."""
        if self._memo_file is None:
            return None
        return read_memo(stored, str(self.db_path)) or BlobMemo()

    def _save_memo(self, before: BlobMemo | None) -> None:
        """Keep what this full parse remembers, unless the kept memo says the same already
        (blobs and roots are content-addressed: the same keys hold the same results)."""
        memo, self._l3.memo = self._l3.memo, None
        if memo is None or self._memo_file is None:
            return
        if before is not None and (
            memo.graphs.keys() == before.graphs.keys()
            and memo.records.keys() == before.records.keys()
        ):
            return
        # The rows are made here: a writer that made them would write to every object they
        # hold (its reference counts), each page of it then copied from this process.
        rows, memo_file, db_key = memo_rows(memo), self._memo_file, str(self.db_path)

        def save() -> None:
            memo_file.save(rows_bytes(rows, db_key))

        # Encoding and writing it is nothing the read waits for: a command's writer forked
        # once its answer is out, beside the cache files it writes itself.
        if not (memo_file.background and self.plan.detach(save, at_end=True)):
            save()

    def _one_blob_pass(self, conn: sqlite3.Connection) -> bool:
        """Whether a full parse reads the blobs in one pass shared by the roots and the agent
        stream (`blob_scan`): only when roots exist and bubbles are sparse (Cursor 3.x), where
        roots reach most blobs. A database of bubbles with the 3.x index and no root (a 3.x
        user whose history is still bubbles) pays nothing for the index beyond the composer
        rows; with a few roots they are looked up by key while the stream is walked aside, as
        in a database of older builds (the one pass is slower for such a profile). The plan
        may choose."""
        chosen = self.plan.one_blob_pass
        return self._sparse() and self._roots(conn) if chosen is None else chosen

    def _count_rows(self, conn: sqlite3.Connection) -> None:
        """The last row and the family counts, in one read transaction."""
        conn.execute("BEGIN")
        try:
            self._last_rowid, self._last_key = scan.last_row(conn)
            # In this transaction every row is at or below the last ROWID.
            self._bubble_count, self._agent_count, self._total_count = scan.family_counts(conn)
        finally:
            conn.execute("COMMIT")

    def _prepare_scan(self, conn: sqlite3.Connection, acc: BubbleScan) -> _Prepared:
        """What of every scanned conversation's install needs no agent stream (`_prepare`),
        in the order `_finish_scan` emits them."""
        self._load_projects()
        inline = inline_rows(conn)
        self._inline = bool(inline)
        if inline:
            acc.add(inline)
        if acc.pending:
            pending = list(acc.pending)
            acc.date_undated(
                self._composer_fields(conn, pending, TIMES_PLACES, scan.composer_times)
            )
        if inline:
            self._undatable_inline(acc, inline)
        meta = self._composer_fields(conn, list(acc.bubbles), META_PLACES, scan.composer_meta)
        self._l3.data_fields = None
        for composer, unkept in acc.unkept.items():
            self._convs[composer] = ConvState(unkept=unkept, undated=acc.undated.get(composer, 0))
        for composer, count in acc.inferred.items():
            self._convs.setdefault(composer, ConvState()).inferred = count
        bubbles_of, prepared = acc.bubbles, deque[Conversation]()
        for composer in list(bubbles_of):
            conv = self._prepare(composer, bubbles_of.pop(composer), meta.get(composer))
            if conv is not None:
                prepared.append(conv)
        return prepared

    def _finish_scan(self, conn: sqlite3.Connection, prepared: _Prepared) -> None:
        """Every scanned conversation's calls, then the stream-only requests'."""
        while prepared:
            # Popping frees each conversation's rows as soon as its calls exist.
            self._emit(prepared.popleft())
        self._rebuild_stream_calls(conn)

    def _composer_fields(
        self,
        conn: sqlite3.Connection,
        composer_ids: list[str],
        places: tuple[int, ...],
        read: Callable[[sqlite3.Connection, list[str]], dict[str, tuple[Any, ...]]],
    ) -> dict[str, tuple[Any, ...]]:
        """`read` (`sql.composer_meta` at `META_PLACES`, `sql.composer_times` at
        `TIMES_PLACES`) of these conversations: as the 3.x pass parsed their rows (each
        composerData row read once), else here."""
        found, missing = self._l3.composer_fields(composer_ids, places)
        if missing:
            found.update(read(conn, missing))
        return found

    def _undatable_inline(self, acc: BubbleScan, inline: list[Any]) -> None:
        """An inline composer (0.44–0.45) none of whose messages could be dated is unreadable
        ("no date"), not a conversation of skipped messages."""
        keys = (row[1][len(scan.CALL_KEY_PREFIX) :] for row in inline)
        for composer in dict.fromkeys(map(composer_of, keys)):
            if composer is None or composer in acc.bubbles or not acc.undated.get(composer):
                continue
            acc.undated.pop(composer)
            acc.unkept.pop(composer, None)
            self._l3.conversations[composer] = UNREADABLE
            self._l3.unreadable[NO_DATE] = self._l3.unreadable.get(NO_DATE, 0) + 1
            self._l3.unreadable_ids[composer] = NO_DATE

    def _older_aside(self, conn: sqlite3.Connection, *, walk: bool) -> OlderRows | None:
        """A child for the older bubbles (and then the agent stream, given `walk`), when the
        database has enough bubbles and this process may fork (`older`)."""
        if self._bubble_count < self.plan.split_rows or not self.plan.may_fork():
            return None
        indexed = walk and self._indexed(conn)
        share = caller_share(walk=walk, roots=walk and self._roots(conn), indexed=indexed)
        split = split_rowid(self._last_rowid, self._bubble_count, self.budget, share)
        reach = min(self._bubble_count, self.budget)
        page_rows, limit = self.plan.page_rows, self.plan.older_rows
        if limit is None:
            limit = int(reach * (1 - share) * 1.1) + page_rows
        mailbox = Mailbox() if walk else None
        work = partial(
            older_work, self.db_path, upto=self._last_rowid, split=split, limit=limit,
            page_rows=page_rows, floor_iso=self.floor_iso, sparse=self._sparse(), skip=mailbox,
            walk_by_rowid=self._agents_by_rowid(),
        )  # fmt: skip
        parts = AsideParts(lambda send: work(send=send))
        return OlderRows(parts, split, mailbox)

    def _sparse(self) -> bool:
        return self._bubble_count * SPARSE_BUBBLES < self._total_count

    def _cold_side_work(self, send: Callable[[object], None], records: bool = True) -> None:
        """What `_ColdSide` does in its process (on its own connections): sends the JSON rows
        (with `records` false: the blob rows' ROWIDs instead, for a parse with a memo), then
        the bubble scan with the reader state it set."""
        if records:
            send(pack_records(json_records(self.db_path, self._last_rowid)))
        else:
            with open_readonly(self.db_path) as conn:
                send(packed_blob_rowids(conn, self._last_rowid))
        with open_readonly(self.db_path) as conn:
            acc = self._scan_bubbles(conn, None)
        state: _BubbleState = (
            acc, self._scan_lo, self._skipped_sub, self._other_requests, self._cutoff
        )  # fmt: skip
        send(state)

    def _scan_bubbles(
        self, conn: sqlite3.Connection, progress: Progress | None, older: OlderRows | None = None
    ) -> BubbleScan:
        """Newest-first pages until the floor or the budget; remembers where it stopped.

        Rows are taken in small batches as SQLite yields them (each row's text is still in the
        CPU cache when it is counted); below `older.split`, from the child that read them
        (`older`). A value that is not JSON, or text that is not UTF-8, makes a read fail: it
        goes on from the last row taken, guarded or decoding with replacement from then on
        (`sql.bubble_rows`).
        """
        acc = BubbleScan(self.floor_iso, None, self.budget)
        total, done, below = self._bubble_count, 0, self._last_rowid + 1
        page_rows = self.plan.page_rows
        mode = scan.ScanMode()
        rowids = scan.bubble_rowids(conn, self._last_rowid) if self._sparse() else None
        previous_factory = conn.text_factory
        try:
            while True:
                taken = kept = before = 0
                for batch in self._page(conn, below, page_rows, mode, rowids, older):
                    batch_kept, batch_before = acc.add(batch)
                    kept += batch_kept
                    before += batch_before
                    taken += len(batch)
                    below = batch[-1][0]
                done += taken
                if progress is not None and taken:
                    progress(min(done, total), total)
                if acc.budget_hit or (kept == 0 and before > 0):
                    self._scan_lo = below
                    break
                if taken < page_rows:
                    break
        finally:
            conn.text_factory = previous_factory
        self._skipped_sub = acc.subcomposer
        self._other_requests = acc.other_requests
        if acc.budget_hit:
            self._cutoff = min(b[0] for group in acc.bubbles.values() for b in group)
        return acc

    @staticmethod
    def _page(
        conn: sqlite3.Connection,
        below: int,
        want: int,
        mode: scan.ScanMode,
        rowids: list[int] | None,
        older: OlderRows | None,
    ) -> Iterator[list[scan.BubbleRow]]:
        """One page of bubble rows below `below`: the child's where it read them, else SQL."""
        if older is not None and below <= older.split:
            rows = older.take(below, want)
            if rows:
                yield rows
                below, want = rows[-1][0], want - len(rows)
            if not want or older.complete:
                return
        yield from scan.bubble_rows(conn, below, want, mode, rowids)


_BubbleState = tuple[BubbleScan, int, int, set[str], int | None]


class _ColdSide:
    """A Cursor 3.x full parse's second process (CLI only, see `runtime`): it decodes the
    blob pass's JSON rows and sends them, then scans the bubbles while this process walks the
    graphs; this process reads the composers and the protobuf blobs meanwhile. Forked before
    any of that, it shares none of this process's work."""

    def __init__(self, reader: FullParse, *, records: bool = True) -> None:
        self._aside = AsideParts(lambda send: reader._cold_side_work(send, records))
        self.sends_records = records
        self._first: object = None  # its first part: the JSON rows, or the blob ROWIDs

    def _first_part(self) -> object:
        if self._first is None:
            self._first = self._aside.next()
        return self._first

    def records(self) -> JsonRecords:
        return unpack_records(cast(PackedRecords, self._first_part()))

    def rowids(self) -> dict[str, int]:
        return unpack_rowids(cast(PackedRowids, self._first_part()))

    def bubbles(self, reader: FullParse) -> BubbleScan:
        """The child's bubble scan, with the reader state it set."""
        self._first_part()  # the part before it, when the pass did not take it
        state = cast(_BubbleState, self._aside.next())
        self._aside.done()
        acc, reader._scan_lo, reader._skipped_sub, reader._other_requests, reader._cutoff = state
        return acc

    def cancel(self) -> None:
        self._aside.cancel()
