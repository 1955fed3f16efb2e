"""Text output for people: aligned tables, `~` before estimates, never a bare $0.00.

Data (model, project and provider names, messages) is printed as plain text: never read as
Rich markup or emoji codes, and with control characters shown as escapes (`\x1b`).
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from codeburn.providers import (
    NO_DATE,
    PROVIDER_NAMES,
    display_name,
    local_day,
    now_ms,
    parse_iso_ms,
)
from codeburn.server.service import (
    format_money,
    format_tokens,
    local_estimate_note,
    period_title,
    split_text,
)
from codeburn.server.service import plain as inert

UNAVAILABLE = {"no-data", "db-locked", "db-unrecognized", "error"}
TOP_CONVERSATIONS = 5  # in the default text report; `--by conversation` lists the report's all


def money(row: dict[str, Any]) -> str:
    """`~$1.75` when any part of the figure is an estimate."""
    text = format_money(row["cost"])
    return f"~{text}" if row.get("estimatedCost", 0) > 0 else text


def split(row: dict[str, Any]) -> str:
    """What a cost is made of: `$6.76 billed by Cursor + $1.13 exact tokens at list price +
    ~$0.66 estimated` (the parts add up to the total as shown), `all estimated`, or ""."""
    billed = row.get("billedCost", 0.0)
    estimated = row.get("estimatedCost", 0.0)
    list_price = row.get("listPriceCost", max(0.0, row["cost"] - billed - estimated))
    return split_text(row["cost"], billed, list_price, estimated)


def with_split(head: str, row: dict[str, Any], indent: str = "  ") -> str:
    """`head (all estimated)`, or `head` and the parts on the next line after `=`."""
    parts = split(row)
    if not parts:
        return head
    if parts.startswith("all "):
        return f"{head} ({parts})"
    return f"{head}\n{indent}= {parts}"


def plain(value: Any) -> str:
    """`value` as inert text (`service.plain`), and `?` for what stdout's encoding cannot
    write (so that the tables keep their widths)."""
    text = inert(value)
    return text if text.isascii() else _writable(text)


def _writable(text: str) -> str:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, errors="replace").decode(encoding)
    except LookupError:
        pass
    return text


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
        style = "yellow" if block and block.get("state") in ("error", "no-login") else "dim"
        out.print(_text(line, style))


def ago(iso: Any) -> str:
    """`just now`, `12 min ago`, `3 h ago`, `2 days ago` (SPEC §8.1 wording)."""
    ms = parse_iso_ms(iso) if isinstance(iso, str) else None
    if ms is None:
        return "at an unknown time"
    minutes = max(0, (now_ms() - ms) // 60_000)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // (24 * 60)} days ago"


def sync_line(block: dict[str, Any] | None) -> str | None:
    if not block or block.get("state") == "off":
        return None
    state = block.get("state")
    if state == "ok":
        return f"Synced from cursor.com {ago(block.get('lastSuccessAt'))}"
    if state == "syncing-never":
        return "Not synced from cursor.com yet"
    return str(block.get("error") or "")


def status_line(status: dict[str, Any]) -> str:
    """`$4.56 today · ~$123 month`, or what went wrong instead of a bare $0.00."""
    if status["state"] == "no-data":
        return f"CodeBurn: {status['message']}"
    line = f"{money(status['today'])} today · {money(status['month'])} month"
    if status["state"] in UNAVAILABLE:
        line += f"  ({status['message']}; last figures shown)"
    return line


def budget_line(status: dict[str, Any]) -> str | None:
    budget = status["budget"]
    parts = []
    if budget["daily"]:
        parts.append(f"{money(status['today'])} of {format_money(budget['daily'])} today")
    if budget["monthly"]:
        parts.append(f"{money(status['month'])} of {format_money(budget['monthly'])} this month")
    if not parts:
        return None
    word = {"ok": "within budget", "warning": "budget warning (80 %)", "over": "over budget"}
    return f"{word[budget['level']].capitalize()}: {', '.join(parts)}"


def unreadable_line(status: dict[str, Any]) -> str | None:
    """Conversations that exist but could not be read: said, never a silent $0."""
    unreadable = status.get("unreadable") or {}
    count = int(unreadable.get("count") or 0)
    if count <= 0:
        return None
    noun = "conversation" if count == 1 else "conversations"
    # "no date" (inline composers of 0.44–0.45 with no time) is an older format, not a newer.
    reasons = set(unreadable.get("reasons") or {"?": 1})
    where = " in a newer Cursor format" if reasons - {NO_DATE} else ""
    return f"{count} {noun}{where} could not be read — sync or import for exact figures"


def print_status(
    status: dict[str, Any], console: Console | None = None, *, verbose: bool = False
) -> None:
    out = console or make_console()
    out.print(_text(status_line(status)))
    parts = split(status["month"]) if status["state"] != "no-data" else ""
    if parts.startswith("all "):
        out.print(_text(f"this month: {parts}", "dim"))
    elif parts:
        out.print(_text(f"this month {money(status['month'])} = {parts}", "dim"))
    if verbose:
        for note in status.get("diagnostics") or []:
            out.print(_text(f"· {note}", "dim"))
    if status.get("localEstimateNote"):
        out.print(_text(status["localEstimateNote"], "dim"))
    unreadable = unreadable_line(status)
    if unreadable:
        out.print(_text(unreadable, "yellow"))
    line = budget_line(status)
    if line:
        style = {"ok": "dim", "warning": "yellow", "over": "red"}[status["budget"]["level"]]
        out.print(_text(line, style))
    _print_sync(out, status.get("cursorSync"))
