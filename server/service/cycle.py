"""The billing cycle (docs/forecast.md): the last usage summary's, else the calendar month."""

from __future__ import annotations

import calendar
from datetime import date
from pathlib import Path
from typing import Any, Final

from codeburn.cache import cache_dir, read_json
from codeburn.providers import local_day, parse_iso_ms
from codeburn.server.service.forecast import Cycle

QUOTA_FILE: Final = "cursor-quota.v1.json"
"""sync/quota.py's cache of the usage summary (read here without importing the sync client)."""
MAX_CYCLE_DAYS: Final = 62


def calendar_cycle(today: date) -> Cycle:
    last = calendar.monthrange(today.year, today.month)[1]
    return Cycle(today.replace(day=1), today.replace(day=last), "calendar")


def _add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    year = day.year + month // 12
    month = month % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def cycle_from_summary(start_iso: Any, end_iso: Any, today: date) -> Cycle | None:
    """The cycle holding `today` from a summary's `billingCycleStart`/`End` (UTC instants; the
    end is the next cycle's start). A cycle that has ended is carried on a month at a time, as
    Cursor renews it, and one that starts after `today` is carried back the same way. None when
    the pair is not a plausible cycle."""
    start_ms = parse_iso_ms(start_iso) if isinstance(start_iso, str) else None
    end_ms = parse_iso_ms(end_iso) if isinstance(end_iso, str) else None
    if start_ms is None or end_ms is None or end_ms <= start_ms:
        return None
    start, end = local_day(start_ms), local_day(end_ms - 1)
    if (end - start).days + 1 > MAX_CYCLE_DAYS:
        return None
    anchor = start
    months = 0
    while end < today and months < 1200:
        months += 1
        start = _add_months(anchor, months)
        end = date.fromordinal(_add_months(anchor, months + 1).toordinal() - 1)
    while start > today and months > -1200:
        # A clock behind the summary's (or a summary read ahead of a cycle's start): the
        # cycle before it holds today, on the same day of the month.
        months -= 1
        start = _add_months(anchor, months)
        end = date.fromordinal(_add_months(anchor, months + 1).toordinal() - 1)
    return Cycle(start, end, "cursor")


def cached_summary_cycle(today: date, folder: Path | None = None) -> Cycle | None:
    """The cycle of the last usage summary read (it survives restarts), or None."""
    data = read_json((folder or cache_dir()) / QUOTA_FILE)
    if not isinstance(data, dict):
        return None
    for key in ("quota", "lastGood"):
        quota = data.get(key)
        if isinstance(quota, dict):
            cycle = cycle_from_summary(
                quota.get("billingCycleStart"), quota.get("billingCycleEnd"), today
            )
            if cycle is not None:
                return cycle
    return None


def current_cycle(today: date, quota: dict[str, Any] | None = None) -> Cycle:
    """`quota` (a fresh `status.quota`) first, then the cached summary, else the calendar."""
    if quota:
        cycle = cycle_from_summary(
            quota.get("billingCycleStart"), quota.get("billingCycleEnd"), today
        )
        if cycle is not None:
            return cycle
    return cached_summary_cycle(today) or calendar_cycle(today)
