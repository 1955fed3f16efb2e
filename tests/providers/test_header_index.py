"""A Cursor 3.x user whose history is still bubbles (issue 19): the ItemTable header key every
Cursor since 3.0 writes must not make the full parse read the agent rows again, and the few
roots such a database holds read the same by key as in the one pass over the blobs."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.ide import reader as cursor_reader
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.plan import Plan
from codeburn.providers.runtime import can_fork
from codeburn.providers.samples.generator import SampleSpec, generate_sample_profile
from codeburn.providers.samples.header_index import add_header_index
from codeburn.providers.sqlite_ro import open_readonly

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
DAYS = 20


def _plain(tmp_path: Path) -> Path:
    """A bubbles profile with agent-stream rows (every source), no Cursor 3.x index."""
    spec = SampleSpec(seed=5, conversations=48, bubbles=(6, 12), days=DAYS, now_ms=T0)
    return generate_sample_profile(tmp_path / "plain", spec).root


def _with_index(tmp_path: Path, plain: Path, name: str, roots: int) -> Path:
    root = tmp_path / name
    shutil.copytree(plain, root)
    info = add_header_index(root, seed=5, now_ms=T0, days=DAYS, roots=roots, turns=(3, 5))
    assert info.listed == 48 + roots
    # Stream-only requests are dated by the database's mtime: the copy keeps the original's.
    for name in ("state.vscdb", "state.vscdb-wal"):
        source, target = _db(plain).with_name(name), _db(root).with_name(name)
        if source.exists() and target.exists():
            stat = source.stat()
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return root


def _db(root: Path) -> Path:
    return root / "User" / "globalStorage" / "state.vscdb"


def _summary(calls: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.project, c.tools)
        for c in calls
    )


def _copy_row(db: Path, where: str, suffix: str) -> None:
    """A copy of the newest row matching `where`, under its key + `suffix` (a new row)."""
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        key, value = conn.execute(
            f"SELECT key, value FROM cursorDiskKV WHERE {where} ORDER BY rowid DESC"
        ).fetchone()
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key + suffix, value))


_ANSWER = (
    "key LIKE 'bubbleId:%' AND value ->> '$.type' = 2 AND value ->> '$.tokenCount.outputTokens' > 0"
)


def _trace_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL statement the reader runs in this process from now on."""
    statements: list[str] = []

    @contextlib.contextmanager
    def traced(path: Path) -> Iterator[sqlite3.Connection]:
        with open_readonly(path) as conn:
            conn.set_trace_callback(statements.append)
            yield conn

    monkeypatch.setattr(cursor_reader, "open_readonly", traced)
    return statements


IN_PROCESS = Plan(forks=False)


def _traced_read(
    db: Path, monkeypatch: pytest.MonkeyPatch, plan: Plan = IN_PROCESS
) -> tuple[list[Any], list[str]]:
    """The calls of a full parse in this process, and every SQL statement it ran."""
    statements = _trace_statements(monkeypatch)
    result = CursorReader(db, floor_ms=0, plan=plan).read(now_ms=T0)
    monkeypatch.undo()
    return result.calls, statements


def _agent_statements(statements: list[str]) -> list[str]:
    return [s for s in statements if "agentKv" in s]


def test_header_key_without_roots_reads_no_agent_row_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _plain(tmp_path)
    indexed = _with_index(tmp_path, plain, "indexed", roots=0)
    plain_calls, plain_sql = _traced_read(_db(plain), monkeypatch)
    indexed_calls, indexed_sql = _traced_read(_db(indexed), monkeypatch)
    assert any(c.key.startswith("cursor:agentKv:") for c in plain_calls)  # the stream counts
    assert _summary(indexed_calls) == _summary(plain_calls)
    # The agent rows are paged as in a database without the index (which also probes for a
    # root, the index's stand-in there): no statement more, so no blob pass.
    extra = Counter(_agent_statements(indexed_sql)) - Counter(_agent_statements(plain_sql))
    assert not extra
    # ... the walk's pages (by ROWID range, or by ROWID where agent rows are a minority)
    walk = ("ORDER BY rowid LIMIT", "WHERE rowid IN (")
    assert any(w in s for s in _agent_statements(indexed_sql) for w in walk)


