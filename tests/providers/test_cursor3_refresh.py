"""Incremental refreshes of Cursor 3.x databases: what the 3.x pass reuses from the last pass
(parsed composerData and header rows, the bubble probe of each conversation) must never hide a
change: each refresh equals a cold parse of the same file, and stays incremental."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.calls import Call
from codeburn.providers.ide import reader as reader_module
from codeburn.providers.ide.layout3.roots import Pass
from codeburn.providers.ide.reader import CursorReader, ReadResult
from codeburn.providers.localtime import iso_utc
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.graph_writer import TurnSpec, json_message
from codeburn.providers.samples.profile_writer import ProfileWriter

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
HOUR, DAY = 3_600_000, 86_400_000


def two_turns() -> tuple[list[TurnSpec], list[dict[str, object]]]:
    """Two timed turns of a root and the prompt records (with request ids) they reach."""
    turns = [
        TurnSpec(user="p" * 40, assistant=["x" * 120], timing_ms=T0 + HOUR),
        TurnSpec(user="k" * 12, assistant=["y" * 8], timing_ms=T0 + 2 * HOUR),
    ]
    prompts = [
        json_message("user", "p" * 40, request_id="req-a"),
        json_message("assistant", "x" * 120),
        json_message("user", "k" * 12, request_id="req-b"),
        json_message("assistant", "y" * 8),
    ]
    return turns, prompts


FLOOR = T0 - 30 * DAY
NOW = T0 + 10 * DAY
SOON = T0 + 5 * 60_000  # within the 15 minutes in which a conversation counts as recent


def rows(calls: list[Call]) -> list[tuple[object, ...]]:
    return sorted(
        (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.project, c.session)
        for c in calls
    )


def refreshed(reader: CursorReader, now_ms: int = NOW) -> ReadResult:
    """The reader's refresh, checked against a cold parse of the same file."""
    after = reader.read(now_ms=now_ms)
    cold = CursorReader(reader.db_path, floor_ms=FLOOR, first_seen=after.first_seen).read(
        now_ms=now_ms
    )
    assert rows(after.calls) == rows(cold.calls)
    assert after.conversations == cold.conversations
    assert after.metas == cold.metas
    assert after.unreadable_ids == cold.unreadable_ids
    assert after.unreadable == cold.unreadable
    assert after.skipped_gauges == cold.skipped_gauges
    return after


