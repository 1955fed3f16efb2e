"""The other tools' log state in SQLite (docs/caches.md#other-tools-log-state): only what
changed is written, another process's change is never overwritten with a stale one, and a
damaged, foreign or locked file costs time, never a figure or a traceback."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from codeburn.cache.tool_logs import JOIN_PARTS, ToolLogsDb
from codeburn.providers.agents import LogChange, Part

ID = "4:rules"


def _part(n: int, last_ms: int) -> Part:
    return Part(n, last_ms, "[" + ",".join(["[1]"] * n) + "]")


def test_appends_add_parts_and_a_read_leaves_out_the_days_before_it(tmp_path: Path) -> None:
    db = ToolLogsDb(tmp_path)
    db.save_tool_logs(ID, [LogChange("a", '{"n": 2}', (_part(1, 100), _part(1, 200)))])
    db.save_tool_logs(ID, [LogChange("a", '{"n": 3}', (_part(1, 300),), base='{"n": 2}')])
    assert db.load_tool_logs(ID) == {"a": '{"n": 3}'}
    assert db.tool_log_parts(["a"], 250)["a"] == [
        Part(1, 100, None),
        Part(1, 200, None),
        Part(1, 300, "[[1]]"),
    ]
    assert [p.text for p in db.tool_log_parts(["a", "b"], None)["a"]] == ["[[1]]"] * 3
    assert stat.S_IMODE(db.path.stat().st_mode) == 0o600
    db.save_tool_logs(ID, [LogChange("a", '{"n": 1}', (_part(1, 50),))])  # read again: replaced
    assert db.tool_log_parts(["a"], None) == {"a": [_part(1, 50)]}
    db.save_tool_logs(ID, [LogChange("a", None)])  # gone
    assert db.load_tool_logs(ID) == {} and db.tool_log_parts(["a"], None) == {}


def test_a_change_made_from_a_row_another_process_moved_forgets_the_log(tmp_path: Path) -> None:
    db = ToolLogsDb(tmp_path)
    db.save_tool_logs(ID, [LogChange("a", '{"n": 1}', (_part(1, 100),)), LogChange("b", "{}")])
    db.save_tool_logs(ID, [LogChange("a", '{"n": 2}', (_part(1, 200),), base='{"n": 1}')])
    # A second process that loaded the first row appends the same record: not twice, forgotten.
    db.save_tool_logs(ID, [LogChange("a", '{"n": 2}', (_part(1, 200),), base='{"n": 1}')])
    assert db.load_tool_logs(ID) == {"b": "{}"}
    assert db.tool_log_parts(["a"], None) == {}


def test_another_identity_is_nothing_and_is_replaced_whole(tmp_path: Path) -> None:
    db = ToolLogsDb(tmp_path)
    db.save_tool_logs("old", [LogChange("a", "{}", (_part(2, 1),))])
    assert db.load_tool_logs(ID) == {}
    db.save_tool_logs(ID, [LogChange("b", "{}")])
    assert db.load_tool_logs(ID) == {"b": "{}"}
    assert db.tool_log_parts(["a"], None) == {}


@pytest.mark.parametrize("content", [b"{not sqlite", b"", b"SQLite format 3\x00" + b"\x00" * 90])
def test_a_damaged_file_reads_as_nothing_and_is_made_again(tmp_path: Path, content: bytes) -> None:
    db = ToolLogsDb(tmp_path)
    db.path.write_bytes(content)
    assert db.load_tool_logs(ID) == {} and db.tool_log_parts(["a"], None) == {}
    db.save_tool_logs(ID, [LogChange("a", "{}", (_part(1, 1),))])
    assert db.load_tool_logs(ID) == {"a": "{}"}


def test_a_foreign_database_is_nothing(tmp_path: Path) -> None:
    db = ToolLogsDb(tmp_path)
    with sqlite3.connect(db.path) as other:
        other.execute("CREATE TABLE logs (x)")
    assert db.load_tool_logs(ID) == {}


def test_a_locked_file_is_not_written_and_nothing_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from codeburn.cache import tool_logs  # noqa: PLC0415

    db = ToolLogsDb(tmp_path)
    db.save_tool_logs(ID, [LogChange("a", "{}")])
    monkeypatch.setattr(tool_logs, "BUSY_TIMEOUT_S", 0.01)
    holder = sqlite3.connect(db.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        db.save_tool_logs(ID, [LogChange("b", "{}")])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert db.load_tool_logs(ID) == {"a": "{}"}  # kept, not replaced
    assert "could not save" in caplog.text and "Traceback" not in caplog.text


def test_the_json_state_of_earlier_versions_is_removed(tmp_path: Path) -> None:
    (tmp_path / "tool-logs.json").write_text("{}")
    ToolLogsDb(tmp_path).save_tool_logs(ID, [LogChange("a", "{}")])
    assert not (tmp_path / "tool-logs.json").exists()


def test_a_log_appended_at_every_save_keeps_a_few_parts_a_day(tmp_path: Path) -> None:
    """A server saves a part per refresh while a session runs: more than `JOIN_PARTS` of one
    UTC day at a log's end are joined, the same records in the same order; days stay apart."""
    db = ToolLogsDb(tmp_path)
    day = 24 * 60 * 60 * 1000
    times = [day - 50 + i for i in range(40)] + [day + i for i in range(60)]  # two UTC days
    meta = '{"n": 0}'
    db.save_tool_logs(ID, [LogChange("a", meta, ())])
    for n, at in enumerate(times, 1):
        new = f'{{"n": {n}}}'
        db.save_tool_logs(ID, [LogChange("a", new, (Part(1, at, f"[[{n}]]"),), base=meta)])
        meta = new
    parts = db.tool_log_parts(["a"], None)["a"]
    assert len(parts) <= 2 * (JOIN_PARTS + 1) < len(times) // 2  # (not a part per save)
    assert [r[0] for p in parts for r in json.loads(p.text or "")] == list(range(1, 101))
    days = [{int(r[0] > 40) for r in json.loads(p.text or "")} for p in parts]
    assert all(len(d) == 1 for d in days)  # (records 1-40 lie in the first day)
    assert [sum(p.records for p in parts if p.last_ms < day), parts[-1].last_ms] == [40, day + 59]
    left_out = db.tool_log_parts(["a"], day)["a"]  # the first day's parts: no text
    assert {p.text is None for p in left_out if p.last_ms < day} == {True}
