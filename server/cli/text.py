"""Text output for people: aligned tables, `~` before estimates, never a bare $0.00.

Data (model, project and provider names, messages) is printed as plain text: never read as
Rich markup or emoji codes, and with control characters shown as escapes (`\x1b`).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from codeburn.providers import PROVIDER_NAMES, display_name, local_day, parse_iso_ms
from codeburn.server.cli.lines import money, plain, split, status_lines, sync_line, sync_style
from codeburn.server.service import (
    format_money,
    format_tokens,
    local_estimate_note,
    period_title,
)

TOP_CONVERSATIONS = 5  # in the default text report; `--by conversation` lists the report's all


def _text(value: Any, style: str = "") -> Text:
    return Text(plain(value), style=style)


def _cut(value: Any) -> Text:
    """A name that a narrow column cuts short with `…` instead of wrapping."""
    return Text(plain(value), no_wrap=True, overflow="ellipsis")


def make_console() -> Console:
    """Wide enough for the tables even when stdout is a pipe; no markup, emoji or highlighting."""
    options: dict[str, Any] = {"markup": False, "emoji": False, "highlight": False}
    out = Console(**options)
    return out if out.is_terminal else Console(width=110, **options)


def _table(
    header: str,
    rows: list[dict[str, Any]],
    name_key: str,
    limit: int = 12,
    provider: bool = False,
) -> Table:
    """`provider`: a Provider column after the name (model rows of several providers)."""
    table = Table(show_edge=False, pad_edge=False)
    table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=34)
    if provider:
        table.add_column("Provider", no_wrap=True)
    for head in ("Cost", "Calls", "Sessions", "Input", "Output", "Cache read", "Cache write"):
        table.add_column(head, justify="right", no_wrap=True)
    for row in rows[:limit]:
        first = [_text(row[name_key])]
        if provider:
            first.append(_text(PROVIDER_NAMES.get(row["provider"], row["provider"])))
        table.add_row(
            *first,
            money(row),
            f"{row['calls']:,}",
            f"{row['sessions']:,}",
            format_tokens(row["inputTokens"]),
            format_tokens(row["outputTokens"]),
            format_tokens(row["cacheReadTokens"]),
            format_tokens(row["cacheWriteTokens"]),
        )
    if len(rows) > limit:
        table.add_row(Text(f"… {len(rows) - limit} more"), *[""] * (8 if provider else 7))
    return table


def _local_date(iso: Any) -> str:
    ms = parse_iso_ms(iso) if isinstance(iso, str) else None
    return "?" if ms is None else local_day(ms).isoformat()


def _conversation_table(
    report: dict[str, Any], limit: int | None = None, title: str | None = None
) -> Table:
    """The report's conversations in its order: names as the project and model tables show
    them (the report's `name` fields), the id's start for an untitled one."""
    projects = {p["project"]: p["name"] for p in report["projects"]}
    models = {m["model"]: m["name"] for m in report["models"]}
    rows = report["conversations"]
    shown = rows if limit is None else rows[:limit]
    table = Table(show_edge=False, pad_edge=False, title=title, title_justify="left")
    # Names give way to a narrow console (cut with `…`, never wrapped); figures never do.
    for head, width in (("Title", 34), ("Project", 24), ("Model(s)", 28)):
        table.add_column(head, max_width=width)
        if head == "Project":
            table.add_column("Provider", no_wrap=True)
    for head in ("Cost", "Calls", "Last"):
        table.add_column(head, justify="right", no_wrap=True)
    for row in shown:
        project = row.get("name") or projects.get(row["project"], row["project"])
        names = [models.get(m) or display_name(m) for m in row.get("models") or []]
        table.add_row(
            _cut(row.get("title") or row["id"][:8]),
            _cut(project),
            _text(PROVIDER_NAMES.get(row["provider"], row["provider"])),
            _cut(", ".join(names) or "?"),
            money(row),
            f"{row['calls']:,}",
            _local_date(row.get("last")),
        )
    if len(rows) > len(shown):
        table.add_row(_cut(f"… {len(rows) - len(shown)} more"), *[""] * 6)
    return table


def _notices(out: Console, obj: dict[str, Any], verbose: bool) -> None:
    """Warnings always; diagnostics (facts of the local read, not problems) with `--verbose`."""
    for warning in obj.get("warnings") or []:
        out.print(_text(f"! {warning}", "yellow"))
    if verbose:
        for note in obj.get("diagnostics") or []:
            out.print(_text(f"· {note}", "dim"))


def _head(out: Console, report: dict[str, Any], verbose: bool) -> None:
    period = report["period"]
    title = period_title(period["label"])
    head = f" — {title} ({period['from']} – {period['to']}, {period['timezone']})"
    out.print(Text.assemble(("CodeBurn", "bold"), plain(head)))
    _notices(out, report, verbose)


def print_conversations(
    report: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    """`report --by conversation`: the report's conversations (top 50 by cost), one a row."""
    out = console or make_console()
    _head(out, report, verbose)
    if not report["conversations"]:
        out.print("No conversations in this period.")
    else:
        out.print()
        out.print(_conversation_table(report))
    _print_sync(out, report.get("cursorSync"))


def print_report(
    report: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    out = console or make_console()
    totals = report["totals"]
    _head(out, report, verbose)
    if totals["calls"] == 0:
        out.print("No usage in this period.")
        _print_sync(out, report.get("cursorSync"))
        return
    out.print()
    out.print(_table("Provider", report["providers"], "name"))
    out.print()
    several = len({m["provider"] for m in report["models"]}) > 1
    out.print(_table("Model", report["models"], "name", provider=several))
    out.print()
    out.print(_table("Project", report["projects"], "name"))
    if report.get("conversations"):
        out.print()
        out.print(_conversation_table(report, TOP_CONVERSATIONS, "Top conversations"))
    if report["unpricedModels"]:
        names = ", ".join(m["model"] for m in report["unpricedModels"])
        out.print(_text(f"No price known for: {names} (counted at $0)", "yellow"))
    out.print()
    line = Text.assemble(
        (f"Total {money(totals)}", "bold"),
        f"  {totals['calls']:,} calls, {totals['sessions']:,} sessions",
    )
    if totals.get("notCharged"):
        line += f", {totals['notCharged']:,} not charged by Cursor ($0)"
    parts = split(totals)
    if parts.startswith("all "):
        line.append(f" ({parts})")
    out.print(line)
    if parts and not parts.startswith("all "):
        out.print(_text(f"  = {parts}"))
    own_key = report.get("userApiKey") or {}
    if own_key.get("calls"):
        out.print(
            f"Not Cursor spend: {own_key['calls']:,} calls billed to your own API key "
            f"(~{format_money(own_key['apiCost'])} at API rates)"
        )
    local = report["coverage"]["localEstimateCost"]
    if local > 0:
        out.print(_text(f"  {local_estimate_note(local)}", "dim"))
    _print_sync(out, report.get("cursorSync"))


def _print_sync(out: Console, block: dict[str, Any] | None) -> None:
    line = sync_line(block)
    if line:
        out.print(_text(line, sync_style(block)))


def print_status(
    status: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    """`codeburn status` with Rich's styles (`lines.write_status` is a pipe's)."""
    out = console or make_console()
    for text, style in status_lines(status, verbose=verbose):
        out.print(Text(text, style=style))
