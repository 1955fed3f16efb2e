"""The usage service's half outside the IDE database: transcripts and Cursor Agent CLI stores.

Keeps one AgentReader alive (incremental refresh), persists its per-file state and the
first-seen dates of undated transcript turns, and combines the result with the IDE reader's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from codeburn.cache.agent_files import load_agent_files, save_agent_files
from codeburn.cache.first_seen import load_first_seen, save_first_seen
from codeburn.providers.agent_combine import NO_IDE, CallMemo, Combined, IdeSide, combine
from codeburn.providers.cursor_agent import AgentRead, AgentReader, AgentSnapshot, take_snapshot
from codeburn.providers.cursor_inline import NO_DATE
from codeburn.providers.cursor_paths import canonical, cursor_home
from codeburn.providers.cursor_reader import ReadResult
from codeburn.providers.fork_aside import Aside, can_fork

FIRST_SEEN_PREFIX: Final = "agent-transcripts:"


def ide_side(result: ReadResult | None) -> IdeSide:
    if result is None:
        return NO_IDE
    return IdeSide(result.calls, result.conversations, result.metas, result.unreadable_ids)


def unreadable_warning(unreadable: dict[str, int]) -> str | None:
    """The report/status notice for conversations that exist but could not be read."""
    total = sum(unreadable.values())
    if not total:
        return None
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(unreadable.items()))
    noun = "conversation" if total == 1 else "conversations"
    # Only "no date" (inline composers of 0.44–0.45 with no time at all) is an older format.
    where = " in a newer Cursor format" if set(unreadable) - {NO_DATE} else ""
    return f"{total} {noun}{where} could not be read ({reasons}) — sync or import for exact figures"


def local_notices(result: ReadResult | None, unreadable: dict[str, int]) -> list[str]:
    """Notices of a local read for the report/status `warnings`."""
    notes: list[str] = []
    unread = unreadable_warning(unreadable)
    if unread is not None:
        notes.append(unread)
    if result is None:
        return notes
    notes.extend(result.warnings)
    if result.skipped_subcomposer:
        notes.append(
            f"skipped {result.skipped_subcomposer} Cursor tool-call rows that are not sessions"
        )
    if result.skipped_undated:
        notes.append(f"skipped {result.skipped_undated} Cursor messages without a usable date")
    if result.inferred_dates:
        notes.append(
            f"dated {result.inferred_dates} Cursor messages of older builds from their"
            " conversation's start and last update (they carry no time of their own)"
        )
    return notes


class AgentSide:
    """Transcripts and CLI sessions under one Cursor home (`CODEBURN_CURSOR_HOME`)."""

    def __init__(self, cache_dir: Path, home: Path | None = None) -> None:
        self.cache_dir = cache_dir
        self.home = canonical(home if home is not None else cursor_home())
        self.home_key = str(self.home)
        self._reader: AgentReader | None = None
        self._calls = CallMemo()
        self._forked = False
        self._beside: tuple[AgentSnapshot, AgentRead] | None = None  # the child's read

    def snapshot(self) -> AgentSnapshot:
        return take_snapshot(self.home)

    def read(self, snapshot: AgentSnapshot) -> AgentRead:
        reader = self._reader
        if reader is None:
            reader = AgentReader(self.home, load_agent_files(self.cache_dir, self.home_key))
            if self._beside is not None:  # what the child decoded of the entries it saved
                reader.adopt(*self._beside)
                self._beside = None
            self._reader = reader
        result = reader.read(snapshot)
        if reader.changed and not result.busy:
            save_agent_files(self.cache_dir, self.home_key, reader.entries)
            reader.changed = False
        return result

    def read_beside(self, snapshot: AgentSnapshot) -> ReadBeside | None:
        """`read(snapshot)` started in a forked child, on a first read where the process may
        fork (the CLI), to run while the caller reads the IDE database; None otherwise (the
        language server reads in process). The child's reader state is not kept: a later
        read starts from the per-file state the child saved, in process (a long-lived service
        that forked at each refresh paid ~0.2 s to fork and unpickle everything again)."""
        if self._reader is not None or self._forked or not can_fork():
            return None
        self._forked = True
        return ReadBeside(self, snapshot)

    def combine(self, ide: ReadResult | None, agent: AgentRead) -> Combined:
        key = FIRST_SEEN_PREFIX + self.home_key
        seen = load_first_seen(self.cache_dir, key) if agent.transcripts else {}
        combined = combine(ide_side(ide), agent, seen, self._calls)
        if combined.first_seen != seen:
            save_first_seen(self.cache_dir, key, combined.first_seen)
        return combined


class ReadBeside:
    """`AgentSide.read` in a forked child; its answer also spares the next read in process
    decoding again every file the child decoded (~40 ms on the bench profile)."""

    def __init__(self, side: AgentSide, snapshot: AgentSnapshot) -> None:
        self._aside = Aside(lambda: side.read(snapshot))
        self._side, self._snapshot = side, snapshot

    def result(self) -> AgentRead:
        read = self._aside.result()
        self._side._beside = (self._snapshot, read)
        return read

    def cancel(self) -> None:
        self._aside.cancel()
