"""Atomic, private writes of JSON files and a lock for read-modify-write."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

LOCK_TIMEOUT_S = 30.0


class LockTimeoutError(RuntimeError):
    """Another CodeBurn process held a lock for too long."""


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename; the result is mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    write_bytes_atomic(path, json.dumps(obj, separators=(",", ":")).encode("utf-8"))


def read_json(path: Path) -> Any | None:
    """Parsed JSON, or None when the file is missing, unreadable or corrupt."""
    try:
        with path.open("rb") as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `<path>.lock` across a read-modify-write of `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + ".lock", timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise LockTimeoutError(
            f"another CodeBurn process is holding {path.name}; try again in a moment"
        ) from exc
