"""The local reader's state in our cache folder (`providers.local.LocalStore`).

Parsed agent transcripts and CLI stores (`agent_files`), first-seen times of undated
requests (`first_seen`), the Cursor 3.x blob memo (`blob_memo`) and the transcripts' turns by
content (`agent_memo`), the other tools' log state (`tool_logs`), each in its own file; the
reader gets them through this object only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeburn.cache.agent_files import load_agent_files, save_agent_files
from codeburn.cache.agent_memo import load_agent_memo, save_agent_memo
from codeburn.cache.blob_memo import load_blob_memo, save_blob_memo
from codeburn.cache.first_seen import load_first_seen, save_first_seen
from codeburn.cache.tool_logs import ToolLogsDb

if TYPE_CHECKING:
    from codeburn.providers.agents import LogChange, Part


class LocalFiles:
    """`LocalStore` over the files of one cache folder."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir

    def load_agent_files(self, home: str) -> dict[str, Any]:
        return load_agent_files(self.cache_dir, home)

    def save_agent_files(self, home: str, entries: dict[str, Any]) -> None:
        save_agent_files(self.cache_dir, home, entries)

    def load_first_seen(self, key: str) -> dict[str, int]:
        return load_first_seen(self.cache_dir, key)

    def save_first_seen(self, key: str, seen: dict[str, int]) -> None:
        save_first_seen(self.cache_dir, key, seen)

    def load_blob_memo(self) -> bytes | None:
        return load_blob_memo(self.cache_dir)

    def save_blob_memo(self, data: bytes) -> None:
        save_blob_memo(self.cache_dir, data)

    def load_agent_memo(self) -> bytes | None:
        return load_agent_memo(self.cache_dir)

    def save_agent_memo(self, data: bytes) -> None:
        save_agent_memo(self.cache_dir, data)

    def load_tool_logs(self, identity: str) -> dict[str, str]:
        return ToolLogsDb(self.cache_dir).load_tool_logs(identity)

    def tool_log_parts(self, keys: Sequence[str], low: int | None) -> dict[str, list[Part]]:
        return ToolLogsDb(self.cache_dir).tool_log_parts(keys, low)

    def save_tool_logs(self, identity: str, changes: Iterable[LogChange]) -> None:
        ToolLogsDb(self.cache_dir).save_tool_logs(identity, changes)
