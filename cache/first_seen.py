"""When each agent-stream request was first seen, per database (docs/local-data.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from codeburn.cache.files import FileMemo, loads_json, locked, write_cache_json

FILE: Final = "cursor-agent-first-seen.v1.json"
_files: FileMemo[Any] = FileMemo()  # a long-lived service reads it at each refresh


def _path(cache_dir: Path) -> Path:
    return cache_dir / FILE


def load_first_seen(cache_dir: Path, db_path: str) -> dict[str, int]:
    data = _files.read(_path(cache_dir), loads_json)
    entry = data.get(db_path) if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        return {}
    return {str(k): v for k, v in entry.items() if isinstance(v, int)}


def first_seen_lost(cache_dir: Path) -> bool:
    """The file is missing, unreadable or not ours: every first-seen time in it is gone."""
    return not isinstance(_files.read(_path(cache_dir), loads_json), dict)


def save_first_seen(cache_dir: Path, db_path: str, seen: dict[str, int]) -> None:
    """Merge; an earlier first-seen time always wins so a record never moves to a new day."""
    path = _path(cache_dir)
    with locked(path):
        # What this process last read or wrote, while the file is that one (so a long-lived
        # service does not parse it again at each refresh): copied, never changed in place.
        data = _files.read(path, loads_json)
        data = dict(data) if isinstance(data, dict) else {}
        entry = data.get(db_path)
        merged: dict[str, int] = dict(entry) if isinstance(entry, dict) else {}
        changed = False
        for request_id, ms in seen.items():
            old = merged.get(request_id)
            if not isinstance(old, int) or ms < old:
                merged[request_id] = ms
                changed = True
        if changed or db_path not in data:
            data[db_path] = merged
            if write_cache_json(path, data):
                _files.remember(path, data)
