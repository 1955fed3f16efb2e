"""A `CursorReader`'s incremental refresh: rows above the last ROWID, whole conversations
re-read when they changed, the scan budget kept as a full parse would."""

from __future__ import annotations

import heapq
import itertools
import sqlite3
from array import array
from collections.abc import Callable
from dataclasses import replace

from codeburn.providers.agent import StreamWalker
from codeburn.providers.calls import UNMAPPED_PROJECT
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3 import any_json_rows
from codeburn.providers.ide.reader_state import ReaderState
from codeburn.providers.ide.row_count import RowCount
from codeburn.providers.ide.rows import BubbleScan, ConvState, composer_of
from codeburn.providers.ide.stream_rows import walk_pages, walk_whole


class Refresh(ReaderState):
    """A `CursorReader`'s incremental refresh (see `ReaderState`)."""

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
                conn, self._walker, limit, self.plan.page_rows, self._l3.skip_rowids,
                by_rowid=self._agents_by_rowid(),
            )  # fmt: skip
            after = {r: q.signature() for r, q in self._walker.requests.items()}
            touched = {r for r in before.keys() | after.keys() if before.get(r) != after.get(r)}
        elif new_agents:
            first, last = new_agents[0] - 1, new_agents[-1]
            pages = self.plan.page_rows
            walk_pages(conn, self._walker, first, last, pages, self._l3.skip_rowids)
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
    in its read transaction when first asked (see `Refresh._refresh`)."""

    def __init__(
        self,
        reader: ReaderState,
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
