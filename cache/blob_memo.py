"""The Cursor 3.x blob memo (`providers.ide.layout3.memo`): one file, kept across versions.

Its name carries no version: the memo's own version and database are inside, and a file of
another version, another database or no use at all is read as nothing and replaced at the
next full parse. It is not one of the versioned result caches, so bumping those keeps it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from codeburn.cache.files import read_bounded, write_quietly

FILE: Final = "cursor-blob-memo.json"
MAX_BYTES: Final = 512 * 1024 * 1024  # larger is not ours to read (the memo bounds itself)


def blob_memo_path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_blob_memo(cache_dir: Path) -> bytes | None:
    """The file's bytes; None when it is missing, unreadable, a folder or too large."""
    return read_bounded(blob_memo_path(cache_dir), MAX_BYTES)


def save_blob_memo(cache_dir: Path, data: bytes) -> bool:
    """Write it atomically (0600); a failed write costs only time: never raised."""
    return write_quietly(blob_memo_path(cache_dir), data)
