"""What Cursor keeps outside its IDE database: agent transcripts and Cursor Agent CLI sessions.

`take_snapshot` lists the files and their identities (size + mtime, also of a store's WAL);
`AgentReader.read` parses only files whose identity changed since the last read. The parsed
state round-trips through plain JSON (`entries`), so the caches can keep it between runs.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

# The agent formats on first use: a status only lists files.
import codeburn.providers.agent as agent_formats
from codeburn.providers.home.cli_store import CliSession, StoreBusy, find_stores, read_store
from codeburn.providers.home.memo import MemoEncoder, Rows, content_key, read_memo
from codeburn.providers.home.transcripts import (
    SETTLED_NS,
    TranscriptFile,
    TranscriptTooLarge,
    find_transcripts,
    parse_transcript,
    read_transcript,
)

if TYPE_CHECKING:
    from codeburn.providers.agent import GraphTurn

Ident = list[int]


def _ident(path: Path, *, wal: bool = False) -> Ident | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    ident = [st.st_mtime_ns, st.st_size]
    if wal:
        try:
            side = os.stat(str(path) + "-wal")
        except OSError:
            side = None
        if side is not None and side.st_size:  # an empty WAL is no WAL (docs/caches.md)
            ident += [side.st_mtime_ns, side.st_size]
    return ident


class AgentSnapshot(NamedTuple):
    """The files found under one Cursor home, each with its identity."""

    home: Path
    transcripts: dict[str, TranscriptFile]
    stores: tuple[Path, ...]
    idents: dict[str, Ident]
    taken_ns: int = 0  # wall clock when the identities were taken

    def settled(self, ident: Ident) -> bool:
        """Written over SETTLED_NS before the snapshot: a later write moves the mtime. A file
        written just now may be written again within the same tick, size and mtime unchanged,
        so what was read of it is never trusted to still hold (read again, never cached)."""
        return max(ident[0::2]) < self.taken_ns - SETTLED_NS

    @property
    def fingerprint(self) -> str:
        """Changes whenever a transcript or store is added, removed or written (and at every
        snapshot while one was written just now)."""
        parts = [str(self.home), *(f"{p}={v}" for p, v in sorted(self.idents.items()))]
        if not all(map(self.settled, self.idents.values())):
            parts.append(f"unsettled at {self.taken_ns}")
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:32]


def take_snapshot(home: Path) -> AgentSnapshot:
    taken_ns = time.time_ns()
    transcripts = find_transcripts(home)
    stores = tuple(find_stores(home))
    idents: dict[str, Ident] = {}
    for found in transcripts.values():
        ident = _ident(found.path)
        if ident is not None:
            idents[str(found.path)] = ident
    for store in stores:
        ident = _ident(store, wal=True)
        if ident is not None:
            idents[str(store)] = ident
    return AgentSnapshot(home, transcripts, stores, idents, taken_ns)


class TranscriptRead(NamedTuple):
    file: TranscriptFile
    turns: tuple[GraphTurn, ...]
    mtime_ms: int  # the file's modification time at this read
    unreadable: str | None = None  # why a transcript that exists could not be read


@dataclass(slots=True)
class AgentRead:
    transcripts: dict[str, TranscriptRead] = field(default_factory=dict)
    sessions: dict[str, CliSession] = field(default_factory=dict)
    busy: bool = False  # a store was locked: what it held before is served, nothing is sealed

    @property
    def has_data(self) -> bool:
        return bool(self.sessions) or any(t.turns for t in self.transcripts.values())


# -- JSON form of parsed files (the agent cache) ------------------------------------------------


def turn_row(turn: GraphTurn) -> list[Any]:
    return [
        turn.timestamp_ms,
        turn.user_chars,
        turn.context_chars,
        turn.assistant_chars,
        turn.model,
        list(turn.tools),
        list(turn.commands),
        turn.served,
        turn.end_ms,
    ]


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def turn_from_row(row: list[Any]) -> GraphTurn:
    ts, user, context, assistant, model, tools, commands, served, *rest = row
    return agent_formats.GraphTurn(
        _opt_int(ts),
        int(user),
        int(context),
        int(assistant),
        _opt_str(model),
        tuple(str(t) for t in tools),
        tuple(str(c) for c in commands),
        _opt_str(served),
        _opt_int(rest[0]) if rest else None,
    )


def session_json(session: CliSession) -> dict[str, Any]:
    graph = session.graph
    return {
        "id": session.conversation_id,
        "created": session.created_ms,
        "model": session.model,
        "workspace": session.workspace,
        "unreadable": session.unreadable,
        "prompt_workspace": session.prompt_workspace,
        "folder": session.folder,
        "title": session.title,
        "graph": None
        if graph is None
        else {
            "turns": [turn_row(t) for t in graph.turns],
            "used": graph.used_tokens,
            "started": graph.started_ms,
            "uris": list(graph.workspace_uris),
            "skipped": graph.skipped_blobs,
        },
    }


def session_from_json(raw: dict[str, Any]) -> CliSession:
    graph_raw = raw["graph"]
    graph = None
    if graph_raw is not None:
        graph = agent_formats.Graph(
            turns=tuple(turn_from_row(r) for r in graph_raw["turns"]),
            used_tokens=int(graph_raw["used"]),
            started_ms=_opt_int(graph_raw["started"]),
            workspace_uris=tuple(str(u) for u in graph_raw["uris"]),
            skipped_blobs=int(graph_raw["skipped"]),
        )
    return CliSession(
        conversation_id=str(raw["id"]),
        created_ms=_opt_int(raw["created"]),
        model=_opt_str(raw["model"]),
        workspace=_opt_str(raw["workspace"]),
        graph=graph,
        unreadable=_opt_str(raw["unreadable"]),
        prompt_workspace=_opt_str(raw.get("prompt_workspace")),
        folder=_opt_str(raw.get("folder")),
        title=_opt_str(raw.get("title")),
    )


# -- the reader ---------------------------------------------------------------------------------


class MemoFile(Protocol):
    """Where the agent memo (`home.memo`) is kept between runs."""

    def load(self) -> bytes | None: ...
    def save(self, data: bytes) -> None: ...


def _turns_of(rows: Rows) -> tuple[GraphTurn, ...] | None:
    try:
        return tuple(turn_from_row(r) for r in rows)
    except (KeyError, TypeError, ValueError):  # not a turn row: the file is parsed instead
        return None


class AgentReader:
    """Parses the files of one snapshot, re-reading only those whose identity changed.

    `memo_file`: the agent memo, asked for the turns of a transcript's bytes before they are
    parsed (loaded at the first transcript read in full) and told the transcripts of a read
    that read one in full, when they differ from what it held."""

    def __init__(
        self,
        home: Path,
        entries: dict[str, Any] | None = None,
        memo_file: MemoFile | None = None,
    ) -> None:
        self.home = home
        # path → {"ident": [...], "turns": [...], "content": key} or {"ident": [...],
        # "session": {...} | None}; "content" is the memo key of the bytes the turns are of
        self.entries: dict[str, Any] = dict(entries or {})
        self.changed = False
        # What each kept entry decodes to, so an unchanged file costs nothing on a refresh.
        self._decoded: dict[str, tuple[dict[str, Any], Any]] = {}
        self._memo_file = memo_file
        self._memo: dict[str, Rows] | None = None  # loaded: a transcript was read in full
        self._encoder = MemoEncoder()
        self._read_in_full = False  # by this read: only then can the memo differ

    def _decode(self, key: str, entry: dict[str, Any]) -> Any:
        memo = self._decoded.get(key)
        if memo is not None and memo[0] is entry:
            return memo[1]
        if "turns" in entry:
            value: Any = tuple(turn_from_row(r) for r in entry["turns"])
        else:
            value = None if entry["session"] is None else session_from_json(entry["session"])
        self._decoded[key] = (entry, value)
        return value

    def read(self, snapshot: AgentSnapshot) -> AgentRead:
        self._read_in_full = False
        result = AgentRead()
        kept: dict[str, Any] = {}
        for found in snapshot.transcripts.values():
            key = str(found.path)
            ident = snapshot.idents.get(key)
            entry = self._settle(self._transcript(key, found, ident), snapshot, ident)
            if entry is None or ident is None:
                continue
            kept[key] = entry
            turns, why = self._decode(key, entry), _opt_str(entry.get("unreadable"))
            read = TranscriptRead(found, turns, ident[0] // 1_000_000, why)
            result.transcripts[found.conversation_id] = read
        for store in snapshot.stores:
            key = str(store)
            ident = snapshot.idents.get(key)
            entry = self._settle(self._store(key, store, ident, result), snapshot, ident)
            if entry is None:
                continue
            kept[key] = entry
            session = self._decode(key, entry)
            if session is not None:
                result.sessions.setdefault(session.conversation_id, session)
        if kept.keys() != self.entries.keys():
            self.changed = True
        self.entries = kept
        self._decoded = {k: v for k, v in self._decoded.items() if k in kept}
        self._save_memo()
        return result

    def _memo_turns(self, key: str) -> tuple[Rows, tuple[GraphTurn, ...]] | None:
        if self._memo is None:
            loaded = read_memo(self._memo_file.load()) if self._memo_file is not None else None
            self._memo = loaded or {}
        rows = self._memo.get(key)
        turns = _turns_of(rows) if rows is not None else None
        if rows is None or turns is None:
            self._memo.pop(key, None)  # what it held is no turns: written again
            return None
        return rows, turns

    def _save_memo(self) -> None:
        """The memo of this read's transcripts, when this read read one in full (else the file
        is left as it is) and its keys differ from what the memo held."""
        if self._memo is None or self._memo_file is None or not self._read_in_full:
            return
        now: dict[str, Rows] = {}
        for entry in self.entries.values():
            key = entry.get("content")
            if isinstance(key, str) and "turns" in entry:
                now[key] = entry["turns"]
        if now.keys() != self._memo.keys():
            self._memo_file.save(self._encoder.encode(now))
        self._memo = now

    def adopt(self, snapshot: AgentSnapshot, read: AgentRead) -> None:
        """What a read of `snapshot` elsewhere (a forked child, which saved these entries)
        decoded: kept for the transcripts whose entry is of the very file it read."""
        for found in read.transcripts.values():
            key = str(found.file.path)
            entry = self.entries.get(key)
            if (
                isinstance(entry, dict)
                and entry.get("ident") == snapshot.idents.get(key)
                and isinstance(entry.get("turns"), list)
                and len(entry["turns"]) == len(found.turns)
            ):
                self._decoded[key] = (entry, found.turns)

    @staticmethod
    def _settle(
        entry: dict[str, Any] | None, snapshot: AgentSnapshot, ident: Ident | None
    ) -> dict[str, Any] | None:
        """A new entry of a file written just now is marked: the next read parses it again."""
        fresh = entry is not None and ident is not None and entry.get("ident") == ident
        if fresh and entry is not None and ident is not None and not snapshot.settled(ident):
            entry["unsettled"] = True  # a new entry (a cached one is never unsettled)
        return entry

    def _cached(self, key: str, ident: Ident | None, field_name: str) -> dict[str, Any] | None:
        entry = self.entries.get(key)
        if not isinstance(entry, dict) or entry.get("ident") != ident or field_name not in entry:
            return None
        if field_name == "session" and "turns" in entry:  # `_decode` would take it as turns
            return None
        if entry.get("unsettled"):  # read while the file was still being written: again
            return None
        memo = self._decoded.get(key)
        if memo is not None and memo[0] is entry:
            return entry  # decoded before: known to be sound
        try:  # a damaged entry of our own cache is a miss, never an error
            self._decode(key, entry)  # kept: `read` asks for it next
        except (KeyError, TypeError, ValueError):
            return None
        return entry

    def _transcript(
        self, key: str, found: TranscriptFile, ident: Ident | None
    ) -> dict[str, Any] | None:
        cached = self._cached(key, ident, "turns")
        if cached is not None:
            return cached
        try:
            data = read_transcript(found.path)
        except OSError:
            return None  # vanished or unreadable right now: tried again next time
        except TranscriptTooLarge:
            self.changed = True
            return {"ident": ident, "turns": [], "unreadable": "too-large"}
        self.changed = self._read_in_full = True
        content = content_key(data, legacy=found.legacy)
        known = self._memo_turns(content)
        if known is not None:
            entry = {"ident": ident, "turns": known[0], "content": content}
            self._decoded[key] = (entry, known[1])
            return entry
        turns = parse_transcript(found.path, data)
        return {"ident": ident, "turns": [turn_row(t) for t in turns], "content": content}

    def _store(
        self, key: str, store: Path, ident: Ident | None, result: AgentRead
    ) -> dict[str, Any] | None:
        cached = self._cached(key, ident, "session")
        if cached is not None:
            return cached
        try:
            session = read_store(store)
        except StoreBusy:
            result.busy = True
            previous = self.entries.get(key)
            old = previous.get("ident") if isinstance(previous, dict) else None
            return self._cached(key, old, "session") if old is not None else None
        self.changed = True
        return {"ident": ident, "session": None if session is None else session_json(session)}
