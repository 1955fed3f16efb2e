"""The parsed calls of one database, keyed on its identity (docs/caches.md#results-cache)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from codeburn.cache.files import EncodedItems, FileMemo, json_with, locked, write_cache_text
from codeburn.providers import RULES, Call, LocalConversation

# 2: Cursor 3.x conversations (issue 8); 3: real-file rules (issue 16); 4: `diagnostics` apart
# from `warnings` (issue 18: a v3 file holds skipped-row notes among its warnings), and the local
# conversations (ids, titles, turns) that exact events are attributed to (issue 17); 5: JSONL
# transcript lines end at `\n` only (see `home.memo.MEMO_VERSION`); 6: its stamp on a line of
# its own, before the rest
# The layout; the parse rules that wrote it are the rules identity inside
# (docs/caches.md#rules-identity).
VERSION: Final = 6
FILE: Final = f"cursor-results.v{VERSION}.json"
_CALL_TEXTS: Final = EncodedItems(Call.to_row)


def _conversation_row(item: Any) -> Any:
    return item.to_row() if isinstance(item, LocalConversation) else item


# A long-lived service writes the file at each refresh, mostly with the same conversation
# objects (`ConversationMemo`): their text is kept rather than encoded again each time.
_CONVERSATION_TEXTS: Final = EncodedItems(_conversation_row)


def _stat(path: Path, *, empty_is_missing: bool = False) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if empty_is_missing and st.st_size == 0:
        return None
    return [st.st_mtime_ns, st.st_size]


def db_fingerprint(db_path: Path, workspaces: str = "") -> str:
    """Resolved path + mtime/size of the database and its WAL (+ the workspace mapping).

    An empty WAL counts as none: opening a WAL database, even read-only, may create one.
    """
    wal = _stat(Path(str(db_path) + "-wal"), empty_is_missing=True)
    parts = [str(db_path), repr(_stat(db_path)), repr(wal)]
    parts.append(workspaces)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:32]


def _is_row(row: Any) -> bool:
    """The shape of `LocalConversation.to_row` (its values are checked when it is made)."""
    return (
        isinstance(row, list)
        and len(row) == 8
        and isinstance(row[0], str)
        and isinstance(row[4], list)
        and isinstance(row[5], list)
        and all(isinstance(t, list) and len(t) == 3 for t in row[5])
    )


class StoredConversations(Mapping[str, LocalConversation]):
    """The cached local conversations, each made into an object when it is looked up (a warm
    status looks up a few, or none, so it decodes only those)."""

    def __init__(self, rows: list[Any]) -> None:
        if not isinstance(rows, list) or not all(_is_row(r) for r in rows):
            raise TypeError("not a list of conversations")  # a corrupt file: a miss
        self._rows: dict[str, list[Any]] = {row[0]: row for row in rows}
        self._made: dict[str, LocalConversation] = {}

    def __getitem__(self, cid: str) -> LocalConversation:
        made = self._made.get(cid)
        if made is None:
            made = self._made[cid] = LocalConversation.from_row(self._rows[cid])
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[list[Any]]:
        return list(self._rows.values())


@dataclass(slots=True)
class CachedResults:
    db_path: str
    fingerprint: str
    floor_ms: int
    calls: list[Call]
    warnings: list[str]
    unreadable: dict[str, int] = field(default_factory=dict)  # reason → conversations
    diagnostics: list[str] = field(default_factory=list)  # facts of the read, not warnings
    conversations: Mapping[str, LocalConversation] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)  # project slug → its folder

    def dump(self) -> dict[str, Any]:
        return {
            **self._head(),
            "conversations": [_conversation_row(c) for c in self._conversation_items()],
            "calls": [c.to_row() for c in self.calls],
        }

    def dumps(self, *, again: bool = True) -> str:
        """`dump` as the file's text (`results_text`). `again`: its writer writes mostly the
        same calls again (a long-lived service, at each refresh): each call and conversation
        is encoded once for all the writes that hold it; else the file is encoded whole, once
        (the same text)."""
        if not again:
            return results_text(self.dump())
        head = self._head()
        stamp = {key: head.pop(key) for key in STAMP}
        conversations = _CONVERSATION_TEXTS.joined(self._conversation_items())
        rest = json_with(head, "conversations", f"[{conversations}]")
        calls = f"{json.dumps('calls')}:[{_CALL_TEXTS.joined(self.calls)}]"
        return _file_text(stamp, f"{rest[:-1]},{calls}}}")

    def _conversation_items(self) -> list[Any]:
        if isinstance(self.conversations, StoredConversations):
            return self.conversations.rows()
        return [*self.conversations.values()]

    def _head(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "rules": RULES,
            "dbPath": self.db_path,
            "fingerprint": self.fingerprint,
            "floorMs": self.floor_ms,
            "warnings": self.warnings,
            "unreadable": self.unreadable,
            "diagnostics": self.diagnostics,
            "paths": self.paths,
        }

    @classmethod
    def load(cls, raw: Any) -> CachedResults | None:
        if not isinstance(raw, dict) or raw.get("version") != VERSION:
            return None
        if raw.get("rules") != RULES:
            return None  # derived by other rules: parse again
        try:
            return cls(
                db_path=str(raw["dbPath"]),
                fingerprint=str(raw["fingerprint"]),
                floor_ms=int(raw["floorMs"]),
                calls=[Call.from_row(row) for row in raw["calls"]],
                warnings=[str(w) for w in raw["warnings"]],
                unreadable={str(k): int(v) for k, v in raw.get("unreadable", {}).items()},
                diagnostics=[str(d) for d in raw["diagnostics"]],
                conversations=StoredConversations(raw["conversations"]),
                # required: a file written before project paths were kept is a miss (read
                # again once), not figures whose projects show as slugs until the next change
                paths={str(k): str(v) for k, v in raw["paths"].items()},
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            return None


# What a reader learns from the file's first line alone: whose results, of which identity.
STAMP: Final = ("version", "rules", "dbPath", "fingerprint", "floorMs")
_STAMP_BYTES: Final = 64 * 1024  # a longer first line is no stamp (the file is parsed whole)


def results_text(raw: Mapping[str, Any]) -> str:
    """The file's text for `CachedResults.dump`'s object: its `STAMP` members as JSON on the
    first line, the rest as JSON on the second (a reader of results of another identity
    learns it from the first line, without parsing the calls)."""
    stamp = {key: raw[key] for key in STAMP if key in raw}
    rest = {key: value for key, value in raw.items() if key not in STAMP}
    return _file_text(stamp, json.dumps(rest, separators=(",", ":")))


def _file_text(stamp: dict[str, Any], rest: str) -> str:
    """The stamp's line, then the rest (JSON text already)."""
    return f"{json.dumps(stamp, separators=(',', ':'))}\n{rest}"


