"""Reading an export file a person names: regular files only, bounded, never blocking.

`/dev/zero` would grow without end and a fifo would block forever (also inside the language
server, whose worker would then never finish), so anything but a regular file is refused before
it is read, and reading stops at the size cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from codeburn.providers.exports.usage_csv import CsvFormatError

MAX_EXPORT_BYTES: Final = 200 * 1024 * 1024
_CHUNK: Final = 1024 * 1024


class ExportFileError(CsvFormatError):
    """The named file cannot be imported; the message says why, nothing was stored."""


def _size_text(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB"


def read_export(path: Path, *, limit: int = MAX_EXPORT_BYTES) -> tuple[bytes, int]:
    """The file's bytes and its modification time (epoch ms)."""
    try:
        before = os.stat(path)
    except OSError as exc:
        raise ExportFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(before.st_mode):
        raise ExportFileError(f"cannot import {path}: not a regular file; give the exported .csv")
    if before.st_size > limit:
        raise ExportFileError(_too_big(path, limit))
    try:
        # O_NONBLOCK: should the path have been swapped for a fifo, open() must not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ExportFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb", buffering=0) as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ExportFileError(f"cannot import {path}: not a regular file")
        chunks: list[bytes] = []
        size = 0
        while chunk := handle.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise ExportFileError(_too_big(path, limit))
            chunks.append(chunk)
    return b"".join(chunks), st.st_mtime_ns // 1_000_000


def _too_big(path: Path, limit: int) -> str:
    return (
        f"cannot import {path}: larger than {_size_text(limit)}, which no Cursor usage export is; "
        "export a shorter period"
    )
