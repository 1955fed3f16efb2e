"""The other tools' log reader's state (`providers.agents.state`): per Claude Code and Codex
file, its identity, the offset read to and what the bytes up to there said.

Its version is inside; a file of another version, damaged or too large is read as nothing, and
every log is then read again (time, never a figure).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from codeburn.cache.files import read_bounded, write_quietly

FILE: Final = "tool-logs.json"
MAX_BYTES: Final = 1024 * 1024 * 1024


def tool_logs_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_tool_logs(cache_dir: Path) -> bytes | None:
    """The file's bytes; None when it is missing, unreadable, a folder or too large."""
    return read_bounded(tool_logs_path(cache_dir), MAX_BYTES)


def save_tool_logs(cache_dir: Path, data: bytes) -> bool:
    """Write it atomically (0600); a failed write costs only time: never raised."""
    return write_quietly(tool_logs_path(cache_dir), data)
