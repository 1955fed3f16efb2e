"""Backtest of the cycle forecast over the daily series of real usage exports (issue 38).

    python bench/forecast.py [CSV ...]     (default: ../shared/data/real-csv/*.csv)

Each export is imported into a fresh cache folder the way `codeburn import cursor` does, and its
days are read back through the usage service (the figures the status bar shows). Cycles are
calendar months; a cycle is scored when the export covers it whole. For every day d from the 5th
of such a cycle on, the clock stands at 23:59:00 local of day d−1 and only the days before d are
given to `codeburn.server.service.forecast.project`, the function `codeburn forecast` and the
status object call. The forecast is compared with the cycle's actual total.

Printed per export, over the days with a forecast: the dollar-weighted error Σ|f−a|/Σa, the naive
linear projection's (spent × cycle days ÷ elapsed days), the share of days whose band holds the
actual total, the median band width (high − low)/projected, and the share of scored days that
had a forecast, with how many the rule "no forecast before the cycle's 3rd local day with calls"
allows at all (days with calls by the end of day d−1). Targets (docs/forecast.md): error below
naive, coverage ≥ 80 %, median width ≤ 60 %, forecast share ≥ 80 %. Exits 1 when export 01
misses one.

The process's time zone is the local zone (`TZ=UTC python bench/forecast.py` for UTC days).
"""

from __future__ import annotations

import argparse
import calendar
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
DEFAULT_DIR: Final = HERE.parent.parent / "shared" / "data" / "real-csv"
FIRST_SCORED_DAY: Final = 5
CLOCK_SECONDS: Final = 23 * 3600 + 59 * 60  # 23:59:00 local: the end of day d−1
TARGET_SHARE: Final = 0.8
TARGET_WIDTH: Final = 0.6


@dataclass
class Score:
    scored_days: int = 0
    forecast_days: int = 0
    error: float = 0.0
    naive_error: float = 0.0
    actual: float = 0.0
    held: int = 0
    widths: list[float] | None = None
    cycles: int = 0
    allowed: int = 0
    """Scored days whose cycle had 3 days with calls by the end of day d−1 (the rule's ceiling)."""

    def row(self, name: str) -> str:
        if not self.cycles:
            return f"{name:<52} {'no full cycle':>10}"
        if not self.forecast_days:
            return f"{name:<52} {'no forecast':>10}"
        widths = self.widths or [0.0]
        return (
            f"{name:<52} {self.cycles:>6} {self.error / self.actual:>8.1%} "
            f"{self.naive_error / self.actual:>8.1%} {self.held / self.forecast_days:>8.1%} "
            f"{statistics.median(widths):>8.1%} "
            f"{self.forecast_days / self.scored_days:>7.1%} "
            f"({self.forecast_days}/{self.scored_days}; the rule allows {self.allowed})"
        )

    def meets(self) -> bool:
        return (
            self.forecast_days > 0
            and self.error < self.naive_error
            and self.held / self.forecast_days >= TARGET_SHARE
            and statistics.median(self.widths or [1.0]) <= TARGET_WIDTH
            and self.forecast_days / self.scored_days >= TARGET_SHARE
        )


def clock_ms(day: date) -> int:
    """The bench's clock for "the end of `day`": 23:59:00 local (what a test gives CODEBURN_NOW)."""
    from codeburn.providers import local_midnight_ms  # noqa: PLC0415

    return local_midnight_ms(day) + CLOCK_SECONDS * 1000


def series(csv: Path, folder: Path) -> tuple[dict[date, object], date, date] | str:
    """The export's days (figures of the status bar) and the local days it covers, or why not."""
    os.environ["CODEBURN_CACHE_DIR"] = str(folder)
    os.environ["CODEBURN_CONFIG_DIR"] = str(folder)
    from codeburn.providers import (  # noqa: PLC0415
        ONE_SHOT,
        CodeBurnError,
        local_day,
        parse_iso_ms,
        today,
    )
    from codeburn.server.service import UsageService  # noqa: PLC0415
    from codeburn.server.service.report import day_figures  # noqa: PLC0415

    service = UsageService(folder / "no-cursor.vscdb", cache_dir=folder, plan=ONE_SHOT)
    try:
        summary = service.import_csv(csv)
    except CodeBurnError as exc:
        reason = str(exc)
        if "team export" in reason:
            return "not imported: a team export of several people (one person's usage only)"
        return f"not imported: {reason[:60]}"
    start_ms = parse_iso_ms(summary["coverage"]["start"] or "")
    end_ms = parse_iso_ms(summary["coverage"]["end"] or "")
    if start_ms is None or end_ms is None:
        return "nothing imported"
    first, last = local_day(start_ms), local_day(end_ms)
    collected = service.collect(first, min(last, today()))
    return day_figures(collected.days), first, last


def score(days: dict[date, object], first: date, last: date) -> Score:
    from codeburn.providers import local_midnight_ms  # noqa: PLC0415
    from codeburn.server.service.forecast import (  # noqa: PLC0415
        MIN_CALL_DAYS,
        Cycle,
        DayFigures,
        call_days,
        project,
    )

    figures: dict[date, DayFigures] = {d: f for d, f in days.items() if isinstance(f, DayFigures)}
    result = Score(widths=[])
    month = date(first.year, first.month, 1)
    while month <= last:
        end = month.replace(day=calendar.monthrange(month.year, month.month)[1])
        if month >= first and end <= last:
            result.cycles += 1
            cycle = Cycle(month, end, "calendar")
            actual = sum(f.cost for d, f in figures.items() if month <= d <= end)
            for n in range(FIRST_SCORED_DAY, end.day + 1):
                d = month.replace(day=n)
                yesterday = d - timedelta(days=1)
                before = {k: f for k, f in figures.items() if k < d}
                result.scored_days += 1
                result.allowed += call_days(before, cycle, yesterday) >= MIN_CALL_DAYS
                forecast = project(
                    before,
                    cycle,
                    today=yesterday,
                    now_ms=clock_ms(yesterday),
                    start_ms=local_midnight_ms(month),
                )
                if forecast is None:
                    continue
                spent = sum(f.cost for k, f in before.items() if k >= month)
                naive = spent * cycle.days / (n - 1)
                projected = forecast["projectedCost"]
                result.forecast_days += 1
                result.error += abs(projected - actual)
                result.naive_error += abs(naive - actual)
                result.actual += actual
                result.held += forecast["low"] - 1e-9 <= actual <= forecast["high"] + 1e-9
                result.widths.append(
                    (forecast["high"] - forecast["low"]) / projected if projected > 0 else 0.0
                )
        month = end + timedelta(days=1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", nargs="*", type=Path)
    args = parser.parse_args(argv)
    files = args.csv or sorted(DEFAULT_DIR.glob("*.csv"))
    print(
        f"{'export':<52} {'cycles':>6} {'error':>8} {'naive':>8} {'held':>8} "
        f"{'width':>8} {'share':>7}"
    )
    ok = True
    for csv in files:
        with tempfile.TemporaryDirectory(prefix="codeburn-forecast-") as tmp:
            got = series(csv, Path(tmp))
        if isinstance(got, str):
            print(f"{csv.name:<52} {got}")
            continue
        result = score(*got)
        print(result.row(csv.name))
        if csv.name.startswith("01_") and not result.meets():
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
