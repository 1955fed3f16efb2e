"""When each agent-stream request was first seen, per database (SPEC §2.5).

A CLI command's merge is written by its writer once the answer is out (`later`: the lock,
the read and the fsync cost a cold report ~20 ms before its output); until then this
process's reads see it as if written, and the next command waits for the writer.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Final

from codeburn.cache.files import FileMemo, loads_json, locked, read_json, write_cache_json
from codeburn.providers import later

FILE: Final = "cursor-agent-first-seen.v1.json"
_files: FileMemo[Any] = FileMemo()  # a long-lived service reads it at each refresh
# Merges queued for this command's writer, by (cache folder, database): earliest times.
_pending: dict[tuple[Path, str], dict[str, int]] = {}


def _path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_first_seen(cache_dir: Path, db_path: str) -> dict[str, int]:
    data = _files.read(_path(cache_dir), loads_json)
    entry = data.get(db_path) if isinstance(data, dict) else None
    stored = (
        {str(k): v for k, v in entry.items() if isinstance(v, int)}
        if isinstance(entry, dict)
        else {}
    )
    pending = _pending.get((cache_dir, db_path))
    if pending:
        _merge_earliest(stored, pending)
    return stored


def first_seen_lost(cache_dir: Path) -> bool:
    """The file is missing, unreadable or not ours: every first-seen time in it is gone
    (not so when this command's writer is about to write it)."""
    if any(folder == cache_dir for folder, _ in _pending):
        return False
    return not isinstance(_files.read(_path(cache_dir), loads_json), dict)


def save_first_seen(cache_dir: Path, db_path: str, seen: dict[str, int]) -> None:
    """Merge; an earlier first-seen time always wins so a record never moves to a new day.
    Inside a CLI command the write is queued for its writer (see the module docstring)."""
    key = (cache_dir, db_path)
    queued = key in _pending
    _merge_earliest(_pending.setdefault(key, {}), seen)
    if not queued and not later(partial(_write_pending, key)):
        _write_pending(key)


def _merge_earliest(into: dict[str, int], seen: dict[str, int]) -> bool:
    """Earlier times of `seen` into `into`; whether any changed."""
    changed = False
    for request_id, ms in seen.items():
        old = into.get(request_id)
        if not isinstance(old, int) or ms < old:
            into[request_id] = ms
            changed = True
    return changed


def _write_pending(key: tuple[Path, str]) -> None:
    seen = _pending.pop(key, None)
    if seen is not None:
        _write_merged(*key, seen)


def _write_merged(cache_dir: Path, db_path: str, seen: dict[str, int]) -> None:
    path = _path(cache_dir)
    with locked(path):
        data = read_json(path)
        data = data if isinstance(data, dict) else {}
        entry = data.get(db_path)
        merged: dict[str, int] = dict(entry) if isinstance(entry, dict) else {}
        if _merge_earliest(merged, seen) or db_path not in data:
            data[db_path] = merged
            write_cache_json(path, data)
