"""Reading an export file a person names: regular files only, bounded, never blocking.

`/dev/zero` would grow without end and a fifo would block forever (also inside the language
server, whose worker would then never finish), so anything but a regular file is refused before
it is read, and reading stops at the size cap.
"""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Final

from codeburn.providers.exports.usage_csv import CsvFormatError

MAX_EXPORT_BYTES: Final = 200 * 1024 * 1024
_CHUNK: Final = 1024 * 1024


class ExportFileError(CsvFormatError):
    """The named file cannot be imported; the message says why, nothing was stored."""


def _size_text(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB"


def read_export(path: Path, *, limit: int = MAX_EXPORT_BYTES) -> tuple[bytes, int]:
    """The file's bytes and its modification time (epoch ms)."""
    with open_export(path, limit=limit) as (handle, mtime_ms):
        chunks: list[bytes] = []
        while chunk := handle.read(_CHUNK):
            chunks.append(chunk)
    return b"".join(chunks), mtime_ms


@contextmanager
def open_export(path: Path, *, limit: int = MAX_EXPORT_BYTES) -> Iterator[tuple[BinaryIO, int]]:
    """The file open for reading, and its modification time (epoch ms): `read_export` without
    holding the bytes. Reading past `limit` raises ExportFileError, so a file that grows while
    it is read is refused like one that was too big from the start."""
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
    with os.fdopen(fd, "rb", buffering=0) as raw:
        st = os.fstat(raw.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ExportFileError(f"cannot import {path}: not a regular file")
        yield io.BufferedReader(_Bounded(raw, limit, path), _CHUNK), st.st_mtime_ns // 1_000_000


class _Bounded(io.RawIOBase):
    """A raw file that refuses to be read past `limit` bytes."""

    def __init__(self, raw: BinaryIO, limit: int, path: Path) -> None:
        super().__init__()
        self._raw, self._left, self._path, self._limit = raw, limit, path, limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        # One byte more than is left: reading it proves the file is larger than the limit.
        n = self._raw.readinto(view[: self._left + 1])  # type: ignore[attr-defined]
        if n is None:
            return 0
        if n > self._left:
            raise ExportFileError(_too_big(self._path, self._limit))
        self._left -= n
        return int(n)


def _too_big(path: Path, limit: int) -> str:
    return (
        f"cannot import {path}: larger than {_size_text(limit)}, which no Cursor usage export is; "
        "export a shorter period"
    )
