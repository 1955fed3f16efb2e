"""Realistic synthetic Cursor profiles: for the demo, the tests and the benchmarks.

`ProfileWriter` writes Cursor's on-disk format (global `state.vscdb` + `workspaceStorage`);
`generate_sample_profile` fills one with conversations that use every input source.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

from codeburn.providers.localtime import now_ns

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
    "CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
)
JournalMode = Literal["wal", "delete"]
Value = str | bytes | dict[str, Any] | list[Any]


def _encode(value: Value) -> str | bytes:
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value


def create_database(path: Path, journal_mode: JournalMode = "wal") -> sqlite3.Connection:
    """A database with Cursor's two tables."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode={journal_mode}")
    for statement in SCHEMA:
        conn.execute(statement)
    conn.commit()
    return conn


class ProfileWriter:
    """Writes a Cursor data root: `<root>/User/globalStorage/state.vscdb` and workspaces."""

    def __init__(
        self, root: Path, *, journal_mode: JournalMode = "wal", bulk: bool = False
    ) -> None:
        self.root = root
        self.db_path = root / "User" / "globalStorage" / "state.vscdb"
        self.workspace_root = root / "User" / "workspaceStorage"
        self.journal_mode = journal_mode
        self.conn = create_database(self.db_path, journal_mode)
        self.bulk = bulk
        if bulk:  # generated data: no journal or fsync while filling, room for the key index
            self.conn.execute("PRAGMA journal_mode = OFF")
            self.conn.execute("PRAGMA synchronous = OFF")
            self.conn.execute("PRAGMA cache_size = -131072")
        self._pending: list[tuple[str, str | bytes]] = []

    def __enter__(self) -> ProfileWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- raw rows ---------------------------------------------------------------------------

    def put(self, key: str, value: Value) -> None:
        """Queue one `cursorDiskKV` row (INSERT OR REPLACE semantics, in call order)."""
        self._pending.append((key, _encode(value)))
        if len(self._pending) >= 5000:
            self.flush()

    def put_item(self, key: str, value: Value) -> None:
        self.flush()
        self.conn.execute("INSERT OR REPLACE INTO ItemTable VALUES (?, ?)", (key, _encode(value)))
        self.conn.commit()

    def flush(self) -> None:
        if self._pending:
            self.conn.executemany(
                "INSERT OR REPLACE INTO cursorDiskKV (key, value) VALUES (?, ?)", self._pending
            )
            self.conn.commit()
            self._pending.clear()

    def close(self) -> None:
        self.flush()
        if self.bulk:
            self.conn.execute(f"PRAGMA journal_mode = {self.journal_mode}")
            self.bulk = False
        self.conn.close()
        # Written now by the clock CodeBurn reads (the kernel stamps files with the real one):
        # the reader dates agent-stream-only requests by the database's mtime.
        ns = now_ns()
        for path in (self.db_path, self.db_path.with_name(self.db_path.name + "-wal")):
            with contextlib.suppress(FileNotFoundError):
                os.utime(path, ns=(ns, ns))

    # -- Cursor records ---------------------------------------------------------------------

    @staticmethod
    def bubble_value(
        *,
        role: Literal["user", "assistant"],
        text: str = "",
        created_at: Any = None,
        request_id: str | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        languages: Sequence[str] = (),
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        value: dict[str, Any] = {
            "_v": 3,
            "type": 1 if role == "user" else 2,
            "text": text,
            "tokenCount": {"inputTokens": input_tokens, "outputTokens": output_tokens},
        }
        if created_at is not None:
            value["createdAt"] = created_at
        if request_id:
            value["requestId"] = request_id
        if model is not None:
            value["modelInfo"] = {"modelName": model}
        if languages:
            value["codeBlocks"] = [
                {"languageId": lang, "codeBlockIdx": i} for i, lang in enumerate(languages)
            ]
        if extra:
            value.update(extra)
        return value

    def bubble(self, composer_id: str, bubble_id: str, **fields: Any) -> str:
        key = f"bubbleId:{composer_id}:{bubble_id}"
        self.put(key, self.bubble_value(**fields))
        return key

    def composer(
        self,
        composer_id: str,
        *,
        created_at_ms: Any = None,
        total_used_tokens: Any = None,
        context_tokens_used: Any = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        value: dict[str, Any] = {"_v": 10, "composerId": composer_id}
        if created_at_ms is not None:
            value["createdAt"] = created_at_ms
        if total_used_tokens is not None:
            value["promptTokenBreakdown"] = {"totalUsedTokens": total_used_tokens}
        if context_tokens_used is not None:
            value["contextTokensUsed"] = context_tokens_used
        if extra:
            value.update(extra)
        self.put(f"composerData:{composer_id}", value)

    def agent(
        self,
        blob_id: str,
        *,
        role: str,
        content: Any,
        request_id: str | None = None,
        model: str | None = None,
    ) -> None:
        value: dict[str, Any] = {"role": role, "content": content}
        cursor: dict[str, Any] = {}
        if request_id:
            cursor["requestId"] = request_id
        if model:
            cursor["modelName"] = model
        if cursor:
            value["providerOptions"] = {"cursor": cursor}
        self.put(f"agentKv:blob:{blob_id}", value)

    def workspace(
        self,
        name: str,
        *,
        folder: str | None = None,
        composers: Iterable[str] = (),
        headers: Iterable[str] = (),
        multi_root: bool = False,
    ) -> Path:
        """One `workspaceStorage/<name>/` with `workspace.json` and its own `state.vscdb`."""
        folder_path = self.workspace_root / name
        folder_path.mkdir(parents=True, exist_ok=True)
        meta = {"configuration": "file:///tmp/x.code-workspace"} if multi_root else {}
        if folder is not None:
            meta["folder"] = folder
        (folder_path / "workspace.json").write_text(json.dumps(meta))
        conn = create_database(folder_path / "state.vscdb", "delete")
        for key, members in (
            ("composer.composerData", composers),
            ("composer.composerHeaders", headers),
        ):
            ids = list(members)
            if ids:
                payload = {"allComposers": [{"composerId": i, "type": "head"} for i in ids]}
                conn.execute("INSERT INTO ItemTable VALUES (?, ?)", (key, json.dumps(payload)))
        conn.commit()
        conn.close()
        return folder_path
