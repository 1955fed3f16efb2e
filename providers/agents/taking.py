"""A command's read of the other tools' logs (`ToolLogs.read` under a one-shot plan): each
Claude Code log is saved and weighed as soon as its records are whole, then let go of, so that
the command holds the calls rather than every copy of every request."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from codeburn.providers.agents.claude_code import (
    ClaudeCalls,
    ClaudeFile,
    ClaudeRequest,
    agent_id_of,
    parent_session_of,
    session_of,
)
from codeburn.providers.agents.logs import ToolSnapshot
from codeburn.providers.agents.state import (
    IDENTITY,
    KeptLog,
    LogChange,
    Part,
    ToolStore,
    parts_of,
)
from codeburn.providers.agents.weighing import ClaudeWeighing
from codeburn.providers.calls import CLAUDE_CODE

SAVE_CHARS: Final = 8 * 1024 * 1024  # the records taken are saved this often (JSON characters)


class Changes:
    """Changes to save, saved every `SAVE_CHARS` of records' text (and at `save`)."""

    def __init__(self, store: ToolStore | None) -> None:
        self.store = store
        self.pending: list[LogChange] = []
        self.chars = 0

    def add(self, change: LogChange) -> None:
        self.pending.append(change)
        self.chars += sum(len(part.text or "") for part in change.parts)
        if self.chars >= SAVE_CHARS:
            self.save()

    def save(self) -> None:
        pending, self.pending, self.chars = self.pending, [], 0
        if pending and self.store is not None:
            self.store.save_tool_logs(IDENTITY, pending)


class Taking:
    """A command's read of the logs (`ToolLogs.read`): each Claude Code log, once its records
    are whole, has its change saved (every `SAVE_CHARS` of them) and its requests weighed by
    `ClaudeWeighing`, then lets go of them."""

    def __init__(self, store: ToolStore | None, snap: ToolSnapshot, since_ms: int | None) -> None:
        claude = [key for key, file in snap.files.items() if file.tool == CLAUDE_CODE]
        self.index = {key: i for i, key in enumerate(claude)}
        self.paths = [snap.files[key].name for key in claude]
        self.weighing = ClaudeWeighing(self.paths, since_ms)
        self.taken: set[str] = set()
        self.changes = Changes(store)
        self.read_parts: list[Part] = []  # of the log being read in pieces
        self.read_first: ClaudeRequest | None = None  # its first request
        self.spoiled = False  # a log read in pieces could not be read to its end
        self.taken_part = False  # a log sent in pieces is being taken
        self.untaken: list[tuple[int, KeptLog]] = []  # logs with no record in the days read

    def take(self, key: str, entry: KeptLog) -> None:
        if entry.claude is None or key in self.taken:
            return  # (Codex: its records are few; kept as a refresh keeps them)
        change = entry.change(key)
        if entry.loaded:
            self.weighing.add(self.index[key], entry.claude_view())
        else:  # (all its records lie before the days read: `result` weighs it if it matters)
            self.untaken.append((self.index[key], entry))
        entry.claude.requests = []
        entry.loaded, entry.loaded_low = False, None
        self.taken.add(key)
        if change is not None:
            self.changes.add(change)

    def take_sent(self, key: str, entry: KeptLog, parts: Iterable[Part]) -> None:
        """Take a log a second process read whole and saved, from the parts it sends, one
        part's records made at a time."""
        claude = entry.claude
        assert claude is not None
        index, start = self.index[key], 0
        for part in parts:
            self.taken_part = True
            entry.set_texts([part.text or "[]"])
            self.weighing.add(index, claude, start)
            start += len(claude.requests)
        self.taken_part = False
        claude.requests = []
        entry.loaded, entry.loaded_low = False, None
        self.taken.add(key)

    def pieces(self, key: str, entry: KeptLog) -> Callable[[list[ClaudeRequest]], None]:
        """Where the requests of a log read whole go as they are read: weighed, and kept as
        the parts of its change (`pieces_done`)."""
        claude = entry.claude
        assert claude is not None
        index, piece = self.index[key], ClaudeFile(claude.path)
        self.read_parts = []

        def take(requests: list[ClaudeRequest]) -> None:
            if requests:
                if not entry.records:
                    self.read_first = requests[0]
                piece.requests = requests
                self.weighing.add(index, piece, entry.records)
                self.read_parts += parts_of(requests)

        return take

    def pieces_done(self, key: str, entry: KeptLog) -> None:
        claude = entry.claude
        assert claude is not None
        first, self.read_first = self.read_first, None
        if first is not None and (claude.summary or claude.first_prompt):
            self.weighing.name(
                self.index[key],
                ClaudeFile(claude.path, [first], claude.summary, claude.first_prompt),
            )
        parts, self.read_parts = tuple(self.read_parts), []
        entry.loaded, entry.loaded_low = False, None
        self.taken.add(key)
        self.changes.add(entry.shipped_change(key, parts))

    def save(self) -> None:
        self.changes.save()

    def result(self) -> ClaudeCalls:
        """The weighing's calls. A log none of whose records lie in the days read (its records
        not even decoded) can only say where a session started and name it, by its first
        request that names a folder: it is weighed when that session has a request weighed,
        and no other matters (equal to weighing every log, by test)."""
        weighing = self.weighing
        sessions = set(weighing.sessions)
        for index, entry in self.untaken:
            first, claude = entry.first, entry.claude
            if first is None or claude is None:
                continue  # (its view holds no request: nothing to weigh, nothing to name)
            if session_of(first, claude.path, parent_session_of(claude.path)) in sessions:
                weighing.add(index, entry.claude_view())
        self.untaken = []
        return weighing.result()

    def whole(self, kept: dict[str, KeptLog]) -> bool:
        """Whether the logs weighed are the snapshot's: a sub-agent's file that could not be
        read is absent to `claude_calls` (its `progress` copies count), yet was weighed as
        present; then the read is made again from the records saved."""
        read = {kept[key].name for key in self.index if key in kept}
        if self.spoiled:
            return False
        return all(agent_id_of(p) is None or p in read for p in self.paths)
