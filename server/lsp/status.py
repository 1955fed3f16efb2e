"""What the language server adds around the §8 status object: the `env` block, the change test,
a stand-in for a failed read, and budget crossings (one message per crossing per period)."""

from __future__ import annotations

import json
from dataclasses import dataclass
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
from codeburn.providers import CLAUDE_CODE, CODEX, CURSOR, CURSOR_AGENT, GROKBOT
from codeburn.server.service import WARNING_SHARE, build_status, format_money

NOTICES_FILE: Final = "budget-notices.v1.json"
LEVELS: Final = {"ok": 0, "warning": 1, "over": 2}
# Cursor's own usage; a budget figure that counts another tool is "AI spend" (docs/other-tools.md)
CURSOR_TOOLS: Final = frozenset({CURSOR, CURSOR_AGENT, GROKBOT})


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


@dataclass(frozen=True, slots=True)
class Crossing:
    scope: str  # "daily" | "monthly"
    level: str  # "warning" | "over"
    spent: float
    limit: float
    spend: str = "Cursor spend"  # "AI spend" when the figure counts more tools than Cursor's

    def message(self) -> str:
        what = "today's" if self.scope == "daily" else "this month's"
        spent, limit = format_money(self.spent), format_money(self.limit)
        if self.level == "over":
            return f"CodeBurn: {what} {self.spend} {spent} is over your {limit} {self.scope} budget"
        share = int(WARNING_SHARE * 100)
        return (
            f"CodeBurn: {what} {self.spend} {spent} has reached {share}% of your "
            f"{limit} {self.scope} budget"
        )


def _level(spent: float, limit: float) -> str:
    if spent >= limit:
        return "over"
    return "warning" if spent >= WARNING_SHARE * limit else "ok"


def budget_levels(status: dict[str, Any], today: date) -> list[tuple[str, str, Crossing]]:
    """(scope, period, crossing-or-ok) for each budget that is set."""
    budget = status.get("budget") or {}
    out: list[tuple[str, str, Crossing]] = []
    for scope, block, period in (
        ("daily", "today", today.isoformat()),
        ("monthly", "month", f"{today:%Y-%m}"),
    ):
        limit = budget.get(scope)
        if not limit:
            continue
        figures = status.get(block) or {}
        spent = float(figures.get("cost") or 0.0)
        tools = {p.get("id") for p in figures.get("providers") or [] if isinstance(p, dict)}
        spend = "AI spend" if tools - CURSOR_TOOLS else "Cursor spend"
        crossing = Crossing(scope, _level(spent, limit), spent, float(limit), spend)
        out.append((scope, period, crossing))
    return out


class BudgetNotices:
    """Remembers (in the cache folder, shared by editor windows) which crossings were shown."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._memory: dict[str, int] = {}

    @property
    def path(self) -> Path:
        return self._path or cache_dir() / NOTICES_FILE

    def due(self, status: dict[str, Any], today: date) -> list[Crossing]:
        """Crossings not shown yet in their period; marks them shown. Blocking (file lock)."""
        candidates = [
            (f"{scope}|{period}|{crossing.limit!r}", crossing)
            for scope, period, crossing in budget_levels(status, today)
            if crossing.level != "ok"
        ]
        if not candidates:
            return []
        try:
            with locked(self.path):
                return self._mark(candidates, today)
        except (LockTimeoutError, OSError):
            return self._mark(candidates, today, persist=False)

    def _mark(
        self, candidates: list[tuple[str, Crossing]], today: date, persist: bool = True
    ) -> list[Crossing]:
        stored = read_json(self.path) if persist else None
        shown: dict[str, int] = dict(self._memory)
        if isinstance(stored, dict):
            shown.update({k: v for k, v in stored.items() if isinstance(v, int)})
        due = [c for key, c in candidates if LEVELS[c.level] > shown.get(key, 0)]
        for key, crossing in candidates:
            shown[key] = max(shown.get(key, 0), LEVELS[crossing.level])
        # keep this month's and today's keys only: older periods can never be crossed again
        keep = (today.isoformat(), f"{today:%Y-%m}")
        shown = {k: v for k, v in shown.items() if k.split("|")[1] in keep}
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
