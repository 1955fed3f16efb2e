"""`codeburn demo`: the last 30 days, the month and the status line (sample data when needed).

The sample is shown in both of Cursor's layouts, one after the other: the bubbles of Cursor
≤ 2.x (with a usage export), then Cursor 3.x (headers table, conversation roots and blobs,
agent transcripts, a Cursor Agent CLI store). Each shows the last 30 days' report first, so that
a first run shows the whole sample on any day (on the 1st of a month, the month is one day old),
then the month's total and the status line. Every date comes from the one clock in
`providers/localtime.py`, so the demo runs the same at any fixed moment.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from codeburn.cache import Budget
from codeburn.providers import (
    day_end_ms,
    local_day,
    local_midnight_ms,
    now_ms,
    resolve_db_path,
    today,
    writes_now,
)
from codeburn.providers.samples import (
    AgentLogsSpec,
    Cursor3Spec,
    SampleSpec,
    generate_cursor3_profile,
    generate_sample_profile,
    write_agent_logs,
    write_sample_export,
)
from codeburn.server.service import UsageService, named_period

HOME_ENV = "CODEBURN_CURSOR_HOME"
CLAUDE_ENV = "CLAUDE_CONFIG_DIR"
CODEX_ENV = "CODEX_HOME"
EXPORT_DAYS_AGO: Final = (9, 7)  # the sample export: whole local days, inside the last 30


@contextlib.contextmanager
def _sample_environment() -> Iterator[Path]:
    """A throw-away data root, cache and config: nothing of the user's is read or written."""
    folder = Path(tempfile.mkdtemp(prefix="codeburn-demo-"))
    names = (
        "CODEBURN_CACHE_DIR",
        "CODEBURN_CONFIG_DIR",
        "CODEBURN_CURSOR_SYNC",
        HOME_ENV,
        CLAUDE_ENV,
        CODEX_ENV,
    )
    saved = {k: os.environ.get(k) for k in names}
    os.environ["CODEBURN_CACHE_DIR"] = str(folder / "cache")
    os.environ["CODEBURN_CONFIG_DIR"] = str(folder / "config")
    os.environ["CODEBURN_CURSOR_SYNC"] = "0"
    os.environ[HOME_ENV] = str(folder / "empty-cursor-home")  # never the user's ~/.cursor
    # never the user's ~/.claude or ~/.codex
    os.environ[CLAUDE_ENV] = str(folder / "empty-claude-config")
    os.environ[CODEX_ENV] = str(folder / "empty-codex-home")
    try:
        with writes_now():  # its cache files go into the folder before it is removed
            yield folder
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)


def month_line(report: dict[str, Any]) -> str:
    """`This month (2026-12-01 – 2026-12-06): ~$1.89 · 121 calls (all estimated)`; one date on
    the 1st."""
    from codeburn.server.cli.lines import counted, money, period_days, with_split  # noqa: PLC0415

    period, totals = report["period"], report["totals"]
    head = f"This month ({period_days(period['from'], period['to'])})"
    if totals["calls"] == 0:
        return f"{head}: no usage yet"
    return with_split(f"{head}: {money(totals)} · {counted(totals['calls'], 'call')}", totals)


def _show(service: UsageService, budget: Budget) -> None:
    from codeburn.server.cli.text import print_report, print_status  # noqa: PLC0415

    now_day = today()
    print_report(service.report(named_period("30days", now_day), sync=False))
    print()
    say(month_line(service.report(named_period("month", now_day), sync=False)))
    print()
    status = service.status(budget=budget, sync=False)
    assert status is not None
    print_status(status)


def run_demo(*, sample: bool = False, cursor_db: str | None = None) -> int:
    db = resolve_db_path(cli=cursor_db)
    if db.is_file() and not sample:
        say(f"Cursor data found at {db}\n")
        from codeburn.cache import budget_from_config  # noqa: PLC0415

        _show(UsageService(db), budget_from_config())
        return 0
    with _sample_environment() as folder:
        started = time.monotonic()
        say(
            f"No Cursor installation found{' (or --sample given)' if db.is_file() else ''}: "
            "sample data in both of Cursor's storage layouts.\n"
        )
        _bubbles_sample(folder)
        print("\n")
        _cursor3_sample(folder)
        print(f"\n(samples built and reported in {time.monotonic() - started:.1f} s)")
    return 0


