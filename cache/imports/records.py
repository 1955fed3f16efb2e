"""Value types of the Cursor usage store: ranges, snapshots, summaries, coverage (the stored
events are in `events`, the file format in `store_format`).

Pure data and pure functions; `import_store` does the file reading, locking and writing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, NamedTuple

from codeburn.cache.imports.events import PackedEvents, StoredEvent, iso_or_none
from codeburn.providers import (
    CURSOR,
    CURSOR_AGENT,
    EPOCH,
    GROKBOT,
    CodeBurnError,
    day_end_ms,
    iso_utc,
    local_day,
    local_midnight_ms,
    normalise_model,
)

VERSION: Final = 3
V2: Final = 2
V1: Final = 1
SOURCE_IMPORT: Final = "import"
SOURCE_SYNC: Final = "sync"
REMOVE_FIX: Final = "codeburn import cursor --remove"

ACCOUNT_PATTERN: Final = re.compile(r"[0-9a-f]{16}")
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_EPOCH_MS = re.compile(r"\d{12,14}")
# Epoch-ms boundaries, the same 2000–2100 as dates (UTC, whatever the local zone).
_FIRST_MS: Final = (datetime(2000, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
_LAST_MS: Final = (datetime(2101, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1) - 1


class ImportStoreError(CodeBurnError):
    """The stored file cannot be read; the message carries the fix."""


class CoverageError(CodeBurnError, ValueError):
    """A bad --from/--to, or rows outside them: the import is refused and nothing is stored."""


class Range(NamedTuple):
    """Coverage: inside it the stored events stand for local Cursor estimates (ends included)."""

    start_ms: int
    end_ms: int
    source: str
    account: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "start": iso_utc(self.start_ms),
            "end": iso_utc(self.end_ms),
            "source": self.source,
            "account": self.account,
        }


class ImportSnapshot(NamedTuple):
    """What the store held when read (empty and `exists=False` when there is no store)."""

    exists: bool
    ranges: tuple[Range, ...] = ()
    events: Sequence[StoredEvent] = ()

    @property
    def has_grokbot(self) -> bool:
        events = self.events
        models = (
            events.models() if isinstance(events, PackedEvents) else (e.row.model for e in events)
        )
        return any(normalise_model(model)[0] == GROKBOT for model in models)


class ImportSummary(NamedTuple):
    """The result of an import or a sync; `to_json()` is docs/import.md#summary."""

    changed: bool
    added: int
    skipped: int
    total: int
    coverage_start_ms: int | None
    coverage_end_ms: int | None
    inferred: bool
    tokens: int
    replaced: tuple[str, ...]
    first_day: date | None = None  # local days whose served figures changed (None: nothing did)
    last_day: date | None = None
    window_start_ms: int | None = None  # sync only
    window_end_ms: int | None = None
    empty: bool | None = None
    future: int = 0  # rows dated after now + 1 day: refused, not stored
    user_api_key: int = 0  # rows billed by the user's own API key (stored, listed apart)

    @property
    def is_sync(self) -> bool:
        return self.window_start_ms is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "changed": self.changed,
            "added": self.added,
            "skipped": self.skipped,
            "total": self.total,
            "coverage": {
                "start": iso_or_none(self.coverage_start_ms),
                "end": iso_or_none(self.coverage_end_ms),
                "inferred": self.inferred,
            },
            "tokens": self.tokens,
            "replaced": list(self.replaced),
            "future": self.future,
            "userApiKey": self.user_api_key,
        }
        if self.is_sync:
            out["window"] = {
                "start": iso_or_none(self.window_start_ms),
                "end": iso_or_none(self.window_end_ms),
            }
            out["empty"] = bool(self.empty)
        return out


class RemoveResult(NamedTuple):
    existed: bool
    ranges: tuple[Range, ...]
    first_day: date | None  # local days the removed data covered, for the daily cache
    last_day: date | None


class CoverageIndex:
    """Merged coverage intervals with a binary search: is a local call replaced by the store?"""

    def __init__(self, ranges: Iterable[Range], *, grokbot: bool = False) -> None:
        spans = _merge_spans((r.start_ms, r.end_ms) for r in ranges)
        self._starts = [s for s, _ in spans]
        self._ends = [e for _, e in spans]
        self.grokbot = grokbot

    @classmethod
    def from_snapshot(cls, snapshot: ImportSnapshot) -> CoverageIndex:
        return cls(snapshot.ranges, grokbot=snapshot.has_grokbot)

    def __bool__(self) -> bool:
        return bool(self._starts)

    def covers_time(self, ts_ms: int) -> bool:
        i = bisect.bisect_right(self._starts, ts_ms) - 1
        return i >= 0 and ts_ms <= self._ends[i]

    def covers(self, provider: str, ts_ms: int) -> bool:
        """True when a local call of `provider` at `ts_ms` is to be dropped for stored events."""
        if provider in (CURSOR, CURSOR_AGENT) or (provider == GROKBOT and self.grokbot):
            return self.covers_time(ts_ms)
        return False


# --- coverage ----------------------------------------------------------------------------------


def _merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Union of inclusive ms intervals; touching ones (next start ≤ end + 1 ms) become one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def merge_ranges(ranges: Iterable[Range]) -> tuple[Range, ...]:
    """Ranges merged per (source, account), in a stable order."""
    groups: dict[tuple[str, str | None], list[tuple[int, int]]] = {}
    for r in ranges:
        groups.setdefault((r.source, r.account), []).append((r.start_ms, r.end_ms))
    out = [
        Range(start, end, source, account)
        for (source, account), spans in groups.items()
        for start, end in _merge_spans(spans)
    ]
    return tuple(sorted(out, key=lambda r: (r.source, r.account or "", r.start_ms)))


def parse_boundary(text: str, *, end: bool, option: str = "") -> int:
    """Epoch ms of a --from/--to value: a date (whole local day), an ISO time, or epoch ms.

    A date as `end` means its last millisecond; an ISO time without a zone is local time.
    """
    value = text.strip()
    name = option or ("--to" if end else "--from")
    if _DATE_ONLY.fullmatch(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            day = None
        if day is not None and 2000 <= day.year <= 2100:
            return day_end_ms(day) if end else local_midnight_ms(day)
    elif _EPOCH_MS.fullmatch(value):
        ms = int(value)
        if _FIRST_MS <= ms <= _LAST_MS:  # `000000000000` is 1970: the same bound as dates
            return ms
    elif not value.isdigit():
        try:
            moment = datetime.fromisoformat(value.replace("z", "Z"))
        except ValueError:
            moment = None
        if moment is not None and 2000 <= moment.year <= 2100:
            return (moment.astimezone(UTC) - EPOCH) // timedelta(milliseconds=1)
    raise CoverageError(
        f"{name} {text!r} is not a date (YYYY-MM-DD), an ISO time or epoch milliseconds "
        "from 2000 to 2100"
    )


def replaced_providers(ranges: Sequence[Range], events: Iterable[StoredEvent]) -> tuple[str, ...]:
    if not ranges:
        return ()
    models = events.models() if isinstance(events, PackedEvents) else (e.row.model for e in events)
    grokbot = any(normalise_model(model)[0] == GROKBOT for model in models)
    return (CURSOR, CURSOR_AGENT, GROKBOT) if grokbot else (CURSOR, CURSOR_AGENT)


def days_of(times: Iterable[int | None]) -> tuple[date | None, date | None]:
    """First and last local day among the known times."""
    known = [t for t in times if t is not None]
    if not known:
        return None, None
    return local_day(min(known)), local_day(max(known))
