"""`codeburn demo`: the month's report and the status line, on sample data when needed."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from codeburn.cache.config import Budget
from codeburn.providers.cursor_paths import resolve_db_path
from codeburn.providers.localtime import day_end_ms, local_midnight_ms, today
from codeburn.providers.sample_generator import (
    SampleSpec,
    generate_sample_profile,
    write_sample_export,
)
from codeburn.server.periods import named_period
from codeburn.server.usage import UsageService


@contextlib.contextmanager
def _sample_environment() -> Iterator[Path]:
    """A throw-away data root, cache and config: nothing of the user's is read or written."""
    folder = Path(tempfile.mkdtemp(prefix="codeburn-demo-"))
    saved = {
        k: os.environ.get(k)
        for k in ("CODEBURN_CACHE_DIR", "CODEBURN_CONFIG_DIR", "CODEBURN_CURSOR_SYNC")
    }
    os.environ["CODEBURN_CACHE_DIR"] = str(folder / "cache")
    os.environ["CODEBURN_CONFIG_DIR"] = str(folder / "config")
    os.environ["CODEBURN_CURSOR_SYNC"] = "0"
    try:
        yield folder
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)


def _show(service: UsageService, budget: Budget) -> None:
    from codeburn.server.text_output import print_report, print_status  # noqa: PLC0415

    now_day = today()
    print_report(service.report(named_period("month", now_day), sync=False))
    print()
    status = service.status(budget=budget, sync=False)
    assert status is not None
    print_status(status)


def run_demo(*, sample: bool = False, cursor_db: str | None = None) -> int:
    db = resolve_db_path(cli=cursor_db)
    if db.is_file() and not sample:
        print(f"Cursor data found at {db}\n")
        from codeburn.cache.config import budget_from_config  # noqa: PLC0415

        _show(UsageService(db), budget_from_config())
        return 0
    with _sample_environment() as folder:
        started = time.monotonic()
        info = generate_sample_profile(folder / "Cursor", SampleSpec())
        now_day = today()
        export = folder / "usage-events.csv"
        first = now_day - timedelta(days=9)
        rows = write_sample_export(
            export, local_midnight_ms(first), day_end_ms(now_day - timedelta(days=7))
        )
        service = UsageService(info.db_path)
        service.import_csv(
            export, start=first.isoformat(), end=(now_day - timedelta(days=7)).isoformat()
        )
        print(
            f"No Cursor installation found{' (or --sample given)' if db.is_file() else ''}: "
            f"sample profile with {info.conversations} conversations, {info.bubbles:,} messages "
            f"in {len(info.sources)} input sources, plus a usage export of {rows} events for "
            f"{first} – {now_day - timedelta(days=7)} (exact figures).\n"
        )
        _show(service, Budget(daily=5.0, monthly=60.0))
        print(f"\n(sample built and reported in {time.monotonic() - started:.1f} s)")
    return 0
