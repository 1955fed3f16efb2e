"""Named report periods at fixed dates: month ends, year ends, leap years (never today's date)."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from codeburn.server.cli.main import main
from codeburn.server.service.periods import PeriodError, named_period, resolve_period
from tests.usage_fixtures import isolated_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("name", "today", "start", "end"),
    [
        ("month", date(2026, 12, 1), date(2026, 12, 1), date(2026, 12, 1)),  # the 1st: one day
        ("month", date(2026, 12, 31), date(2026, 12, 1), date(2026, 12, 31)),
        ("lastmonth", date(2026, 12, 1), date(2026, 11, 1), date(2026, 11, 30)),
        ("lastmonth", date(2026, 12, 31), date(2026, 11, 1), date(2026, 11, 30)),
        ("lastmonth", date(2027, 1, 1), date(2026, 12, 1), date(2026, 12, 31)),
        ("lastmonth", date(2026, 3, 15), date(2026, 2, 1), date(2026, 2, 28)),
        ("lastmonth", date(2028, 3, 31), date(2028, 2, 1), date(2028, 2, 29)),  # leap year
        ("30days", date(2026, 12, 1), date(2026, 11, 1), date(2026, 12, 1)),
        ("30days", date(2026, 3, 1), date(2026, 1, 30), date(2026, 3, 1)),
        ("week", date(2027, 1, 3), date(2026, 12, 27), date(2027, 1, 3)),
    ],
)
def test_named_periods(name: str, today: date, start: date, end: date) -> None:
    period = named_period(name, today)
    assert (period.label, period.start, period.end) == (name, start, end)


def test_an_unknown_period_names_the_known_ones() -> None:
    with pytest.raises(PeriodError, match="lastmonth"):
        resolve_period("last-month", None, None, date(2026, 12, 1))


@pytest.mark.clock
def test_the_cli_reports_last_month(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "no-cursor" / "state.vscdb"
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(missing))
    argv = ["--period", "lastmonth", "--format", "json"]
    assert main(["report", *argv]) == 0
    period = json.loads(capsys.readouterr().out)["period"]
    first, last = date.fromisoformat(period["from"]), date.fromisoformat(period["to"])
    assert period["label"] == "lastmonth" and first.day == 1  # a whole calendar month
    assert (last.year, last.month) == (first.year, first.month) and (last + DAY).day == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["--to", "9999-12-31"],
        ["--from", "9999-12-31", "--to", "9999-12-31"],
        ["--from", "0001-01-01"],
        ["--from", "1999-12-31", "--to", "2000-01-01"],
        ["--from", "2101-01-01", "--to", "2101-01-02"],
    ],
)
@pytest.mark.clock
def test_days_outside_2000_to_2100_are_one_line_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    """`--to 9999-12-31` raised OverflowError (issue 20, item 6)."""
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "no-cursor" / "state.vscdb"
    assert main(["report", *argv, "--cursor-db", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("codeburn report:")
    assert "outside 2000–2100" in err


@pytest.mark.clock
def test_the_first_and_last_day_of_the_bound_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "no-cursor" / "state.vscdb"
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(missing))
    argv = ["--from", "2000-01-01", "--to", "2100-12-31", "--format", "json"]
    assert main(["report", *argv]) == 0
    period = json.loads(capsys.readouterr().out)["period"]
    assert (period["from"], period["to"]) == ("2000-01-01", "2100-12-31")
