"""(d): refreshes inside one long-lived usage service, as the language server does them.

Bubbles layout: a new conversation of 50 bubbles, then one bubble rewritten in place. Cursor
3.x layout: a new root-only conversation of 20 turns plus a CLI transcript, then one more turn
on both with the root rewritten in place; then, apart, one more turn whose root row is
replaced (INSERT OR REPLACE: a new ROWID, the old row gone).
"""

from __future__ import annotations

import base64
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from codeburn.cache.config import Budget
from codeburn.providers.background_writes import (
    disable_write_behind,
    enable_write_behind,
    flush_write_behind,
)
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.localtime import iso_utc, today
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.graph_writer import TurnSpec, build_graph
from codeburn.providers.samples.home_writer import AgentHomeWriter, assistant, turn_ended, user
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.service.periods import named_period
from codeburn.server.service.usage import UsageService

NEW_BUBBLES = 50
NEW_TURNS = 20  # a Cursor 3.x conversation appended: 20 turns (40 messages)


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


def _turns(now: int, count: int, first: int = 0) -> list[TurnSpec]:
    return [
        TurnSpec(
            user=("question about the parser " * 80)[: 50 + 37 * i],
            assistant=(("here is the change to the reader " * 250)[: 200 + 157 * i],),
            timing_ms=now - 60_000 + 1_000 * (i - first),
        )
        for i in range(first, first + count)
    ]


def _transcript(turns: list[TurnSpec]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for t in turns:
        records += [user(t.user), *(assistant(a) for a in t.assistant), turn_ended()]
    return records


class Cursor3Appender:
    """Writes as Cursor 3.x does: a new root-only conversation with its header and blobs, and
    a CLI transcript; `update` adds one turn to both (only the new blobs: the store is content
    addressed; the root in composerData; the transcript rewritten)."""

    def __init__(self, db: Path, home: Path) -> None:
        self.root = db.parent.parent.parent
        self.home = AgentHomeWriter(home)
        self.turns: list[TurnSpec] = []
        self.stored: set[str] = set()
        self.composer = ""
        self.created = 0

    def _write(self, *, in_place: bool = False) -> None:
        root, blobs = build_graph(self.turns)
        state = "~" + base64.b64encode(root).decode()
        updated = (self.turns[-1].timing_ms or self.created) + 1_000
        with ProfileWriter(self.root) as writer:
            ide = Cursor3Writer(writer, header_columns=_header_columns(writer.conn))
            ide.blobs({k: v for k, v in blobs.items() if k not in self.stored})
            self.stored.update(blobs)
            if in_place:  # the root rewritten in place (same ROWID), as a bubble is
                writer.flush()
                writer.conn.execute(
                    "UPDATE cursorDiskKV SET value = json_set(value, '$.conversationState', ?,"
                    " '$.lastUpdatedAt', ?) WHERE key = ?",
                    (state, updated, f"composerData:{self.composer}"),
                )
                writer.conn.commit()
            else:
                ide.composer(
                    self.composer, created_ms=self.created, updated_ms=updated,
                    model="claude-4.6-sonnet", folder="/home/dev/bench", state=state,
                )  # fmt: skip
            ide.header(Header(self.composer, folder="/home/dev/bench", created_ms=self.created,
                              updated_ms=updated))  # fmt: skip
        transcript = _transcript(self.turns[: max(1, len(self.turns) // 4)])
        self.home.transcript(f"cli-{self.composer}", transcript, slug="home-dev-bench", flat=True)

    def append(self, n: int) -> str:
        self.composer = f"bench3-{n:04d}-{time.time_ns():x}"
        self.created = time.time_ns() // 1_000_000 - 120_000
        self.turns = _turns(self.created + 60_000, NEW_TURNS)
        self.stored = set()
        self._write()
        return self.composer

    def update(self, *, in_place: bool = True) -> None:
        """One more turn; the root rewritten in place, else replaced (a new ROWID)."""
        self.turns = self.turns + _turns(self.created + 100_000, 1, first=len(self.turns))
        self._write(in_place=in_place)


def _header_columns(conn: sqlite3.Connection) -> int:
    return len(conn.execute("SELECT * FROM composerHeaders LIMIT 0").description)


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
    """Seconds of `call()`; the cache files it queued are then written, untimed (between two
    refreshes of the language server, its writer has the time the editor is idle)."""
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    flush_write_behind()
    return seconds, result


def _equals_cold_parse(service: UsageService) -> bool:
    """The refreshed reader holds exactly the calls a cold parse of the same file gives.

    Compared at the reader, with the same first-seen dates: report figures may rightly differ
    (sealed days keep the figures of requests or messages that a later read no longer has,
    e.g. ones the scan budget now cuts).
    """
    reader = service._local._reader  # the bench inspects the long-lived reader
    if reader is None:
        return False
    cold = CursorReader(reader.db_path, floor_ms=reader.floor_ms, first_seen=reader.first_seen)
    return sorted(reader.calls(), key=_key) == sorted(cold.read().calls, key=_key)


def _key(call: Any) -> str:
    return str(call.key)


def _equals_cold_report(service: UsageService, period: Any) -> bool:
    """The long-lived service reports what a fresh one (fresh caches) reports of the same data:
    the check that also covers transcripts and CLI stores."""
    with tempfile.TemporaryDirectory(prefix="codeburn-bench-cold-") as fresh:
        cold = UsageService(service.db_path, cache_dir=Path(fresh)).report(period, sync=False)
    return bool(service.report(period, sync=False)["totals"] == cold["totals"])


def measure_incremental(db: Path, cache_dir: Path, reps: int, layout: str) -> dict[str, Any]:
    """Times of a service's first read and of its refreshes after appends and in-place updates.

    Cache files are written behind the answers, as the language server writes them."""
    _count_full_parses()
    enable_write_behind()
    cursor3 = Cursor3Appender(db, Path(os.environ["CODEBURN_CURSOR_HOME"]))
    budget = Budget()
    service = UsageService(db, cache_dir=cache_dir)
    period = named_period("all", today())
    first, _ = _timed(lambda: service.report(period, sync=False))
    service.status(budget=budget, sync=False)
    unchanged, _ = _timed(lambda: service.status(budget=budget, sync=False))
    appends: list[float] = []
    updates: list[float] = []
    for n in range(reps):
        composer = cursor3.append(n) if layout == "cursor3" else append_conversation(db, n)
        seconds, _ = _timed(lambda: service.status(budget=budget, sync=False))
        appends.append(seconds)
        if layout == "cursor3":
            cursor3.update()
        else:
            update_bubble(db, composer)
        seconds, _ = _timed(lambda: service.status(budget=budget, sync=False))
        updates.append(seconds)
    incremental = FULL_PARSES == [1]
    replaces: list[float] = []
    if layout == "cursor3":  # Cursor may also write the root with INSERT OR REPLACE
        for _ in range(reps):
            cursor3.update(in_place=False)
            seconds, _ = _timed(lambda: service.status(budget=budget, sync=False))
            replaces.append(seconds)
    replace_parses = FULL_PARSES[0] - 1 if FULL_PARSES else 0
    disable_write_behind()
    equal = _equals_cold_parse(service)
    if layout == "cursor3":
        equal = equal and _equals_cold_report(service, period)
    return {
        "replace": replaces,
        "replaceFullParses": replace_parses if replaces else None,
        "serviceFirstRead": first,
        "unchanged": unchanged,
        "append": appends,
        "update": updates,
        "stayedIncremental": incremental,
        "equalsColdParse": equal,
    }
