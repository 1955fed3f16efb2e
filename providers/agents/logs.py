"""Where Claude Code's and Codex's logs are on this machine, and which of them changed: a
snapshot of their files' identities (size, mtime, inode), listed without reading any file."""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple

from codeburn.providers.calls import CLAUDE_CODE, CODEX, Call

CLAUDE_ENV: Final = "CLAUDE_CONFIG_DIR"
CODEX_ENV: Final = "CODEX_HOME"
Ident = tuple[int, int, int]  # size, mtime_ns, inode


def claude_roots() -> list[Path]:
    """`$CLAUDE_CONFIG_DIR` (comma-separated), else `~/.config/claude` and `~/.claude`."""
    env = os.environ.get(CLAUDE_ENV, "").strip()
    if env:
        return [Path(p.strip()).expanduser() for p in env.split(",") if p.strip()]
    home = Path.home()
    return [home / ".config" / "claude", home / ".claude"]


def codex_root() -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    env = os.environ.get(CODEX_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".codex"


def tool_log_folders() -> list[Path]:
    """The folders whose `*.jsonl` files `take_snapshot` lists (an editor's file watch of
    them reports every change to a log)."""
    root = codex_root()
    return [
        *(r / "projects" for r in claude_roots()),
        root / "sessions",
        root / "archived_sessions",
    ]


@dataclass(slots=True)
class ToolRead:
    """What a read of the logs found (`ToolLogs.read`; no logs: nothing)."""

    calls: Sequence[Call] = ()  # Claude Code's (maybe made as asked for), then Codex's
    titles: dict[str, str] = field(default_factory=dict)  # session → title
    diagnostics: list[str] = field(default_factory=list)
    found: set[str] = field(default_factory=set)  # tools whose root holds a file with usage


class LogFile(NamedTuple):
    tool: str
    path: str
    name: str  # Claude Code: '/'-separated under `projects/` (root-numbered); Codex: the path
    ident: Ident


_serials = itertools.count(1)


@dataclass(slots=True)
class ToolSnapshot:
    """The log files found under every root, each with its identity."""

    files: dict[str, LogFile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # folders that could not be listed
    taken_ns: int = 0
    _sum: int | None = None  # of `_file_hash` over the files (the fingerprint)
    serial: int = field(default_factory=lambda: next(_serials))
    # The snapshot this one was made from (its `serial`) and the keys whose files may differ
    # from that one's: the same keys in the same order otherwise. None: not known.
    base: tuple[int, frozenset[str]] | None = None

    @property
    def fingerprint(self) -> str:
        """Changes whenever a file's identity does, or a file comes or goes: a sum of one hash
        per file, so that `with_changes` moves it by the files it looks at only."""
        if self._sum is None:
            self._sum = sum(_file_hash(key, f.ident) for key, f in self.files.items())
        return format(self._sum % _FINGERPRINT_MOD, "032x")

    def found(self, tool: str) -> bool:
        return any(f.tool == tool for f in self.files.values())

    def with_changes(
        self, paths: Iterable[str], claude: list[Path], codex: Path, taken_ns: int
    ) -> ToolSnapshot:
        """This snapshot after the files at `paths` changed (written, created, removed: as an
        editor's file watch reports them), each looked at again, none other: equal to a new
        listing while nothing else changed, the files in a listing's order."""
        files, added, gone, total = dict(self.files), False, False, self._sum
        looked: set[str] = set()
        for path in paths:
            found = _log_of(path, claude, codex)
            if found is None:
                continue
            tool, name, _, _ = found
            key = os.path.realpath(path)
            ident = _ident(path)
            held = files.get(key)
            if ident is None:
                if held is None or held.path != path:
                    continue
                del files[key]
                gone = True
            elif held is not None:
                files[key] = LogFile(held.tool, held.path, held.name, ident)
                looked.add(key)
            else:
                files[key] = LogFile(tool, path, name, ident)
                added = True
            if total is not None:
                total -= _file_hash(key, held.ident) if held is not None else 0
                total += _file_hash(key, ident) if ident is not None else 0
        if added:  # (a listing walks each root's folders in name order)
            files = dict(sorted(files.items(), key=lambda kv: _listing_order(kv[1], claude, codex)))
        base = None if added or gone else (self.serial, frozenset(looked))
        return ToolSnapshot(files, list(self.problems), taken_ns, total, base=base)

    def based_on(self, old: ToolSnapshot) -> ToolSnapshot:
        """This listing, with `old` as its base when both list the same files in the same
        order (the keys whose identities differ noted)."""
        if len(self.files) == len(old.files) and list(self.files) == list(old.files):
            was = old.files
            self.base = (old.serial, frozenset(k for k, f in self.files.items() if was[k] != f))
        return self


Entry = tuple[str, str, bool, bool]  # a folder's entry: name, path, is a folder, is a link
SETTLED_NS: Final = 2_000_000_000  # a folder unchanged this long before a listing: kept


class Listings:
    """Folder listings kept between snapshots of a long-lived reader. A folder whose
    modification time and inode are those of its kept listing holds the same entries (adding,
    removing or renaming an entry changes its time); a listing is kept only when the folder's
    time was already `SETTLED_NS` old when it was made (a change in the same clock tick would
    not move the time) and it holds no link (whose target may change alone)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[int, int, int], list[Entry]]] = {}

    def get(self, top: str, st: os.stat_result) -> list[Entry] | None:
        kept = self._kept.get(top)
        if kept is not None and kept[0] == (st.st_mtime_ns, st.st_ino, st.st_dev):
            return kept[1]
        return None

    def keep(self, top: str, st: os.stat_result, entries: list[Entry], taken_ns: int) -> None:
        if st.st_mtime_ns < taken_ns - SETTLED_NS and not any(e[3] for e in entries):
            self._kept[top] = ((st.st_mtime_ns, st.st_ino, st.st_dev), entries)
        else:
            self._kept.pop(top, None)


def _entries(top: str, problems: list[str]) -> list[Entry] | None:
    """A folder's entries by name; None when it cannot be listed (said in `problems`)."""
    try:
        scanned = list(os.scandir(top))
    except OSError as exc:
        problems.append(f"could not list {top}: {exc.strerror or exc}")
        return None
    entries = []
    for entry in sorted(scanned, key=lambda e: e.name):
        try:
            entries.append((entry.name, entry.path, entry.is_dir(), entry.is_symlink()))
        except OSError:
            continue
    return entries


def _walk(
    top: str,
    rel: str,
    real: str | None,
    snap: ToolSnapshot,
    seen: set[tuple[int, int]],
    listings: Listings | None,
) -> Iterator[tuple[str, str, str]]:
    """Every file under `top`: its path, its path under the walk's start ('/'-separated) and
    its real path, following folder links once each (a link loop ends there). A file or
    folder that is no link is its folder's real path plus its name: `realpath` runs for
    links only (`real`: `top`'s, None when not known)."""
    try:
        st = os.stat(top)
    except OSError:
        return
    if (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    entries = listings.get(top, st) if listings is not None else None
    if entries is None:
        entries = _entries(top, snap.problems)
        if entries is None:
            return
        if listings is not None:
            listings.keep(top, st, entries, snap.taken_ns)
    if real is None:
        real = os.path.realpath(top)
    for name, path, is_dir, is_link in entries:
        under = f"{rel}/{name}" if rel else name
        if is_dir:
            inner = None if is_link else os.path.join(real, name)
            yield from _walk(path, under, inner, snap, seen, listings)
        else:
            key = os.path.realpath(path) if is_link else os.path.join(real, name)
            yield path, under, key


_FINGERPRINT_MOD: Final = 1 << 128


def _file_hash(key: str, ident: Ident) -> int:
    data = f"{key}={ident}".encode("utf-8", "replace")
    return int.from_bytes(hashlib.blake2b(data, digest_size=16).digest(), "little")


def _ident(path: str) -> Ident | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def take_snapshot(
    claude: list[Path] | None = None,
    codex: Path | None = None,
    listings: Listings | None = None,
) -> ToolSnapshot:
    """The files under the roots (the environment's when not given). `listings`: folder
    listings kept from the last snapshot (a long-lived reader's), updated."""
    snap = ToolSnapshot(taken_ns=time.time_ns())
    seen: set[tuple[int, int]] = set()
    for index, root in enumerate(claude if claude is not None else claude_roots()):
        for path, under, key in _walk(str(root / "projects"), "", None, snap, seen, listings):
            if _is_log(under.rsplit("/", 1)[-1]):
                _add(snap, CLAUDE_CODE, path, key, f"{index}/{under}")
    root = codex if codex is not None else codex_root()
    for folder, pattern in (("sessions", "rollout-"), ("archived_sessions", "")):
        for path, under, key in _walk(str(root / folder), "", None, snap, seen, listings):
            name = under.rsplit("/", 1)[-1]
            if _is_log(name) and name.startswith(pattern):
                _add(snap, CODEX, path, key, path)
    return snap


def _is_log(name: str) -> bool:
    """`*.jsonl` (`.jsonl` alone is a hidden file with no suffix)."""
    return len(name) > len(".jsonl") and name.endswith(".jsonl")


def _add(snap: ToolSnapshot, tool: str, path: str, key: str, name: str) -> None:
    """`key`: the file's real path (one file reached through two roots is read once)."""
    ident = _ident(path)
    if ident is None:
        return
    snap.files.setdefault(key, LogFile(tool, path, name, ident))


def _log_of(
    path: str, claude: list[Path], codex: Path
) -> tuple[str, str, tuple[int, int], str] | None:
    """(tool, name, which root, path under it) of a log `take_snapshot` would list at `path`;
    None for any other path."""
    for index, root in enumerate(claude):
        under = _under(path, str(root / "projects"))
        if under is not None and _is_log(under.rsplit("/", 1)[-1]):
            return CLAUDE_CODE, f"{index}/{under}", (0, index), under
    for index, (folder, pattern) in enumerate(
        (("sessions", "rollout-"), ("archived_sessions", ""))
    ):
        under = _under(path, str(codex / folder))
        name = under.rsplit("/", 1)[-1] if under is not None else ""
        if under is not None and _is_log(name) and name.startswith(pattern):
            return CODEX, path, (1, index), under
    return None


def _under(path: str, top: str) -> str | None:
    """`path` under the folder `top`, '/'-separated; None when it lies elsewhere."""
    prefix = top.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


def _listing_order(file: LogFile, claude: list[Path], codex: Path) -> tuple[object, ...]:
    """Where `take_snapshot` lists a file: by root, then folder by folder in name order."""
    found = _log_of(file.path, claude, codex)
    if found is None:
        return (2,)
    _, _, root, under = found
    return (*root, tuple(under.split("/")))
