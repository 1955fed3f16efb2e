"""Where Claude Code's and Codex's logs are on this machine, and which of them changed: a
snapshot of their files' identities (size, mtime, inode), listed without reading any file."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from codeburn.providers.calls import CLAUDE_CODE, CODEX

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


@dataclass(frozen=True, slots=True)
class LogFile:
    tool: str
    path: str
    name: str  # Claude Code: '/'-separated under `projects/` (root-numbered); Codex: the path
    ident: Ident


@dataclass(slots=True)
class ToolSnapshot:
    """The log files found under every root, each with its identity."""

    files: dict[str, LogFile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # folders that could not be listed
    taken_ns: int = 0

    @property
    def fingerprint(self) -> str:
        parts = [f"{k}={f.ident}" for k, f in sorted(self.files.items())]
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:32]

    def found(self, tool: str) -> bool:
        return any(f.tool == tool for f in self.files.values())


def _walk(
    top: str, rel: str, real: str | None, problems: list[str], seen: set[tuple[int, int]]
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
    try:
        entries = list(os.scandir(top))
    except OSError as exc:
        problems.append(f"could not list {top}: {exc.strerror or exc}")
        return
    if real is None:
        real = os.path.realpath(top)
    for entry in sorted(entries, key=lambda e: e.name):
        try:
            is_dir = entry.is_dir()
            is_link = entry.is_symlink()
        except OSError:
            continue
        name = entry.name
        under = f"{rel}/{name}" if rel else name
        if is_dir:
            inner = None if is_link else os.path.join(real, name)
            yield from _walk(entry.path, under, inner, problems, seen)
        else:
            key = os.path.realpath(entry.path) if is_link else os.path.join(real, name)
            yield entry.path, under, key


def _ident(path: str) -> Ident | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def take_snapshot(claude: list[Path] | None = None, codex: Path | None = None) -> ToolSnapshot:
    """The files under the roots (the environment's when not given)."""
    snap = ToolSnapshot(taken_ns=time.time_ns())
    seen: set[tuple[int, int]] = set()
    for index, root in enumerate(claude if claude is not None else claude_roots()):
        for path, under, key in _walk(str(root / "projects"), "", None, snap.problems, seen):
            if _is_log(under.rsplit("/", 1)[-1]):
                _add(snap, CLAUDE_CODE, path, key, f"{index}/{under}")
    root = codex if codex is not None else codex_root()
    for folder, pattern in (("sessions", "rollout-"), ("archived_sessions", "")):
        for path, under, key in _walk(str(root / folder), "", None, snap.problems, seen):
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
