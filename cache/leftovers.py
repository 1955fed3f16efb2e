"""What a killed process leaves behind: copies of Cursor's database, temp files of atomic writes.

A snapshot copy holds Cursor's login token, so it lives in a 0700 folder under our cache folder
(never the shared temp folder) and any copy older than an hour is removed at start, as are the
temp files of atomic writes (`.<name>.<random>.tmp`) a crash left next to our files.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from codeburn.cache.dirs import cache_dir, config_dir
from codeburn.cache.files import private_dir
from codeburn.providers import SNAPSHOT_PREFIX, now_ms, use_snapshot_folder

STALE_MS: Final = 3_600_000


def snapshot_root() -> Path:
    """The private folder snapshot copies are made in."""
    return private_dir(cache_dir() / "snapshots")


use_snapshot_folder(snapshot_root)  # the reader copies into our folder, which we sweep


def _stale(path: Path, before_ms: int) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return st.st_mtime_ns // 1_000_000 < before_ms and (
        not hasattr(os, "getuid") or st.st_uid == os.getuid()
    )


def _remove(path: Path) -> bool:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        return True
    return False


def _candidates() -> list[Path]:
    found: list[Path] = []
    for folder in (cache_dir() / "snapshots", Path(tempfile.gettempdir())):
        with contextlib.suppress(OSError):
            found += folder.glob(SNAPSHOT_PREFIX + "*")
    for root in (cache_dir(), config_dir()):
        with contextlib.suppress(OSError):
            found += root.glob(".*.tmp")
            found += root.glob("*/.*.tmp")
    return found


_swept = False


def sweep_once() -> None:
    """`sweep_leftovers` the first time a process asks (a usage service starting)."""
    global _swept  # noqa: PLW0603
    if not _swept:
        _swept = True
        sweep_leftovers()


def sweep_leftovers(now: int | None = None) -> int:
    """Remove snapshots and temp files older than an hour; returns how many were removed."""
    before = (now_ms() if now is None else now) - STALE_MS
    return sum(_remove(path) for path in _candidates() if _stale(path, before))
