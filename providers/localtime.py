"""Local days, UTC ISO strings, the six-month floor, and the one clock all code reads.

Every day boundary comes from the C library's local time, so `TZ` is honoured the way the
rest of the machine honours it (call `time.tzset()` after changing it in-process).

Test seam: `CODEBURN_NOW` (an ISO instant, e.g. `2026-12-01T10:00:00Z`) read once at import
makes this process's clock start at that instant and tick on from there. The test suite sets
it for the language server and CLI subprocesses it starts; nothing else should.
"""

from __future__ import annotations

import bisect
import calendar
import os
import re
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Final, TypeGuard

DAY = timedelta(days=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Times from 2101 on are not dates any record carries (`9999-12-31T23:59:59Z` is a placeholder),
# and near year 9999 a local day or the day after it no longer exists: such times are skipped.
LATEST_MS = 4_133_980_800_000  # 2101-01-01T00:00:00Z


def local_midnight_ms(day: date) -> int:
    """Epoch milliseconds of local midnight starting `day`."""
    return int(time.mktime((day.year, day.month, day.day, 0, 0, 0, 0, 0, -1))) * 1000


def day_end_ms(day: date) -> int:
    """Last millisecond of local `day` (ranges end inclusively)."""
    return local_midnight_ms(day + DAY) - 1


def local_day(ms: int) -> date:
    """Local calendar day of an epoch-millisecond time."""
    t = time.localtime(ms // 1000)
    return date(t.tm_year, t.tm_mon, t.tm_mday)


CLOCK_ENV = "CODEBURN_NOW"


def today() -> date:
    return local_day(now_ms())


def now_ms() -> int:
    """The current time in epoch milliseconds: the only place any code reads the clock."""
    return now_ns() // 1_000_000


def now_ns() -> int:
    """The current time in epoch nanoseconds (file times)."""
    return time.time_ns() + _OFFSET_MS * 1_000_000


def file_time_ms(mtime_ns: int) -> int:
    """A file's modification time (the kernel's clock, epoch ns) on this process's clock, in
    epoch ms: the two differ only under `CODEBURN_NOW`, which starts each process's clock at
    that instant."""
    return mtime_ns // 1_000_000 + _OFFSET_MS


def iso_utc(ms: int) -> str:
    """ISO-8601 UTC with milliseconds and `Z`, as every file and JSON payload carries times."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


# The form every log line's time takes (`2026-11-27T02:05:47.129Z`): read by slicing, its day
# once per day; anything else (and any field out of range) takes `fromisoformat` (equal, by test).
_UTC_MS: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}Z"
)
_DAY_MS: dict[str, int] = {}


def parse_iso_ms(text: str) -> int | None:
    """Epoch ms of an ISO time (`Z`, offsets, naive = UTC) in [1970, 2101), else None."""
    if _UTC_MS.fullmatch(text) is not None:
        day = _DAY_MS.get(text[:10])
        if day is None:
            day = _day_ms(text[:10])
        if day is not None:
            ms = (
                day
                + int(text[11:13]) * 3_600_000
                + int(text[14:16]) * 60_000
                + int(text[17:19]) * 1000
                + int(text[20:23])
            )
            return ms if ms < LATEST_MS else None
    return _parse_iso_ms(text)


def _day_ms(day: str) -> int | None:
    """Epoch ms of a `YYYY-MM-DD` from 1970 on (kept for the next time), else None."""
    try:
        parsed = date.fromisoformat(day)
    except ValueError:
        return None
    if parsed.year < 1970:
        return None
    if len(_DAY_MS) > 10_000:  # (bounded: hostile input cannot grow it)
        _DAY_MS.clear()
    ms = _DAY_MS[day] = (parsed - EPOCH.date()).days * 86_400_000
    return ms


def _parse_iso_ms(text: str) -> int | None:
    try:
        dt = datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        ms = (dt - EPOCH) // timedelta(milliseconds=1)
    except OverflowError:  # year 1 with an eastern offset
        return None
    return ms if is_date_ms(ms) else None


def is_date_ms(ms: object) -> TypeGuard[int | float]:
    """True for an epoch-ms number that can be a record's time: 1970 to 2100 (not bool/NaN)."""
    return isinstance(ms, int | float) and not isinstance(ms, bool) and 0 <= ms < LATEST_MS


def valid_ms(value: object) -> int | None:
    """An epoch-ms date after 1970 and before 2101, or None for anything that cannot be one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 < value < LATEST_MS:  # also NaN
        return None
    return int(value)


def months_before(day: date, months: int) -> date:
    """The same day of month `months` earlier, clamped (Aug 31 minus 6 months is Feb 28/29)."""
    month_index = day.year * 12 + (day.month - 1) - months
    year, month = divmod(month_index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def six_month_floor(on: date | None = None) -> date:
    """Oldest local day any parse reads: six calendar months before today."""
    return months_before(on or today(), 6)


def timezone_name() -> str:
    """IANA name of the local zone when it can be told, else its abbreviation."""
    tz = os.environ.get("TZ", "").strip()
    if tz:
        return tz.lstrip(":")
    try:
        target = Path("/etc/localtime").resolve()
        parts = target.parts
        if "zoneinfo" in parts:
            return "/".join(parts[parts.index("zoneinfo") + 1 :])
    except OSError:
        pass
    return time.tzname[0] or "UTC"


class DayIndex:
    """Buckets epoch-ms times into local days with a binary search over midnights."""

    def __init__(self, first: date, last: date) -> None:
        self.first = first
        days = (last - first).days + 2
        self._days = [first + DAY * i for i in range(days)]
        self._bounds = [local_midnight_ms(d) for d in self._days]

    def day_of(self, ms: int) -> date:
        if ms < self._bounds[0] or ms >= self._bounds[-1]:
            return local_day(ms)
        return self._days[bisect.bisect_right(self._bounds, ms) - 1]


def _clock_offset(text: str | None) -> int:
    """Milliseconds from the real clock to the `CODEBURN_NOW` instant (0 when unset or bad)."""
    start = parse_iso_ms(text) if text else None
    return 0 if start is None else start - time.time_ns() // 1_000_000


_OFFSET_MS = _clock_offset(os.environ.get(CLOCK_ENV))
