"""Which project each conversation belongs to, from Cursor's workspaceStorage
(docs/local-data.md#projects)."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from codeburn.providers.sqlite_ro import CursorDbError, open_readonly

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SLASHES = re.compile(r"/+")
_COMPOSER_KEYS = ("composer.composerData", "composer.composerHeaders")


# slug → the folder it was last made from, for every slug this process named (see `named_paths`).
_NAMED: dict[str, str] = {}


def project_path(folder_uri: str) -> str:
    """The folder a person reads: `file:///home/me/my%20app` → `/home/me/my app`; other schemes
    keep their URI (`vscode-remote://ssh-remote+box/srv/app`), percent-decoded."""
    if folder_uri.startswith("file://"):
        return unquote(folder_uri[len("file://") :])
    return unquote(folder_uri)


def project_name(folder_uri: str) -> str:
    """`file:///home/me/app` → `-home-me-app`; other schemes keep their authority.

    The slug is the stable project id; it loses the difference between `/` and `-`, so the
    folder each slug was made from is remembered here (`named_paths`)."""
    if folder_uri.startswith("file://"):
        path = folder_uri[len("file://") :]
    else:
        path = _SCHEME.sub("/", folder_uri, count=1).replace("+", "-")
    slug = _SLASHES.sub("-", unquote(path))
    _NAMED[slug] = project_path(folder_uri)
    return slug


def path_project(path: str) -> str:
    """Project name of an absolute path, as of its folder URI (`/home/me/app` → `-home-me-app`)."""
    path = path.replace("\\", "/")
    return project_name("file://" + (path if path.startswith("/") else "/" + path))


def named_paths(slugs: Iterable[str]) -> dict[str, str]:
    """slug → folder path of those of `slugs` this process made from a folder URI or path.

    Every reader names projects through `project_name`, and every source that names a
    project (workspace.json, composer headers, CLI stores) is read in full at each read, so
    this knows the folder of every slug a read returns that came from one; a transcript
    folder's own slug (no folder known) is not in it."""
    return {slug: path for slug in sorted(set(slugs)) if (path := _NAMED.get(slug)) is not None}


def _composer_ids(payload: Any) -> list[str]:
    if not isinstance(payload, dict):
        return []
    composers = payload.get("allComposers")
    if not isinstance(composers, list):
        return []
    return [
        c["composerId"]
        for c in composers
        if isinstance(c, dict) and isinstance(c.get("composerId"), str) and c["composerId"]
    ]


def _read_workspace_composers(db: Path) -> list[str]:
    ids: list[str] = []
    try:
        with open_readonly(db) as conn:
            rows = conn.execute(
                "SELECT CAST(value AS BLOB) FROM ItemTable WHERE key IN (?, ?)", _COMPOSER_KEYS
            ).fetchall()
    except (CursorDbError, sqlite3.Error):
        return ids
    for (raw,) in rows:
        try:
            ids.extend(_composer_ids(json.loads(bytes(raw).decode("utf-8", "replace"))))
        except (ValueError, RecursionError):
            continue
    return ids


def folder_of(workspace_json: Path) -> str | None:
    try:
        data = json.loads(workspace_json.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError, RecursionError):
        return None
    folder = data.get("folder") if isinstance(data, dict) else None
    return folder if isinstance(folder, str) and folder else None


def _workspace_dirs(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []


def _stat_key(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def storage_fingerprint(root: Path) -> str:
    """Cheap identity of the mapping: names and stat of each workspace's files, no reads."""
    digest = hashlib.sha256()
    for folder in _workspace_dirs(root):
        digest.update(folder.name.encode("utf-8", "replace"))
        for name in ("workspace.json", "state.vscdb", "state.vscdb-wal"):
            digest.update(_stat_key(folder / name).encode())
    return digest.hexdigest()[:32]


def read_project_map(root: Path) -> dict[str, str]:
    """composerId → project name for every single-folder workspace under `root`."""
    mapping: dict[str, str] = {}
    for folder in _workspace_dirs(root):
        uri = folder_of(folder / "workspace.json")
        db = folder / "state.vscdb"
        if uri is None or not db.is_file():
            continue
        name = project_name(uri)
        for composer_id in _read_workspace_composers(db):
            mapping.setdefault(composer_id, name)
    return mapping