def say(text: str) -> None:
    """Prose for people: wrapped at spaces to the console's width, never inside a word (a
    pipe without `COLUMNS` keeps each line whole)."""
    from codeburn.server.cli.text import print_prose  # noqa: PLC0415

    print_prose(text)


def _heading(text: str) -> None:
    """`text`, underlined as far as its longest line goes on the console."""
    from codeburn.server.cli.text import make_console, print_prose  # noqa: PLC0415

    out = make_console()
    print_prose(text, out)
    print("=" * min(len(text), out.width))


def _bubbles_sample(folder: Path) -> None:
    """Cursor ≤ 2.x: conversations as bubbles, plus a usage export for exact figures."""
    now = now_ms()
    info = generate_sample_profile(folder / "Cursor", SampleSpec(now_ms=now))
    first, last = (local_day(now) - timedelta(days=n) for n in EXPORT_DAYS_AGO)
    export = folder / "usage-events.csv"
    service = UsageService(info.db_path)
    # Cursor bills the requests of the conversations on this machine: the export's rows are
    # stamped inside their turns, so the exact figures land on the conversations' projects.
    service.collect(first, last)
    turns = [
        (start, end, model or (conv.models[0] if conv.models else "auto"))
        for conv in (service.local.conversations or {}).values()
        for start, end, model in conv.turns
    ]
    rows = write_sample_export(export, local_midnight_ms(first), day_end_ms(last), turns=turns)
    os.utime(export, ns=(now * 1_000_000, now * 1_000_000))  # written "now" by the demo's clock
    service.import_csv(export, start=first.isoformat(), end=last.isoformat())
    _heading("Sample 1 of 2 — Cursor ≤ 2.x layout: conversations stored as bubbles")
    say(
        f"{info.conversations} conversations, {info.bubbles:,} messages "
        f"in {len(info.sources)} input sources, plus a usage export of {rows} events for "
        f"{first} – {last} (exact figures).\n"
    )
    _show(service, Budget(daily=5.0, monthly=60.0))


def _cursor3_sample(folder: Path) -> None:
    """Cursor 3.x: headers table, conversationState roots and blobs, transcripts, the CLI."""
    home = folder / "cursor-home"
    os.environ[HOME_ENV] = str(home)
    # Its own cache and import store: sample 1's usage export must not show up here.
    os.environ["CODEBURN_CACHE_DIR"] = str(folder / "cache3")
    info = generate_cursor3_profile(folder / "Cursor3", home, Cursor3Spec())
    # Claude Code and Codex beside it, in two of the same folders: one project row each.
    os.environ[CLAUDE_ENV] = str(folder / "claude")
    os.environ[CODEX_ENV] = str(folder / "codex")
    agents = write_agent_logs(
        folder / "claude", folder / "codex", AgentLogsSpec(now_ms=now_ms(), days=20)
    )
    ide = sum(info.kinds.values())
    _heading("Sample 2 of 2 — Cursor 3.x layout, with Claude Code and Codex")
    say(
        f"{ide} IDE conversations in the 3.x layout (composerHeaders table, conversationState "
        f"roots, {info.blobs:,} agentKv blobs; {info.kinds.get('encrypted', 0)} encrypted), "
        f"{info.classic.conversations if info.classic else 0} older ones as bubbles, "
        f"{info.transcripts} agent transcripts and {info.cli_sessions} Cursor Agent CLI "
        f"sessions (store.db) under {home.name}/ — estimates only; {agents.claude_files} "
        f"Claude Code and {agents.codex_files} Codex logs — exact tokens at list price.\n"
    )
    _show(UsageService(info.db_path), Budget(daily=5.0, monthly=60.0))
