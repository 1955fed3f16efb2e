"""The CLI's plain-text lines, without Rich: figures with `~` before estimates, the status
lines, and the status as a pipe gets it.

A script polling `codeburn status` into a status bar gets plain lines, one a fact, unwrapped;
`text` prints the same lines with Rich's styles on a terminal. Rich's import is a large share
of a warm status, so a pipe's status does without it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final, TextIO

from codeburn.providers import NO_DATE, now_ms, parse_iso_ms, six_month_floor, today
from codeburn.server.service import forecast_lines, format_money, split_text
from codeburn.server.service import plain as inert

UNAVAILABLE = {"no-data", "db-locked", "db-unrecognized", "error"}
# What makes Rich treat a stream that is no terminal as one (colours included).
_FORCING_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`1 call`, `2,245 calls`: the noun agrees with the count."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def period_days(first: str, last: str) -> str:
    """`2026-12-01 – 2026-12-06`, or one date for a one-day period."""
    return first if first == last else f"{first} – {last}"


# What a period shows before the floor of Cursor's local files (docs/import.md).
BEFORE_WINDOW: Final = "only imported or synced usage and the days CodeBurn saved earlier show"


def window_floor(first: str) -> str | None:
    """The floor of Cursor's local files (6 months back) when a period starting on `first`
    reaches before it, else None."""
    floor = six_month_floor(today()).isoformat()
    return floor if first < floor else None


def window_line(floor: str) -> str:
    """The one line of a period that reaches before the floor of Cursor's local files."""
    return f"Before {floor} (the 6-month window of Cursor's local files) {BEFORE_WINDOW}."


def empty_before_window(floor: str) -> str:
    """Why a period before the floor shows no usage, and what would show it."""
    return (
        f"It lies before {floor}, outside the 6-month window of Cursor's local files, where "
        f"{BEFORE_WINDOW}; there are none. For these days, import Cursor's usage export: "
        "codeburn import cursor FILE"
    )


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


def ago(iso: Any) -> str:
    """`just now`, `12 min ago`, `3 h ago`, `2 days ago` (docs/report-json.md#cursorsync-block)."""
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


def sync_style(block: dict[str, Any] | None) -> str:
    return "yellow" if block and block.get("state") in ("error", "no-login") else "dim"


def status_lines(status: dict[str, Any], *, verbose: bool = False) -> list[tuple[str, str]]:
    """The lines of `codeburn status`, each with its Rich style ("" for none)."""
    lines = [(plain(status_line(status)), "")]
    parts = split(status["month"]) if status["state"] != "no-data" else ""
    if parts.startswith("all "):
        lines.append((plain(f"this month: {parts}"), "dim"))
    elif parts:
        lines.append((plain(f"this month {money(status['month'])} = {parts}"), "dim"))
    if verbose:
        lines.extend((plain(f"· {note}"), "dim") for note in status.get("diagnostics") or [])
    if status.get("localEstimateNote"):
        lines.append((plain(status["localEstimateNote"]), "dim"))
    unreadable = unreadable_line(status)
    if unreadable:
        lines.append((plain(unreadable), "yellow"))
    if status.get("forecast"):  # the tooltip's line (docs/forecast.md)
        lines.append((plain(forecast_lines(status["forecast"])[0]), "dim"))
    line = budget_line(status)
    if line:
        style = {"ok": "dim", "warning": "yellow", "over": "red"}[status["budget"]["level"]]
        lines.append((plain(line), style))
    block = status.get("cursorSync")
    line = sync_line(block)
    if line:
        lines.append((plain(line), sync_style(block)))
    return lines


def styled_stream(stream: TextIO) -> bool:
    """Whether Rich would style `stream`: a terminal, or an environment that forces it."""
    if any(os.environ.get(name) for name in _FORCING_ENV):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def write_status(status: dict[str, Any], stream: TextIO, *, verbose: bool = False) -> None:
    """The status lines as plain text (a pipe's: no styles, no wrapping)."""
    stream.write("".join(f"{text}\n" for text, _style in status_lines(status, verbose=verbose)))
