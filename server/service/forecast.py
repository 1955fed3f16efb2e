"""The billing cycle's projected cost, with a band (docs/forecast.md). Pure: no clock, no files.

`project` is the one function the status object, `codeburn forecast` and `bench/forecast.py` call,
so the bench measures exactly what people see.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any, Final, NamedTuple

from codeburn.server.service.formatting import format_money

DAY_MS: Final = 86_400_000
MINUTE_MS: Final = 60_000
MIN_CALL_DAYS: Final = 3
"""No forecast before the cycle has this many local days with calls."""
RECENT_DAYS: Final = 14
"""The recent rate looks at this many local days up to the clock (earlier cycles included)."""
HALF_LIFE_DAYS: Final = 7.0
"""A day's weight in the recent rate halves with every week of age."""
CYCLE_WEIGHT: Final = 0.25
RECENT_WEIGHT: Final = 0.5
"""The daily rate is this share of the cycle's own average, this of the recent rate, and the
rest of the plain average of the last WEEKDAY_DAYS days (it damps one burst week)."""
WEEKDAY_DAYS: Final = 56
"""Weekday effects and the long average are read from this many local days up to the clock."""
WEEKDAY_STRENGTH: Final = 0.5
"""How much of a weekday's measured effect is applied (half: eight samples are few)."""
HISTORY_DAYS: Final = max(RECENT_DAYS, WEEKDAY_DAYS)
"""The forecast reads the local days from this many days before the clock (and the cycle's)."""
BAND_MIN_SHARE: Final = 0.5
BAND_EARLY: Final = 2.0
BAND_EARLY_POWER: Final = 3.0
BAND_MAX_SHARE: Final = 5.0
"""The band: from what is spent (bursty usage often simply stops) up to what is spent plus the
larger of the projected rest and share × the projection, where share = BAND_EARLY × (remaining ÷
elapsed)^BAND_EARLY_POWER kept within [BAND_MIN_SHARE, BAND_MAX_SHARE]: early in a cycle its total
is still wide open (a late burst can multiply it); from about 61 % of the cycle on, one burst still
moves it by about half."""


class DayFigures(NamedTuple):
    """One local day's figures of what the status bar counts."""

    cost: float = 0.0
    estimated_cost: float = 0.0
    calls: int = 0


class Cycle(NamedTuple):
    """A billing cycle in local days, both ends inclusive."""

    start: date
    end: date
    source: str  # "cursor" | "calendar"

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


class Projection(NamedTuple):
    spent: float
    projected: float
    low: float
    high: float
    remaining_days: float


def _recent_rate(days: Mapping[date, DayFigures], today: date, today_share: float) -> float:
    """Weighted daily rate over the last RECENT_DAYS days up to `today` (today by its share)."""
    num = den = 0.0
    for age in range(RECENT_DAYS):
        day = today - timedelta(days=age)
        weight = 0.5 ** (age / HALF_LIFE_DAYS)
        share = today_share if age == 0 else 1.0
        num += weight * days.get(day, DayFigures()).cost
        den += weight * share
    return num / den if den > 0 else 0.0


def _long_rate(days: Mapping[date, DayFigures], today: date, today_share: float) -> float:
    """The plain daily average of the last WEEKDAY_DAYS days up to `today` (today by its share)."""
    cost = sum(
        days.get(today - timedelta(days=age), DayFigures()).cost for age in range(WEEKDAY_DAYS)
    )
    return cost / (WEEKDAY_DAYS - 1 + today_share)


def _weekday_effect(days: Mapping[date, DayFigures], today: date, end: date) -> float:
    """The mean weekday factor of the cycle's days after `today`: a day's factor is its weekday's
    share of the last WEEKDAY_DAYS days' cost × 7, pulled halfway to 1."""
    by_weekday = [0.0] * 7
    for age in range(WEEKDAY_DAYS):
        day = today - timedelta(days=age)
        by_weekday[day.weekday()] += days.get(day, DayFigures()).cost
    total = sum(by_weekday)
    ahead = [today + timedelta(days=n) for n in range(1, (end - today).days + 1)]
    if total <= 0 or not ahead:
        return 1.0
    factors = [1 - WEEKDAY_STRENGTH + WEEKDAY_STRENGTH * 7 * b / total for b in by_weekday]
    return sum(factors[d.weekday()] for d in ahead) / len(ahead)


