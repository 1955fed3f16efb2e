"""The suite's clock: named moments the whole suite can be run at (`pytest --clock=NAME`).

In this process time-machine moves the clock (and sets `TZ`); every subprocess a test starts
(the language server, the CLI) gets the same moment through `CODEBURN_NOW`, the test seam in
providers/localtime.py.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

# The moments `bash ./dev test` runs the whole suite at, after the real clock. Each is at least
# an hour from local midnight, so a run never crosses a day boundary.
CLOCKS: dict[str, tuple[str, str]] = {
    # The 1st of a month (the month holds only today) and a 25-hour day: DST ends.
    "dst-end-first": ("2026-11-01T12:00:00", "America/Los_Angeles"),
    # 1 January: year, month and week start today; UTC is still in the old year.
    "new-year": ("2027-01-01T01:15:00", "Europe/Berlin"),
    # The last day of a short month, half an hour off UTC: UTC is still on the 27th.
    "kolkata-month-last": ("2027-02-28T03:00:00", "Asia/Kolkata"),
    # A 23-hour day: DST starts.
    "dst-start": ("2027-03-14T12:00:00", "America/Los_Angeles"),
}


# The tests marked `clock` run again at each moment above; tests/clock_guard.py fails a test that
# reads the clock and says neither `clock` nor `any_moment`.


# The real clock's run, within this long of local midnight, runs at noon of the same local day
# instead (a 5-minute suite started at 23:58 put "a minute ago" on yesterday).
NEAR_MIDNIGHT_H = 2


def near_midnight_noon(now: datetime) -> datetime | None:
    """Noon of `now`'s local day when `now` (aware, local) is near midnight; else None."""
    if NEAR_MIDNIGHT_H <= now.hour < 24 - NEAR_MIDNIGHT_H:
        return None
    return now.replace(hour=12, minute=0, second=0, microsecond=0)


def resolve(name: str) -> datetime:
    """A named moment, or `YYYY-MM-DDTHH:MM:SS@Area/City` for any other."""
    wall, zone = CLOCKS[name] if name in CLOCKS else name.split("@", 1)
    return datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo(zone))


if __name__ == "__main__":  # `python -m tests.clock`: the names, for ./dev test
    print(" ".join(CLOCKS))
