"""Cursor Agent CLI sessions: `~/.cursor/chats/<md5(cwd)>/<id>/store.db`.

Table `meta`, key "0": hex-encoded JSON (`agentId`, `name`, `createdAt` in ms,
`latestRootBlobId`, `lastUsedModel`, sometimes `workspacePath`). Table `blobs(id, data)` holds the
same content-addressed graph as the IDE's `agentKv:blob:*` rows, rooted at `latestRootBlobId`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

# The agent formats on first use: a status only lists files.
import codeburn.providers.agent as agent_formats
from codeburn.providers.sqlite_ro import (
    CursorDbError,
    DatabaseLockedError,
    is_lock_error,
    open_readonly,
)

if TYPE_CHECKING:
    from codeburn.providers.agent import Graph

CHATS_DIR: Final = "chats"
# How a Cursor Agent system prompt names the folder it runs in (`<env>` block, Aug 2025).
_WORKSPACE_LINE: Final = re.compile(
    r"^\s*(?:Working directory|Workspace Path|Workspace path|Current working directory):"
    r"\s*(\S.*?)\s*$",
    re.MULTILINE,
)
_PROMPTS_LOOKED_AT: Final = 8  # the system prompt opens the history
STORE_NAME: Final = "store.db"
META_KEY: Final = "0"
# A store up to this size is read whole: its graph reaches nearly every blob, and one
# statement per lookup costs more than reading it all; a larger one is not held in memory
# at once.
WHOLE_STORE_BYTES: Final = 16 * 1024 * 1024


class CliSession(NamedTuple):
    """What one store.db says about its conversation (`graph` None when it could not be read)."""

    conversation_id: str
    created_ms: int | None
    model: str | None
    workspace: str | None  # a path or URI, when the store names one
    graph: Graph | None
    unreadable: str | None = None  # the reason, when the conversation exists but is unreadable
    prompt_workspace: str | None = None  # the workspace path the system prompt names
    folder: str | None = None  # `chats/<md5(cwd)>`: the folder the store is in
    title: str | None = None  # the meta's `name`


class StoreBusy(Exception):
    """The store was locked by the CLI: keep what was read before, try again later."""


def find_stores(home: Path) -> list[Path]:
    """Every `chats/*/*/store.db` (sorted, so the walk is deterministic)."""
    found: list[Path] = []
    chats = home / CHATS_DIR
    try:
        workspaces = sorted(os.scandir(chats), key=lambda e: e.name)
    except OSError:
        return found
    for workspace in workspaces:
        for session in _subdirs(Path(workspace.path)):
            store = session / STORE_NAME
            if store.is_file():
                found.append(store)
    return found


def _subdirs(folder: Path) -> Iterator[Path]:
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir():
                yield Path(entry.path)
        except OSError:
            continue


def decode_meta(value: Any) -> dict[str, Any] | None:
    """The meta row's JSON object: hex text (as the CLI writes it), else plain JSON."""
    raw: bytes
    if isinstance(value, bytes):
        raw = value
    elif isinstance(value, str):
        raw = value.encode("utf-8", "replace")
    else:
        return None
    text = raw.decode("ascii", "replace").strip()
    with contextlib.suppress(ValueError):  # not hex: maybe plain JSON
        raw = bytes.fromhex(text)
    try:
        meta = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return meta if isinstance(meta, dict) else None


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None  # (it was opened: looked up blob by blob, as it was)


def _positive_ms(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if 0 < value < 1e14 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _as_bytes(data: Any) -> bytes | None:
    if data is None:
        return None
    return bytes(data) if isinstance(data, bytes | memoryview) else str(data).encode()


def _blob_reader(conn: sqlite3.Connection, size: int | None, whole_bytes: int) -> Any:
    """Blob id → its bytes (None when missing). A store of at most `whole_bytes` is read in
    one statement, its first row per id kept as a lookup by id would find it; a larger one,
    or one that statement cannot read (it raises again below, when a lookup needs the row),
    is looked up blob by blob."""
    if size is not None and size <= whole_bytes:
        whole: dict[Any, Any] = {}
        try:
            for key, data in conn.execute("SELECT id, data FROM blobs"):
                whole.setdefault(key, data)
        except sqlite3.Error:
            pass
        else:
            return lambda blob_id: _as_bytes(whole.get(blob_id))

    def blob(blob_id: str) -> bytes | None:
        row = conn.execute("SELECT data FROM blobs WHERE id = ?", (blob_id,)).fetchone()
        return None if row is None else _as_bytes(row[0])

    return blob


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def prompt_workspace(root: bytes, blob: Any) -> str | None:
    """The workspace path a system prompt of the history names (`Working directory: /root`)."""
    try:
        keys = agent_formats.root_fields(root).prompt_keys[:_PROMPTS_LOOKED_AT]
    except agent_formats.GraphUnreadable:
        return None
    for key in keys:
        data = blob(key) if key else None
        if not data or data[:1] != b"{":
            continue
        try:
            record = json.loads(data.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or record.get("role") != "system":
            continue
        found = _WORKSPACE_LINE.search(_text_of(record.get("content")))
        if found is not None:
            return found.group(1)
    return None


def read_store(path: Path, *, whole_bytes: int = WHOLE_STORE_BYTES) -> CliSession | None:
    """The session in one store.db; None when it holds no CLI session meta. Its blobs are
    read in one statement when the store is at most `whole_bytes`, else one by one.

    Raises StoreBusy when the CLI holds a lock.
    """
    fallback_id = path.parent.name
    try:
        with open_readonly(path) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
            meta = decode_meta(row[0]) if row is not None else None
            if meta is None:
                return None
            session_id = _text(meta.get("agentId")) or fallback_id
            created = _positive_ms(meta.get("createdAt"))
            model = _text(meta.get("lastUsedModel"))
            workspace = _text(meta.get("workspacePath"))
            root_id = _text(meta.get("latestRootBlobId"))
            if root_id is None:
                return CliSession(session_id, created, model, workspace, None)
            blob = _blob_reader(conn, _size(path), whole_bytes)
            root = blob(root_id)
            if root is None:
                return CliSession(session_id, created, model, workspace, None, "missing-blobs")
            try:
                graph = agent_formats.decode_root(root, blob)
            except agent_formats.GraphUnreadable as exc:
                return CliSession(session_id, created, model, workspace, None, exc.reason)
            named = prompt_workspace(root, blob)
    except DatabaseLockedError as exc:
        raise StoreBusy(str(exc)) from exc
    except sqlite3.Error as exc:
        if is_lock_error(exc):
            raise StoreBusy(str(exc)) from exc
        if "no such table" in str(exc):
            return None  # some other database named store.db
        return CliSession(fallback_id, None, None, None, None, "unreadable-store")
    except CursorDbError:
        return CliSession(fallback_id, None, None, None, None, "unreadable-store")
    return CliSession(
        session_id,
        created,
        model,
        workspace,
        graph,
        None,
        named,
        path.parent.parent.name,
        _text(meta.get("name")),
    )
