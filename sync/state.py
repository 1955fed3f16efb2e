"""The sync state file `<cache>/imports/cursor-sync.v1.json` (kept apart from the store)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from codeburn.cache import imports_dir, locked, read_json, write_cache_json
from codeburn.providers import iso_utc, parse_iso_ms

STATE_FILE = "cursor-sync.v1.json"
ErrorCode = Literal["login", "network", "export"]
ERROR_CODES: tuple[ErrorCode, ...] = ("login", "network", "export")
Source = Literal["json", "csv"]
SOURCES: tuple[Source, ...] = ("json", "csv")
_ACCOUNT = re.compile(r"[0-9a-f]{16}")


def state_path() -> Path:
    return imports_dir() / STATE_FILE


@dataclass(slots=True)
class SyncState:
    """Throttle, backoff and progress of the sync. Times are epoch milliseconds."""

    last_attempt_ms: int | None = None
    next_attempt_ms: int | None = None
    last_success_ms: int | None = None
    backoff_until_ms: int | None = None
    failures: int = 0
    last_error: str | None = None
    error_code: ErrorCode | None = None
    account: str | None = None
    through: dict[str, int] = field(default_factory=dict)
    rejected_exp: int | None = None
    source: Source | None = None  # which cursor.com answer served the last success
    incomplete: tuple[int, int] | None = None  # (served, count) of an incomplete last success
    exact_through_ms: int | None = None  # the newest synced event of `account`

    def to_json(self) -> dict[str, Any]:
        """The file's exact fields (docs/cursor-sync.md#state): ISO times, the account hash,
        never a secret."""
        return {
            "lastAttemptAt": _iso(self.last_attempt_ms),
            "nextAttemptAt": _iso(self.next_attempt_ms),
            "lastSuccessAt": _iso(self.last_success_ms),
            "backoffUntil": _iso(self.backoff_until_ms),
            "failures": self.failures,
            "lastError": self.last_error,
            "errorCode": self.error_code,
            "account": self.account,
            "through": {account: iso_utc(ms) for account, ms in sorted(self.through.items())},
            "rejectedExp": self.rejected_exp,
            "source": self.source,
            "exactThrough": _iso(self.exact_through_ms),
            "incomplete": (
                None
                if self.incomplete is None
                else {"served": self.incomplete[0], "count": self.incomplete[1]}
            ),
        }

    @classmethod
    def from_json(cls, data: Any) -> SyncState:
        """Lenient read: a field that is not what we write reads as its default."""
        if not isinstance(data, dict):
            return cls()
        through_raw = data.get("through")
        through: dict[str, int] = {}
        if isinstance(through_raw, dict):
            for account, value in through_raw.items():
                ms = _ms(value)
                if _is_account(account) and ms is not None:
                    through[account] = ms
        error_code = data.get("errorCode")
        last_error = data.get("lastError")
        account = data.get("account")
        source = data.get("source")
        return cls(
            last_attempt_ms=_ms(data.get("lastAttemptAt")),
            next_attempt_ms=_ms(data.get("nextAttemptAt")),
            last_success_ms=_ms(data.get("lastSuccessAt")),
            backoff_until_ms=_ms(data.get("backoffUntil")),
            failures=max(0, _int(data.get("failures")) or 0),
            last_error=last_error if isinstance(last_error, str) else None,
            error_code=cast(ErrorCode, error_code) if error_code in ERROR_CODES else None,
            account=account if _is_account(account) else None,
            through=through,
            rejected_exp=_int(data.get("rejectedExp")),
            source=cast(Source, source) if source in SOURCES else None,
            incomplete=_incomplete(data.get("incomplete")),
            exact_through_ms=_ms(data.get("exactThrough")),
        )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _incomplete(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, dict):
        return None
    served, count = _int(value.get("served")), _int(value.get("count"))
    if served is None or count is None or not 0 <= served < count:
        return None
    return served, count


def _is_account(value: Any) -> bool:
    return isinstance(value, str) and _ACCOUNT.fullmatch(value) is not None


def _iso(ms: int | None) -> str | None:
    return iso_utc(ms) if ms is not None else None


def _ms(value: Any) -> int | None:
    return parse_iso_ms(value) if isinstance(value, str) else None


def load_state() -> SyncState:
    """The state on disk; missing or corrupt reads as empty."""
    return SyncState.from_json(read_json(state_path()))


def save_state(state: SyncState) -> None:
    write_cache_json(state_path(), state.to_json())


@contextlib.contextmanager
def update_state() -> Iterator[SyncState]:
    """Read-modify-write under the state's lock; saved when changed and the block ends normally."""
    path = state_path()
    with locked(path):
        state = load_state()
        before = state.to_json()
        yield state
        if state.to_json() != before:
            save_state(state)
