"""Cursor's global database → calls, with an incremental refresh (docs/local-data.md).

A full parse scans bubbles newest-first in ROWID pages, stops at the floor and honours the
scan budget. Later reads of the same database look only at rows above the last seen ROWID,
re-read whole conversations that changed (one key range each) and fall back to a full parse
whenever the database no longer looks like an extension of what was read.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import itertools
import os
import sqlite3
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, Protocol, cast

from codeburn.providers.agent import Graph, StreamRequest, StreamWalker, Turn, graph_turns
from codeburn.providers.calls import CURSOR, UNMAPPED_PROJECT, Call
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.emit import (
    B_REQ,
    B_TS,
    Bubble,
    Conversation,
    bubble_turns,
    emit_conversation,
    skips_a_gauge,
)
from codeburn.providers.ide.inline import NO_DATE, inline_rows, workspace_db_message
from codeburn.providers.ide.layout3 import (
    BUBBLES,
    META_PLACES,
    ROOT,
    TIMES_PLACES,
    UNREADABLE,
    BlobMemo,
    ConversationMeta,
    JsonRecords,
    Layout3,
    PackedRecords,
    PackedRowids,
    any_json_rows,
    json_records,
    layout3_present,
    memo_bytes,
    memo_head_ok,
    pack_records,
    packed_blob_rowids,
    read_layout3,
    read_memo,
    roots_present,
    unpack_records,
    unpack_rowids,
)
from codeburn.providers.ide.older import (
    SPLIT_ROWS,
    OlderRows,
    caller_share,
    older_work,
    split_rowid,
)
from codeburn.providers.ide.paths import workspace_storage_dir
from codeburn.providers.ide.row_count import RowCount
from codeburn.providers.ide.rows import (
    BubbleScan,
    ConvState,
    composer_of,
    scan_budget,
)
from codeburn.providers.ide.stream_rows import WalkAside, by_rowid, walk_pages, walk_whole
from codeburn.providers.ide.workspaces import PROJECT_MAPS, ProjectMaps
from codeburn.providers.localtime import iso_utc
from codeburn.providers.localtime import now_ms as clock_ms
from codeburn.providers.pricing import canonical_model, cost_of
from codeburn.providers.runtime import (
    AsideParts,
    Mailbox,
    can_fork,
    detached,
    freeze_state,
    gc_paused,
    thaw_state,
)
from codeburn.providers.sqlite_ro import DatabaseUnrecognizedError, open_readonly, translate_error

PAGE_ROWS: Final = 2_000
# Agent rows worth a second process (below it, forking and sending the result back cost
# more than they save).
WALK_ASIDE_ROWS: Final = 20_000
# Bubbles under 1/4 of the rows (Cursor 3.x): pages ask for them by ROWID (see bubble_batches).
SPARSE_BUBBLES: Final = 4
RECENT_MS: Final = 15 * 60_000
FULL_PARSE_MAX_AGE_S: Final = 3600.0
BUDGET_WARNING: Final = (
    "Cursor history in this range exceeds the scan budget of {budget:,} messages; "
    "the oldest sessions in range may be missing"
)

_ROWID_OF: Final = itemgetter(0)
_REQUEST_OF: Final = itemgetter(B_REQ)
_TS_OF: Final = itemgetter(B_TS)
Progress = Callable[[int, int], None]
Meta = tuple[Any, ...]
_Prepared = deque[Conversation]  # conversations to emit once the agent stream is walked


class MemoFile(Protocol):
    """Where the Cursor 3.x blob memo is kept between runs (see `layout3.memo`)."""

    # True when `save` may run in a forked process (it writes a file, not this one's memory)
    background: bool

    def load(self) -> bytes | None: ...
    def save(self, data: bytes) -> None: ...


@dataclass(slots=True)
class ReadResult:
    calls: list[Call]
    warnings: list[str]
    skipped_subcomposer: int
    skipped_undated: int
    budget_hit: bool
    full: bool
    first_seen: dict[str, int]
    # Filled by the Cursor 3.x reader: composer id → "bubbles" | "root" | "meter" | "unreadable",
    # what the IDE knows of each conversation, and reason → conversations it could not read
    # (`unreadable_ids`: which ones, id → reason).
    conversations: dict[str, str] = field(default_factory=dict)
    metas: dict[str, ConversationMeta] = field(default_factory=dict)
    unreadable: dict[str, int] = field(default_factory=dict)
    unreadable_ids: dict[str, str] = field(default_factory=dict)
    skipped_gauges: int = 0  # conversations whose meter is above the gauge bound
    inferred_dates: int = 0  # messages dated from their conversation's times (docs/local-data.md)
    # conversation id → its recorded turns and its name (docs/attribution.md)
    turns: dict[str, tuple[Turn, ...]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    # `calls` in parts, each the same list object while its conversation is unchanged
    # (`providers.parts`); empty: `calls` is the one part
    parts: list[list[Call]] = field(default_factory=list)


class CursorReader:
    """Reads one Cursor database; keeps what an incremental refresh needs."""

    def __init__(
        self,
        db_path: Path,
        *,
        floor_ms: int,
        budget: int | None = None,
        first_seen: dict[str, int] | None = None,
        project_maps: ProjectMaps = PROJECT_MAPS,
        recent_ms: int = RECENT_MS,
        memo_file: MemoFile | None = None,
        keep_state: bool = True,
    ) -> None:
        """`keep_state=False`: a reader read once (a one-shot command): the Cursor 3.x pass's
        memos are dropped before the bubble scan, which would otherwise hold them too."""
        self.db_path = db_path
        self._memo_file = memo_file
        self.keep_state = keep_state
        self.floor_ms = floor_ms
        self.floor_iso = iso_utc(floor_ms)
        self.budget = budget if budget is not None else scan_budget()
        self.first_seen: dict[str, int] = dict(first_seen or {})
        self._project_maps = project_maps
        self._recent_ms = recent_ms
        self._reset()

    def _reset(self) -> None:
        self._ready = False
        self._convs: dict[str, ConvState] = {}
        self._request_conv: dict[str, list[str]] = {}
        self._other_requests: set[str] = set()
        self._walker = StreamWalker()
        self._agent_count = 0
        self._stream_calls: dict[str, Call] = {}
        self._dated: tuple[StreamWalker | None, int] = (None, 0)  # (walker, its requests dated)
        self._stream_part: list[Call] = []  # its values: one list object while they are the same
        # request id → (the request, its signature, its date, its call) of the last rebuild
        self._stream_made: dict[str, tuple[StreamRequest, tuple[Any, ...], int, Call | None]] = {}
        self._checked_stream_only: set[str] = set()
        self._kept_total = 0
        self._cutoff: int | None = None
        self._scan_lo = 0
        self._last_rowid = 0
        self._last_key: str | None = None
        self._bubble_count = 0
        self._total_count = 0
        self._ident: tuple[int, int] = (0, 0)
        self._full_at = 0.0
        self._skipped_sub = 0
        self._projects_fp = ""
        self._projects: dict[str, str] = {}
        self._l3 = Layout3()
        self._inline = False
        self._roots_known: bool | None = None  # this full parse's `_roots`
        # this full parse's (or refresh's) `layout3_present`: without the index it reads
        # every composerData row to say so, and it is asked up to three times
        self._index_known: bool | None = None
        # No header of either kind and no root up to the last row read: a refresh looks for
        # a root again only when a composerData row is among its new rows (looking costs more
        # as the table grows; a root written into an old row in place waits for the next
        # full parse, as such rows do in the 3.x pass)
        self._rootless = False
        # root id → (its graph, the graph's turns) of the last `turns`
        self._root_turns: dict[str, tuple[Graph, tuple[Turn, ...]]] = {}
        # recent conversation → (its rows' digest, the cutoff, its fallback model) when it
        # was last read (`_rewritten_in_place`); a dict of its own: a slot more in every
        # ConvState would raise a cold report's peak RSS
        self._seen_as: dict[str, tuple[bytes, int | None, str | None]] = {}

    # -- public -----------------------------------------------------------------------------

    def read(
        self, progress: Progress | None = None, *, now_ms: int | None = None, flat: bool = True
    ) -> ReadResult:
        """Full parse the first time or when the database changed shape; incremental otherwise.

        `flat=False` leaves `calls` empty: the calls are in `parts` only (a refresh's caller
        that takes the parts spares a list of every call)."""
        now_ms = now_ms if now_ms is not None else clock_ms()
        full = not self._incremental_possible()
        try:
            with gc_paused(), open_readonly(self.db_path) as conn:
                if not scan.has_cursor_table(conn):
                    raise DatabaseUnrecognizedError(
                        workspace_db_message(conn, self.db_path)
                        or f"Cursor storage format not recognized: {self.db_path}"
                    )
                if not scan.has_rows(conn):  # an empty global database is no data, but
                    message = workspace_db_message(conn, self.db_path)  # not a workspace's
                    if message is not None:
                        raise DatabaseUnrecognizedError(message)
                if not full:
                    full = not self._refresh(conn, now_ms)
                if full:
                    self._full(conn, progress)
        except sqlite3.Error as exc:
            self._reset()
            raise translate_error(exc, self.db_path) from exc
        except BaseException:
            self._reset()
            raise
        parts = self.call_parts()
        return ReadResult(
            calls=list(itertools.chain.from_iterable(parts)) if flat else [],
            parts=parts,
            warnings=self.warnings(),
            skipped_subcomposer=self._skipped_sub,
            skipped_undated=sum(c.undated for c in self._convs.values()),
            inferred_dates=sum(c.inferred for c in self._convs.values()),
            budget_hit=self._cutoff is not None,
            full=full,
            first_seen=dict(self.first_seen),
            conversations=self.conversations(),
            metas=dict(self._l3.metas),
            unreadable=dict(self._l3.unreadable),
            unreadable_ids=dict(self._l3.unreadable_ids),
            skipped_gauges=sum(c.skipped_gauge for c in self._convs.values())
            + len(self._l3.skipped_gauges),
            turns=self.turns(),
            titles=self.titles(),
        )

    def turns(self) -> dict[str, tuple[Turn, ...]]:
        """Recorded turns of every conversation read from bubbles or a root graph."""
        out = {cid: state.turns for cid, state in self._convs.items() if state.turns}
        before, kept = self._root_turns, {}
        for cid, rep in self._l3.conversations.items():
            held = self._l3.graphs.get(cid)
            if rep == ROOT and held is not None and cid not in out:
                last = before.get(cid)
                if last is None or last[0] is not held[1]:  # a root's graph: a new object
                    last = (held[1], graph_turns(held[1]))
                kept[cid] = last
                if last[1]:
                    out[cid] = last[1]
        self._root_turns = kept
        return out

    def titles(self) -> dict[str, str]:
        out = {cid: m.title for cid, m in self._l3.metas.items() if m.title}
        out.update((cid, state.title) for cid, state in self._convs.items() if state.title)
        return out

    def calls(self) -> list[Call]:
        return list(itertools.chain.from_iterable(self.call_parts()))

    def call_parts(self) -> list[list[Call]]:
        """`calls` in parts: each the same list object while its conversation is unchanged."""
        parts = [conv.calls for conv in self._convs.values() if conv.calls]
        if self._stream_part:
            parts.append(self._stream_part)
        parts.extend(self._l3.parts)
        return parts

    def conversations(self) -> dict[str, str]:
        """How each conversation was read; bubbles first, then Cursor 3.x representations."""
        found = {c: BUBBLES for c, s in self._convs.items() if s.kept or s.unkept or s.undated}
        found.update(dict.fromkeys(self._l3.bubble_ids, BUBBLES))
        found.update(self._l3.conversations)
        return found

    def warnings(self) -> list[str]:
        return [BUDGET_WARNING.format(budget=self.budget)] if self._cutoff is not None else []

    # -- identity ---------------------------------------------------------------------------

    def _stat(self) -> tuple[int, int]:
        st = os.stat(self.db_path)
        return st.st_ino, st.st_size

    def _db_mtime_ms(self) -> int:
        times = [os.stat(self.db_path).st_mtime_ns]
        with contextlib.suppress(OSError):
            wal = os.stat(str(self.db_path) + "-wal")
            if wal.st_size:  # opening a WAL database read-only creates an empty WAL
                times.append(wal.st_mtime_ns)
        return max(times) // 1_000_000

    def _incremental_possible(self) -> bool:
        if not self._ready or time.monotonic() - self._full_at > FULL_PARSE_MAX_AGE_S:
            return False
        if self._inline:  # inline composers change in place: no new rows to refresh from
            return False
        try:
            ino, size = self._stat()
        except OSError:
            return False
        return ino == self._ident[0] and size >= self._ident[1]

    # -- full parse -------------------------------------------------------------------------

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
        many = self._agent_count >= WALK_ASIDE_ROWS and can_fork()
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
                remember=self.keep_state,
            )
            skip, records = self._l3.skip_rowids, self._l3.records
            self._l3.records = None
            self._save_memo(memo)
            if not self.keep_state:
                self._l3.forget_memos()
            if records is not None:  # the 3.x pass read the agent rows already
                self._walker.feed_records(r for i, r in reversed(records) if i not in skip)
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
        if records is None and self._agent_count >= WALK_ASIDE_ROWS and not walks and can_fork():
            aside = WalkAside(
                self.db_path, self._last_rowid, PAGE_ROWS, skip, rowids=self._agents_by_rowid()
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
                    conn, self._walker, self._last_rowid, PAGE_ROWS, skip,
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
        kept, memo_file, db_key = memo, self._memo_file, str(self.db_path)

        def save() -> None:
            memo_file.save(memo_bytes(kept, db_key))

        # Encoding and writing it is nothing the read waits for.
        if not (memo_file.background and detached(save)):
            save()

    def _one_blob_pass(self, conn: sqlite3.Connection) -> bool:
        """Whether a full parse reads the blobs in one pass shared by the roots and the agent
        stream (`blob_scan`): only when roots exist and bubbles are sparse (Cursor 3.x), where
        roots reach most blobs. A database of bubbles with the 3.x index and no root (a 3.x
        user whose history is still bubbles) pays nothing for the index beyond the composer
        rows; with a few roots they are looked up by key while the stream is walked aside, as
        in a database of older builds (the one pass is slower for such a profile)."""
        return self._sparse() and self._roots(conn)

    def _roots(self, conn: sqlite3.Connection) -> bool:
        """Whether the 3.x index and a root exist: looked up once per full parse (a database
        without roots reads every composerData row to say so)."""
        if self._roots_known is None:
            self._roots_known = self._indexed(conn) and roots_present(conn)
        return self._roots_known

    def _indexed(self, conn: sqlite3.Connection) -> bool:
        """`layout3_present`, looked up once per full parse or refresh."""
        if self._index_known is None:
            self._index_known = layout3_present(conn, roots=False if self._rootless else None)
            self._rootless = not self._index_known
        return self._index_known

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
        if self._bubble_count < SPLIT_ROWS or not can_fork():
            return None
        indexed = walk and self._indexed(conn)
        share = caller_share(walk=walk, roots=walk and self._roots(conn), indexed=indexed)
        split = split_rowid(self._last_rowid, self._bubble_count, self.budget, share)
        reach = min(self._bubble_count, self.budget)
        limit = int(reach * (1 - share) * 1.1) + PAGE_ROWS
        mailbox = Mailbox() if walk else None
        work = partial(
            older_work, self.db_path, upto=self._last_rowid, split=split, limit=limit,
            page_rows=PAGE_ROWS, floor_iso=self.floor_iso, sparse=self._sparse(), skip=mailbox,
            walk_by_rowid=self._agents_by_rowid(),
        )  # fmt: skip
        parts = AsideParts(lambda send: work(send=send))
        return OlderRows(parts, split, mailbox)

    def _sparse(self) -> bool:
        return self._bubble_count * SPARSE_BUBBLES < self._total_count

    def _agents_by_rowid(self) -> bool:
        """Whether a whole walk of the agent stream reads its rows by ROWID (`by_rowid`)."""
        return by_rowid(self._agent_count, self._total_count)

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
        total, done, below, page_rows = self._bubble_count, 0, self._last_rowid + 1, PAGE_ROWS
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

    def _load_projects(self) -> bool:
        """Refresh the workspace mapping, with Cursor 3.x projects over it; True on a change."""
        fingerprint, mapping = self._project_maps.get(workspace_storage_dir(self.db_path))
        changed = fingerprint != self._projects_fp
        if self._l3.projects:
            mapping = {**mapping, **self._l3.projects}
            changed = changed or mapping != self._projects
        self._projects_fp, self._projects = fingerprint, mapping
        return changed

    def _read_layout3(
        self,
        conn: sqlite3.Connection,
        probe: set[str] | Callable[[], set[str] | None] | None = None,
        *,
        scan_upto: int | None = None,
        json_aside: Callable[[], JsonRecords] | None = None,
        memo: BlobMemo | None = None,
        rowids_aside: Callable[[], dict[str, int]] | None = None,
        settled_before_ms: int | None = None,
        remember: bool = True,
    ) -> frozenset[int]:
        """The Cursor 3.x pass; returns the agent rows whose skipping changed. `probe`: the
        conversations whose bubble rows may have changed (None: any; a callable: asked once
        the pass needs it); `scan_upto`: a full
        parse's one pass over the blobs (see read_layout3)."""
        fingerprint, mapping = self._project_maps.get(workspace_storage_dir(self.db_path))
        before = self._l3.skip_rowids
        self._l3 = read_layout3(
            conn, self.db_path, mapping, self._l3, probe=probe, scan_upto=scan_upto,
            json_aside=json_aside, memo=memo, rowids_aside=rowids_aside,
            settled_before_ms=settled_before_ms, remember=remember, index_known=self._indexed(conn),
            fingerprint=fingerprint,
        )  # fmt: skip
        changed = self._l3.skip_changed
        return changed if changed is not None else before ^ self._l3.skip_rowids

    # -- conversations ----------------------------------------------------------------------

    def _install(self, composer: str, bubbles: list[Bubble], meta: Meta | None) -> None:
        """(Re)build one conversation's calls from its kept bubbles."""
        conv = self._prepare(composer, bubbles, meta)
        if conv is not None:
            self._emit(conv)

    def _prepare(
        self, composer: str, bubbles: list[Bubble], meta: Meta | None
    ) -> Conversation | None:
        """`_install` up to the calls, which need the agent stream: the conversation to emit
        (its `stream` still empty), or None when no bubble is kept (it has no calls)."""
        bubbles.sort()
        state = self._convs.setdefault(composer, ConvState())
        for request in state.requests:
            owners = self._request_conv.get(request)
            if owners is not None and composer in owners:
                owners.remove(composer)
                if not owners:
                    del self._request_conv[request]
        self._kept_total += len(bubbles) - len(state.kept)
        state.kept = array("q", map(_ROWID_OF, bubbles))
        state.requests = list(dict.fromkeys(filter(None, map(_REQUEST_OF, bubbles))))
        for request in state.requests:
            self._request_conv.setdefault(request, []).append(composer)
        state.newest_ms = max(map(_TS_OF, bubbles), default=0)
        state.skipped_gauge = False
        name = meta[3] if meta is not None and len(meta) > 3 else None
        state.title = name if isinstance(name, str) and name else None
        # Inferred dates are no turn times (docs/attribution.md): such a conversation matches by
        # id only.
        state.turns = () if state.inferred else bubble_turns(bubbles)
        if not bubbles:
            state.calls = []
            return None
        return Conversation(
            composer_id=composer,
            bubbles=bubbles,
            meta=meta,
            stream=(),
            project=self._projects.get(composer, UNMAPPED_PROJECT),
            fallback_model=self._l3.models.get(composer),
        )

    def _emit(self, conv: Conversation) -> None:
        """The calls of a `_prepare`d conversation, with its requests of the agent stream."""
        state, streams = self._convs[conv.composer_id], self._walker.requests
        conv.stream = [streams[r] for r in state.requests if r in streams]
        calls = emit_conversation(conv)
        # A recent conversation is read again at every refresh: when nothing changed, its old
        # list stays (the same part, so nothing after the read looks at it again).
        if calls != state.calls:
            state.calls = calls
        state.skipped_gauge = skips_a_gauge(conv)

    # -- agent-stream-only requests ---------------------------------------------------------

    def _stream_call(self, request: StreamRequest, ts: int) -> Call | None:
        inp, out = request.input_tokens, request.output_tokens
        if not inp and not out:
            return None
        model = canonical_model(request.model)
        cost, priced = cost_of(model, inp, out)
        return Call(
            key=f"cursor:agentKv:{request.request_id}",
            provider=CURSOR,
            model=model,
            project=UNMAPPED_PROJECT,
            session=request.request_id,
            timestamp_ms=ts,
            input_tokens=inp,
            output_tokens=out,
            cost=cost,
            estimated=True,
            priced=priced,
            tools=tuple(request.tools),
            commands=tuple(request.commands),
        )

    def _rebuild_stream_calls(self, conn: sqlite3.Connection) -> None:
        """Requests that join no bubble of the database stand on their own, dated first-seen.

        Set operations pick them out of every request (not one by one, at every refresh),
        in the requests' order; a call whose request and date did not change is kept."""
        mtime = self._db_mtime_ms()
        requests, first_seen = self._walker.requests, self.first_seen
        # A walker only adds requests: those it had at the last rebuild are dated already.
        walker, dated = self._dated
        for request_id in itertools.islice(requests, dated if walker is self._walker else 0, None):
            first_seen.setdefault(request_id, mtime)
        self._dated = (self._walker, len(requests))
        conv, other, l3 = self._request_conv, self._other_requests, self._l3.request_ids
        alone = [r for r in requests if r not in conv and r not in other and r not in l3]
        candidates = [r for r in alone if first_seen[r] >= self.floor_ms]
        unchecked = [r for r in candidates if r not in self._checked_stream_only]
        if self._scan_lo and unchecked:
            self._other_requests |= scan.request_ids_below(conn, self._scan_lo, unchecked)
        self._checked_stream_only.update(unchecked)
        before = self._stream_made
        made: dict[str, tuple[StreamRequest, tuple[Any, ...], int, Call | None]] = {}
        calls: dict[str, Call] = {}
        for request_id in candidates:
            if request_id in self._other_requests:
                continue
            request, ts = requests[request_id], first_seen[request_id]
            signature = request.signature()
            kept = before.get(request_id)
            if kept is None or kept[0] is not request or kept[1] != signature or kept[2] != ts:
                kept = (request, signature, ts, self._stream_call(request, ts))
            made[request_id] = kept
            if kept[3] is not None:
                calls[request_id] = kept[3]
        self._stream_made = made
        old = self._stream_calls
        if len(calls) != len(old) or any(
            a is not b for a, b in zip(calls.values(), old.values(), strict=True)
        ):
            self._stream_calls = calls
            self._stream_part = list(calls.values())

    # -- incremental refresh ----------------------------------------------------------------

    def _refresh(self, conn: sqlite3.Connection, now_ms: int) -> bool:
        """Apply what changed since the last read; False when only a full parse is safe.

        The table's count, which tells whether any row at or below the last ROWID went away,
        is taken on another connection meanwhile (`row_count`): the conversation index and
        the recent conversations' digests are read in the same read transaction before it is
        needed (the index's bubble probe needs it)."""
        conn.execute("BEGIN")
        try:
            at_last = scan.key_at(conn, self._last_rowid)
            counting = RowCount(self.db_path)  # after this snapshot began (see row_count)
            new_rows = scan.rows_after(conn, self._last_rowid)
            rewritten = at_last is None and self._rewritten_composer(new_rows)
            if at_last != self._last_key and not rewritten:
                return False
            newest = new_rows[-1][0] if new_rows else scan.newest_rowid(conn)
            expected = self._total_count - int(rewritten) + len(new_rows)
            changed, sub_rowids, new_bubbles, new_agents = self._classify(new_rows)
            self._forget_index(new_rows)
            recent = now_ms - self._recent_ms
            digests = self._recent_digests(conn, recent)
            counts = _RefreshCounts(self, conn, counting, newest, expected)

            def probe() -> set[str] | None:
                """New bubble rows name their conversation; a vanished one could be anyone's."""
                unnamed = sub_rowids or counts.get()[1] != self._bubble_count
                return None if unnamed else set(changed)

            walked = self._refresh_index(conn, probe, recent)
            total, bubbles_le, agents_le = counts.get()
        finally:
            counting.close()
            conn.execute("COMMIT")
        if walked and any_json_rows(conn, walked):
            return False  # stream rows already walked changed owner: walk them again
        limit = new_rows[-1][0] if new_rows else self._last_rowid
        if not self._update_stream(conn, agents_le, new_agents, limit, changed):
            return False
        changed.update(self._rewritten_in_place(digests))
        if self._load_projects():
            self._relabel_projects()
        if not self._reread(conn, changed, self._bubble_count - bubbles_le):
            return False
        if not self._apply_budget(conn):
            return False
        for row in scan.bubble_rows_by_rowid(conn, sub_rowids):
            if type(row[5]) is str and row[5]:
                self._other_requests.add(row[5])
        self._skipped_sub += len(sub_rowids)
        self._rebuild_stream_calls(conn)
        if new_rows:
            self._last_rowid, self._last_key = new_rows[-1]
        self._bubble_count = bubbles_le + new_bubbles
        self._agent_count = agents_le + len(new_agents)
        self._total_count = total
        self._ident = self._stat()
        return True

    def _refresh_index(
        self, conn: sqlite3.Connection, probe: Callable[[], set[str] | None], recent: int
    ) -> list[int]:
        """A refresh's 3.x pass, where the database has the index: the agent rows read
        already whose skipping changed. Older conversations' composerData rewritten in place
        waits for the full parse."""
        if not (self._l3.present or self._indexed(conn)):
            return []
        changed = self._read_layout3(conn, probe, settled_before_ms=recent)
        return [r for r in changed if r <= self._last_rowid]

    def _recent_digests(self, conn: sqlite3.Connection, recent: int) -> dict[str, bytes]:
        """Each recent conversation's (a message since `recent`) rows digested
        (`conversation_digest`), before any of them is read again: a write between the two is
        seen at the next refresh."""
        return {
            composer: scan.conversation_digest(conn, composer)
            for composer, state in self._convs.items()
            if state.kept and state.newest_ms >= recent
        }

    def _rewritten_in_place(self, digests: dict[str, bytes]) -> list[str]:
        """The recent conversations whose rows changed since they were last read: Cursor
        rewrites a message in place (the same ROWID) as it streams, so new ROWIDs do not show
        it. An unchanged one is not read again (the conversations of the last 15 minutes are
        checked at every refresh)."""
        out: list[str] = []
        models, before = self._l3.models, self._seen_as
        marks: dict[str, tuple[bytes, int | None, str | None]] = {}
        for composer, digest in digests.items():
            mark = (digest, self._cutoff, models.get(composer))
            if mark != before.get(composer):
                out.append(composer)
            marks[composer] = mark
        self._seen_as = marks
        return out

    def _forget_index(self, new_rows: list[tuple[int, str]]) -> None:
        """A refresh looks for the 3.x index again, and for a root when a new composerData
        row may hold one (see `_rootless`)."""
        self._index_known = None
        if any(key.startswith(scan.COMPOSER_PREFIX) for _rowid, key in new_rows):
            self._rootless = False

    def _rewritten_composer(self, new_rows: list[tuple[int, str]]) -> bool:
        """The last row read was a composerData row, written again with INSERT OR REPLACE (the
        old ROWID gone, a new one): harmless, the 3.x pass reads every composerData row again
        and `_classify` re-reads its conversation's bubbles."""
        last = self._last_key
        if last is None or not last.startswith(scan.COMPOSER_PREFIX):
            return False
        return any(key == last for _rowid, key in new_rows)

    def _classify(
        self, new_rows: list[tuple[int, str]]
    ) -> tuple[set[str], list[int], int, list[int]]:
        changed: set[str] = set()
        sub_rowids: list[int] = []
        new_agents: list[int] = []
        new_bubbles = 0
        for rowid, key in new_rows:
            if scan.BUBBLE_LO <= key < scan.BUBBLE_HI:
                new_bubbles += 1
                composer = composer_of(key)
                if composer is None:
                    sub_rowids.append(rowid)
                else:
                    changed.add(composer)
            elif scan.AGENT_LO <= key < scan.AGENT_HI:
                new_agents.append(rowid)
            elif key.startswith(scan.COMPOSER_PREFIX):
                composer = key[len(scan.COMPOSER_PREFIX) :]
                state = self._convs.get(composer)
                if state is not None and state.kept:
                    changed.add(composer)
        return changed, sub_rowids, new_bubbles, new_agents

    def _update_stream(
        self,
        conn: sqlite3.Connection,
        agents_le: int,
        new_agents: list[int],
        limit: int,
        changed: set[str],
    ) -> bool:
        """Resume the agent stream on appended rows, or walk it again when rows moved."""
        if agents_le != self._agent_count:
            before = {r: q.signature() for r, q in self._walker.requests.items()}
            self._walker = StreamWalker()
            walk_whole(
                conn, self._walker, limit, PAGE_ROWS, self._l3.skip_rowids,
                by_rowid=self._agents_by_rowid(),
            )  # fmt: skip
            after = {r: q.signature() for r, q in self._walker.requests.items()}
            touched = {r for r in before.keys() | after.keys() if before.get(r) != after.get(r)}
        elif new_agents:
            first, last = new_agents[0] - 1, new_agents[-1]
            walk_pages(conn, self._walker, first, last, PAGE_ROWS, self._l3.skip_rowids)
            touched = set(self._walker.touched)
        else:
            touched = set()
        self._walker.touched.clear()
        for request_id in touched:
            changed.update(self._request_conv.get(request_id, ()))
        return True

    def _relabel_projects(self) -> None:
        for composer, state in self._convs.items():
            project = self._projects.get(composer, UNMAPPED_PROJECT)
            if state.calls and state.calls[0].project != project:
                state.calls = [replace(c, project=project) for c in state.calls]

    def _reread(self, conn: sqlite3.Connection, changed: set[str], disappeared: int) -> bool:
        """Re-read whole conversations; every row that vanished must be accounted for."""
        acc = BubbleScan(self.floor_iso, self._cutoff, None)
        for composer in sorted(changed):
            acc.add(scan.conversation_bubbles(conn, composer))
        lost = 0
        for composer in changed:
            old = self._convs.get(composer)
            if old is not None:
                now = set(acc.unkept.get(composer, ()))
                now.update(b[0] for b in acc.bubbles.get(composer, ()))
                seen = itertools.chain(old.kept, old.unkept)
                lost += sum(1 for r in seen if r <= self._last_rowid and r not in now)
        if lost != disappeared:
            return False
        if acc.pending:
            acc.date_undated(scan.composer_times(conn, list(acc.pending)))
        self._other_requests |= acc.other_requests
        meta = scan.composer_meta(conn, [c for c in changed if c in acc.bubbles])
        for composer in changed:
            state = self._convs.setdefault(composer, ConvState())
            state.unkept = acc.unkept.get(composer, array("q"))
            state.undated = acc.undated.get(composer, 0)
            state.inferred = acc.inferred.get(composer, 0)
            self._install(composer, acc.bubbles.get(composer, []), meta.get(composer))
        return True

    def _apply_budget(self, conn: sqlite3.Connection) -> bool:
        """Keep only the newest `budget` in-range bubbles, as a full parse would."""
        if self._kept_total <= self.budget:
            # Fewer rows than the budget after a cut: older rows may qualify again.
            return self._cutoff is None or self._kept_total == self.budget
        # The cutoff is the `excess`-th oldest kept ROWID: merge the conversations' sorted
        # ROWIDs up to it instead of sorting all of them.
        excess = self._kept_total - self.budget
        oldest_first = heapq.merge(*(s.kept for s in self._convs.values() if s.kept))
        cutoff = next(itertools.islice(oldest_first, excess, None))
        affected = {c for c, s in self._convs.items() if s.kept and s.kept[0] < cutoff}
        self._cutoff = cutoff
        return self._reread(conn, affected, 0)


