"""The store of imported and synced Cursor usage: `<cache>/imports/cursor-usage.v3.json`.

Manual imports and the sync client both write here, always under the store's lock around the whole
read-modify-write; the usage service reads a snapshot and serves the events as calls. The store is
never swept and never silently replaced: a file we cannot read is an `ImportStoreError`. A version 2
or 1 store is migrated on first read (its file kept as `cursor-usage.v2.migrated.json` /
`cursor-usage.v1.migrated.json`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from codeburn.cache.dirs import imports_dir
from codeburn.cache.files import LockTimeoutError, locked, require_folder, write_chunks_atomic
from codeburn.cache.imports.events import CELLS_JSON, PackedEvents, StoredEvent
from codeburn.cache.imports.incoming import IncomingRows, incoming_of, merge_into, read_incoming
from codeburn.cache.imports.merge import (
    enriched,
    event_set,
    heal,
    keeps_detail,
    replaced_by_sync,
    split_future,
    with_json,
)
from codeburn.cache.imports.records import (
    ACCOUNT_PATTERN,
    REMOVE_FIX,
    SOURCE_IMPORT,
    SOURCE_SYNC,
    V1,
    V2,
    VERSION,
    CoverageError,
    CoverageIndex,
    ImportSnapshot,
    ImportStoreError,
    ImportSummary,
    Range,
    RemoveResult,
    days_of,
    merge_ranges,
    parse_boundary,
    replaced_providers,
)
from codeburn.cache.imports.store_format import decode_store_file, encode_store_lines
from codeburn.providers import (
    Call,
    EventDetail,
    UsageRow,
    file_time_ms,
    is_user_api_key,
    now_ms,
    row_to_call,
)

STORE_FILE: Final = "cursor-usage.v3.json"
V2_FILE: Final = "cursor-usage.v2.json"
V1_FILE: Final = "cursor-usage.v1.json"
MIGRATED_V2_FILE: Final = "cursor-usage.v2.migrated.json"
MIGRATED_V1_FILE: Final = "cursor-usage.v1.migrated.json"
# Older stores, newest first: read (and migrated) when the current one does not exist yet.
_LEGACY: Final = ((V2_FILE, V2, MIGRATED_V2_FILE), (V1_FILE, V1, MIGRATED_V1_FILE))


def store_path() -> Path:
    return imports_dir() / STORE_FILE


def fingerprint(path: Path | None = None) -> tuple[int, int] | None:
    """(mtime_ns, size) of the store (or of an older store not migrated yet); None when none."""
    store = path or store_path()
    older = (store.with_name(name) for name, _, _ in _LEGACY)
    for candidate in (store, *(o for o in older if o != store)):
        try:
            st = candidate.stat()
        except OSError:
            continue
        return st.st_mtime_ns, st.st_size
    return None


def load(path: Path | None = None) -> ImportSnapshot:
    """The stored ranges and events; ImportStoreError when the file exists but cannot be read."""
    store = path or store_path()
    snap = _read(store)
    if snap.exists and not store.exists():
        try:
            with locked(store):
                if not store.exists():  # another process may have migrated it meanwhile
                    snap = _read(store)
                    _write(store, snap.ranges, snap.events)
        except LockTimeoutError:
            pass  # served from the v1 file now, migrated on a later read
    return _healed(snap, store, now_ms())


def _healed(snap: ImportSnapshot, store: Path, now: int) -> ImportSnapshot:
    """A store damaged by future-dated rows (a 2099 range) must not hide local usage: a range
    past this run's clock ends when the store was last written, on this run's clock (no
    coverage ends after the import or sync that wrote it; under `CODEBURN_NOW` the writer's
    clock may run a little ahead of this one's). Only the ranges: a future event shows on no
    day a report reaches, and a read never writes (the file heals on the next import or sync)."""
    if all(r.end_ms <= now for r in snap.ranges):
        return snap
    written = fingerprint(store)
    limit = now if written is None else min(now, file_time_ms(written[0]))
    ranges, _ = heal(snap.ranges, {}, limit)
    return snap._replace(ranges=ranges)


def events_as_calls(snapshot: ImportSnapshot) -> list[Call]:
    return list(iter_calls(snapshot))


def iter_calls(snapshot: ImportSnapshot) -> Iterator[Call]:
    """The stored events as calls, one at a time (a report sums them; it need not hold them)."""
    for e in snapshot.events:
        yield row_to_call(e.row, e.detail)


def iter_events(snapshot: ImportSnapshot) -> Iterator[tuple[Call, str]]:
    """The stored events as calls with their JSON event's `conversationId` ("" when none)."""
    for e in snapshot.events:
        detail = e.detail
        yield row_to_call(e.row, detail), detail.conversation_id if detail is not None else ""


def iter_conversation_ids(snapshot: ImportSnapshot) -> Iterator[tuple[int, str]]:
    """(time, conversationId) of the stored events that carry one, without pricing them."""
    for ms, cid, _model, _kind, _billing in iter_conversation_events(snapshot):
        yield ms, cid


def iter_conversation_events(
    snapshot: ImportSnapshot,
) -> Iterator[tuple[int, str, str, str, str | None]]:
    """(time, conversationId, Model cell, Kind cell, JSON bill class) of the stored events that
    carry a conversation id, without making or pricing the events (a packed store holds the
    JSON details apart)."""
    events = snapshot.events
    if isinstance(events, PackedEvents):
        for ms, kind, model, packed in events.with_detail():
            if packed.conversation_id:
                yield ms, packed.conversation_id, model, kind, packed.billing
        return
    for e in events:
        detail = e.detail
        if detail is not None and detail.conversation_id:
            yield (
                e.row.timestamp_ms,
                detail.conversation_id,
                e.row.model,
                e.row.kind,
                detail.billing,
            )


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
    """The v3 store, else an older store read into v3 events, else an empty snapshot."""
    older = ((path.with_name(name), version) for name, version, _ in _LEGACY)
    for candidate, version in ((path, VERSION), *(o for o in older if o[0] != path)):
        try:
            handle = candidate.open("rb")
        except (FileNotFoundError, NotADirectoryError):  # under a file: no store can be there
            continue
        except OSError as exc:
            raise _unreadable(candidate, exc.strerror or "cannot be opened") from exc
        try:
            with handle:
                return decode_store_file(handle, version)
        except OSError as exc:
            raise _unreadable(candidate, exc.strerror or "cannot be read") from exc
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise _unreadable(candidate, "it is damaged or from another version") from exc
    return ImportSnapshot(exists=False)


def _unreadable(path: Path, why: str) -> ImportStoreError:
    return ImportStoreError(
        f"cannot read the imported Cursor usage in {path} ({why}); "
        f"run `{REMOVE_FIX}` to delete it, then import or sync again"
    )


def _write(path: Path, ranges: Sequence[Range], events: Iterable[StoredEvent]) -> None:
    require_folder(path.parent)  # FolderUnusableError: one line, nothing stored
    write_chunks_atomic(path, encode_store_lines(ranges, events))
    for name, _, migrated in _LEGACY:
        legacy = path.with_name(name)
        if legacy != path and legacy.exists():
            # Kept, not deleted: the migration must never be the reason a row is gone.
            os.replace(legacy, path.with_name(migrated))


def import_file(
    csv_path: Path,
    *,
    start: str | None = None,
    end: str | None = None,
    user: str | None = None,
    signed_in: str | None = None,
    path: Path | None = None,
) -> ImportSummary:
    """`codeburn import cursor FILE.csv [--from X] [--to Y] [--user EMAIL]`: parse, check, merge.

    The rows are packed as they are read (`read_incoming`): a large export is never held as
    bytes, text or row objects, and every row is checked before the store is opened."""
    incoming = read_incoming(csv_path)
    incoming.keep_person(user, signed_in)
    return _import(incoming, start=start, end=end, path=path, now=None)


def import_rows(
    rows: Sequence[UsageRow],
    *,
    mtime_ms: int | None = None,
    start: str | None = None,
    end: str | None = None,
    path: Path | None = None,
    now: int | None = None,
) -> ImportSummary:
    """Merge parsed export rows as a manual import; coverage ends no later than `mtime_ms`.

    The same event imported again replaces the stored row when its export is at least as new
    (`mtime_ms`), so overlapping exports give the same store in any order.
    """
    now = now_ms() if now is None else now
    incoming = incoming_of(rows, now if mtime_ms is None else mtime_ms)
    return _import(incoming, start=start, end=end, path=path, now=now)


def _import(
    incoming: IncomingRows,
    *,
    start: str | None,
    end: str | None,
    path: Path | None,
    now: int | None,
) -> ImportSummary:
    now = now_ms() if now is None else now
    start_ms = parse_boundary(start, end=False) if start is not None else None
    end_ms = parse_boundary(end, end=True) if end is not None else None
    if start_ms is not None and end_ms is not None and start_ms > end_ms:
        raise CoverageError(f"--from {start} is later than --to {end}")
    future = incoming.drop_future(now)
    incoming.refuse_outside(start_ms, end_ms)
    coverage = incoming.coverage(start_ms, end_ms, min(incoming.exported_ms, now))
    tokens, user_api_key = incoming.tokens(), incoming.user_api_key()
    store = path or store_path()
    with locked(store):
        snap = _read(store)
        merged, healed = merge_into(incoming, snap.events, now)
        events = incoming.events  # now every event of the store
        ranges, _ = heal(snap.ranges, {}, now)
        if coverage is not None:
            ranges = merge_ranges((*ranges, Range(*coverage, SOURCE_IMPORT, None)))
        changed = ranges != snap.ranges or merged.touched or bool(healed)
        if changed or merged.bumped:
            _write(store, ranges, events)
    touched = (merged.first_ms, merged.last_ms, *(coverage or ()))
    first, last = days_of(touched) if changed else (None, None)
    return ImportSummary(
        changed=changed,
        added=merged.added,
        skipped=merged.skipped,
        total=len(events),
        coverage_start_ms=coverage[0] if coverage else None,
        coverage_end_ms=coverage[1] if coverage else None,
        inferred=start_ms is None or end_ms is None,
        tokens=tokens,
        replaced=replaced_providers(ranges, events),
        first_day=first,
        last_day=last,
        future=future,
        user_api_key=user_api_key,
    )


def _merge_synced(
    events: dict[str, StoredEvent],
    rows: Sequence[UsageRow],
    manual: CoverageIndex,
    dropped: Mapping[str, StoredEvent],
    details: Mapping[str, EventDetail] | None,
    account: str,
    window_end_ms: int,
) -> tuple[int, int]:
    """One sync's rows into `events` (row identity → stored event); (added, skipped)."""
    added = skipped = 0
    for row in rows:
        detail = details.get(row.hash) if details is not None else None
        stored = events.get(row.hash)
        if manual.covers_time(row.timestamp_ms) or stored is not None:
            skipped += 1
            if detail is not None and stored is not None and stored.source == SOURCE_IMPORT:
                events[row.hash] = enriched(stored, detail)
            continue
        previous = dropped.get(row.hash)
        if details is None:
            new = StoredEvent(row, SOURCE_SYNC, account, window_end_ms)
            events[row.hash] = keeps_detail(previous, new)
        else:
            new = StoredEvent(row, SOURCE_SYNC, account, window_end_ms, detail, CELLS_JSON)
            events[row.hash] = new if previous is None else with_json(previous, new)
        if previous is not None:
            skipped += 1
        else:
            added += 1
    return added, skipped


def apply_sync(
    rows: Sequence[UsageRow],
    account: str,
    window_start_ms: int,
    window_end_ms: int,
    *,
    details: Mapping[str, EventDetail] | None = None,
    merge: bool = False,
    path: Path | None = None,
) -> ImportSummary:
    """Store one sync of `account`: its synced events from the window start on are replaced.

    `merge` (a read that ended before cursor.com's count): the rows add and update, and no
    stored event is removed, since a missing event may just not have been served.

    The window end is the sync's own time: rows after it + 1 day are refused (counted in
    `future`), coverage never ends after it, and a store damaged by such rows heals.
    `details` (row identity → detail) makes this a sync of JSON usage events: their detail is
    added to a stored export row of the same event (a manual one included, whose source and cells
    stay), and the cells of an export row they replace are kept.
    """
    if not ACCOUNT_PATTERN.fullmatch(account):
        raise ValueError("account must be 16 lowercase hex digits")
    store = path or store_path()
    rows, future = split_future(rows, window_end_ms)
    in_window = [r for r in rows if r.timestamp_ms >= window_start_ms]
    with locked(store):
        snap = _read(store)
        current = {e.row.hash: e for e in snap.events}
        healed_ranges, healed = heal(snap.ranges, current, window_end_ms)
        manual = CoverageIndex(r for r in healed_ranges if r.source == SOURCE_IMPORT)
        kept = [e for e in current.values() if not replaced_by_sync(e, account, window_start_ms)]
        dropped = {
            e.row.hash: e for e in current.values() if replaced_by_sync(e, account, window_start_ms)
        }
        events = {e.row.hash: e for e in kept}
        added, skipped = _merge_synced(
            events, in_window, manual, dropped, details, account, window_end_ms
        )
        if merge:
            for key, stored in dropped.items():
                events.setdefault(key, stored)
        newest = max((r.timestamp_ms for r in in_window), default=None)
        if newest is not None:
            newest = min(newest, window_end_ms)
        ranges = healed_ranges
        if newest is not None and newest >= window_start_ms:
            ranges = merge_ranges((*ranges, Range(window_start_ms, newest, SOURCE_SYNC, account)))
        changed = (
            ranges != snap.ranges
            or bool(healed)
            or event_set(snap.events) != event_set(events.values())
        )
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
        future=future,
        user_api_key=sum(1 for r in in_window if is_user_api_key(r.kind)),
    )


def remove_imported(path: Path | None = None) -> RemoveResult:
    """`codeburn import cursor --remove`: delete the store (readable or not)."""
    store = path or store_path()
    with locked(store):
        try:
            snap = _read(store)
        except ImportStoreError:
            snap = ImportSnapshot(exists=True)
        files = [store] + [
            store.with_name(name) for legacy, _, migrated in _LEGACY for name in (legacy, migrated)
        ]
        existed = any(f.exists() for f in files)
        for f in files:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                os.unlink(f)
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
    "iter_calls",
    "load",
    "merge_ranges",
    "newest_synced_ms",
    "other_accounts_coverage_end",
    "parse_boundary",
    "remove_imported",
    "store_path",
]
