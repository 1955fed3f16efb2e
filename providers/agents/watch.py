"""The other tools' log files as a long-lived reader sees them from one refresh to the next:
every root listed, or, told of every change by an editor's file watch, the last listing with
the files reported looked at again (docs/lsp.md#file-watch)."""

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

LISTING_NS: Final = 60 * 1_000_000_000  # a watched reader lists every root this often


class LogListing:
    """The snapshots of one reader's refreshes (`snapshot`), each made from the last where it
    can be (`ToolSnapshot.base`)."""

    def __init__(self, long_lived: bool) -> None:
        self._listings = Listings() if long_lived else None  # (see `take_snapshot`)
        # Told of every change by a file watch (`watch`): the last snapshot, when it was a
        # whole listing, and the paths reported changed since.
        self._watched = False
        self._last: ToolSnapshot | None = None
        self._listed_ns = 0
        self._reported: set[str] = set()
        self._lock = threading.Lock()

    def watch(self, on: bool) -> None:
        """Whether a file watch reports every change to the logs (`files_changed`): a snapshot
        then looks again at the files reported only, and lists every root once `LISTING_NS`
        has passed since the last listing (a watch may miss a change: its figures catch up).
        The next snapshot lists every root (what changed before the watch is not known)."""
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
        now = time.time_ns()
        with self._lock:
            reported, self._reported = self._reported, set()
            watched = self._watched and now - self._listed_ns < LISTING_NS
            last = self._last if watched else None
        if last is None:
            snap = take_snapshot(listings=self._listings)
            if self._last is not None:
                snap.based_on(self._last)
            with self._lock:
                self._listed_ns = snap.taken_ns
        elif reported:
            snap = last.with_changes(reported, claude_roots(), codex_root(), now)
        else:
            snap = last
        self._last = snap
        return snap
