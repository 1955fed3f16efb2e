"""The agent memo (`providers.home.memo`): transcripts' turns by content, kept across versions.

Like the blob memo, its name carries no version: the memo's own version is inside, and a file
of another version, damaged or too large is read as nothing and replaced at the next read
that parses a transcript. It is not one of the versioned caches, so bumping those keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from codeburn.cache.files import read_bounded, write_quietly

FILE: Final = "cursor-agent-memo.json"
MAX_BYTES: Final = 256 * 1024 * 1024  # larger is not ours to read (the memo bounds itself)


def agent_memo_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_agent_memo(cache_dir: Path) -> bytes | None:
    """The file's bytes; None when it is missing, unreadable, a folder or too large."""
    return read_bounded(agent_memo_path(cache_dir), MAX_BYTES)


def save_agent_memo(cache_dir: Path, data: bytes) -> bool:
    """Write it atomically (0600); a failed write costs only time: never raised."""
    return write_quietly(agent_memo_path(cache_dir), data)
