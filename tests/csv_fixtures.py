"""Real Cursor usage export files for tests (current, team and older header variants).

Shared by the CSV parser, import store, sync and server tests:

    from tests.csv_fixtures import ExportRow, write_export, export_bytes, iso_local, spec_rows
"""

from __future__ import annotations

import csv
import io
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from codeburn.providers.localtime import iso_utc, now_ms

CURRENT_COLUMNS = (
    "Date",
    "Cloud Agent ID",
    "Automation ID",
    "Kind",
    "Model",
    "Max Mode",
    "Input (w/ Cache Write)",
    "Input (w/o Cache Write)",
    "Cache Read",
    "Output Tokens",
    "Total Tokens",
    "Cost",
)
# Team export: the member's e-mail right after Date.
TEAM_COLUMNS = ("Date", "User", *CURRENT_COLUMNS[1:])
# Before Cloud Agent ID / Automation ID existed.
NO_AGENT_COLUMNS = tuple(c for c in CURRENT_COLUMNS if c not in ("Cloud Agent ID", "Automation ID"))
# The oldest export: no Kind / Max Mode either, plus a "Cost to you" column.
OLDEST_COLUMNS = (
    "Date",
    "Model",
    "Input (w/ Cache Write)",
    "Input (w/o Cache Write)",
    "Cache Read",
    "Output Tokens",
    "Total Tokens",
    "Cost",
    "Cost to you",
)
VARIANTS: dict[str, tuple[str, ...]] = {
    "current": CURRENT_COLUMNS,
    "team": TEAM_COLUMNS,
    "no-agent": NO_AGENT_COLUMNS,
    "oldest": OLDEST_COLUMNS,
}
# Older and plan-specific layouts seen in real exports (tests/data/real-csv).
REAL_LAYOUTS: dict[str, tuple[str, ...]] = {
    "requests": (*CURRENT_COLUMNS[:-1], "Requests"),
    "usage-tokens": (
        "Date", "User", "Kind", "Model", "Input (w/ Cache Write)", "Input (w/o Cache Write)",
        "Cache Read", "Output", "Total Tokens", "Cost ($)",
    ),
    "usage-details": ("Date", "User", "Kind", "Max Mode", "Model", "Tokens", "Cost ($)"),
}  # fmt: skip
USER_EMAIL = "dev.person@example.com"


@dataclass(frozen=True)
class ExportRow:
    """One export row; token cells may be ints or raw strings ("" = empty, "12a" = broken)."""

    date: str
    model: str
    cache_write: int | str = 0
    input: int | str = 0
    cache_read: int | str = 0
    output: int | str = 0
    cost: str = "Included"
    kind: str = "Included"
    max_mode: str = "No"
    cloud_agent_id: str = ""
    automation_id: str = ""
    user: str = USER_EMAIL
    total: int | str | None = None  # None: the sum of the four token cells

    @property
    def tokens(self) -> int:
        return sum(_count(v) for v in (self.cache_write, self.input, self.cache_read, self.output))

    def cells(self) -> dict[str, str]:
        total = self.tokens if self.total is None else self.total
        return {
            "Date": self.date,
            "User": self.user,
            "Cloud Agent ID": self.cloud_agent_id,
            "Automation ID": self.automation_id,
            "Kind": self.kind,
            "Model": self.model,
            "Max Mode": self.max_mode,
            "Input (w/ Cache Write)": str(self.cache_write),
            "Input (w/o Cache Write)": str(self.input),
            "Cache Read": str(self.cache_read),
            "Output Tokens": str(self.output),
            "Total Tokens": str(total),
            "Cost": self.cost,
            "Cost to you": self.cost,
            "Cost ($)": self.cost,
            "Requests": "1",
            "Output": str(self.output),
            "Tokens": f"{self.tokens:,}",
        }


def _count(value: int | str) -> int:
    if isinstance(value, int):
        return value
    return int(value) if value.strip().isdigit() else 0


def export_text(
    rows: Sequence[ExportRow],
    variant: str = "current",
    *,
    crlf: bool = True,
    quote_all: bool = True,
) -> str:
    """The CSV text Cursor's dashboard would produce for `rows` in one header variant."""
    columns = VARIANTS.get(variant) or REAL_LAYOUTS[variant]
    out = io.StringIO()
    writer = csv.writer(
        out,
        lineterminator="\r\n" if crlf else "\n",
        quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL,
    )
    writer.writerow(columns)
    for row in rows:
        cells = row.cells()
        writer.writerow([cells[c] for c in columns])
    return out.getvalue()


def export_bytes(
    rows: Sequence[ExportRow],
    variant: str = "current",
    *,
    bom: bool = True,
    crlf: bool = True,
    quote_all: bool = True,
) -> bytes:
    text = export_text(rows, variant, crlf=crlf, quote_all=quote_all)
    return ("\ufeff" if bom else "").encode() + text.encode("utf-8")


def write_export(
    path: Path,
    rows: Sequence[ExportRow],
    variant: str = "current",
    *,
    mtime_ms: int | None = None,
    bom: bool = True,
    crlf: bool = True,
    quote_all: bool = True,
) -> Path:
    """Write an export file; `mtime_ms` sets its modification time (coverage never passes it).

    By default that is now by the suite's clock, which the kernel's file times do not follow.
    """
    path.write_bytes(export_bytes(rows, variant, bom=bom, crlf=crlf, quote_all=quote_all))
    ns = (now_ms() if mtime_ms is None else mtime_ms) * 1_000_000
    os.utime(path, ns=(ns, ns))
    return path


def local_ms(day: date, hour: int = 12, minute: int = 0, second: int = 0, ms: int = 0) -> int:
    """Epoch ms of a local wall-clock time (honours TZ after time.tzset())."""
    base = time.mktime((day.year, day.month, day.day, hour, minute, second, 0, 0, -1))
    return int(base) * 1000 + ms


def iso_local(day: date, hour: int = 12, minute: int = 0, second: int = 0, ms: int = 0) -> str:
    """A Date cell (ISO UTC with ms and Z) for a local wall-clock time."""
    return iso_utc(local_ms(day, hour, minute, second, ms))


def spec_rows(day1: date) -> list[ExportRow]:
    """docs/import.md's five rows on three consecutive local days starting `day1`."""
    day2, day3 = day1 + timedelta(days=1), day1 + timedelta(days=2)
    return [
        ExportRow(
            iso_local(day1, 9), "auto", cache_write=10, input=100, cache_read=5000, output=50
        ),
        ExportRow(
            iso_local(day1, 15),
            "claude-opus-5-thinking-high",
            input=200,
            cache_read=8000,
            output=90,
            cost="$1.25",
            kind="On-Demand",
        ),
        ExportRow(
            iso_local(day2, 11), "cursor-grok-4.6-high", input=300, cache_read=1000, output=20
        ),
        ExportRow(iso_local(day3, 10), "grok-bot-automation", input=40, cache_read=70000, output=7),
        ExportRow(
            iso_local(day3, 16),
            "composer-2.5-fast",
            cache_write="",
            input="",
            cache_read="",
            output="",
            cost="Free",
        ),
    ]


def spec_day4_row(day4: date) -> ExportRow:
    """The one new row of the overlapping second export."""
    return ExportRow(
        iso_local(day4, 14),
        "claude-4.6-sonnet",
        input=500,
        cache_read=2000,
        output=60,
        cost="$0.11",
        kind="On-Demand",
    )
