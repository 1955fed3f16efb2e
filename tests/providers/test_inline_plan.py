"""The inline-composer query (builds 0.44–0.45) reads only the composerData key range."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.ide.inline import _INLINE_SQL, ROWID_BASE, inline_rows
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.sqlite_ro import open_readonly

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z


def _message(bubble: str, kind: int, text: str) -> dict[str, object]:
    return {"type": kind, "bubbleId": bubble, "text": text, "createdAt": T0}


def _db(tmp_path: Path) -> Path:
    with ProfileWriter(tmp_path / "Cursor") as p:
        for n in range(3):
            p.composer(f"c{n}", created_at_ms=T0, extra={"conversation": [
                _message(f"u{n}", 1, "question"), _message(f"a{n}", 2, "answer"),
            ]})  # fmt: skip
        p.bubble("withbubbles", "b1", role="user", text="hi", created_at="2026-11-20T10:00:00Z")
        for n in range(50):  # rows outside the composerData range
            p.agent(f"blob{n}", role="user", content="x")
        return p.db_path


def test_inline_query_searches_the_key_range_not_the_table(tmp_path: Path) -> None:
    with open_readonly(_db(tmp_path)) as conn:
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + _INLINE_SQL)]
    # Ordering by `c.rowid` made SQLite walk the whole table in ROWID order ("SCAN c").
    assert not any(step.startswith("SCAN c") for step in plan), plan
    assert any(step.startswith("SEARCH c USING") for step in plan), plan


def test_inline_rows_come_newest_composer_first_then_last_message_first(tmp_path: Path) -> None:
    with open_readonly(_db(tmp_path)) as conn:
        rows = inline_rows(conn)
        rowid_of = dict(conn.execute("SELECT substr(key, 14), rowid FROM cursorDiskKV"))
    keys = [row[1].rsplit(":", 1)[1] for row in rows]
    assert keys == ["a2", "u2", "a1", "u1", "a0", "u0"]
    assert [row[0] for row in rows] == sorted((row[0] for row in rows), reverse=True)
    assert rows[0][0] == ROWID_BASE + rowid_of["c2"] * (1 << 20) + 1
