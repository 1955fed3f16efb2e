"""What a long-lived reader of the other tools' logs knows of its state between reads
(`ToolLogs`, docs/other-tools.md).

A reader told which files changed (a file watch: `ToolSnapshot.base`) looks at those alone,
and tells what read its state before (`ClaudeCallsMemo`, `CallsWindow`, its own counts) which
logs changed since: a refresh after an append then costs the lines appended, not a look at
every log. Equal answers to a look at every log, by test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from codeburn.providers.agents.claude_code import ClaudeFile
from codeburn.providers.agents.logs import ToolSnapshot
from codeburn.providers.agents.state import KeptLog
from codeburn.providers.calls import CODEX

READERS = ("views", "window", "counts")  # what reads the state and remembers what it saw


class _Synced(NamedTuple):
    serial: int  # of the snapshot the state was brought to
    low: int | None  # each log holds its records from then on
    unsettled: frozenset[str]  # its files not read to their identity (unreadable)


class Counts(NamedTuple):
    """What a read says of the logs as a whole (`ToolLogs._result`)."""

    found: set[str]  # tools with a log with records
    bad: dict[str, tuple[int, int]]  # tool → lines skipped, in how many logs
    assumed: int  # Codex requests with no model named
    codex: list[str]  # the keys of the Codex logs with records, in the state's order


class SyncedState:
    """The snapshot the state was last brought to, and what changed since each reader of it
    last looked."""

    def __init__(self) -> None:
        self._synced: _Synced | None = None
        self._position: dict[str, int] = {}  # each file's place in that snapshot
        self._pending: dict[str, set[str] | None] = dict.fromkeys(READERS)
        self._views: list[ClaudeFile] | None = None  # (see `claude_views`)
        self._view_at: dict[str, int] = {}
        self._each: dict[str, tuple[str, int, int, int]] = {}  # (see `counts`)
        self._sums: Counter[tuple[str, str]] = Counter()
        self._codex: list[str] = []

    def keys_since(self, snap: ToolSnapshot, low: int | None) -> frozenset[str] | None:
        """The keys of `snap` whose files may differ from the state's, when that is known: the
        state was brought to the snapshot `snap` was made from (or to `snap`), and each of
        its logs holds the records since `low`. None: look at every file."""
        synced = self._synced
        if synced is None or not (synced.low is None or (low is not None and synced.low <= low)):
            return None
        if snap.serial == synced.serial:
            return synced.unsettled
        if snap.base is None or snap.base[0] != synced.serial:
            return None
        return snap.base[1] | synced.unsettled

    @property
    def held_low(self) -> int | None:
        """The time from which each kept log holds its records (the last snapshot's)."""
        assert self._synced is not None
        return self._synced.low

    def in_order(self, keys: Iterable[str]) -> list[str]:
        """`keys` in the synced snapshot's order."""
        return sorted(keys, key=self._position.__getitem__)

    def brought_to(self, kept: dict[str, KeptLog], snap: ToolSnapshot, low: int | None) -> None:
        """The state was brought to every file of `snap`, each log holding its records since
        `low`; which logs it keeps may have changed."""
        files = snap.files
        self._position = {key: n for n, key in enumerate(files)}
        self._set(kept, snap, low, files)
        self.touched(None)

    def brought_keys(
        self, kept: dict[str, KeptLog], snap: ToolSnapshot, keys: Iterable[str], read: list[str]
    ) -> None:
        """The state was brought to `snap` by reading the files at `read` of its `keys` (the
        others were the state's already)."""
        assert self._synced is not None
        self._set(kept, snap, self._synced.low, keys)
        self.touched(read)

    def forget(self) -> None:
        """The state holds no snapshot whole (a command's read took its logs' records)."""
        self._synced = None
        self.touched(None)

    def _set(
        self, kept: dict[str, KeptLog], snap: ToolSnapshot, low: int | None, looked: Iterable[str]
    ) -> None:
        files = snap.files
        unsettled = frozenset(
            key for key in looked if (e := kept.get(key)) is None or e.ident != files[key].ident
        )
        self._synced = _Synced(snap.serial, low, unsettled)

    def touched(self, keys: Iterable[str] | None) -> None:
        """The kept logs at `keys` changed (None: any, or which logs are kept)."""
        keys = None if keys is None else list(keys)
        for name, pending in self._pending.items():
            if keys is None:
                self._pending[name] = None
            elif pending is not None:
                pending.update(keys)

    def take_touched(self, name: str) -> set[str] | None:
        """The keys of the kept logs changed since the last call with `name` (None: not
        known)."""
        pending = self._pending[name]
        self._pending[name] = set()
        return pending

    def claude_views(self, kept: dict[str, KeptLog]) -> tuple[list[ClaudeFile], list[int] | None]:
        """Claude Code's files as `claude_calls` takes them (`KeptLog.claude_view`), and the
        places of those changed since the last call (None: not known): only the logs that
        changed are viewed again."""
        touched, views = self.take_touched("views"), self._views
        if touched is None or views is None:
            self._view_at = {}
            self._views = views = []
            for key, entry in kept.items():
                if entry.claude is not None:
                    self._view_at[key] = len(views)
                    views.append(entry.claude_view())
            return views, None
        places = []
        for key in touched:
            place = self._view_at.get(key)
            if place is not None:  # (a Codex log has none)
                views[place] = kept[key].claude_view()
                places.append(place)
        return views, places

    def counts(self, kept: dict[str, KeptLog]) -> Counts:
        """`Counts` of the kept logs, each log's share counted again only once it changed."""
        touched = self.take_touched("counts")
        if touched is None:
            self._each, self._sums = {}, Counter()
            touched = set(kept)
            self._codex = [key for key, e in kept.items() if e.codex is not None and e.records]
        each, sums = self._each, self._sums
        for key in touched:
            old = each.pop(key, None)
            if old is not None:
                _add(sums, old, -1)
            entry = kept.get(key)
            if entry is not None:
                each[key] = share = (
                    entry.tool,
                    min(entry.records, 1),
                    entry.bad_lines,
                    entry.assumed,
                )
                _add(sums, share, 1)
                if entry.codex is not None and entry.records and key not in self._codex:
                    self._codex = [k for k, e in kept.items() if e.codex is not None and e.records]
        found = {tool for (what, tool), n in sums.items() if what == "found" and n}
        bad = {
            tool: (n, sums["bad logs", tool])
            for (what, tool), n in sums.items()
            if what == "bad" and n
        }
        return Counts(found, bad, sums["assumed", CODEX], self._codex)


def _add(sums: Counter[tuple[str, str]], share: tuple[str, int, int, int], sign: int) -> None:
    tool, found, bad, assumed = share
    sums["found", tool] += sign * found
    sums["bad", tool] += sign * bad
    sums["bad logs", tool] += sign * min(bad, 1)
    sums["assumed", tool] += sign * assumed
