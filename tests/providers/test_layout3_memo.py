"""What a reader keeps of the Cursor 3.x pass between refreshes (issue 19): a digest of each
stored composer value, not the value (~1.3 kB a composerData row), and a changed value is
still seen; a reader read once keeps none of the memos, with the same figures."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.ide.layout3.headers import ComposerRows, read_composers, stored_digest
from codeburn.providers.ide.reader import CursorReader, ReadResult
from codeburn.providers.plan import ONE_SHOT
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.graph_writer import TurnSpec
from codeburn.providers.samples.profile_writer import ProfileWriter

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
HOUR, DAY = 3_600_000, 86_400_000
FLOOR, NOW = T0 - 30 * DAY, T0 + 10 * DAY


def stored(db: Path, sql: str) -> bytes:
    conn = sqlite3.connect(db)
    try:
        return bytes(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_the_memo_keeps_digests_and_a_value_rewritten_with_the_same_length_is_seen(
    tmp_path: Path,
) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p, header_columns=None)
    w.item_headers([Header("c-i", folder="/home/me/one", created_ms=T0)])
    w.composer("c-i", state="~", total_used_tokens=4_000)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert [c.input_tokens for c in reader.read(now_ms=NOW).calls] == [4_000]
    memo = reader._l3.composer_rows
    data_sql = "SELECT CAST(value AS BLOB) FROM cursorDiskKV WHERE key = 'composerData:c-i'"
    items_sql = "SELECT CAST(value AS BLOB) FROM ItemTable WHERE key = 'composer.composerHeaders'"
    assert memo.data["c-i"][2] == stored_digest(stored(p.db_path, data_sql))
    assert memo.items[0] == stored_digest(stored(p.db_path, items_sql))
    assert all(len(kept[2] or b"") == 16 for kept in memo.data.values())
    conn = sqlite3.connect(p.db_path)
    conn.execute(
        "UPDATE cursorDiskKV SET value = replace(value, '4000', '7000')"
        " WHERE key = 'composerData:c-i'"
    )
    conn.commit()
    conn.close()
    p.close()
    after = reader.read(now_ms=T0 + 60_000)  # a recent conversation's row is read again
    assert not after.full
    assert [c.input_tokens for c in after.calls] == [7_000]
    assert reader._l3.composer_rows.data["c-i"][2] == stored_digest(stored(p.db_path, data_sql))


def test_no_stored_value_has_no_digest() -> None:
    assert stored_digest(None) is None
    assert stored_digest(b"{}") != stored_digest(b"{ }")


def _root_db(tmp_path: Path) -> tuple[ProfileWriter, Cursor3Writer, list[TurnSpec]]:
    turns = [
        TurnSpec(user="p" * 40, assistant=["x" * 120], timing_ms=T0 + HOUR),
        TurnSpec(user="k" * 12, assistant=["y" * 8], timing_ms=T0 + 2 * HOUR),
    ]
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.header(Header("c-a", created_ms=T0))
    w.conversation("c-a", turns, created_ms=T0)
    w.header(Header("c-m", created_ms=T0))
    w.composer("c-m", state="~", model="gpt-5", total_used_tokens=12_000)
    p.flush()
    return p, w, turns


def call_rows(result: ReadResult) -> list[tuple[object, ...]]:
    return sorted((c.key, c.timestamp_ms, c.input_tokens, c.output_tokens) for c in result.calls)


def test_a_reader_read_once_drops_the_memos_and_reads_the_same(tmp_path: Path) -> None:
    p, w, turns = _root_db(tmp_path)
    once = CursorReader(p.db_path, floor_ms=FLOOR, plan=ONE_SHOT)
    kept = CursorReader(p.db_path, floor_ms=FLOOR)
    first, cold = once.read(now_ms=NOW), kept.read(now_ms=NOW)
    assert "cursor:root:c-a:0" in {c.key for c in first.calls}
    assert call_rows(first) == call_rows(cold)
    assert (first.turns, first.conversations) == (cold.turns, cold.conversations)
    memos = once._l3
    assert (memos.composer_rows.data, memos.root_calls, memos.failed) == ({}, {}, {})
    assert kept._l3.composer_rows.data and kept._l3.root_calls  # what a refresh reuses
    assert set(memos.graphs) == {"c-a"}  # its turns are read at the end
    # Read again after a change, without its memos: still what a cold parse reads.
    w.conversation("c-a", turns[:1], created_ms=T0)
    p.close()
    again = once.read(now_ms=NOW)
    fresh = CursorReader(p.db_path, floor_ms=FLOOR, first_seen=again.first_seen).read(now_ms=NOW)
    assert call_rows(again) == call_rows(fresh)
    assert "cursor:root:c-a:1" not in {c.key for c in again.calls}


def test_a_pass_nobody_keeps_parses_the_same_composers_without_their_stored_bytes(
    tmp_path: Path,
) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.header(Header("c-a", folder="/home/me/a", created_ms=T0))
    w.header(Header("c-bad", created_ms=T0))
    w.header(Header("c-null", created_ms=T0))
    w.composer("c-a", state="~", model="gpt-5", total_used_tokens=4_000)
    w.composer("c-b", state="~", total_used_tokens=9_000, created_ms=T0 + HOUR)
    w.composer("c-bad", state="~")
    w.composer("c-null", state="~")
    p.flush()
    conn = sqlite3.connect(p.db_path)
    conn.execute("UPDATE cursorDiskKV SET value = '{' || value WHERE key = 'composerData:c-bad'")
    conn.execute("UPDATE cursorDiskKV SET value = NULL WHERE key = 'composerData:c-null'")
    conn.commit()
    kept_memo, lost_memo = ComposerRows(), ComposerRows()
    kept = read_composers(conn, kept_memo)
    lost = read_composers(conn, lost_memo, remember=False)
    conn.close()
    p.close()
    assert lost == kept
    assert kept[0]["c-bad"].bad_data and not kept[0]["c-null"].has_data
    assert kept_memo.data and lost_memo.data == {}  # no digest of anybody's bytes kept


def _settled_db(tmp_path: Path) -> tuple[ProfileWriter, Cursor3Writer]:
    """Three old conversations (settled at NOW): headers in the table and the ItemTable, one
    named by its workspace only (its project from the workspace's workspace.json)."""
    p = ProfileWriter(tmp_path / "Cursor")
    p.workspace("ws1", folder="file:///home/me/first")
    w = Cursor3Writer(p)
    w.header(Header("c-a", folder="/home/me/a", created_ms=T0))
    w.header(Header("c-w", workspace_id="ws1", created_ms=T0))
    w.item_headers([Header("c-i", folder="/home/me/i", created_ms=T0)])
    w.composer("c-a", state="~", model="gpt-5", total_used_tokens=4_000, created_ms=T0)
    w.composer("c-w", state="~", model="gpt-5", total_used_tokens=5_000, created_ms=T0)
    w.composer("c-i", state="~", model="gpt-5", total_used_tokens=6_000, created_ms=T0)
    p.flush()
    return p, w


def _cold(reader: CursorReader, result: ReadResult) -> ReadResult:
    return CursorReader(reader.db_path, floor_ms=FLOOR, first_seen=result.first_seen).read(
        now_ms=NOW
    )


def _change(p: ProfileWriter, sql: str) -> None:
    conn = sqlite3.connect(p.db_path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def _bubble(p: ProfileWriter, n: int) -> None:
    """A new conversation's bubble: the database changed, the 3.x pass's sources did not."""
    p.bubble(f"b-{n}", "b1", role="user", text="hi", created_at="2026-11-29T10:00:00Z")
    p.flush()


def test_a_refresh_whose_composer_sources_did_not_change_keeps_the_last_pass(
    tmp_path: Path,
) -> None:
    p, _w = _settled_db(tmp_path)
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    first = reader.read(now_ms=NOW)
    before = dict(reader._l3.metas)
    _bubble(p, 1)
    after = reader.read(now_ms=NOW)
    assert not after.full
    assert reader._l3.composer_rows.same
    # the same composers, the same workspaces: the same metas, not made again
    assert all(reader._l3.metas[cid] is meta for cid, meta in before.items())
    assert after.metas == first.metas
    assert after.metas["c-w"].project == "-home-me-first"
    assert call_rows(after) == call_rows(_cold(reader, after))
    p.close()


def test_a_changed_composer_makes_its_meta_and_its_subagents_again(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.header(Header("c-p", folder="/home/me/p", created_ms=T0))
    w.header(Header("c-s", parent_id="c-p", created_ms=T0))
    w.header(Header("c-o", folder="/home/me/o", created_ms=T0))
    for cid in ("c-p", "c-s", "c-o"):
        w.composer(cid, state="~", total_used_tokens=1_000, created_ms=T0)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert reader.read(now_ms=NOW).metas["c-s"].project == "-home-me-p"
    other = reader._l3.metas["c-o"]
    _change(p, "UPDATE composerHeaders SET value = replace(value, '/home/me/p', '/home/me/q')")
    after = reader.read(now_ms=NOW)
    assert not after.full and not reader._l3.composer_rows.same
    assert (after.metas["c-p"].project, after.metas["c-s"].project) == ("-home-me-q",) * 2
    assert reader._l3.metas["c-o"] is other  # its composer is the same object: kept
    assert call_rows(after) == call_rows(_cold(reader, after))
    assert after.metas == _cold(reader, after).metas
    p.close()


def test_a_changed_workspace_json_is_seen_by_a_refresh_that_keeps_its_composers(
    tmp_path: Path,
) -> None:
    p, _w = _settled_db(tmp_path)
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert reader.read(now_ms=NOW).metas["c-w"].project == "-home-me-first"
    p.workspace("ws1", folder="file:///home/me/second-name")
    _bubble(p, 1)
    after = reader.read(now_ms=NOW)
    assert not after.full and reader._l3.composer_rows.same
    assert after.metas["c-w"].project == "-home-me-second-name"
    assert {c.project for c in after.calls if "c-w" in c.key} == {"-home-me-second-name"}
    assert call_rows(after) == call_rows(_cold(reader, after))
    p.close()


def test_a_settled_conversation_deleted_replaced_or_listed_differently_is_seen(
    tmp_path: Path,
) -> None:
    p, w = _settled_db(tmp_path)
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    reader.read(now_ms=NOW)

    def refreshed() -> ReadResult:
        result = reader.read(now_ms=NOW)
        assert not reader._l3.composer_rows.same
        assert call_rows(result) == call_rows(_cold(reader, result))
        return result

    def tokens(result: ReadResult) -> dict[str, int]:
        return {c.key.split(":")[2]: c.input_tokens for c in result.calls}

    # the root replaced (INSERT OR REPLACE: a new ROWID)
    w.composer("c-a", state="~", model="gpt-5", total_used_tokens=8_000, created_ms=T0)
    p.flush()
    assert tokens(refreshed())["c-a"] == 8_000
    # a header changed in place (its row rewritten, same ROWID)
    _change(p, "UPDATE composerHeaders SET createdAt = createdAt + 1 WHERE composerId = 'c-w'")
    assert refreshed().metas["c-w"].created_ms == T0 + 1
    # a settled conversation's composerData row deleted
    _change(p, "DELETE FROM cursorDiskKV WHERE key = 'composerData:c-i'")
    assert "c-i" not in tokens(refreshed())
    _bubble(p, 2)
    reader.read(now_ms=NOW)
    assert reader._l3.composer_rows.same  # nothing of them changed since
    p.close()
