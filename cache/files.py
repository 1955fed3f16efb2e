"""Atomic, private writes of JSON files and a lock for read-modify-write."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

LOCK_TIMEOUT_S = 30.0
log = logging.getLogger(__name__)


class LockTimeoutError(RuntimeError):
    """Another CodeBurn process held a lock for too long."""


def private_dir(path: Path) -> Path:
    """`path` as a folder; every level it creates is 0700, whatever the umask."""
    missing: list[Path] = []
    probe = path
    while not probe.is_dir() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, 0o700)  # mkdir's mode passes through the umask
    return path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename; the result is mode 0600."""
    private_dir(path.parent)
    # mkstemp creates the file 0600 on every platform (no fchmod: Windows lacks it before 3.13).
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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


def write_cache_json(path: Path, obj: Any) -> bool:
    """Write one of our cache files: whatever took its name (a folder) is replaced, and a failed
    write is logged, never raised (the figures stand without it). False when not written."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        write_json_atomic(path, obj)
    except OSError as exc:
        log.warning("cache file %s not written: %s", path, exc.strerror or exc)
        return False
    return True


def loads_json(raw: str | bytes) -> Any | None:
    """Parsed JSON, or None for anything that is not JSON, including nesting too deep to parse."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def read_json(path: Path) -> Any | None:
    """Parsed JSON, or None when the file is missing, unreadable, corrupt or a folder."""
    try:
        with path.open("rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return loads_json(raw)


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `<path>.lock` across a read-modify-write of `path`."""
    private_dir(path.parent)
    lock = FileLock(str(path) + ".lock", timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise LockTimeoutError(
            f"another CodeBurn process is holding {path.name}; try again in a moment"
        ) from exc