class _RefreshCounts:
    """A refresh's (rows, bubble rows and agent rows at or below the last ROWID), taken once
    in its read transaction when first asked (see `CursorReader._refresh`)."""

    def __init__(
        self,
        reader: CursorReader,
        conn: sqlite3.Connection,
        counting: RowCount,
        newest: int,
        expected: int,
    ) -> None:
        self._reader, self._conn, self._counting = reader, conn, counting
        self._newest, self._expected = newest, expected
        self._counts: tuple[int, int, int] | None = None

    def get(self) -> tuple[int, int, int]:
        if self._counts is None:
            reader, conn = self._reader, self._conn
            total = self._counting.total(conn, self._newest, self._expected)
            if total == self._expected:  # no row at or below the last ROWID went away
                self._counts = (total, reader._bubble_count, reader._agent_count)
            else:
                last = reader._last_rowid
                bubbles = scan.family_count(conn, scan.BUBBLE_LO, scan.BUBBLE_HI, last)
                agents = scan.family_count(conn, scan.AGENT_LO, scan.AGENT_HI, last)
                self._counts = (total, bubbles, agents)
        return self._counts


_BubbleState = tuple[BubbleScan, int, int, set[str], int | None]


class _ColdSide:
    """A Cursor 3.x full parse's second process (CLI only, see `runtime`): it decodes the
    blob pass's JSON rows and sends them, then scans the bubbles while this process walks the
    graphs; this process reads the composers and the protobuf blobs meanwhile. Forked before
    any of that, it shares none of this process's work."""

    def __init__(self, reader: CursorReader, *, records: bool = True) -> None:
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

    def bubbles(self, reader: CursorReader) -> BubbleScan:
        """The child's bubble scan, with the reader state it set."""
        self._first_part()  # the part before it, when the pass did not take it
        state = cast(_BubbleState, self._aside.next())
        self._aside.done()
        acc, reader._scan_lo, reader._skipped_sub, reader._other_requests, reader._cutoff = state
        return acc

    def cancel(self) -> None:
        self._aside.cancel()
