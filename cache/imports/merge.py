"""Merge rules of the import store, as pure functions: which rendering of an event stays, which
rows are refused as dated in the future, how a store damaged by them heals, what coverage is."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Final

from codeburn.cache.imports.events import CELLS_CSV, StoredEvent
from codeburn.cache.imports.records import SOURCE_IMPORT, SOURCE_SYNC, Range, merge_ranges
from codeburn.providers import DAY, EventDetail, UsageRow, day_end_ms, local_day, local_midnight_ms

FUTURE_SLACK_MS: Final = DAY // timedelta(milliseconds=1)


def heal(
    ranges: Sequence[Range], events: dict[str, StoredEvent], now: int
) -> tuple[tuple[Range, ...], int]:
    """Clip coverage to `now` and drop events dated after now + 1 day (a store damaged by
    future-dated rows would otherwise hide local usage until then); returns the dropped count."""
    clipped = tuple(
        Range(r.start_ms, min(r.end_ms, now), r.source, r.account)
        for r in ranges
        if r.start_ms <= now
    )
    future = [k for k, e in events.items() if e.row.timestamp_ms > now + FUTURE_SLACK_MS]
    for key in future:
        del events[key]
    return merge_ranges(clipped) if clipped != tuple(ranges) else tuple(ranges), len(future)


def split_future(rows: Sequence[UsageRow], now: int) -> tuple[list[UsageRow], int]:
    kept = [r for r in rows if r.timestamp_ms <= now + FUTURE_SLACK_MS]
    return kept, len(rows) - len(kept)


# --- writing -----------------------------------------------------------------------------------


def keeps_stored(old: StoredEvent, new: StoredEvent) -> StoredEvent | None:
    """What stays of a stored manual event when an export brings it again; None: take `new`.

    The newer export's rendering wins; an equal rendering only records the newer export time;
    two renderings from exports of the same time are ordered by content, so that importing
    overlapping exports in any order gives the same store.
    """
    if old.source != SOURCE_IMPORT:
        return None  # a manual import claims a synced row
    old_at = -1 if old.exported_at_ms is None else old.exported_at_ms
    new_at = -1 if new.exported_at_ms is None else new.exported_at_ms
    if old.row == new.row:
        return new if new_at > old_at else old
    if old_at != new_at:
        return old if old_at > new_at else None
    return old if content_key(old) >= content_key(new) else None


def keeps_detail(old: StoredEvent | None, new: StoredEvent) -> StoredEvent:
    """An export's rendering `new` of a stored event keeps what its JSON usage event added."""
    if old is None or old.detail is None or new.detail is not None:
        return new
    return new._replace(detail=old.detail)


def with_json(stored: StoredEvent, incoming: StoredEvent) -> StoredEvent:
    """A JSON usage event `incoming` replacing the stored rendering of the same event: an
    export's cells stay (they are what Cursor's export says), the detail is the JSON's."""
    if stored.cells != CELLS_CSV:
        return incoming
    return incoming._replace(row=stored.row, cells=CELLS_CSV)


def enriched(stored: StoredEvent, detail: EventDetail) -> StoredEvent:
    """A stored event the sync may not replace (a manual row) with its JSON event's detail."""
    return stored if stored.detail == detail else stored._replace(detail=detail)


def content_key(event: StoredEvent) -> str:
    return json.dumps(event.to_json(), sort_keys=True)


def coverage_of(
    first_ms: int | None,
    last_ms: int | None,
    start_ms: int | None,
    end_ms: int | None,
    mtime_ms: int,
) -> tuple[int, int] | None:
    """A manual import's coverage: --from/--to, else the whole local days of its first and last
    row (`first_ms`/`last_ms`, None without rows), never ending after the export was made."""
    if start_ms is None and first_ms is not None:
        start_ms = local_midnight_ms(local_day(first_ms))
    if end_ms is None and last_ms is not None:
        end_ms = day_end_ms(local_day(last_ms))
    if start_ms is None or end_ms is None:
        return None
    end_ms = min(end_ms, mtime_ms)
    return (start_ms, end_ms) if start_ms <= end_ms else None


def replaced_by_sync(event: StoredEvent, account: str, window_start_ms: int) -> bool:
    return (
        event.source == SOURCE_SYNC
        and event.account == account
        and event.row.timestamp_ms >= window_start_ms
    )


def event_set(
    events: Iterable[StoredEvent],
) -> set[tuple[UsageRow, str, str | None, EventDetail | None, str]]:
    return {(e.row, e.source, e.account, e.detail, e.cells) for e in events}
