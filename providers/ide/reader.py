"""Cursor's global database → calls, with an incremental refresh (docs/local-data.md).

A full parse scans bubbles newest-first in ROWID pages, stops at the floor and honours the
scan budget. Later reads of the same database look only at rows above the last seen ROWID,
re-read whole conversations that changed (one key range each) and fall back to a full parse
whenever the database no longer looks like an extension of what was read.
"""

from __future__ import annotations

import itertools
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Final

from codeburn.providers.agent import Turn, graph_turns
from codeburn.providers.calls import Call
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.full_parse import FullParse, Progress
from codeburn.providers.ide.inline import workspace_db_message
from codeburn.providers.ide.layout3 import BUBBLES, ROOT, ConversationMeta
from codeburn.providers.ide.refresh import Refresh
from codeburn.providers.localtime import now_ms as clock_ms
from codeburn.providers.runtime import gc_paused
from codeburn.providers.sqlite_ro import DatabaseUnrecognizedError, open_readonly, translate_error

FULL_PARSE_MAX_AGE_S: Final = 3600.0
BUDGET_WARNING: Final = (
    "Cursor history in this range exceeds the scan budget of {budget:,} messages; "
    "the oldest sessions in range may be missing"
)


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


class CursorReader(FullParse, Refresh):
    """Reads one Cursor database; keeps what an incremental refresh needs.

    Its state and what both paths share are `ReaderState`'s; the full parse is `FullParse`'s,
    the refresh `Refresh`'s."""

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
