"""The calls of the days before a status's month, kept between reads of the other tools' logs
while appends cannot change them (`ToolLogs.calls_between`, docs/other-tools.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from codeburn.providers.agents.state import KeptLog
from codeburn.providers.calls import CLAUDE_CODE, Call


@dataclass(slots=True)
class CallsWindow:
    """The calls of [first_ms, end_ms) of one read, and what each file was then."""

    first_ms: int
    end_ms: int
    calls: list[Call]
    keys: set[str]  # its calls' keys
    # per file: its entry (a file read again from the start gets a new one), its records,
    # whether its session's folder was known, and Codex's session and folder
    files: dict[str, tuple[KeptLog, int, bool, tuple[str | None, str | None]]]

    @staticmethod
    def of(kept: dict[str, KeptLog], first_ms: int, end_ms: int, calls: list[Call]) -> CallsWindow:
        files = {
            key: (e, e.records, e.first is not None, _codex_where(e)) for key, e in kept.items()
        }
        return CallsWindow(first_ms, end_ms, calls, {c.key for c in calls}, files)

    def holds(
        self,
        kept: dict[str, KeptLog],
        first_ms: int,
        end_ms: int,
        touched: Iterable[str] | None = None,
    ) -> bool:
        """Whether the calls are still those of `kept`: the same files, each the one read
        before or grown by records at or after `end_ms` that are no copies of a request
        counted here, of a Claude Code log whose first request named its folder already
        (its session's folder stays) or of a rollout whose session and folder stay.
        `touched`: the keys of the logs that may have changed since the last call (None:
        any)."""
        if (first_ms, end_ms) != (self.first_ms, self.end_ms) or len(kept) != len(self.files):
            return False
        for key in kept if touched is None else touched:
            entry = kept.get(key)
            was = self.files.get(key)
            if entry is None:
                return False
            if was is None or was[0] is not entry:
                return False
            if entry.records == was[1]:
                continue
            new = entry.records - was[1]
            if entry.claude is not None:
                if not was[2] or new > len(entry.claude.requests):
                    return False
                for r in entry.claude.requests[-new:]:
                    key_of = r.key or f"{entry.claude.path}@{r.offset}"
                    if r.timestamp_ms < end_ms or f"{CLAUDE_CODE}:{key_of}" in self.keys:
                        return False
            else:
                if _codex_where(entry) != was[3] or new > len(entry.usages):
                    return False
                if any(u.timestamp_ms < end_ms for u in entry.usages[-new:]):
                    return False
            self.files[key] = (entry, entry.records, was[2], was[3])
        return True


def _codex_where(entry: KeptLog) -> tuple[str | None, str | None]:
    state = entry.codex
    return (state.session, state.cwd) if state is not None else (None, None)
