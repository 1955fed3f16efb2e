"""The cycle forecast (docs/forecast.md): its rules, the billing cycle it covers, and
`codeburn forecast --format json` at an injected clock giving what `bench/forecast.py` gives."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from datetime import date, timedelta
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codeburn.cache import write_cache_json
from codeburn.providers import iso_utc, local_midnight_ms
from codeburn.server.service.cycle import (
    QUOTA_FILE,
    cached_summary_cycle,
    calendar_cycle,
    cycle_from_summary,
)
from codeburn.server.service.forecast import (
    BAND_MAX_SHARE,
    BAND_MIN_SHARE,
    Cycle,
    DayFigures,
    forecast_lines,
    project,
)
from tests.usage_fixtures import isolated_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


ROOT = Path(__file__).resolve().parents[2]
EXPORT_01 = ROOT / "tests" / "data" / "real-csv" / "01_w366813640_requests_col.csv"
CLI = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
NOV = Cycle(date(2026, 11, 1), date(2026, 11, 30), "calendar")


def _run(days: dict[date, DayFigures], today: date, **kwargs: Any) -> dict[str, Any] | None:
    return project(
        days,
        NOV,
        today=today,
        now_ms=local_midnight_ms(today) + 86_000_000,
        start_ms=local_midnight_ms(NOV.start),
        **kwargs,
    )


def test_no_forecast_before_the_third_day_with_calls() -> None:
    days = {date(2026, 11, 2): DayFigures(4.0, 0.0, 3), date(2026, 11, 6): DayFigures(2.0, 0, 1)}
    assert _run(days, date(2026, 11, 9)) is None
    days[date(2026, 11, 9)] = DayFigures(0.0, 0.0, 2)  # calls that cost nothing count
    forecast = _run(days, date(2026, 11, 9))
    assert forecast is not None
    assert forecast["cycleEnd"] == "2026-11-30"
    assert 6.0 <= forecast["low"] <= forecast["projectedCost"] <= forecast["high"]
    assert forecast["projectedCost"] > 6.0  # spending went on: more is coming
    assert forecast["basis"] == "exact"
    assert forecast_lines(forecast)[0].startswith("At this pace: $")


def test_basis_and_the_estimated_sign() -> None:
    mixed = {date(2026, 11, d): DayFigures(2.0, 1.0 if d == 3 else 0.0, 1) for d in (1, 2, 3)}
    forecast = _run(mixed, date(2026, 11, 3))
    assert forecast is not None and forecast["basis"] == "mixed"
    assert "~$" in forecast_lines(forecast)[0]
    estimated = {date(2026, 11, d): DayFigures(2.0, 2.0, 1) for d in (1, 2, 3)}
    forecast = _run(estimated, date(2026, 11, 3))
    assert forecast is not None and forecast["basis"] == "estimated"


def _bursty(first: date, count: int) -> dict[date, DayFigures]:
    """Uneven days: quiet ones, small ones and a burst every week (a deterministic pattern)."""
    out = {}
    for n in range(count):
        cost = [0.0, 3.0, 0.0, 12.5, 1.0, 0.0, 40.0][n % 7] * (1 + (n % 5) / 4)
        out[first + timedelta(days=n)] = DayFigures(cost, 0.0, 1 if cost else 0)
    return out


def test_the_band_holds_the_projection_and_starts_at_what_is_spent() -> None:
    days = _bursty(date(2026, 9, 1), 91)
    widths = []
    for day in range(6, 31):
        today = date(2026, 11, day)
        known = {d: f for d, f in days.items() if d <= today}
        spent = sum(f.cost for d, f in known.items() if d >= NOV.start)
        forecast = _run(known, today)
        assert forecast is not None
        assert forecast["low"] == pytest.approx(spent)  # the rest of a cycle can be nothing
        assert forecast["low"] <= forecast["projectedCost"] <= forecast["high"]
        width = (forecast["high"] - forecast["low"]) / forecast["projectedCost"]
        assert BAND_MIN_SHARE - 1e-9 <= width <= BAND_MAX_SHARE + 1e-9
        widths.append(width)
    # wide while most of the cycle is to come, half the projection late in it
    assert widths[0] == pytest.approx(BAND_MAX_SHARE)
    assert widths[-1] == pytest.approx(BAND_MIN_SHARE)
    assert all(a >= b - 1e-9 for a, b in pairwise(widths))


def test_days_after_the_clock_change_nothing() -> None:
    days = _bursty(date(2026, 9, 1), 70)  # up to Nov 9
    today = date(2026, 11, 9)
    before = _run(days, today)
    assert before is not None
    later = dict(days)
    for n in range(1, 60):  # the rest of the cycle and the next one, heavy
        later[today + timedelta(days=n)] = DayFigures(500.0, 0.0, 9)
    assert _run(later, today) == before


def test_pools_run_out_and_on_demand_follows() -> None:
    first_day = date(2026, 9, 1)  # a steady $10 a day, also in the days before the cycle
    days = {first_day + timedelta(days=n): DayFigures(10.0, 0.0, 5) for n in range(71)}
    quota = {
        "available": True,
        "pools": [
            {"id": "cursor-models", "label": "Cursor models", "percentUsed": 48.0},
            {"id": "other-models", "label": "Other models", "percentUsed": 10.0},
        ],
        "onDemand": {"enabled": True, "usedCents": 0, "limitCents": 5000},
    }
    forecast = _run(days, date(2026, 11, 10), quota=quota)
    assert forecast is not None
    first, second = forecast["pools"]
    # $100 in 10 days at a steady pace: $300 by the 30th, so the pools triple; 48 % in 10 days
    # is 100 % after 20.8 (not on a day's edge, so a 25-hour day moves nothing)
    assert first["projectedPercent"] == pytest.approx(144.0, rel=0.01)
    assert first["runsOutOn"] == "2026-11-21"
    assert second["projectedPercent"] == pytest.approx(30.0, rel=0.01)
    assert second["runsOutOn"] is None
    assert forecast["onDemandLimit"] == 50.0
    # from late on the 21st, the rest is billed on demand: about 9.2 of the 20 days to come
    assert forecast["projectedOnDemand"] == pytest.approx(96.0, rel=0.1)
    unknown = _run(days, date(2026, 11, 10), quota={"available": False, "pools": []})
    assert unknown is not None
    assert (unknown["pools"], unknown["projectedOnDemand"], unknown["onDemandLimit"]) == (
        [],
        None,
        None,
    )


def test_cycle_from_the_usage_summary_rolls_on_and_survives_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = iso_utc(local_midnight_ms(date(2026, 10, 15)))
    end = iso_utc(local_midnight_ms(date(2026, 11, 15)))
    cycle = cycle_from_summary(start, end, date(2026, 11, 2))
    assert cycle == Cycle(date(2026, 10, 15), date(2026, 11, 14), "cursor")
    rolled = cycle_from_summary(start, end, date(2026, 12, 20))
    assert rolled == Cycle(date(2026, 12, 15), date(2027, 1, 14), "cursor")
    # a clock before the summary's cycle (behind cursor.com's): the cycle before it
    back = cycle_from_summary(start, end, date(2026, 10, 3))
    assert back == Cycle(date(2026, 9, 15), date(2026, 10, 14), "cursor")
    assert cycle_from_summary("soon", end, date(2026, 11, 2)) is None
    env = isolated_env(tmp_path, monkeypatch)
    assert cached_summary_cycle(date(2026, 11, 2)) is None
    env.cache.mkdir(parents=True, exist_ok=True)
    write_cache_json(
        env.cache / QUOTA_FILE,
        {"account": "a", "quota": {"billingCycleStart": start, "billingCycleEnd": end}},
    )
    assert cached_summary_cycle(date(2026, 11, 2)) == cycle
    assert calendar_cycle(date(2028, 2, 10)) == Cycle(
        date(2028, 2, 1), date(2028, 2, 29), "calendar"
    )


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_forecast", ROOT / "bench" / "forecast.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclass looks itself up there)
    spec.loader.exec_module(module)
    return module


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard
        check=False,
    )


@pytest.mark.clock
def test_cli_forecast_at_an_injected_clock_equals_the_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _bench()
    isolated_env(tmp_path, monkeypatch)
    folder = tmp_path / "bench"
    folder.mkdir()
    got = bench.series(EXPORT_01, folder)
    assert not isinstance(got, str), got
    days, first, last = got
    assert (first, last) == (date(2025, 4, 16), date(2026, 5, 13))
    d = date(2026, 4, 16)  # the backtest's day: clock at the end of the 15th, days before d
    yesterday = d - timedelta(days=1)
    expected = project(
        {k: f for k, f in days.items() if k < d},
        Cycle(date(2026, 4, 1), date(2026, 4, 30), "calendar"),
        today=yesterday,
        now_ms=bench.clock_ms(yesterday),
        start_ms=local_midnight_ms(date(2026, 4, 1)),
    )
    assert expected is not None

    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_")}
    env.update(
        CODEBURN_CACHE_DIR=str(tmp_path / "cli-cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / "cli-config"),
        CODEBURN_CURSOR_DB=str(tmp_path / "no-cursor.vscdb"),
        CODEBURN_CURSOR_SYNC="0",
        CODEBURN_NOW=iso_utc(bench.clock_ms(yesterday)),
        HOME=str(tmp_path / "home"),
    )
    done = _cli(env, "import", "cursor", str(EXPORT_01))
    assert done.returncode == 0, done.stderr
    done = _cli(env, "forecast", "--format", "json", "--no-sync")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    # the CLI's clock ticks on from CODEBURN_NOW; the forecast counts whole minutes, so within
    # its first minute the answer is the bench's to the last digit (a minute later: ~1e-5 off,
    # which a loaded machine may take)
    for key in ("projectedCost", "low", "high"):
        assert answer[key] == pytest.approx(expected[key], rel=1e-4), key
    rest = {k: v for k, v in answer.items() if k not in ("projectedCost", "low", "high")}
    assert rest == {k: v for k, v in expected.items() if k not in ("projectedCost", "low", "high")}
    assert answer["projectedCost"] > 0

    done = _cli(env, "report", "--period", "cycle", "--format", "json", "--no-sync")
    assert done.returncode == 0, done.stderr
    period = json.loads(done.stdout)["period"]
    assert (period["label"], period["from"], period["to"]) == ("cycle", "2026-04-01", "2026-04-15")


CSV_HEADER = (
    "Date,Cloud Agent ID,Automation ID,Kind,Model,Max Mode,Input (w/ Cache Write),"
    "Input (w/o Cache Write),Cache Read,Output Tokens,Total Tokens,Requests\n"
)


def _csv_row(ms: int, output_tokens: int) -> str:
    total = 40_000 + output_tokens
    return (
        f'"{iso_utc(ms)}","","","Included","claude-4-sonnet","No","20000","20000","0",'
        f'"{output_tokens}","{total}","1"\n'
    )


def _cli_forecast(
    tmp_path: Path, name: str, rows: list[str], clock: int, command: str = "forecast"
) -> dict[str, Any]:
    """`codeburn forecast --format json` (or `command`) at `clock` after importing `rows` into a
    fresh cache."""
    csv = tmp_path / f"{name}.csv"
    csv.write_text(CSV_HEADER + "".join(rows), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_")}
    env.update(
        CODEBURN_CACHE_DIR=str(tmp_path / name / "cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / name / "config"),
        CODEBURN_CURSOR_DB=str(tmp_path / "no-cursor.vscdb"),
        CODEBURN_CURSOR_SYNC="0",
        CODEBURN_NOW=iso_utc(clock),
        HOME=str(tmp_path / "home"),
    )
    done = _cli(env, "import", "cursor", str(csv))
    assert done.returncode == 0, done.stderr
    done = _cli(env, command, "--format", "json", "--no-sync")
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer is not None and (command != "forecast" or answer["projectedCost"] > 0)
    return answer


CLOCK = local_midnight_ms(date(2026, 11, 9)) + 10 * 3_600_000  # Nov 9, 10:00 local
KNOWN = [
    *(
        _csv_row(local_midnight_ms(date(2026, 11, d)) + 12 * 3_600_000, 30_000 * d)
        for d in (2, 4, 6, 8)
    ),
    _csv_row(CLOCK - 3_600_000, 50_000),
]


def _same_forecast(first: dict[str, Any], second: dict[str, Any]) -> None:
    for key in ("projectedCost", "low", "high"):
        assert second[key] == pytest.approx(first[key], rel=1e-4), key


def test_cli_forecast_ignores_the_days_after_the_clock(tmp_path: Path) -> None:
    """Heavy days after CODEBURN_NOW's day leave the forecast as it was (no look-ahead)."""
    later = [
        _csv_row(local_midnight_ms(date(2026, 11, d)) + 12 * 3_600_000, 900_000)
        for d in (10, 20, 30)
    ]
    known = _cli_forecast(tmp_path, "known", KNOWN, CLOCK)
    _same_forecast(known, _cli_forecast(tmp_path, "with-later", KNOWN + later, CLOCK))


def test_cli_forecast_ignores_events_later_on_the_clocks_day(tmp_path: Path) -> None:
    """Events later on the clock's own day are not spent yet (docs/forecast.md)."""
    later = [_csv_row(CLOCK + 3 * 3_600_000, 900_000)]
    known = _cli_forecast(tmp_path, "known", KNOWN, CLOCK)
    _same_forecast(known, _cli_forecast(tmp_path, "with-later", KNOWN + later, CLOCK))


def test_cli_status_counts_up_to_the_clock(tmp_path: Path) -> None:
    """The figures the forecast is made of: today's, the month's and the cycle's spend."""
    later = [_csv_row(CLOCK + 3 * 3_600_000, 900_000), _csv_row(CLOCK + 90_000, 900_000)]
    known = _cli_forecast(tmp_path, "known", KNOWN, CLOCK, "status")
    with_later = _cli_forecast(tmp_path, "with-later", KNOWN + later, CLOCK, "status")
    assert known["today"]["calls"] == 1 and known["today"]["cost"] > 0
    for block in ("today", "month", "cycle"):
        for key in ("cost", "calls"):
            assert with_later[block][key] == known[block][key], (block, key)
    assert with_later["forecast"] == known["forecast"]