def execute(db: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def value_length(db: Path, key: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT length(value) FROM cursorDiskKV WHERE key = ?", (key,))
                   .fetchone()[0])  # fmt: skip
    finally:
        conn.close()


def _meter_only(p: ProfileWriter, **header: object) -> Cursor3Writer:
    w = Cursor3Writer(p)
    w.header(Header("c-m", **header))  # type: ignore[arg-type]
    w.composer("c-m", state="~", model="gpt-5", total_used_tokens=12_000)
    return w


MeterOnly = tuple[ProfileWriter, Cursor3Writer, CursorReader, ReadResult]


def _read_meter_only(tmp_path: Path) -> MeterOnly:
    """A database of one meter-only conversation created at T0, and a reader that read it."""
    p = ProfileWriter(tmp_path / "Cursor")
    w = _meter_only(p, created_ms=T0)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    return p, w, reader, reader.read(now_ms=NOW)


def test_a_composer_row_rewritten_in_place_with_the_same_length_is_seen(tmp_path: Path) -> None:
    p, _w, reader, first = _read_meter_only(tmp_path)
    assert rows(first.calls) == [
        ("cursor:composer-input:c-m", T0, 12_000, 0, "gpt-5", "cursor", "c-m")
    ]
    key = "composerData:c-m"
    length = value_length(p.db_path, key)
    execute(p.db_path, "UPDATE cursorDiskKV SET value = replace(value, '12000', '34000')"
            " WHERE key = ?", key)  # fmt: skip
    p.close()
    assert value_length(p.db_path, key) == length
    after = refreshed(reader, SOON)  # the conversation is recent
    assert not after.full
    assert rows(after.calls) == [
        ("cursor:composer-input:c-m", T0, 34_000, 0, "gpt-5", "cursor", "c-m")
    ]


def _rewrite_old_meter(tmp_path: Path, *, header_too: bool) -> tuple[CursorReader, ReadResult]:
    """An old conversation's composerData rewritten in place, its header row as it was or
    written again too (Cursor writes both when a conversation gets a new turn)."""
    p, _w, reader, _first = _read_meter_only(tmp_path)
    execute(p.db_path, "UPDATE cursorDiskKV SET value = replace(value, '12000', '34000')"
            " WHERE key = 'composerData:c-m'")  # fmt: skip
    if header_too:
        execute(p.db_path, "UPDATE composerHeaders SET lastUpdatedAt = ?", NOW - 60_000)
    p.close()
    return reader, reader.read(now_ms=NOW)


def test_an_old_conversation_rewritten_in_place_with_its_header_is_seen(tmp_path: Path) -> None:
    reader, after = _rewrite_old_meter(tmp_path, header_too=True)
    assert not after.full and [c.input_tokens for c in after.calls] == [34_000]
    assert rows(refreshed(reader).calls) == rows(after.calls)


def test_an_old_conversation_rewritten_in_place_alone_waits_for_the_full_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, after = _rewrite_old_meter(tmp_path, header_too=False)
    assert not after.full and [c.input_tokens for c in after.calls] == [12_000]
    monkeypatch.setattr(reader_module, "FULL_PARSE_MAX_AGE_S", -1.0)  # an hour has passed
    full = refreshed(reader)
    assert full.full and [c.input_tokens for c in full.calls] == [34_000]


def test_a_header_row_changed_in_place_is_seen(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    _meter_only(p, folder="/home/me/aaa", created_ms=T0)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert [(c.project, c.timestamp_ms) for c in reader.read(now_ms=NOW).calls] == [
        ("-home-me-aaa", T0)
    ]
    execute(
        p.db_path,
        "UPDATE composerHeaders SET value = replace(value, '/home/me/aaa', '/home/me/bbb'),"
        " createdAt = ? WHERE composerId = 'c-m'",
        T0 + DAY,
    )
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert [(c.project, c.timestamp_ms) for c in after.calls] == [("-home-me-bbb", T0 + DAY)]


def test_item_table_headers_written_again_are_seen(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p, header_columns=None)
    w.item_headers([Header("c-i", folder="/home/me/one", created_ms=T0)])
    w.composer("c-i", state="~", total_used_tokens=4_000)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert [c.project for c in reader.read(now_ms=NOW).calls] == ["-home-me-one"]
    w.item_headers([Header("c-i", folder="/home/me/two", created_ms=T0 + HOUR)])
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert rows(after.calls) == [
        ("cursor:composer-input:c-i", T0 + HOUR, 4_000, 0, "cursor-auto", "-home-me-two", "c-i")
    ]


def test_a_composer_row_that_stops_being_json_and_comes_back(tmp_path: Path) -> None:
    p, _w, reader, _first = _read_meter_only(tmp_path)
    key = "composerData:c-m"
    execute(p.db_path, "UPDATE cursorDiskKV SET value = '{' || value WHERE key = ?", key)
    broken = refreshed(reader, SOON)
    assert not broken.full
    assert broken.calls == [] and broken.unreadable_ids == {"c-m": "undecodable"}
    execute(p.db_path, "UPDATE cursorDiskKV SET value = substr(value, 2) WHERE key = ?", key)
    p.close()
    again = refreshed(reader, SOON)
    assert not again.full and again.unreadable_ids == {}
    assert [(c.key, c.input_tokens) for c in again.calls] == [("cursor:composer-input:c-m", 12_000)]


# c-r's one turn: 40 user characters → 10 input tokens, 120 assistant characters → 30 output.
ROOT_CALL = ("cursor:root:c-r:0", T0 + HOUR, 10, 30, "cursor-auto", "cursor", "c-r")


def _root(w: Cursor3Writer) -> None:
    w.header(Header("c-r", created_ms=T0))
    w.conversation(
        "c-r", [TurnSpec(user="p" * 40, assistant=["x" * 120], timing_ms=T0 + HOUR)],
        created_ms=T0,
    )  # fmt: skip


def test_a_root_conversation_gaining_its_first_bubble_is_read_from_its_bubbles(
    tmp_path: Path,
) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    _root(Cursor3Writer(p))
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    first = reader.read(now_ms=NOW)
    assert first.conversations == {"c-r": "root"}
    assert rows(first.calls) == [ROOT_CALL]
    p.bubble("c-r", "u1", role="user", text="u" * 40, created_at=iso_utc(T0 + 2 * HOUR))
    p.close()
    after = refreshed(reader)
    assert not after.full and after.conversations == {"c-r": "bubbles"}
    assert rows(after.calls) == [
        ("cursor:bubble:bubbleId:c-r:u1", T0 + 2 * HOUR, 10, 0, "cursor-auto", "cursor", "c-r")
    ]


def test_a_conversation_losing_its_only_bubble_is_read_from_its_root(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    # A recent bubble (its conversation is read again at each refresh), not the newest row.
    p.bubble("c-r", "u1", role="user", text="u" * 40, created_at=iso_utc(NOW - 60_000))
    _root(Cursor3Writer(p))
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert reader.read(now_ms=NOW).conversations == {"c-r": "bubbles"}
    execute(p.db_path, "DELETE FROM cursorDiskKV WHERE key = 'bubbleId:c-r:u1'")
    p.close()
    after = refreshed(reader)
    assert not after.full and after.conversations == {"c-r": "root"}
    assert rows(after.calls) == [ROOT_CALL]


def test_the_newest_composer_row_written_again_with_insert_or_replace_stays_incremental(
    tmp_path: Path,
) -> None:
    p, w, reader, _first = _read_meter_only(tmp_path)
    # The newest row of the table is that composerData row: REPLACE gives it a new ROWID.
    w.composer("c-m", state="~", model="gpt-5", total_used_tokens=56_000)
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert rows(after.calls) == [
        ("cursor:composer-input:c-m", T0, 56_000, 0, "gpt-5", "cursor", "c-m")
    ]
    # ... and the next refresh goes on from the new ROWID.
    execute(p.db_path, "UPDATE cursorDiskKV SET value = replace(value, '56000', '78000')"
            " WHERE key = 'composerData:c-m'")  # fmt: skip
    last = refreshed(reader, SOON)
    assert not last.full and [c.input_tokens for c in last.calls] == [78_000]


def test_a_deleted_newest_composer_row_still_means_a_full_parse(tmp_path: Path) -> None:
    p, _w, reader, _first = _read_meter_only(tmp_path)
    execute(p.db_path, "DELETE FROM cursorDiskKV WHERE key = 'composerData:c-m'")
    p.close()
    after = refreshed(reader)
    assert after.full and after.calls == []


def test_a_root_rewritten_to_reach_fewer_blobs_gives_the_others_back_to_the_stream(
    tmp_path: Path,
) -> None:
    turns, prompts = two_turns()
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.header(Header("c-a", created_ms=T0))
    w.conversation("c-a", turns, prompts=prompts, created_ms=T0)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR, first_seen={"req-b": T0 + DAY})
    assert sorted(c.key for c in reader.read(now_ms=NOW).calls) == [
        "cursor:root:c-a:0", "cursor:root:c-a:1",
    ]  # fmt: skip
    w.conversation("c-a", turns[:1], prompts=prompts[:2], created_ms=T0)
    p.close()
    # The second turn's blobs belong to no root any more: an agent-stream request of its own.
    assert rows(refreshed(reader).calls) == [
        ("cursor:agentKv:req-b", T0 + DAY, 3, 2, "cursor-auto", "cursor", "req-b"),
        ("cursor:root:c-a:0", T0 + HOUR, 10, 30, "cursor-auto", "cursor", "c-a"),
    ]


def test_a_refresh_keeps_no_earlier_pass_alive(tmp_path: Path) -> None:
    # An unreadable root is remembered (not decoded again); what is kept of it must not hold
    # the pass that read it, else each refresh keeps all the previous one's figures alive.
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    w.header(Header("c-enc", created_ms=T0))
    w.conversation(
        "c-enc", [TurnSpec(user="secret", assistant=["answer"])], encrypt_root=True,
        encrypt_blobs=True, created_ms=T0,
    )  # fmt: skip
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    for n in range(3):
        p.bubble(f"c-{n}", "u1", role="user", text="u" * 4, created_at=iso_utc(T0))
        p.flush()
        result = reader.read(now_ms=NOW)
        assert result.unreadable_ids == {"c-enc": "encrypted"}
    p.close()
    gc.collect()
    assert [o for o in gc.get_objects() if isinstance(o, Pass)] == []


def test_a_new_root_naming_a_stream_request_takes_it_over(tmp_path: Path) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    _root(w)
    p.agent("loose", role="user", content="z" * 8, request_id="req-x")
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR, first_seen={"req-x": T0 + DAY})
    assert rows(reader.read(now_ms=NOW).calls) == [
        ("cursor:agentKv:req-x", T0 + DAY, 2, 0, "cursor-auto", "cursor", "req-x"),
        ROOT_CALL,
    ]
    w.header(Header("c-b", created_ms=T0))
    w.conversation(
        "c-b", [TurnSpec(user="z" * 8, timing_ms=T0 + 2 * HOUR)],
        prompts=[json_message("user", "z" * 8, request_id="req-x")], created_ms=T0,
    )  # fmt: skip
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert rows(after.calls) == [
        ("cursor:root:c-b:0", T0 + 2 * HOUR, 2, 0, "cursor-auto", "cursor", "c-b"),
        ROOT_CALL,
    ]


def test_conversations_a_refresh_did_not_touch_keep_their_gauges_and_reasons(
    tmp_path: Path,
) -> None:
    """What a refresh replays of unchanged conversations (a meter above the gauge bound, an
    unreadable root, a meter alone) is what a cold parse finds."""
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    for cid in ("c-big", "c-bad", "c-m"):
        w.header(Header(cid, created_ms=T0))
    w.composer("c-big", state="~", total_used_tokens=2**53 - 1, context_tokens_used=9_000)
    w.composer("c-bad", state="~not-base64!")
    w.composer("c-m", state="~", total_used_tokens=12_000)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    first = reader.read(now_ms=NOW)
    assert first.skipped_gauges == 1 and first.unreadable == {"undecodable": 1}
    w.header(Header("c-new", created_ms=NOW - 60_000))
    w.composer("c-new", state="~", total_used_tokens=5_000)
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert after.skipped_gauges == 1 and after.unreadable == {"undecodable": 1}
    assert sorted(c.input_tokens for c in after.calls) == [5_000, 9_000, 12_000]
