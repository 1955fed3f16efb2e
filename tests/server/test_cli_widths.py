"""Tables fit the terminal: at 60, 80 and 120 columns no cost or total is ever cut.

The real export 01 (tests/data/real-csv, SOURCES.md) is imported into a private cache by the real
CLI, in subprocesses with a fixed clock; every cost printed in the text report is compared with
the same report's JSON figures, formatted. The demo's sample is checked the same way for shape.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.text import Text

from codeburn.server.cli.lines import money
from codeburn.server.cli.text import Column, break_offsets, fit_widths

CLI = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
EXPORT = Path(__file__).parents[1] / "data" / "real-csv" / "01_w366813640_requests_col.csv"
NOW = "2026-05-20T12:00:00Z"  # the export runs 2025-04-16 – 2026-05-13: both sides of the floor
WIDTHS = (60, 80, 120)
# the first column of each table → the report's list it shows, and how many rows it lists
TABLES = {"Provider": ("providers", 12), "Model": ("models", 12), "Project": ("projects", 12)}
TABLES["Title"] = ("conversations", 5)
WHOLE_MONEY = re.compile(r"^~?(\$[\d,]+(\.\d+)?|<\$0\.0001)$")


def _env(tmp_path: Path, now: str = NOW) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_")}
    env.pop("COLUMNS", None)
    env.update(
        CODEBURN_CACHE_DIR=str(tmp_path / "cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / "config"),
        CODEBURN_CURSOR_SYNC="0",
        CODEBURN_CURSOR_DB=str(tmp_path / "no-cursor" / "state.vscdb"),
        CODEBURN_CURSOR_HOME=str(tmp_path / "no-cursor-home"),
        CODEBURN_NOW=now,
        TZ="UTC",
        HOME=str(tmp_path / "home"),
        TMPDIR=str(tmp_path),
    )
    return env


def _run(env: dict[str, str], *args: str, columns: int | None = None) -> str:
    if columns is not None:
        env = {**env, "COLUMNS": str(columns)}
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard, not a performance limit
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def real_export(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = _env(tmp_path_factory.mktemp("real01"))
    assert "2,335 new events" in _run(env, "import", "cursor", str(EXPORT))
    return env


def tables(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Each table of a text report by its first header: its headers and its rows' cells."""
    found: dict[str, tuple[list[str], list[list[str]]]] = {}
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if "┃" not in line:
            continue
        heads = [h.strip() for h in line.split("┃")]
        rows = []
        for row in lines[n + 2 :]:
            if "│" not in row:
                break
            rows.append([c.strip() for c in row.split("│")])
        found[heads[0]] = (heads, rows)
    return found


def assert_costs_whole(
    text: str, report: dict[str, Any], columns: int, *, prose_fits: bool = True
) -> None:
    """`prose_fits`: every line fits `columns`, not only the tables' (but for a word longer
    than a line, a path: it is never broken)."""
    for line in text.splitlines():
        if "│" in line or "┃" in line:
            assert cell_len(line) <= columns, line
        elif prose_fits:
            assert cell_len(line) <= columns or " " not in line.strip(), line
    for warning in report["warnings"]:  # wrapped at spaces only: every word whole
        words = set(" ".join(text.split()).split(" "))
        assert set(f"! {warning}".split()) <= words
    shown = tables(text)
    assert {"Provider", "Model", "Project"} <= set(shown)
    for first, (heads, rows) in shown.items():
        key, limit = TABLES[first]
        expected = [money(row) for row in report[key][:limit]]
        costs = [row[heads.index("Cost")] for row in rows]
        if len(report[key]) > limit:
            assert rows[-1][0] == f"… {len(report[key]) - limit} more"
            expected.append("")
        assert costs == expected, first
        assert heads.index("Cost") > 0  # the cost column is always there
    total = re.search(r"^Total (\S+)  ", text, re.MULTILINE)
    assert total is not None and total.group(1) == money(report["totals"])


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("period", ["all", "30days"])
def test_every_cost_of_the_real_export_is_whole_at_each_width(
    real_export: dict[str, str], columns: int, period: str
) -> None:
    report = eval_json(_run(real_export, "report", "--period", period, "--format", "json"))
    assert report["totals"]["calls"] > 0
    text = _run(real_export, "report", "--period", period, columns=columns)
    assert_costs_whole(text, report, columns)
    heads = tables(text)["Model"][0]
    # the same figures in each table (one provider here: no Provider column in the model table)
    assert tables(text)["Provider"][0][1:] == heads[1:] == tables(text)["Project"][0][1:]
    if columns >= 120:  # room for every column
        assert heads[1:] == [
            "Cost", "Calls", "Sessions", "Input", "Output", "Cache read", "Cache write"
        ]  # fmt: skip
    else:  # the less important columns give way first
        assert "Sessions" not in heads and "Calls" in heads


