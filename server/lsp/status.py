"""What the language server adds around the status object (docs/report-json.md): the `env`
block, the change test, a stand-in for a failed read, and which alerts were shown (one message
per condition per period)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any, Final

from codeburn.cache import (
    Budget,
    LockTimeoutError,
    cache_dir,
    cursor_sync_env_off,
    locked,
    read_json,
    write_cache_json,
)
from codeburn.providers import CLAUDE_CODE, CODEX
from codeburn.server.service import build_status

NOTICES_FILE: Final = "alert-notices.v1.json"
KEEP_MS: Final = 70 * 86_400_000  # longer than any cycle


def with_env(status: dict[str, Any]) -> dict[str, Any]:
    """The status object plus `env` (what the environment overrides), for the extension."""
    return {**status, "env": {"cursorSyncDisabledByEnv": cursor_sync_env_off()}}


def payload_key(status: dict[str, Any]) -> str:
    """Equal for payloads that differ only in `generatedAt`."""
    rest = {k: v for k, v in status.items() if k != "generatedAt"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), default=str)


def failed_status(
    last: dict[str, Any] | None, message: str, *, today: date, budget: Budget
) -> dict[str, Any]:
    """State `error` with the last good figures (or zeros): never a made-up $0 without saying so."""
    fresh = build_status(
        {},
        today=today,
        state="error",
        message=message,
        budget=budget,
        quota=None,
        cursor_sync=None,
    )
    if last is None:
        return fresh
    return {**last, "generatedAt": fresh["generatedAt"], "state": "error", "message": message}


class AlertNotices:
    """Remembers (in the cache folder, shared by editor windows) which alerts were shown: each
    id once. Ids name their period (docs/forecast.md), so a new cycle or day alerts again."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._memory: dict[str, int] = {}

    @property
    def path(self) -> Path:
        return self._path or cache_dir() / NOTICES_FILE

    def due(self, alerts: list[dict[str, Any]], now: int) -> list[dict[str, Any]]:
        """The alerts not shown yet, in their order; marks them shown. Blocking (file lock)."""
        if not alerts:
            return []
        try:
            with locked(self.path):
                return self._mark(alerts, now)
        except (LockTimeoutError, OSError):
            return self._mark(alerts, now, persist=False)

    def _mark(
        self, alerts: list[dict[str, Any]], now: int, persist: bool = True
    ) -> list[dict[str, Any]]:
        stored = read_json(self.path) if persist else None
        shown: dict[str, int] = dict(self._memory)
        if isinstance(stored, dict):
            shown.update({k: v for k, v in stored.items() if isinstance(v, int)})
        due = [a for a in alerts if str(a["id"]) not in shown]
        for alert in due:
            shown[str(alert["id"])] = now
        # a period an id names is over long before this: it can never be due again
        shown = {k: v for k, v in shown.items() if now - v < KEEP_MS}
        self._memory = shown
        if persist and due:
            write_cache_json(self.path, shown)
        return due


TOOLS_FILE: Final = "tools-announced.v1.json"
# Tools found beside Cursor, announced once each (docs/other-tools.md).
ANNOUNCED_TOOLS: Final = {CLAUDE_CODE: "Claude Code", CODEX: "Codex"}


class ToolNotices:
    """Which other tools were announced (in the cache folder, shared by editor windows): a tool
    is announced the first time the status counts it."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._memory: set[str] = set()

    @property
    def path(self) -> Path:
        return self._path or cache_dir() / TOOLS_FILE

    def due(self, status: dict[str, Any]) -> list[str]:
        """Messages for the tools counted now and never announced; marks them. Blocking."""
        counted = {
            p.get("id")
            for block in ("today", "month")
            for p in (status.get(block) or {}).get("providers") or []
            if isinstance(p, dict)
        }
        new = [t for t in ANNOUNCED_TOOLS if t in counted and t not in self._memory]
        if not new:
            return []
        try:
            with locked(self.path):
                stored = read_json(self.path)
                done = {str(t) for t in stored} if isinstance(stored, list) else set()
                new = [t for t in new if t not in done]
                if new:
                    write_cache_json(self.path, sorted(done | set(new)))
        except (LockTimeoutError, OSError):
            pass
        self._memory.update(new)
        return [
            f"CodeBurn now counts {ANNOUNCED_TOOLS[t]}, found on this machine: its exact tokens "
            "at API list prices. Choose the tools CodeBurn counts in Settings "
            "(codeburn.providers)."
            for t in new
        ]
