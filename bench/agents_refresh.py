"""The language server's path after another tool's log grows, in process.

    python bench/agents_refresh.py [--claude-mb 100] [--codex-mb 20] [--appends 3] [--profile]
                                   [--watch]

Writes the history of `bench/agents.py` (and a small Cursor 3.x profile beside it, so that
Cursor's database and home are there to be read again or not), keeps one `UsageService()` (the
long-lived plan) as the server does, takes a status, then appends 10 lines to the largest Claude
Code session and times the next status, `--appends` times. Cache files are written behind the
answers, as the language server writes them, and are written before the next append (a server's
timer steps are seconds apart). It then checks that the status equals a fresh
service's (fresh caches) on the same files. `--profile`: a cProfile of the refreshes after an
append (top 25 by cumulative time). `--watch`: as with an editor's file watch
(docs/lsp.md#file-watch), each append is reported to the service, which then looks at that
log only, not at every log.

A status's work after an append grows with today's calls: run it with the clock late in the
day (`CODEBURN_NOW=<today>T20:00:00Z`, the history written and appended on that clock); it
says how far into its day the clock is.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents import _append, _env, _write

from codeburn.cache.config import Budget
from codeburn.providers.background_writes import (
    disable_write_behind,
    enable_write_behind,
    flush_write_behind,
)
from codeburn.providers.localtime import CLOCK_ENV, local_midnight_ms, now_ms, today
from codeburn.providers.samples.cursor3 import Cursor3Info, Cursor3Spec, generate_cursor3_profile
from codeburn.server.service.usage import UsageService


def _status(service: Any) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    got = service.status(budget=Budget(), sync=False)
    return time.perf_counter() - start, got


def _figures(status: dict[str, Any], other: dict[str, Any]) -> Any:
    """The whole status but the time it was made; and but the forecast when `other` was made
    in another minute (the forecast projects from the clock's whole minutes, docs/forecast.md)."""
    apart = status.get("generatedAt", "")[:16] != other.get("generatedAt", "")[:16]
    left_out = {"generatedAt", "forecast"} if apart else {"generatedAt"}
    return {k: v for k, v in status.items() if k not in left_out}


def _print_equal(last: dict[str, Any], cold: dict[str, Any]) -> None:
    a, b = _figures(last, cold), _figures(cold, last)
    if "forecast" not in a:
        print("(made in two minutes: the forecast, which counts the clock's minutes, left out)")
    print(f"equals a fresh service's status: {a == b}")
    if a != b:
        print(
            "differs in: "
            + ", ".join(k for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k))
        )


def _history(root: Path, claude_mb: int, codex_mb: int) -> Cursor3Info:
    """The logs under `root` (and a Cursor 3.x profile), this process's environment set to
    read them."""
    claude, codex = root / "claude", root / "codex"
    written = _write(claude, codex, claude_mb, codex_mb)
    env = _env(claude, codex, root / "cache")
    info = generate_cursor3_profile(root / "cursor", root / "cursor-home", Cursor3Spec())
    env.update(CODEBURN_CURSOR_DB=str(info.db_path), CODEBURN_CURSOR_HOME=str(info.home))
    os.environ.update(env)
    print(f"history: {written / 1e6:.0f} MB, Cursor 3.x profile beside")
    hours = (now_ms() - local_midnight_ms(today())) / 3_600_000
    print(f"the clock is {hours:.1f} h into its day ({CLOCK_ENV} moves it)")
    return info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claude-mb", type=int, default=100)
    parser.add_argument("--codex-mb", type=int, default=20)
    parser.add_argument("--appends", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--watch", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeburn-agents-refresh-") as tmp:
        root = Path(tmp)
        claude = root / "claude"
        info = _history(root, args.claude_mb, args.codex_mb)
        enable_write_behind()
        service = UsageService(info.db_path, cache_dir=root / "cache")
        if args.watch:
            service.watch_tool_logs(True)
        first, _ = _status(service)
        unchanged, _ = _status(service)
        profiler = cProfile.Profile() if args.profile else None
        appends = []
        for _ in range(args.appends):
            # (the last answer's cache files written first, as between a server's timer steps)
            flush_write_behind()
            appended = _append(claude)
            if args.watch:
                service.tool_logs_changed([str(appended)])
            if profiler is not None:
                profiler.enable()
            seconds, last = _status(service)
            if profiler is not None:
                profiler.disable()
            appends.append(seconds)
        disable_write_behind()
        fresh = UsageService(info.db_path, cache_dir=root / "fresh-cache")
        _, cold = _status(fresh)
    print(f"first status {first:.2f} s, unchanged {unchanged * 1000:.0f} ms")
    print("after appending 10 lines: " + ", ".join(f"{s * 1000:.0f} ms" for s in appends))
    _print_equal(last, cold)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return 0 if _figures(last, cold) == _figures(cold, last) else 1


if __name__ == "__main__":
    sys.exit(main())
