"""`codeburn demo --sample` at fixed moments: a first run shows the whole sample on any day.

Each run is a real CLI subprocess with its clock set by `CODEBURN_NOW` and its zone by `TZ`; the
periods and the export's days below are worked out by hand for each moment.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from codeburn.providers import localtime

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


CLI = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
MOMENTS = [
    # (CODEBURN_NOW, TZ, last 30 days, this month, export days)
    (
        "2026-12-01T10:00:00Z",  # the 1st of a month: this month is one day old
        "UTC",
        ("2026-11-01", "2026-12-01"),
        ("2026-12-01", "2026-12-01"),
        ("2026-11-22", "2026-11-24"),
    ),
    (
        "2026-11-30T23:00:00Z",  # the last day of a month
        "UTC",
        ("2026-10-31", "2026-11-30"),
        ("2026-11-01", "2026-11-30"),
        ("2026-11-21", "2026-11-23"),
    ),
    (
        "2027-01-01T12:00:00Z",  # 17:30 on 1 January in Kolkata
        "Asia/Kolkata",
        ("2026-12-02", "2027-01-01"),
        ("2027-01-01", "2027-01-01"),
        ("2026-12-23", "2026-12-25"),
    ),
    (
        "2026-11-01T12:00:00Z",  # 04:00 PST, the day Los Angeles leaves daylight saving time
        "America/Los_Angeles",
        ("2026-10-02", "2026-11-01"),
        ("2026-11-01", "2026-11-01"),
        ("2026-10-23", "2026-10-25"),
    ),
]


def run_demo(tmp_path: Path, now: str, tz: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_")}
    if now:
        env["CODEBURN_NOW"] = now
    env.update(
        TZ=tz,
        HOME=str(tmp_path / "home"),  # no Cursor installed here
        CODEBURN_CURSOR_DB=str(tmp_path / "no-cursor" / "state.vscdb"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        XDG_CACHE_HOME=str(tmp_path / "home" / ".cache"),
        TMPDIR=str(tmp_path / "tmp"),
        COLUMNS="200",
    )
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", CLI, "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard, not a performance limit
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # the sample folder is removed afterwards
    return done.stdout


# The clock seam (`CODEBURN_NOW`) comes with the suite-wide clock work of issue 10; until it is
# on the branch these runs would use the real clock, so they wait for it instead of lying.
@pytest.mark.skipif(not hasattr(localtime, "CLOCK_ENV"), reason="needs the CODEBURN_NOW seam")
@pytest.mark.parametrize(("now", "tz", "thirty", "month", "export"), MOMENTS)
def test_a_first_demo_shows_the_whole_sample_on_any_day(
    tmp_path: Path,
    now: str,
    tz: str,
    thirty: tuple[str, str],
    month: tuple[str, str],
    export: tuple[str, str],
) -> None:
    out = run_demo(tmp_path, now, tz)
    assert "No Cursor installation found: sample data in both of Cursor's storage layouts" in out
    second = out.index("Sample 2 of 2 — Cursor 3.x layout")
    for sample in (out[:second], out[second:]):
        head = f"CodeBurn — last 30 days ({thirty[0]} – {thirty[1]}, "
        assert head in sample
        assert "No usage in this period" not in sample
        figures = r"~\$[\d,.]+ · [\d,]+ calls( \(all estimated\)|\n  = .+)"
        days = month[0] if month[0] == month[1] else f"{month[0]} – {month[1]}"  # one day: one date
        line = rf"This month \({days}\): ({figures}|no usage yet)$"
        assert re.search(line, sample, re.MULTILINE)
        assert re.search(r"^~?\$[\d,.]+ today · ~?\$[\d,.]+ month$", sample, re.MULTILINE)
    assert "(imported)" not in out[second:]  # sample 1's export stays in sample 1
    bubbles = out[:second]
    assert "150 conversations" in bubbles
    events = re.search(rf"a usage export of (\d+) events for {export[0]} – {export[1]}", bubbles)
    assert events is not None
    thirty_days = bubbles[bubbles.index("CodeBurn — last 30 days") : bubbles.index("This month (")]
    # The export's rows are stamped inside local turns: nearly all land on this machine's
    # projects (by time), and only what two turns could both claim stays "Cursor (imported)".
    imported = re.search(
        r"^Cursor \(imported\)\s+│\s+~?\$[\d,.]+\s+│\s+([\d,]+) ", thirty_days, re.M
    )
    left = int(imported.group(1).replace(",", "")) if imported else 0
    assert 0 <= left < int(events.group(1)) // 4
    assert "web-app" in thirty_days and "-home-dev-web-app" not in thirty_days  # folder names
    # the export's days are inside: its exact figures and the local estimates are both there
    assert_total_adds_up(thirty_days)
    # sample 2: Cursor's estimates, and Claude Code and Codex logs' exact tokens at list price
    sample2 = out[second:]
    assert re.search(r"^Claude Code +│ +\$[\d,.]+ ", sample2, re.M), sample2
    assert re.search(r"^Codex +│ +\$[\d,.]+ ", sample2, re.M), sample2
    split = re.search(
        r"^Total ~\$(?P<total>[\d,.]+) .*\n  = \$(?P<list>[\d,.]+) exact tokens at list price"
        r" \+ ~\$(?P<est>[\d,.]+) estimated$",
        sample2,
        re.M,
    )
    assert split is not None, sample2
    total, listed, est = (Decimal(split[k].replace(",", "")) for k in ("total", "list", "est"))
    assert abs(listed + est - total) <= Decimal("0.01") and listed > 0 and est > 0


@pytest.mark.clock
def test_the_demo_reports_the_last_30_days_with_its_export(tmp_path: Path) -> None:
    """At the machine's own clock: true on every date (no date is asserted)."""
    out = run_demo(tmp_path, os.environ.get("CODEBURN_NOW", ""), os.environ.get("TZ", "UTC"))
    bubbles = out[: out.index("Sample 2 of 2")]
    thirty_days = bubbles[
        bubbles.index("CodeBurn — last 30 days (") : bubbles.index("This month (")
    ]
    assert_total_adds_up(thirty_days)


SPLIT = re.compile(
    r"^Total ~\$(?P<total>[\d,.]+)  [\d,]+ calls, [\d,]+ sessions\n"
    r"  = \$(?P<billed>[\d,.]+) billed by Cursor \+ \$(?P<list>[\d,.]+) exact tokens at list "
    r"price \+ ~\$(?P<estimated>[\d,.]+) estimated$",
    re.MULTILINE,
)


def assert_total_adds_up(text: str, single: str | None = None) -> None:
    """The total's three parts, as printed, add up to the total as printed (issue 18, item 5)."""
    if single is not None:
        assert re.search(
            rf"^Total ~\$[\d,.]+  [\d,]+ calls, [\d,]+ sessions \({single}\)$", text, re.M
        )
        return
    found = SPLIT.search(text)
    assert found is not None, text
    total, *parts = (
        Decimal(found[k].replace(",", "")) for k in ("total", "billed", "list", "estimated")
    )
    assert sum(parts) == total and all(p > 0 for p in parts)
