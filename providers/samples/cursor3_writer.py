"""Writes Cursor 3.x records into a profile's global database (tests and sample data).

The `composerHeaders` table (9 columns before Cursor 3.16, 10 with `subagentTypeName`, in
different orders), the global `ItemTable['composer.composerHeaders']`, `composerData` with a
`conversationState` root, and the root's `agentKv:blob:<sha256>` rows, optionally encrypted.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from codeburn.providers.samples.graph_writer import TurnSpec, build_graph, encrypted
from codeburn.providers.samples.profile_writer import ProfileWriter

# Column orders seen in builds: 3.15 (9 columns) and 3.16+ (10, `subagentTypeName` added).
COLUMNS_9: Final = (
    "composerId", "workspaceId", "value", "createdAt", "lastUpdatedAt", "isArchived",
    "isSubagent", "recency", "checkpointAt",
)  # fmt: skip
COLUMNS_10: Final = (
    "composerId", "workspaceId", "createdAt", "lastUpdatedAt", "isArchived", "isSubagent",
    "recency", "checkpointAt", "subagentTypeName", "value",
)  # fmt: skip
_TYPES: Final = {"composerId": "TEXT PRIMARY KEY", "workspaceId": "TEXT", "value": "TEXT"}


def workspace_identifier(workspace_id: str | None, folder: str | None) -> dict[str, Any]:
    """`workspaceIdentifier` as Cursor writes it in headers and composerData."""
    ident: dict[str, Any] = {}
    if workspace_id is not None:
        ident["id"] = workspace_id
    if folder is not None:
        uri = "file://" + folder if folder.startswith("/") else "file:///" + folder
        ident["uri"] = {"fsPath": folder, "external": uri, "path": folder, "scheme": "file"}
    return ident


@dataclass(frozen=True, slots=True)
class Header:
    """One conversation's header (table row and JSON `value`)."""

    composer_id: str
    workspace_id: str | None = None
    folder: str | None = None  # absolute path of the workspace folder
    created_ms: int | None = None
    updated_ms: int | None = None
    parent_id: str | None = None  # a subagent's parent composer
    subagent_type: str | None = None
    name: str = ""

    def value(self) -> dict[str, Any]:
        head: dict[str, Any] = {"type": "head", "composerId": self.composer_id, "name": self.name}
        if self.created_ms is not None:
            head["createdAt"] = self.created_ms
        if self.updated_ms is not None:
            head["lastUpdatedAt"] = self.updated_ms
        ident = workspace_identifier(self.workspace_id, self.folder)
        if ident:
            head["workspaceIdentifier"] = ident
        if self.parent_id is not None:
            head["subagentInfo"] = {"parentComposerId": self.parent_id}
        return head


def scan_key(blob_id: str) -> str:
    return f"agentKv:blob:{blob_id}"


