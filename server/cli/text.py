"""Text output for people: aligned tables, `~` before estimates, never a bare $0.00.

Data (model, project and provider names, messages) is printed as plain text: never read as
Rich markup or emoji codes, and with control characters shown as escapes (`\x1b`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Final

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from codeburn.providers import PROVIDER_NAMES, display_name, local_day, parse_iso_ms
from codeburn.server.cli.lines import (
    counted,
    empty_before_window,
    money,
    period_days,
    plain,
    split,
    status_lines,
    sync_line,
    sync_style,
    window_floor,
    window_line,
)
from codeburn.server.service import (
    format_money,
    format_tokens,
    local_estimate_note,
    period_title,
    title_text,
)

TOP_CONVERSATIONS = 5  # in the default text report; `--by conversation` lists the report's all


def _text(value: Any, style: str = "") -> Text:
    return Text(plain(value), style=style)


def _cut(value: Any) -> Text:
    """A name that a narrow column cuts short with `…` instead of wrapping."""
    return Text(plain(value), no_wrap=True, overflow="ellipsis")


def _line(value: Any, style: str = "") -> Text:
    return Text(plain(value), style=style)


MARKS: Final = ("! ", "· ")  # a warning's and a diagnostic's
_WORD = re.compile(r"\S+\s*")


def break_offsets(text: str, width: int, indent: int = 0) -> list[int]:
    """Where `text` breaks into lines of at most `width` cells: at spaces only, so that a
    word longer than a line (a path) stays whole on a line of its own. Lines after the first
    are `indent` cells narrower (they are indented as the first)."""
    offsets: list[int] = []
    start = 0
    for word in _WORD.finditer(text):
        limit = width - (indent if offsets else 0)
        end = word.start() + len(word.group().rstrip())
        if word.start() > start and cell_len(text[start:end]) > limit:
            offsets.append(word.start())
            start = word.start()
    return offsets


def say(out: Console, line: Text | str, style: str = "") -> None:
    """One line of prose for people: wrapped at spaces to the console's width, never inside a
    word or a path; continuation lines keep the first line's indent (under its text after a
    `! ` or `· ` mark). A console that does not wrap (a pipe without `COLUMNS`) prints it
    whole."""
    text = _line(line, style) if isinstance(line, str) else line
    if out.soft_wrap:
        out.print(text, soft_wrap=True)
        return
    indent = text.plain[: len(text.plain) - len(text.plain.lstrip(" "))]
    if text.plain.startswith(MARKS):
        indent = "  "
    for n, part in enumerate(text.divide(break_offsets(text.plain, out.width, len(indent)))):
        part.rstrip()
        out.print(Text(indent) + part if n else part, soft_wrap=True)


PIPE_WIDTH: Final = 110  # a pipe without COLUMNS: today's lines, tables at full width


def _columns_env() -> int | None:
    """`COLUMNS` when it is a usable width."""
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def make_console() -> Console:
    """The console of the text output; no markup, emoji or highlighting.

    A terminal: its width (or `COLUMNS`). A pipe: `COLUMNS` when set, else the old 110
    columns with prose never wrapped (a script reads one fact a line)."""
    options: dict[str, Any] = {"markup": False, "emoji": False, "highlight": False}
    out = Console(**options)
    if out.is_terminal:
        return out
    width = _columns_env()
    if width is not None:
        return Console(width=width, **options)
    return Console(width=PIPE_WIDTH, soft_wrap=True, **options)


@dataclass(slots=True)
class Column:
    """A table column. `drop`: the order in which columns give way to a narrow console
    (lowest first; None never: names and figures that matter, the cost above all).
    `shrink`: a name column that may be cut with `…`, to this width before any column drops."""

    head: str
    cells: list[Text | str]
    right: bool = False
    drop: int | None = None
    shrink: int | None = None
    cap: int | None = None

    def natural(self) -> int:
        widest = max([cell_len(self.head), *(cell_len(str(c)) for c in self.cells)])
        return min(widest, self.cap) if self.cap else widest


SEPARATOR: Final = 3  # " │ " between two columns (no edge, no outer padding)
NAME_FLOOR: Final = 6  # a name column is cut no narrower than this


def fit_widths(columns: list[Column], width: int) -> list[tuple[Column, int]]:
    """The columns kept and their widths, within `width` when possible. Figures are never
    cut: first names shrink to their `shrink` width, then columns drop by `drop` order, then
    names shrink further (to `NAME_FLOOR`)."""
    kept = list(columns)

    def least(col: Column) -> int:
        return min(col.natural(), col.shrink) if col.shrink else col.natural()

    def needed(cols: list[Column]) -> int:
        return sum(least(c) for c in cols) + SEPARATOR * (len(cols) - 1)

    droppable = sorted((c for c in kept if c.drop is not None), key=lambda c: c.drop or 0)
    while needed(kept) > width and droppable:
        kept.remove(droppable.pop(0))
    widths = [c.natural() for c in kept]
    excess = sum(widths) + SEPARATOR * (len(kept) - 1) - width
    for floor in (least, lambda c: min(NAME_FLOOR, c.natural())):
        while excess > 0:
            room = [(w - floor(c), i) for i, (c, w) in enumerate(zip(kept, widths, strict=True))]
            spare, widest = max((r for r in room if kept[r[1]].shrink), default=(0, -1))
            if spare <= 0:
                break
            widths[widest] -= 1  # the widest name column above its floor gives one cell
            excess -= 1
    return list(zip(kept, widths, strict=True))


def fitted_table(columns: list[Column], width: int, title: str | None = None) -> Table:
    """A table of `columns` that fits `width` columns of text (see `fit_widths`)."""
    table = Table(show_edge=False, pad_edge=False, title=title, title_justify="left")
    chosen = fit_widths(columns, width)
    for col, size in chosen:
        table.add_column(
            col.head,
            justify="right" if col.right else "left",
            no_wrap=True,
            overflow="ellipsis",
            width=size,
        )
    rows = len(columns[0].cells)
    for n in range(rows):
        table.add_row(*(col.cells[n] for col, _size in chosen))
    return table


# Which columns give way first to a narrow console (docs/cli.md: figures are never cut).
DROP_ORDER: Final = (
    "Sessions", "Cache write", "Cache read", "Input", "Output", "Provider", "Calls",
)  # fmt: skip


def _drop(head: str) -> int | None:
    return DROP_ORDER.index(head) if head in DROP_ORDER else None


def _table(
    header: str,
    rows: list[dict[str, Any]],
    name_key: str,
    limit: int = 12,
    provider: bool = False,
) -> list[Column]:
    """The columns of a provider, model or project table. `provider`: a Provider column after
    the name (model rows of several providers)."""
    shown = rows[:limit]
    more = len(rows) - len(shown)
    names: list[Text | str] = [_cut(r[name_key]) for r in shown]
    if more > 0:
        names.append(_cut(f"… {more} more"))
    blank = [""] if more > 0 else []

    def figures(head: str, cells: list[str]) -> Column:
        return Column(head, [*cells, *blank], right=True, drop=_drop(head))

    columns = [Column(header, names, shrink=20, cap=34)]
    if provider:
        cells = [_cut(PROVIDER_NAMES.get(r["provider"], r["provider"])) for r in shown]
        columns.append(Column("Provider", [*cells, *blank], drop=_drop("Provider")))
    columns += [
        figures("Cost", [money(r) for r in shown]),
        figures("Calls", [f"{r['calls']:,}" for r in shown]),
        figures("Sessions", [f"{r['sessions']:,}" for r in shown]),
        figures("Input", [format_tokens(r["inputTokens"]) for r in shown]),
        figures("Output", [format_tokens(r["outputTokens"]) for r in shown]),
        figures("Cache read", [format_tokens(r["cacheReadTokens"]) for r in shown]),
        figures("Cache write", [format_tokens(r["cacheWriteTokens"]) for r in shown]),
    ]
    return columns


def _same_columns(tables: list[list[Column]], width: int) -> list[list[Column]]:
    """The tables with the same figures shown in each: a column one of them gives way to
    the console is left out of all, so that rows read alike from table to table."""
    hidden: set[str] = set()
    for columns in tables:
        kept = {c.head for c, _w in fit_widths(columns, width)}
        hidden.update(c.head for c in columns if c.head not in kept)
    return [[c for c in cols if c.drop is None or c.head not in hidden] for cols in tables]


def _local_date(iso: Any) -> str:
    ms = parse_iso_ms(iso) if isinstance(iso, str) else None
    return "?" if ms is None else local_day(ms).isoformat()


def _conversation_table(
    report: dict[str, Any], width: int, limit: int | None = None, title: str | None = None
) -> Table:
    """The report's conversations in its order: names as the project and model tables show
    them (the report's `name` fields), the id's start for an untitled one. Names give way to a
    narrow console (cut with `…`, never wrapped); figures never do."""
    projects = {p["project"]: p["name"] for p in report["projects"]}
    models = {m["model"]: m["name"] for m in report["models"]}
    rows = report["conversations"]
    shown = rows if limit is None else rows[:limit]
    more = len(rows) - len(shown)
    blank = [""] if more > 0 else []
    titles: list[Text | str] = [_cut(title_text(r.get("title")) or r["id"][:8]) for r in shown]
    if more > 0:
        titles.append(_cut(f"… {more} more"))
    cells: dict[str, list[Text | str]] = {"Project": [], "Provider": [], "Model(s)": []}
    for row in shown:
        project = row.get("name") or projects.get(row["project"], row["project"])
        names = [models.get(m) or display_name(m) for m in row.get("models") or []]
        cells["Project"].append(_cut(project))
        cells["Provider"].append(_cut(PROVIDER_NAMES.get(row["provider"], row["provider"])))
        cells["Model(s)"].append(_cut(", ".join(names) or "?"))
    columns = [
        Column("Title", titles, shrink=20, cap=34),
        Column("Project", [*cells["Project"], *blank], shrink=12, cap=24),
        Column("Provider", [*cells["Provider"], *blank], drop=0),
        Column("Model(s)", [*cells["Model(s)"], *blank], shrink=14, cap=28),
        Column("Cost", [*(money(r) for r in shown), *blank], right=True),
        Column("Calls", [*(f"{r['calls']:,}" for r in shown), *blank], right=True, drop=2),
        Column("Last", [*(_local_date(r.get("last")) for r in shown), *blank], True, 1),
    ]
    return fitted_table(columns, width, title)


def _notices(out: Console, obj: dict[str, Any], verbose: bool) -> None:
    """Warnings always; diagnostics (facts of the local read, not problems) with `--verbose`."""
    for warning in obj.get("warnings") or []:
        say(out, f"! {warning}", "yellow")
    if verbose:
        for note in obj.get("diagnostics") or []:
            say(out, f"· {note}", "dim")


def _head(out: Console, report: dict[str, Any], verbose: bool) -> None:
    period = report["period"]
    days = period_days(period["from"], period["to"])
    head = f" — {period_title(period['label'])} ({days}, {period['timezone']})"
    say(out, Text.assemble(("CodeBurn", "bold"), plain(head)))
    _notices(out, report, verbose)
    floor = window_floor(period["from"])
    if floor is not None and not (report["totals"]["calls"] == 0 and period["to"] < floor):
        say(out, window_line(floor), "dim")


def _width(out: Console) -> int:
    return out.width


def print_conversations(
    report: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    """`report --by conversation`: the report's conversations (top 50 by cost), one a row."""
    out = console or make_console()
    _head(out, report, verbose)
    if not report["conversations"]:
        say(out, f"No conversations in this period.{_why_empty(report)}")
    else:
        out.print()
        out.print(_conversation_table(report, _width(out)))
    _print_sync(out, report.get("cursorSync"))


def _why_empty(report: dict[str, Any]) -> str:
    """Why a period with no usage is empty, when it lies before the window of local files."""
    floor = window_floor(report["period"]["from"])
    if floor is None or report["period"]["to"] >= floor:
        return ""
    return f" {empty_before_window(floor)}"


def print_report(
    report: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    out = console or make_console()
    width = _width(out)
    totals = report["totals"]
    _head(out, report, verbose)
    if totals["calls"] == 0:
        say(out, f"No usage in this period.{_why_empty(report)}")
        _print_sync(out, report.get("cursorSync"))
        return
    several = len({m["provider"] for m in report["models"]}) > 1
    tables = [
        _table("Provider", report["providers"], "name"),
        _table("Model", report["models"], "name", provider=several),
        _table("Project", report["projects"], "name"),
    ]
    for columns in _same_columns(tables, width):
        out.print()
        out.print(fitted_table(columns, width))
    if report.get("conversations"):
        out.print()
        out.print(_conversation_table(report, width, TOP_CONVERSATIONS, "Top conversations"))
    if report["unpricedModels"]:
        names = ", ".join(m["model"] for m in report["unpricedModels"])
        say(out, f"No price known for: {names} (counted at $0)", "yellow")
    out.print()
    line = Text.assemble(
        (f"Total {money(totals)}", "bold"),
        f"  {counted(totals['calls'], 'call')}, {counted(totals['sessions'], 'session')}",
    )
    if totals.get("notCharged"):
        line += f", {totals['notCharged']:,} not charged by Cursor ($0)"
    parts = split(totals)
    if parts.startswith("all "):
        line.append(f" ({parts})")
    say(out, line)
    if parts and not parts.startswith("all "):
        say(out, f"  = {parts}")
    own_key = report.get("userApiKey") or {}
    if own_key.get("calls"):
        say(
            out,
            (
                f"Not Cursor spend: {counted(own_key['calls'], 'call')} billed to your own API "
                f"key (~{format_money(own_key['apiCost'])} at API rates)"
            ),
        )
    local = report["coverage"]["localEstimateCost"]
    if local > 0:
        say(out, f"  {local_estimate_note(local)}", "dim")
    _print_sync(out, report.get("cursorSync"))


def _print_sync(out: Console, block: dict[str, Any] | None) -> None:
    line = sync_line(block)
    if line:
        say(out, line, sync_style(block))


def print_prose(text: str, console: Console | None = None) -> None:
    """Lines for people, each wrapped at spaces only (see `make_console` for a pipe)."""
    out = console or make_console()
    for line in text.split("\n"):
        say(out, line)


def print_status(
    status: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    """`codeburn status` with Rich's styles (`lines.write_status` is a pipe's)."""
    out = console or make_console()
    for text, style in status_lines(status, verbose=verbose):
        say(out, Text(text, style=style))
