"""The store of imported and synced Cursor usage: `<cache>/imports/cursor-usage.v1.json`.

Manual imports and the sync client both write here, always under the store's lock around the whole
read-modify-write; the usage service reads a snapshot and serves the events as calls. The store is
never swept and never silently replaced: a file we cannot read is an `ImportStoreError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from codeburn.cache.dirs import imports_dir
from codeburn.cache.files import locked, write_json_atomic
from codeburn.cache.import_records import (
    ACCOUNT_PATTERN,
    REMOVE_FIX,
    SOURCE_IMPORT,
    SOURCE_SYNC,
    VERSION,
    CoverageError,
    CoverageIndex,
    ImportSnapshot,
    ImportStoreError,
    ImportSummary,
    Range,
    RemoveResult,
    StoredEvent,
    days_of,
    decode_store,
    encode_store,
    merge_ranges,
    parse_boundary,
    replaced_providers,
)
from codeburn.providers.calls import Call
from codeburn.providers.cursor_csv import UsageRow, parse_csv, row_to_call
from codeburn.providers.localtime import day_end_ms, local_day, local_midnight_ms, now_ms

STORE_FILE: Final = "cursor-usage.v1.json"


def store_path() -> Path:
    return imports_dir() / STORE_FILE


def fingerprint(path: Path | None = None) -> tuple[int, int] | None:
    """(mtime_ns, size) of the store, or None when there is none: a cheap cache key."""
    try:
        st = (path or store_path()).stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def load(path: Path | None = None) -> ImportSnapshot:
    """The stored ranges and events; ImportStoreError when the file exists but cannot be read."""
    return _read(path or store_path())


def events_as_calls(snapshot: ImportSnapshot) -> list[Call]:
    return [row_to_call(e.row) for e in snapshot.events]


def newest_synced_ms(account: str, path: Path | None = None) -> int | None:
    """Newest event time a sync of `account` stored or covered (its next window starts from it)."""
    snap = load(path)
    times = [r.end_ms for r in snap.ranges if r.source == SOURCE_SYNC and r.account == account]
    times += [
        e.row.timestamp_ms for e in snap.events if e.source == SOURCE_SYNC and e.account == account
    ]
    return max(times, default=None)


def other_accounts_coverage_end(account: str, path: Path | None = None) -> int | None:
    """End of the latest sync range of any other account (a new account's window starts after)."""
    snap = load(path)
    ends = [r.end_ms for r in snap.ranges if r.source == SOURCE_SYNC and r.account != account]
    return max(ends, default=None)


def _read(path: Path) -> ImportSnapshot:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return ImportSnapshot(exists=False)
    except OSError as exc:
        raise _unreadable(path, exc.strerror or "cannot be opened") from exc
    try:
        return decode_store(raw)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise _unreadable(path, "it is damaged or from another version") from exc


def _unreadable(path: Path, why: str) -> ImportStoreError:
    return ImportStoreError(
        f"cannot read the imported Cursor usage in {path} ({why}); "
        f"run `{REMOVE_FIX}` to delete it, then import or sync again"
    )


def _write(path: Path, ranges: Sequence[Range], events: Iterable[StoredEvent]) -> None:
    write_json_atomic(path, encode_store(ranges, events))


# --- writing -----------------------------------------------------------------------------------


def import_file(
    csv_path: Path, *, start: str | None = None, end: str | None = None, path: Path | None = None
) -> ImportSummary:
    """`codeburn import cursor FILE.csv [--from X] [--to Y]`: parse, check, merge into the store."""
    try:
        data = csv_path.read_bytes()
        mtime_ms = csv_path.stat().st_mtime_ns // 1_000_000
    except OSError as exc:
        raise CoverageError(f"cannot read {csv_path}: {exc.strerror or exc}") from exc
    return import_rows(parse_csv(data), mtime_ms=mtime_ms, start=start, end=end, path=path)


def import_rows(
    rows: Sequence[UsageRow],
    *,
    mtime_ms: int | None = None,
    start: str | None = None,
    end: str | None = None,
    path: Path | None = None,
) -> ImportSummary:
    """Merge parsed export rows as a manual import; coverage ends no later than `mtime_ms`."""
    start_ms = parse_boundary(start, end=False) if start is not None else None
    end_ms = parse_boundary(end, end=True) if end is not None else None
    if start_ms is not None and end_ms is not None and start_ms > end_ms:
        raise CoverageError(f"--from {start} is later than --to {end}")
    _refuse_outside(rows, start_ms, end_ms)
    coverage = _import_coverage(rows, start_ms, end_ms, now_ms() if mtime_ms is None else mtime_ms)
    store = path or store_path()
    with locked(store):
        snap = _read(store)
        events = {e.row.hash: e for e in snap.events}
        added = skipped = 0
        touched: list[int] = []
        for row in rows:
            old = events.get(row.hash)
            if old is None:
                added += 1
            else:
                skipped += 1
                if old.source == SOURCE_IMPORT:
                    continue
            events[row.hash] = StoredEvent(row, SOURCE_IMPORT, None)
            touched.append(row.timestamp_ms)
        ranges = snap.ranges
        if coverage is not None:
            ranges = merge_ranges((*ranges, Range(*coverage, SOURCE_IMPORT, None)))
        changed = ranges != snap.ranges or bool(touched)
        if changed:
            _write(store, ranges, events.values())
    first, last = days_of((*touched, *(coverage or ()))) if changed else (None, None)
    return ImportSummary(
        changed=changed,
        added=added,
        skipped=skipped,
        total=len(events),
        coverage_start_ms=coverage[0] if coverage else None,
        coverage_end_ms=coverage[1] if coverage else None,
        inferred=start_ms is None or end_ms is None,
        tokens=sum(r.tokens for r in rows),
        replaced=replaced_providers(ranges, events.values()),
        first_day=first,
        last_day=last,
    )


def _refuse_outside(rows: Sequence[UsageRow], start_ms: int | None, end_ms: int | None) -> None:
    outside = [
        r
        for r in rows
        if (start_ms is not None and r.timestamp_ms < start_ms)
        or (end_ms is not None and r.timestamp_ms > end_ms)
    ]
    if outside:
        first = outside[0]
        raise CoverageError(
            f"line {first.line}: {first.date.strip()} is outside --from/--to "
            f"({len(outside)} row(s) outside); nothing was imported"
        )


def _import_coverage(
    rows: Sequence[UsageRow], start_ms: int | None, end_ms: int | None, mtime_ms: int
) -> tuple[int, int] | None:
    times = [r.timestamp_ms for r in rows]
    if start_ms is None and times:
        start_ms = local_midnight_ms(local_day(min(times)))
    if end_ms is None and times:
        end_ms = day_end_ms(local_day(max(times)))
    if start_ms is None or end_ms is None:
        return None
    end_ms = min(end_ms, mtime_ms)
    return (start_ms, end_ms) if start_ms <= end_ms else None


def apply_sync(
    rows: Sequence[UsageRow],
    account: str,
    window_start_ms: int,
    window_end_ms: int,
    *,
    path: Path | None = None,
) -> ImportSummary:
    """Store one sync of `account`: its synced events from the window start on are replaced."""
    if not ACCOUNT_PATTERN.fullmatch(account):
        raise ValueError("account must be 16 lowercase hex digits")
    store = path or store_path()
    in_window = [r for r in rows if r.timestamp_ms >= window_start_ms]
    with locked(store):
        snap = _read(store)
        manual = CoverageIndex(r for r in snap.ranges if r.source == SOURCE_IMPORT)
        kept = [e for e in snap.events if not _replaced_by_sync(e, account, window_start_ms)]
        dropped = {
            e.row.hash: e for e in snap.events if _replaced_by_sync(e, account, window_start_ms)
        }
        events = {e.row.hash: e for e in kept}
        added = skipped = 0
        for row in in_window:
            if manual.covers_time(row.timestamp_ms) or row.hash in events:
                skipped += 1
                continue
            events[row.hash] = StoredEvent(row, SOURCE_SYNC, account)
            if row.hash in dropped:
                skipped += 1
            else:
                added += 1
        newest = max((r.timestamp_ms for r in in_window), default=None)
        ranges = snap.ranges
        if newest is not None:
            ranges = merge_ranges((*ranges, Range(window_start_ms, newest, SOURCE_SYNC, account)))
        changed = ranges != snap.ranges or _event_set(snap.events) != _event_set(events.values())
        if changed or not snap.exists:
            _write(store, ranges, events.values())
    touched = [r.timestamp_ms for r in in_window] + [e.row.timestamp_ms for e in dropped.values()]
    first, last = days_of((window_start_ms, window_end_ms, *touched)) if changed else (None, None)
    return ImportSummary(
        changed=changed,
        added=added,
        skipped=skipped,
        total=len(events),
        coverage_start_ms=window_start_ms if newest is not None else None,
        coverage_end_ms=newest,
        inferred=False,
        tokens=sum(r.tokens for r in in_window),
        replaced=replaced_providers(ranges, events.values()),
        first_day=first,
        last_day=last,
        window_start_ms=window_start_ms,
        window_end_ms=window_end_ms,
        empty=not in_window,
    )


def _replaced_by_sync(event: StoredEvent, account: str, window_start_ms: int) -> bool:
    return (
        event.source == SOURCE_SYNC
        and event.account == account
        and event.row.timestamp_ms >= window_start_ms
    )


def _event_set(events: Iterable[StoredEvent]) -> set[tuple[str, str, str | None]]:
    return {(e.row.hash, e.source, e.account) for e in events}


def remove(path: Path | None = None) -> RemoveResult:
    """`codeburn import cursor --remove`: delete the store (readable or not)."""
    store = path or store_path()
    with locked(store):
        try:
            snap = _read(store)
        except ImportStoreError:
            snap = ImportSnapshot(exists=True)
        existed = store.exists()
        if existed:
            os.unlink(store)
    first, last = days_of(
        [r.start_ms for r in snap.ranges]
        + [r.end_ms for r in snap.ranges]
        + [e.row.timestamp_ms for e in snap.events]
    )
    return RemoveResult(existed=existed, ranges=snap.ranges, first_day=first, last_day=last)


__all__ = [
    "REMOVE_FIX",
    "SOURCE_IMPORT",
    "SOURCE_SYNC",
    "STORE_FILE",
    "VERSION",
    "CoverageError",
    "CoverageIndex",
    "ImportSnapshot",
    "ImportStoreError",
    "ImportSummary",
    "Range",
    "RemoveResult",
    "StoredEvent",
    "apply_sync",
    "events_as_calls",
    "fingerprint",
    "import_file",
    "import_rows",
    "load",
    "merge_ranges",
    "newest_synced_ms",
    "other_accounts_coverage_end",
    "parse_boundary",
    "remove",
    "store_path",
]
