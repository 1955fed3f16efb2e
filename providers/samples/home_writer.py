"""Writes a Cursor home (`~/.cursor`) as Cursor does: agent transcripts and CLI store.db files.

For tests and sample data; the inverse of agent_transcripts and cursor_cli:

    home = AgentHomeWriter(tmp_path / ".cursor")
    home.transcript("c1", [user("fix it"), assistant("done", tools=[shell("npm test")]),
                           turn_ended()], slug="home-me-app")
    home.cli_session("s1", [TurnSpec("hi", ["hello"])], created_ms=..., model="gpt-5")
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codeburn.providers.localtime import now_ms
from codeburn.providers.samples.graph_writer import TurnSpec, build_graph, encrypted

__all__ = [
    "AgentHomeWriter",
    "TurnSpec",
    "assistant",
    "shell",
    "tool_result",
    "turn_ended",
    "user",
]


def user(text: str) -> dict[str, Any]:
    """A user message as the transcript writes it (the text wrapped in `<user_query>`)."""
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def shell(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Shell", "input": {"command": command}}


def assistant(
    text: str = "", *, thinking: str = "", tools: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if thinking:
        blocks.append({"type": "thinking", "thinking": thinking})
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.extend(tools)
    return {"role": "assistant", "message": {"content": blocks}}


def tool_result(text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "message": {
            "content": [{"type": "tool_result", "content": [{"type": "text", "text": text}]}]
        },
    }


def turn_ended(status: str = "success") -> dict[str, Any]:
    return {"type": "turn_ended", "status": status}


def _set_mtime(path: Path, mtime_ms: int | None) -> None:
    """Transcripts are dated by their mtime: default now, by the clock CodeBurn reads."""
    ns = (now_ms() if mtime_ms is None else mtime_ms) * 1_000_000
    os.utime(path, ns=(ns, ns))


class AgentHomeWriter:
    """A Cursor home folder with transcripts under `projects/` and CLI stores under `chats/`."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def transcripts_dir(self, slug: str) -> Path:
        return self.home / "projects" / slug / "agent-transcripts"

    def transcript(
        self,
        conversation_id: str,
        records: Sequence[dict[str, Any]],
        *,
        slug: str = "home-me-app",
        flat: bool = False,
        parent_id: str | None = None,
        mtime_ms: int | None = None,
    ) -> Path:
        """`<id>/<id>.jsonl` (or flat `<id>.jsonl`, or `<parent>/subagents/<id>.jsonl`)."""
        root = self.transcripts_dir(slug)
        if parent_id is not None:
            path = root / parent_id / "subagents" / f"{conversation_id}.jsonl"
        elif flat:
            path = root / f"{conversation_id}.jsonl"
        else:
            path = root / conversation_id / f"{conversation_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        path.write_text(lines, encoding="utf-8")
        _set_mtime(path, mtime_ms)
        return path

    def legacy_transcript(
        self,
        conversation_id: str,
        text: str,
        *,
        slug: str = "home-me-app",
        mtime_ms: int | None = None,
    ) -> Path:
        """A flat `<id>.txt` in the old `user:` / `A:` format."""
        path = self.transcripts_dir(slug) / f"{conversation_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        _set_mtime(path, mtime_ms)
        return path

    def cli_session(
        self,
        conversation_id: str,
        turns: Sequence[TurnSpec] = (),
        *,
        prompts: Sequence[dict[str, Any]] = (),
        created_ms: int | None = None,
        model: str | None = None,
        workspace: str | None = None,
        used_tokens: int = 0,
        encrypt_blobs: bool = False,
        name: str = "New Agent",
    ) -> Path:
        """`chats/<md5(cwd)>/<id>/store.db` with the graph in `blobs` and hex JSON in `meta`."""
        cwd = workspace or "/home/me/app"
        workspace_hash = hashlib.md5(cwd.encode()).hexdigest()  # Cursor's folder name
        folder = self.home / "chats" / workspace_hash / conversation_id
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "store.db"
        root, blobs = build_graph(turns, prompts=prompts, used_tokens=used_tokens)
        if encrypt_blobs:
            blobs = {key: encrypted(data) for key, data in blobs.items()}
        root_id = hashlib.sha256(root).hexdigest()
        meta: dict[str, Any] = {"agentId": conversation_id, "name": name, "mode": "default"}
        if created_ms is not None:
            meta["createdAt"] = created_ms
        if model is not None:
            meta["lastUsedModel"] = model
        if workspace is not None:
            meta["workspacePath"] = workspace
        if turns or prompts:
            meta["latestRootBlobId"] = root_id
        conn = sqlite3.connect(path)
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, data BLOB)")
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            rows = [(root_id, root), *blobs.items()]
            conn.executemany("INSERT OR REPLACE INTO blobs VALUES (?, ?)", rows)
            hex_meta = json.dumps(meta).encode().hex()
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('0', ?)", (hex_meta,))
            conn.commit()
        finally:
            conn.close()
        return path