def results_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


_results: FileMemo[CachedResults] = FileMemo()  # mostly what this process wrote itself


def results_object(raw: bytes) -> dict[str, Any]:
    """The object `results_text` wrote (ValueError when `raw` is no such text)."""
    stamp, _, rest = raw.partition(b"\n")
    head, body = json.loads(stamp), json.loads(rest)
    if not isinstance(head, dict) or not isinstance(body, dict):
        raise ValueError("not a results file")
    return {**head, **body}


def _parse(raw: bytes) -> CachedResults | None:
    try:
        return CachedResults.load(results_object(raw))
    except (ValueError, RecursionError):
        return None


def _stamp_of(path: Path) -> dict[str, Any] | None:
    """The file's first line as JSON; None when there is none to read."""
    try:
        with open(path, "rb") as file:
            line = file.readline(_STAMP_BYTES)
        stamp = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    return stamp if isinstance(stamp, dict) else None


def load_results(
    cache_dir: Path, db_path: str, fingerprint: str | None = None
) -> CachedResults | None:
    """The cached results of this database; with `fingerprint`, only results of it (a file
    of another is None, its calls not parsed); without, any (the caller decides).

    Callers must not modify what they get: it may be shared with the next caller.
    """
    path = results_path(cache_dir)
    if fingerprint is not None:
        stamp = _stamp_of(path)
        if stamp is not None and (stamp.get("dbPath"), stamp.get("fingerprint")) != (
            db_path,
            fingerprint,
        ):
            return None
    cached = _results.read(path, _parse)
    return cached if cached is not None and cached.db_path == db_path else None


def save_results(cache_dir: Path, results: CachedResults, *, again: bool = True) -> None:
    """`again`: the caller writes this file again (see `CachedResults.dumps`)."""
    path = results_path(cache_dir)
    with locked(path):
        # No fsync: the calls of one read, read again when the file is lost or torn (a
        # long-lived service writes it at every refresh, where an fsync is a real cost).
        if not write_cache_text(path, results.dumps(again=again), durable=False):
            return
        _results.remember(path, results)


def sweep_old_versions(cache_dir: Path) -> None:
    """Older versions of our own cache files are ignored, then removed (never `imports/`)."""
    from codeburn.cache.agent_files import FILE as AGENT_FILES  # noqa: PLC0415
    from codeburn.cache.daily_cache import FILE as DAILY_FILE  # noqa: PLC0415

    for pattern, current in (
        ("cursor-results.v*.json", FILE),
        ("daily.v*.json", DAILY_FILE),
        ("cursor-agent-files.v*.json", AGENT_FILES),
    ):
        for old in cache_dir.glob(pattern):
            if old.name != current:
                old.unlink(missing_ok=True)
                Path(str(old) + ".lock").unlink(missing_ok=True)
