"""Local calls + imported events → per-day slices, with replacement inside coverage (SPEC §5)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from codeburn.cache.import_store import CoverageIndex, ImportSnapshot, events_as_calls
from codeburn.cache.usage_slices import DaySlices, Slice
from codeburn.providers.calls import Call
from codeburn.providers.localtime import DayIndex


def derive_days(
    first: date,
    last: date,
    local_calls: Iterable[Call],
    snapshot: ImportSnapshot | None,
) -> dict[date, DaySlices]:
    """Slices of every local day in [first, last]; local calls covered by an import give way."""
    index = DayIndex(first, last)
    coverage = CoverageIndex.from_snapshot(snapshot) if snapshot is not None else None
    days: dict[date, DaySlices] = {}

    def add(call: Call, local: bool) -> None:
        day = index.day_of(call.timestamp_ms)
        if first <= day <= last:
            slices = days.get(day)
            if slices is None:
                slices = days[day] = {}
            part = slices.get(call.provider)
            if part is None:
                part = slices[call.provider] = Slice()
            part.add(call, local=local)

    if coverage:
        for call in local_calls:
            if not coverage.covers(call.provider, call.timestamp_ms):
                add(call, True)
    else:
        for call in local_calls:
            add(call, True)
    if snapshot is not None:
        for call in events_as_calls(snapshot):
            add(call, False)
    return days
