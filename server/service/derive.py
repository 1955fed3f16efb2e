"""Local calls + imported events → per-day slices, with replacement inside coverage (SPEC §5)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from codeburn.cache import (
    CoverageIndex,
    DaySlices,
    ImportSnapshot,
    Slice,
    events_as_calls,
    iter_calls,
)
from codeburn.providers import (
    CURSOR,
    CURSOR_AGENT,
    GROKBOT,
    Call,
    DayIndex,
    gc_paused,
    local_midnight_ms,
)

ONE_DAY = timedelta(days=1)
# A group: calls of one day, provider, model, project and session with the same flags.
GroupKey = tuple[date, str, str, str, str, bool, bool, bool, bool]


def _group(
    groups: dict[GroupKey, list[Any]],
    calls: Iterable[Call],
    index: DayIndex,
    first: date,
    last: date,
    coverage: CoverageIndex | None,
    local: bool,
) -> None:
    """Sum calls into groups; a report has thousands of groups for a hundred thousand calls."""
    lo = hi = 0
    day = first
    for call in calls:
        ms = call.timestamp_ms
        if coverage is not None and coverage.covers(call.provider, ms):
            continue
        if not lo <= ms < hi:  # calls come in runs of one conversation, mostly one day
            day = index.day_of(ms)
            lo, hi = local_midnight_ms(day), local_midnight_ms(day + ONE_DAY)
        if day < first or day > last:
            continue
        key = (
            day,
            call.provider,
            call.model,
            call.project,
            call.session,
            call.estimated,
            call.billed,
            call.priced,
            local,
        )
        sums = groups.get(key)
        if sums is None:
            groups[key] = [
                call.cost,
                1,
                call.input_tokens,
                call.output_tokens,
                call.cache_read_tokens,
                call.cache_write_tokens,
                1 if call.not_charged else 0,
            ]
        else:
            sums[0] += call.cost
            sums[1] += 1
            sums[2] += call.input_tokens
            sums[3] += call.output_tokens
            sums[4] += call.cache_read_tokens
            sums[5] += call.cache_write_tokens
            if call.not_charged:
                sums[6] += 1


def derive_days(
    first: date,
    last: date,
    local_calls: Iterable[Call],
    snapshot: ImportSnapshot | None,
) -> dict[date, DaySlices]:
    """Slices of every local day in [first, last]; local calls covered by an import give way."""
    index = DayIndex(first, last)
    coverage = CoverageIndex.from_snapshot(snapshot) if snapshot is not None else None
    groups: dict[GroupKey, list[Any]] = {}
    with gc_paused():
        _group(groups, local_calls, index, first, last, coverage or None, True)
        if snapshot is not None:
            _group(groups, iter_calls(snapshot), index, first, last, None, False)
    days: dict[date, DaySlices] = {}
    for (
        day,
        provider,
        model,
        project,
        session,
        est,
        billed,
        priced,
        local,
    ), sums in groups.items():
        slices = days.get(day)
        if slices is None:
            slices = days[day] = {}
        part = slices.get(provider)
        if part is None:
            part = slices[provider] = Slice()
        part.add_group(provider, model, project, session, est, billed, priced, sums, local=local)
    return days


def import_marks(first: date, last: date, snapshot: ImportSnapshot | None) -> dict[date, list[str]]:
    """Per local day in [first, last], the providers whose slices hold stored (imported or
    synced) events or gave way to a coverage range: what `--remove` must clean (SPEC §4)."""
    if snapshot is None or (not snapshot.ranges and not snapshot.events) or last < first:
        return {}
    index = DayIndex(first, last)
    marks: dict[date, set[str]] = {}
    for call in events_as_calls(snapshot):
        day = index.day_of(call.timestamp_ms)
        if first <= day <= last:
            marks.setdefault(day, set()).add(call.provider)
    replaced = {CURSOR, CURSOR_AGENT} | ({GROKBOT} if snapshot.has_grokbot else set())
    for r in snapshot.ranges:
        day = max(first, index.day_of(r.start_ms))
        end = min(last, index.day_of(r.end_ms))
        while day <= end:
            marks.setdefault(day, set()).update(replaced)
            day += ONE_DAY
    return {day: sorted(providers) for day, providers in marks.items()}
