"""(d): refreshes inside one long-lived usage service, as the language server does them."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from codeburn.cache.config import Budget
from codeburn.providers.cursor_reader import CursorReader
from codeburn.providers.localtime import iso_utc, today
from codeburn.providers.sample_profile import ProfileWriter
from codeburn.server.periods import named_period
from codeburn.server.usage import UsageService

NEW_BUBBLES = 50


def append_conversation(db: Path, n: int) -> str:
    """One new conversation of 50 messages, written the way Cursor appends them."""
    composer = f"bench-{n:04d}-{time.time_ns():x}"
    now = time.time_ns() // 1_000_000
    with ProfileWriter(db.parent.parent.parent) as writer:
        for i in range(NEW_BUBBLES):
            user = i % 2 == 0
            writer.bubble(
                composer,
                f"b{i:03d}",
                role="user" if user else "assistant",
                text=("question about the parser " * 40)[: 50 + 37 * i]
                if user
                else ("here is the change to the reader " * 250)[: 200 + 157 * i],
                created_at=iso_utc(now - 60_000 + 100 * i),
                model=None if user else "claude-4.6-sonnet",
                languages=() if user else ("python",),
            )
    return composer


def update_bubble(db: Path, composer: str) -> None:
    """Rewrite one bubble of the newest conversation in place (same ROWID), as streaming does."""
    conn = sqlite3.connect(db)
    try:
        conn.execute(
            "UPDATE cursorDiskKV SET value = json_set(value, '$.text', ?,"
            " '$.tokenCount.outputTokens', 1234) WHERE key = ?",
            ("a longer, finished answer " * 80, f"bubbleId:{composer}:b001"),
        )
        conn.commit()
    finally:
        conn.close()


FULL_PARSES: list[int] = []


def _count_full_parses() -> None:
    """Count full parses, so the bench can tell that refreshes stayed incremental."""
    original = CursorReader._full

    def counting(self: CursorReader, *args: Any) -> None:
        if not FULL_PARSES:
            FULL_PARSES.append(0)
        FULL_PARSES[0] += 1
        original(self, *args)

    CursorReader._full = counting  # type: ignore[method-assign]


def _timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def _equals_cold_parse(service: UsageService) -> bool:
    """The refreshed reader holds exactly the calls a cold parse of the same file gives.

    Compared at the reader, with the same first-seen dates: report figures may rightly differ
    (sealed days keep the figures of requests or messages that a later read no longer has,
    e.g. ones the scan budget now cuts).
    """
    reader = service._reader  # the bench inspects the long-lived reader
    if reader is None:
        return False
    cold = CursorReader(reader.db_path, floor_ms=reader.floor_ms, first_seen=reader.first_seen)
    return sorted(reader.calls(), key=_key) == sorted(cold.read().calls, key=_key)


def _key(call: Any) -> str:
    return str(call.key)


def measure_incremental(db: Path, cache_dir: Path, reps: int) -> dict[str, Any]:
    """Times of a service's first read and of its refreshes after appends and in-place updates."""
    _count_full_parses()
    budget = Budget()
    service = UsageService(db, cache_dir=cache_dir)
    period = named_period("all", today())
    first, _ = _timed(lambda: service.report(period, sync=False))
    service.status(budget=budget, sync=False)
    unchanged, _ = _timed(lambda: service.status(budget=budget, sync=False))
    appends: list[float] = []
    updates: list[float] = []
    for n in range(reps):
        composer = append_conversation(db, n)
        seconds, _ = _timed(lambda: service.status(budget=budget, sync=False))
        appends.append(seconds)
        update_bubble(db, composer)
        seconds, _ = _timed(lambda: service.status(budget=budget, sync=False))
        updates.append(seconds)
    incremental = FULL_PARSES == [1]
    equal = _equals_cold_parse(service)
    return {
        "serviceFirstRead": first,
        "unchanged": unchanged,
        "append": appends,
        "update": updates,
        "stayedIncremental": incremental,
        "equalsColdParse": equal,
    }
