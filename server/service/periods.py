"""Report periods in local days (docs/report-json.md#periods)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Final, NamedTuple

from codeburn.providers import CodeBurnError, six_month_floor
from codeburn.server.service.cycle import current_cycle

PERIODS: Final = ("today", "yesterday", "week", "30days", "month", "lastmonth", "cycle", "all")
# Period names in words, for headers people read (the JSON keeps the names).
PERIOD_TITLES: Final = {
    "today": "today",
    "yesterday": "yesterday",
    "week": "last 7 days",
    "30days": "last 30 days",
    "month": "this month",
    "lastmonth": "last month",
    "cycle": "this billing cycle",
    "all": "all history",
    "custom": "chosen days",
}
# `all` starts at the oldest day CodeBurn holds, which only the usage service knows: the period
# made here starts at the floor of Cursor's local files, and the service moves it back.
ALL_PERIOD: Final = "all"
EARLIEST_YEAR: Final = 2000
LATEST_YEAR: Final = 2100


class PeriodError(CodeBurnError, ValueError):
    """A period or date the user gave cannot be used; the message says how to fix it."""


class Period(NamedTuple):
    label: str
    start: date
    end: date

    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]


def period_title(label: str) -> str:
    """`last 30 days` for `30days`; an unknown label unchanged."""
    return PERIOD_TITLES.get(label, label)


def parse_day(text: str, option: str) -> date:
    """A `--from`/`--to` day, from 2000 to 2100 (later days overflow a local day's end)."""
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise PeriodError(f"{option} expects a date like 2026-11-30, got {text!r}") from None
    if not EARLIEST_YEAR <= day.year <= LATEST_YEAR:
        raise PeriodError(
            f"{option} {day} is outside {EARLIEST_YEAR}–{LATEST_YEAR}; "
            f"give a day from {EARLIEST_YEAR}-01-01 to {LATEST_YEAR}-12-31"
        )
    return day


def named_period(name: str, today: date) -> Period:
    if name == "today":
        return Period(name, today, today)
    if name == "yesterday":
        day = today - timedelta(days=1)
        return Period(name, day, day)
    if name == "week":
        return Period(name, today - timedelta(days=7), today)
    if name == "30days":
        return Period(name, today - timedelta(days=30), today)
    if name == "month":
        return Period(name, today.replace(day=1), today)
    if name == "lastmonth":  # the whole previous calendar month
        last = today.replace(day=1) - timedelta(days=1)
        return Period(name, last.replace(day=1), last)
    if name == "all":
        return Period(name, six_month_floor(today), today)
    if name == "cycle":  # the last usage summary's billing cycle, else this calendar month
        cycle = current_cycle(today)
        return Period(name, cycle.start, min(cycle.end, today))
    raise PeriodError(f"unknown period {name!r}; use one of {', '.join(PERIODS)}")


def resolve_period(
    name: str | None, start: str | None, end: str | None, today: date, default: str = "month"
) -> Period:
    """`--from/--to` (inclusive local days) win over a named period."""
    if start is None and end is None:
        return named_period(name or default, today)
    first = parse_day(start, "--from") if start is not None else six_month_floor(today)
    last = parse_day(end, "--to") if end is not None else today
    if last < first:
        raise PeriodError(f"--to {last} is before --from {first}")
    return Period("custom", first, last)
