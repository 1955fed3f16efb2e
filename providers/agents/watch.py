"""The other tools' log files as a long-lived reader sees them from one refresh to the next:
every root listed, or, told of every change by an editor's file watch, the last listing with
the files reported looked at again, and every root listed again each minute behind an answer
(docs/lsp.md#file-watch)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Final

from codeburn.providers.agents.logs import (
    Listings,
    ToolSnapshot,
    claude_roots,
    codex_root,
    take_snapshot,
)
from codeburn.providers.plan import Plan

LISTING_NS: Final = 60 * 1_000_000_000  # a watched reader lists every root this often


class LogListing:
    """The snapshots of one reader's refreshes (`snapshot`), each made from the last where it
    can be (`ToolSnapshot.base`)."""

    def __init__(self, plan: Plan, *, every_ns: int = LISTING_NS) -> None:
        self._plan = plan
        self._every_ns = every_ns  # (tests list every time)
        self._listings = Listings() if plan.long_lived else None  # (see `take_snapshot`)
        # Told of every change by a file watch (`watch`): the last snapshot, when it was a
        # whole listing, and the paths reported changed since.
        self._watched = False
        self._last: ToolSnapshot | None = None
        self._listed_ns = 0
        self._reported: set[str] = set()
        self._lock = threading.Lock()
        # A watched reader's minute listing, made behind an answer (`plan.behind`) for the
        # next snapshot; `_round` drops one that lands after a listing made since.
        self._ahead: ToolSnapshot | None = None
        self._listing_ahead = False
        self._round = 0

    def watch(self, on: bool) -> None:
        """Whether a file watch reports every change to the logs (`files_changed`): a snapshot
        then looks again at the files reported only, and every root is listed again behind an
        answer once `LISTING_NS` has passed since the last listing (a watch may miss a change:
        its figures catch up at the next snapshot). The next snapshot lists every root (what
        changed before the watch is not known)."""
        with self._lock:
            self._watched = on
            self._reported.clear()
            self._listed_ns = 0

    def files_changed(self, paths: Iterable[str] | None) -> None:
        """Paths a file watch reports written, created or removed. A path that is no
        `*.jsonl` (a folder created, renamed or removed with its logs in it: a watch reports
        the folder alone) or None (not known: a refresh the user asks for) makes the next
        snapshot list every root."""
        with self._lock:
            if paths is None:
                self._listed_ns = 0
                return
            for path in paths:
                if path.endswith(".jsonl"):
                    self._reported.add(path)
                else:
                    self._listed_ns = 0

    def snapshot(self) -> ToolSnapshot:
        """The files now. Watched: the last snapshot with the files reported looked at again;
        once `LISTING_NS` has passed since the last listing, every root is listed behind this
        answer and the next snapshot starts from that listing (a refresh after an append
        then never waits for a listing of every log)."""
        now = time.time_ns()
        with self._lock:
            reported, self._reported = self._reported, set()
            last = self._last if self._watched and self._listed_ns else None
            ahead, self._ahead = self._ahead, None
            due = last is not None and now - self._listed_ns >= self._every_ns
            start = due and not self._listing_ahead
            self._listing_ahead = self._listing_ahead or start
            listing_round = self._round
        if start:
            self._plan.behind("list the other tools' logs", lambda: self._list(listing_round))
            with self._lock:
                ahead, self._ahead = ahead or self._ahead, None  # (listed at once: no thread)
        if last is None:
            snap = take_snapshot(listings=self._listings)
            if self._last is not None:
                snap.based_on(self._last)
            with self._lock:
                self._listed_ns = snap.taken_ns
                self._round += 1  # (a listing still to land behind is older than this one)
        elif ahead is not None:
            # (the files reported since it was listed looked at again, on top of it)
            snap = ahead.with_changes(reported, claude_roots(), codex_root(), now).based_on(last)
            with self._lock:
                self._listed_ns = ahead.taken_ns
        elif reported:
            snap = last.with_changes(reported, claude_roots(), codex_root(), now)
        else:
            snap = last
        self._last = snap
        return snap

    def _list(self, listing_round: int) -> None:
        """Every root listed (behind an answer) for the next snapshot, unless a listing was
        made since it was asked for."""
        snap = None
        try:
            snap = take_snapshot(listings=self._listings)
        finally:
            with self._lock:
                self._listing_ahead = False
                if snap is not None and listing_round == self._round:
                    self._ahead = snap