class Cursor3Writer:
    """Adds Cursor 3.x conversations to a `ProfileWriter`'s global database."""

    def __init__(self, profile: ProfileWriter, *, header_columns: int | None = 10) -> None:
        """`header_columns` 10 (Cursor 3.16+) or 9 (3.15) creates the `composerHeaders` table
        at once; None writes a Cursor 3.0–3.14 database (headers only in the ItemTable)."""
        if header_columns not in (9, 10, None):
            raise ValueError("composerHeaders has 9 or 10 columns")
        self.profile = profile
        self.columns: tuple[str, ...] = (
            () if header_columns is None else COLUMNS_9 if header_columns == 9 else COLUMNS_10
        )
        self._table = False
        if self.columns:
            self._create_table()

    @property
    def conn(self) -> sqlite3.Connection:
        return self.profile.conn

    def _create_table(self) -> None:
        if not self._table:
            cols = ", ".join(f"{c} {_TYPES.get(c, 'INTEGER')}" for c in self.columns)
            self.conn.execute(f"CREATE TABLE IF NOT EXISTS composerHeaders ({cols})")
            self._table = True

    def header(self, header: Header) -> None:
        """A `composerHeaders` table row."""
        if not self.columns:
            raise ValueError("this build has no composerHeaders table: use item_headers")
        row = {
            "composerId": header.composer_id,
            "workspaceId": header.workspace_id,
            "value": json.dumps(header.value(), separators=(",", ":")),
            "createdAt": header.created_ms,
            "lastUpdatedAt": header.updated_ms,
            "isArchived": 0,
            "isSubagent": int(header.parent_id is not None),
            "recency": header.updated_ms,
            "checkpointAt": header.updated_ms,
            "subagentTypeName": header.subagent_type,
        }
        marks = ", ".join("?" * len(self.columns))
        self.conn.execute(
            f"INSERT OR REPLACE INTO composerHeaders ({', '.join(self.columns)}) VALUES ({marks})",
            [row[c] for c in self.columns],
        )
        self.conn.commit()

    def item_headers(self, headers: Iterable[Header]) -> None:
        """The global `ItemTable['composer.composerHeaders']` (Cursor 3.0–3.15)."""
        payload = {"allComposers": [h.value() for h in headers]}
        self.profile.put_item("composer.composerHeaders", payload)

    def composer(
        self,
        composer_id: str,
        *,
        version: int = 18,
        created_ms: int | None = None,
        updated_ms: int | None = None,
        model: str | None = None,
        workspace_id: str | None = None,
        folder: str | None = None,
        tracked_repo: str | None = None,
        state: str | None = None,
        encryption_key: str | None = None,
        total_used_tokens: int | None = None,
        context_tokens_used: int | None = None,
        parent_id: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """A `composerData:<id>` row (`state` is the raw `conversationState` string)."""
        value: dict[str, Any] = {"_v": version, "composerId": composer_id}
        optional: dict[str, Any] = {
            "createdAt": created_ms,
            "lastUpdatedAt": updated_ms,
            "conversationState": state,
            "blobEncryptionKey": encryption_key,
            "contextTokensUsed": context_tokens_used,
        }
        value.update({k: v for k, v in optional.items() if v is not None})
        if model is not None:
            value["modelConfig"] = {"modelName": model}
        ident = workspace_identifier(workspace_id, folder)
        if ident:
            value["workspaceIdentifier"] = ident
        if tracked_repo is not None:
            value["trackedGitRepos"] = [{"repoPath": tracked_repo}]
        if total_used_tokens is not None:
            value["promptTokenBreakdown"] = {"totalUsedTokens": total_used_tokens}
        if parent_id is not None:
            value["subagentInfo"] = {"parentComposerId": parent_id}
        if extra:
            value.update(extra)
        self.profile.put(f"composerData:{composer_id}", value)

    def blobs(self, blobs: dict[str, bytes], *, encrypt: bool = False) -> None:
        """`agentKv:blob:<id>` rows; JSON blobs are stored as text, like Cursor does. Blobs are
        content-addressed: one already stored is left as it is (same key, same content)."""
        self.profile.flush()
        stored_ids: set[str] = set()
        ids = list(blobs)
        for start in range(0, len(ids), 500):
            chunk = [scan_key(i) for i in ids[start : start + 500]]
            marks = ",".join("?" * len(chunk))
            found = self.conn.execute(f"SELECT key FROM cursorDiskKV WHERE key IN ({marks})", chunk)
            stored_ids.update(key[len("agentKv:blob:") :] for (key,) in found)
        for blob_id, data in blobs.items():
            if blob_id in stored_ids:
                continue
            stored: str | bytes = encrypted(data) if encrypt else data
            if not encrypt and data[:1] == b"{":
                stored = data.decode()
            self.profile.put(scan_key(blob_id), stored)

    def conversation(
        self,
        composer_id: str,
        turns: Sequence[TurnSpec] = (),
        *,
        prompts: Sequence[dict[str, Any]] = (),
        used_tokens: int = 0,
        started_ms: int | None = None,
        workspace_uris: Sequence[str] = (),
        encrypt_root: bool = False,
        encrypt_blobs: bool = False,
        **composer: Any,
    ) -> dict[str, bytes]:
        """A root-only conversation: blobs, then composerData with the root; returns the blobs."""
        root, blobs = build_graph(
            turns,
            prompts=prompts,
            used_tokens=used_tokens,
            started_ms=started_ms,
            workspace_uris=workspace_uris,
        )
        self.blobs(blobs, encrypt=encrypt_blobs)
        if encrypt_root:
            root = encrypted(root)
        if encrypt_root or encrypt_blobs:
            composer.setdefault("encryption_key", "a2V5")
        composer["state"] = "~" + base64.b64encode(root).decode()
        self.composer(composer_id, **composer)
        return blobs