def test_few_roots_by_key_equal_the_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed = _with_index(tmp_path, _plain(tmp_path), "roots", roots=3)
    by_key, by_key_sql = _traced_read(_db(indexed), monkeypatch)
    assert sum(c.key.startswith("cursor:root:") for c in by_key) >= 9  # 3 roots of 3–5 turns
    one_pass, sql = _traced_read(_db(indexed), monkeypatch, Plan(forks=False, one_blob_pass=True))
    pass_sql = "SELECT rowid, substr(key, 14), CAST(value AS BLOB) FROM cursorDiskKV"
    assert any(s.startswith(pass_sql) for s in sql)  # the one pass did run
    assert not any(s.startswith(pass_sql) for s in by_key_sql)
    assert _summary(one_pass) == _summary(by_key)


def test_a_database_without_the_index_is_looked_at_once_per_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saying there is no 3.x index reads every composerData row (`has_root`): a full parse
    that splits its bubbles with a child asks three times (the split, the roots, the 3.x
    pass), a refresh twice; each full parse looks once, a refresh only when a composerData
    row is among its new rows (none held a root at the last look)."""
    if not can_fork():
        pytest.skip("no fork here")
    db = _db(_plain(tmp_path))
    statements = _trace_statements(monkeypatch)
    # This small profile read as a large one is: bubbles split with a child that walks.
    reader = CursorReader(db, floor_ms=0, plan=Plan(split_rows=1, walk_rows=1))
    looks = lambda: sum('"conversationState":"' in s for s in statements)  # noqa: E731
    full = reader.read(now_ms=T0)
    assert full.full and looks() == 1
    _copy_row(db, _ANSWER, "-again")  # a new message: the next read is a refresh
    statements.clear()
    refreshed = reader.read(now_ms=T0)
    assert not refreshed.full and looks() == 0
    assert len(refreshed.calls) == len(full.calls) + 1
    _copy_row(db, "key LIKE 'composerData:%'", "-new")  # a new conversation: look again
    statements.clear()
    again = reader.read(now_ms=T0)
    assert not again.full and looks() == 1


def test_a_refresh_finds_the_first_roots_of_a_database_without_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cursor 3.7 writes roots without either kind of header: a refresh of a database that
    had none looks for them again once new composerData rows come, and reads what a cold
    parse of the same database reads."""
    root = _plain(tmp_path)
    db = _db(root)
    reader = CursorReader(db, floor_ms=0)
    before = reader.read(now_ms=T0)
    assert before.full
    statements = _trace_statements(monkeypatch)
    _copy_row(db, _ANSWER, "-again")  # a new message: no look
    assert not reader.read(now_ms=T0).full
    assert not any('"conversationState":"' in s for s in statements)
    info = add_header_index(root, seed=5, now_ms=T0, days=DAYS, roots=3, turns=(3, 5))
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # the roots alone: no header
        conn.execute("DELETE FROM ItemTable WHERE key = 'composer.composerHeaders'")
    assert info.roots == 3
    statements.clear()
    refreshed = reader.read(now_ms=T0)
    assert not refreshed.full and sum('"conversationState":"' in s for s in statements) == 1
    cold = CursorReader(db, floor_ms=0).read(now_ms=T0)
    assert cold.full and len(cold.calls) > len(before.calls)
    # (requests of the agent stream alone are dated by the database's mtime, which moved)
    stream_undated = lambda calls: [  # noqa: E731
        (k, None if k.startswith("cursor:agentKv:") else t, *rest)
        for k, t, *rest in _summary(calls)
    ]
    assert stream_undated(refreshed.calls) == stream_undated(cold.calls)
    assert {c.key for c in refreshed.calls} - {c.key for c in before.calls}
