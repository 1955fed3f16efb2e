"""The older bubbles read in a forked child give exactly the read of one process (issue 19)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.ide import older
from codeburn.providers.ide.reader import CursorReader, ReadResult
from codeburn.providers.localtime import local_midnight_ms, six_month_floor
from codeburn.providers.plan import Plan
from codeburn.providers.runtime import AsideParts
from codeburn.providers.samples.generator import SampleSpec, generate_sample_profile
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.sqlite_ro import DatabaseMissingError
from tests.cursor_fixtures import NOW_MS

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = [
    pytest.mark.any_moment,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform"),
]


def _generate(tmp_path: Path, *, filler: int = 0) -> Path:
    """A sample database with a value that is not JSON, text that is not UTF-8 and a value
    with duplicate keys among the oldest bubbles (the child's part), and `filler` unrelated
    rows after every bubble."""
    spec = SampleSpec(seed=11, conversations=40, bubbles=(4, 12), days=20, now_ms=NOW_MS)
    db = generate_sample_profile(tmp_path / "Cursor", spec).db_path
    conn = sqlite3.connect(db)
    keys = [k for (k,) in conn.execute(
        "SELECT key FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"
        " ORDER BY rowid LIMIT 12"
    )]  # fmt: skip
    conn.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (b"\xff{ not json", keys[3]))
    raw = json.dumps(
        ProfileWriter.bubble_value(role="assistant", text="y" * 9, created_at=None, model="MM")
    ).encode()
    conn.execute(
        "UPDATE cursorDiskKV SET value = CAST(? AS TEXT) WHERE key = ?",
        (raw.replace(b"MM", b"g\xffpt"), keys[7]),
    )
    duplicate = raw.decode().replace('"text": "yyyyyyyyy"', '"text": "y", "text": "yyyyyy"')
    assert duplicate != raw.decode()
    conn.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (duplicate, keys[9]))
    for i in range(filler):
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"zzFiller:{i}", "{}"))
    conn.commit()
    conn.close()
    return db


# The plan `_read` reads with: one process, or (the `split` fixture) this small profile split
# as a large one is, in small pages, the agent stream walked aside too where a test asks
# (`walk_rows`).
_PLAN = {"plan": Plan(forks=False)}


def _read(db: Path, *, budget: int | None = None, floor_ms: int | None = None) -> ReadResult:
    floor = floor_ms if floor_ms is not None else local_midnight_ms(six_month_floor())
    plan = _PLAN["plan"]
    return CursorReader(db, floor_ms=floor, budget=budget, plan=plan).read()


def _summary(result: ReadResult) -> tuple[Any, ...]:
    calls = sorted(
        (c.key, c.model, c.timestamp_ms, c.input_tokens, c.output_tokens, c.cost, c.tools)
        for c in result.calls
    )
    return (calls, result.skipped_subcomposer, result.skipped_undated, result.budget_hit,
            result.inferred_dates, sorted(result.warnings))  # fmt: skip


Split = Callable[..., list[older.OlderRows]]


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> Split:
    """Reads in small pages; `split(**choices)` then splits them from the first bubble on,
    under the current plan with `choices`, and returns the children made."""
    made: list[older.OlderRows] = []
    original = CursorReader._older_aside

    def recording(self: CursorReader, conn: sqlite3.Connection, *, walk: bool) -> Any:
        found = original(self, conn, walk=walk)
        if found is not None:
            made.append(found)
        return found

    monkeypatch.setattr(CursorReader, "_older_aside", recording)
    monkeypatch.setitem(_PLAN, "plan", replace(_PLAN["plan"], page_rows=7))

    def enable(**choices: Any) -> list[older.OlderRows]:
        plan = replace(_PLAN["plan"], forks=True, split_rows=1, **choices)
        monkeypatch.setitem(_PLAN, "plan", plan)
        return made

    return enable


@pytest.mark.parametrize("filler", [0, 2_000], ids=["dense", "sparse"])
def test_a_split_read_equals_the_read_in_one_process(
    tmp_path: Path, split: Split, filler: int
) -> None:
    db = _generate(tmp_path, filler=filler)
    alone = _read(db)
    made = split()
    together = _read(db)
    assert len(made) == 1
    # The filler follows every bubble, so the split (bubbles taken as spread over the ROWIDs)
    # leaves them all to the child, which stops at its share: the caller reads the rest.
    assert made[0].complete is (filler == 0)
    assert _summary(together) == _summary(alone)
    assert any(c.model == "g\ufffdpt" for c in together.calls)  # decoded with replacement


@pytest.mark.clock
def test_a_budget_reached_among_the_older_rows_cuts_where_one_process_cuts(
    tmp_path: Path, split: Split
) -> None:
    db = _generate(tmp_path)
    total = len(_read(db).calls)
    budget = total * 3 // 4  # the newest three quarters: the cut falls in the child's half
    alone = _read(db, budget=budget)
    split()
    together = _read(db, budget=budget)
    assert alone.budget_hit and _summary(together) == _summary(alone)


@pytest.mark.clock
def test_a_floor_among_the_older_rows_stops_both_reads_at_the_same_row(
    tmp_path: Path, split: Split
) -> None:
    db = _generate(tmp_path)
    floor = NOW_MS - 12 * 86_400_000  # 12 of the 20 days
    alone, everything = _read(db, floor_ms=floor), _read(db)
    made = split()
    together = _read(db, floor_ms=floor)
    assert 0 < len(alone.calls) < len(everything.calls)
    assert _summary(together) == _summary(alone)
    assert len(made) == 1 and not made[0].complete  # the child stopped at the floor


def test_rows_past_where_the_child_stopped_are_read_by_the_caller(
    tmp_path: Path, split: Split
) -> None:
    db = _generate(tmp_path)
    alone = _read(db)
    made = split(older_rows=6)  # fewer than its share: the child stops short
    together = _read(db)
    assert len(made) == 1 and not made[0].complete
    assert _summary(together) == _summary(alone)


@pytest.mark.parametrize("child_by_rowid", [False, True], ids=["range", "by-rowid"])
def test_the_child_walks_the_agent_stream_first_when_it_is_its_job(
    tmp_path: Path,
    split: Split,
    monkeypatch: pytest.MonkeyPatch,
    child_by_rowid: bool,
) -> None:
    db = _generate(tmp_path, filler=300)
    monkeypatch.setitem(_PLAN, "plan", replace(_PLAN["plan"], agents_by_rowid=False))
    alone = _read(db)  # in one process, the agent rows by ROWID range
    assert any(c.key.startswith("cursor:agentKv:") for c in alone.calls)
    made = split(walk_rows=0, agents_by_rowid=child_by_rowid)
    together = _read(db)
    assert len(made) == 1 and made[0].walks  # the walker came from the child
    assert _summary(together) == _summary(alone)


def test_the_installs_are_prepared_while_the_child_still_walks(
    tmp_path: Path, split: Split, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What of the installs needs no agent stream runs before the caller waits for the
    child's walker; the calls are those of one process."""
    db = _generate(tmp_path, filler=300)
    alone = _read(db)
    order: list[str] = []
    prepare, walker = CursorReader._prepare_scan, older.OlderRows.walker

    def preparing(self: CursorReader, *args: Any) -> Any:
        order.append("prepare")
        return prepare(self, *args)

    def waiting(self: older.OlderRows) -> Any:
        order.append("walker")
        return walker(self)

    monkeypatch.setattr(CursorReader, "_prepare_scan", preparing)
    monkeypatch.setattr(older.OlderRows, "walker", waiting)
    made = split(walk_rows=0)
    together = _read(db)
    assert len(made) == 1 and made[0].walks
    assert order == ["prepare", "walker"]
    assert _summary(together) == _summary(alone)


def test_a_failing_child_raises_in_the_caller(tmp_path: Path) -> None:
    work = partial(
        older.older_work, tmp_path / "missing.vscdb", upto=10, split=5, limit=10, page_rows=5,
        floor_iso="2000", sparse=False, skip=None,
    )  # fmt: skip
    rows = older.OlderRows(AsideParts(lambda send: work(send=send)), 5, None)
    with pytest.raises(DatabaseMissingError):
        rows.take(5, 3)
    rows.close()


def test_split_rowid_gives_the_caller_its_share_of_what_a_scan_reads() -> None:
    assert older.split_rowid(1_000, 500, 250_000, 0.7) == 300
    assert older.split_rowid(1_000, 500, 250, 0.5) == 750  # half of the 250 the budget reads
    assert older.split_rowid(1_000, 0, 250, 0.5) == 0