def counted_until(now_ms: int) -> int:
    """Where the status, and so the forecast, stops counting (exclusive): the end of the clock's
    minute. Calls stamped later on the clock's day (an injected clock, or a clock behind
    cursor.com's) are not spent yet; whole minutes, as the elapsed time below, so a command
    started at an injected clock answers alike for its first minute."""
    return (now_ms // MINUTE_MS + 1) * MINUTE_MS


def project_cost(
    days: Mapping[date, DayFigures], cycle: Cycle, now_ms: int, start_ms: int, today: date
) -> Projection:
    """The cycle's cost at its end from the days up to `today` (`start_ms`: local midnight
    starting the cycle; `now_ms`: the clock). Never below what is spent."""
    # whole minutes: a command started at an injected clock answers alike for its first minute
    elapsed = max((now_ms - start_ms) // MINUTE_MS * MINUTE_MS / DAY_MS, 1e-6)
    elapsed_days = (today - cycle.start).days
    today_share = min(max(elapsed - elapsed_days, 1e-6), 1.0)
    spent = sum(f.cost for d, f in days.items() if cycle.start <= d <= today)
    remaining = max(cycle.days - elapsed, 0.0)
    rate = (
        CYCLE_WEIGHT * spent / elapsed
        + RECENT_WEIGHT * _recent_rate(days, today, today_share)
        + (1 - CYCLE_WEIGHT - RECENT_WEIGHT) * _long_rate(days, today, today_share)
    )
    rest = max(rate * remaining * _weekday_effect(days, today, cycle.end), 0.0)
    projected = spent + rest
    return Projection(
        spent=spent,
        projected=projected,
        low=spent,
        high=spent + max(rest, band_share(elapsed, remaining) * projected),
        remaining_days=remaining,
    )


def band_share(elapsed: float, remaining: float) -> float:
    """The band's height above what is spent, as a share of the projection: wide while little of
    the cycle has passed, BAND_MIN_SHARE once most of it has."""
    early: float = BAND_EARLY * (remaining / elapsed) ** BAND_EARLY_POWER
    return min(max(early, BAND_MIN_SHARE), BAND_MAX_SHARE)


def call_days(days: Mapping[date, DayFigures], cycle: Cycle, today: date) -> int:
    return sum(1 for d, f in days.items() if cycle.start <= d <= today and f.calls > 0)


def _basis(days: Mapping[date, DayFigures], cycle: Cycle, today: date) -> str:
    in_cycle = [f for d, f in days.items() if cycle.start <= d <= today]
    estimated = sum(f.estimated_cost for f in in_cycle)
    cost = sum(f.cost for f in in_cycle)
    if estimated <= 0:
        return "exact"
    return "estimated" if estimated >= cost else "mixed"


def _pools(
    pools: Sequence[Mapping[str, Any]], growth: float, today: date, cycle: Cycle
) -> list[dict[str, Any]]:
    """Each pool's percentage at the cycle's end (it grows with Cursor's spend) and the day it
    reaches 100 % at that pace (null when it does not within the cycle)."""
    remaining = (cycle.end - today).days
    out = []
    for pool in pools:
        used = pool.get("percentUsed")
        if not isinstance(used, int | float) or not math.isfinite(used):
            continue
        projected = used * growth
        runs_out: str | None = None
        if used >= 100:
            runs_out = today.isoformat()
        elif projected >= 100 and remaining > 0:
            per_day = (projected - used) / remaining
            runs_out = (today + timedelta(days=math.ceil((100 - used) / per_day))).isoformat()
        out.append(
            {
                "id": pool.get("id"),
                "label": pool.get("label"),
                "percentUsed": used,
                "projectedPercent": projected,
                "runsOutOn": runs_out,
            }
        )
    return out


def _on_demand(
    quota: Mapping[str, Any] | None, cursor: Projection, pools: list[dict[str, Any]], cycle: Cycle
) -> tuple[float | None, float | None]:
    """(projected on-demand spend, its limit) in USD: once included usage is out, the rest of
    Cursor's projected spend is billed on demand."""
    block = quota.get("onDemand") if quota else None
    if not isinstance(block, Mapping):
        return None, None
    used = float(block.get("usedCents") or 0) / 100
    limit_cents = block.get("limitCents")
    limit = float(limit_cents) / 100 if isinstance(limit_cents, int | float) else None
    rest = cursor.projected - cursor.spent
    dates = [p["runsOutOn"] for p in pools if p["runsOutOn"]]
    if used > 0 or any(p["percentUsed"] >= 100 for p in pools):
        return used + rest, limit
    if dates and cursor.remaining_days > 0:
        after = (cycle.end - date.fromisoformat(min(dates))).days + 1
        return used + rest * min(after / cursor.remaining_days, 1.0), limit
    return used, limit


def project(
    days: Mapping[date, DayFigures],
    cycle: Cycle,
    *,
    today: date,
    now_ms: int,
    start_ms: int,
    cursor_days: Mapping[date, DayFigures] | None = None,
    quota: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The status object's `forecast`; None before the cycle's third local day with calls.

    `days`: what the status bar counts, by local day (earlier cycles' days feed the recent
    rate); `cursor_days`: Cursor's part alone (pools and on-demand), `days` when not given;
    `quota`: the `status.quota` object or None.
    """
    if call_days(days, cycle, today) < MIN_CALL_DAYS:
        return None
    total = project_cost(days, cycle, now_ms, start_ms, today)
    cursor_series = cursor_days if cursor_days is not None else days
    cursor = project_cost(cursor_series, cycle, now_ms, start_ms, today)
    growth = cursor.projected / cursor.spent if cursor.spent > 0 else 1.0
    readable = quota if quota and quota.get("available") is True else None
    raw_pools = readable.get("pools") if readable else None
    pools = _pools(raw_pools if isinstance(raw_pools, list) else [], growth, today, cycle)
    on_demand, limit = _on_demand(readable, cursor, pools, cycle)
    return {
        "cycleEnd": cycle.end.isoformat(),
        "projectedCost": total.projected,
        "low": total.low,
        "high": total.high,
        "basis": _basis(days, cycle, today),
        "pools": pools,
        "projectedOnDemand": on_demand,
        "onDemandLimit": limit,
    }


def _money(usd: float, estimated: bool) -> str:
    return ("~" if estimated else "") + format_money(usd)


def forecast_lines(forecast: Mapping[str, Any] | None) -> list[str]:
    """The forecast for a person: the tooltip's line first, then the pools and on-demand."""
    if not forecast:
        return [f"No forecast yet: forecast from the {MIN_CALL_DAYS}rd day with usage in the cycle"]
    approx = forecast["basis"] != "exact"
    end = date.fromisoformat(forecast["cycleEnd"])
    lines = [
        f"At this pace: {_money(forecast['projectedCost'], approx)} by {end:%b} {end.day} "
        f"({_money(forecast['low'], approx)}–{_money(forecast['high'], approx)}); "
        f"basis {forecast['basis']}"
    ]
    for pool in forecast["pools"]:
        runs_out = pool["runsOutOn"]
        tail = f", runs out on {runs_out}" if runs_out else ""
        lines.append(
            f"{pool['label']}: {pool['percentUsed']:.0f}% used, "
            f"{pool['projectedPercent']:.0f}% by the cycle's end{tail}"
        )
    if forecast["projectedOnDemand"] is not None:
        limit = forecast["onDemandLimit"]
        cap = f" of your {_money(limit, False)} limit" if limit is not None else ""
        lines.append(f"On-demand: {_money(forecast['projectedOnDemand'], approx)}{cap}")
    return lines