def eval_json(text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def test_a_pipe_without_columns_keeps_full_tables_and_unwrapped_lines(
    real_export: dict[str, str],
) -> None:
    report = eval_json(_run(real_export, "report", "--period", "all", "--format", "json"))
    text = _run(real_export, "report", "--period", "all")
    assert_costs_whole(text, report, 110, prose_fits=False)
    assert "Cache write" in tables(text)["Model"][0]
    # the warning of the missing database is one line, whatever its length
    warning = [line for line in text.splitlines() if line.startswith("! ")]
    assert warning == [f"! {report['warnings'][0]}"]


def test_all_covers_everything_held_and_says_what_shows_before_the_window(
    real_export: dict[str, str],
) -> None:
    report = eval_json(_run(real_export, "report", "--period", "all", "--format", "json"))
    assert report["period"]["from"] == "2025-04-16"  # the export's first event
    assert report["days"][0]["date"] == "2025-04-16"
    assert report["totals"]["calls"] == 2335
    text = _run(real_export, "report", "--period", "all")
    assert text.startswith("CodeBurn — all history (2025-04-16 – 2026-05-20, UTC)\n")
    assert "last 6 months" not in text
    notes = [line for line in text.splitlines() if line.startswith("Before 2025-11-20")]
    assert notes == [
        "Before 2025-11-20 (the 6-month window of Cursor's local files) only imported or "
        "synced usage and the days CodeBurn saved earlier show."
    ]
    # a period inside the window: no such line, and the same figures as before the change
    month = _run(real_export, "report", "--period", "month")
    assert "6-month window" not in month


def test_a_period_before_the_window_with_no_usage_says_why(tmp_path: Path) -> None:
    env = _env(tmp_path, now="2026-12-06T10:00:00Z")
    text = _run(env, "report", "--from", "2025-10-01", "--to", "2025-11-30")
    assert "No usage in this period. It lies before 2026-06-06, outside the 6-month window" in text
    assert "codeburn import cursor FILE" in text
    assert text.count("6-month window") == 1  # one line, not two


def test_a_one_day_period_prints_one_date_and_counts_agree(
    real_export: dict[str, str],
) -> None:
    text = _run(real_export, "report", "--from", "2026-05-13", "--to", "2026-05-13")
    assert text.startswith("CodeBurn — chosen days (2026-05-13, UTC)\n")
    today = _run(real_export, "today")
    assert today.startswith("CodeBurn — today (2026-05-20, UTC)\n")
    day = ("--from", "2025-04-16", "--to", "2025-04-16")
    report = eval_json(_run(real_export, "report", *day, "--format", "json"))
    assert report["totals"]["calls"] >= 1
    text = _run(real_export, "report", *day)
    calls, sessions = report["totals"]["calls"], report["totals"]["sessions"]
    said = f"{calls:,} call{'s' * (calls != 1)}, {sessions:,} session{'s' * (sessions != 1)}"
    assert said in text
    assert "1 calls" not in text and "1 sessions" not in text


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_demo_fits_and_never_cuts_a_cost(tmp_path: Path, columns: int) -> None:
    env = _env(tmp_path, now="2026-12-06T10:00:00Z")
    text = _run(env, "demo", "--sample", columns=columns)
    shown = 0
    for line in text.splitlines():
        assert cell_len(line) <= columns or " " not in line.strip(), line
    for sample in text.split("Sample 2 of 2"):
        for _first, (heads, rows) in tables(sample).items():
            at = heads.index("Cost")
            for row in rows:
                if not row[0].startswith("… "):
                    assert WHOLE_MONEY.match(row[at]), row
                    shown += 1
    assert shown > 40
    for total in re.findall(r"^Total (\S+)  ", text, re.MULTILINE):
        assert WHOLE_MONEY.match(total)


@pytest.mark.parametrize("width", range(40, 131))
def test_names_give_way_and_figures_never_do(width: int) -> None:
    names = ["claude-opus-4-7-thinking-xhigh", "Opus 4.7 (Thinking, xhigh)", "x"]
    columns = [
        Column("Model", [Text(n) for n in names], shrink=20, cap=34),
        Column("Provider", ["Cursor Agent"] * 3, drop=5),
        Column("Cost", ["~$12,345", "$0.0045", "<$0.0001"], right=True),
        Column("Calls", ["1,234"] * 3, right=True, drop=6),
        Column("Sessions", ["12"] * 3, right=True, drop=0),
        Column("Cache write", ["1.2M"] * 3, right=True, drop=1),
    ]
    chosen = fit_widths(columns, width)
    used = sum(w for _c, w in chosen) + 3 * (len(chosen) - 1)
    assert used <= width
    sizes = {c.head: w for c, w in chosen}
    assert sizes["Cost"] == len("~$12,345")  # never cut
    assert sizes["Model"] >= min(20, width - 3 - 8)  # a name keeps a readable width
    if width >= 34 + 3 + 8 + 3 * 12 + 12 + 5 + 11:  # everything at its natural width
        assert len(chosen) == len(columns) and sizes["Model"] == 30
    dropped = [c.head for c in columns if c.head not in sizes]
    order = ["Sessions", "Cache write", "Provider", "Calls"]
    assert set(dropped) == set(order[: len(dropped)])  # in the drop order


def test_prose_breaks_at_spaces_and_never_inside_a_path() -> None:
    path = "/home/someone/.config/Cursor/User/globalStorage/state.vscdb;"
    text = f"! No Cursor data found at {path} showing imported usage only"
    lines = [text[a:b] for a, b in _spans(text, break_offsets(text, 30, 2))]
    assert [line.rstrip() for line in lines] == [
        "! No Cursor data found at", path, "showing imported usage only"
    ]  # fmt: skip
    assert break_offsets("short", 30) == []
    assert break_offsets("", 30) == []


def _spans(text: str, offsets: list[int]) -> list[tuple[int, int]]:
    bounds = [0, *offsets, len(text)]
    return list(itertools.pairwise(bounds))
