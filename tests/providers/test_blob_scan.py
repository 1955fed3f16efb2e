"""The full parse's one pass over the agentKv blobs gives exactly what lookups by key give."""

from __future__ import annotations

import base64
import pickle
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.agent.stream import StreamWalker, record_of
from codeburn.providers.ide import full_parse as parse_module
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3 import blob_scan
from codeburn.providers.ide.layout3.blob_scan import json_records, pack_records, unpack_records
from codeburn.providers.ide.layout3.layout import Layout3
from codeburn.providers.ide.layout3.reader import read_layout3
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.ide.stream_rows import walk_pages
from codeburn.providers.plan import Plan
from codeburn.providers.runtime import Aside, can_fork
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header, scan_key
from codeburn.providers.samples.graph_writer import TurnSpec, build_graph, json_message
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.sqlite_ro import open_readonly

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000


def _summary(l3: Layout3) -> dict[str, Any]:
    calls = sorted(
        (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.project, c.tools)
        for c in l3.calls
    )
    graphs = {cid: (state, graph, rowids) for cid, (state, graph, rowids) in l3.graphs.items()}
    return {
        "calls": calls,
        "conversations": l3.conversations,
        "unreadable": l3.unreadable_ids,
        "skip": l3.skip_rowids,
        "requests": l3.request_ids,
        "graphs": graphs,
        "failed": {cid: (s, e.reason, e.missing_blobs) for cid, (s, e) in l3.failed.items()},
    }


def _three_ways(db: Path) -> tuple[Layout3, Layout3, Layout3 | None]:
    """By key (a refresh), in one pass, and in one pass with the JSON rows read in a forked
    child."""
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        keyed = read_layout3(conn, db, {})
        scanned = read_layout3(conn, db, {}, scan_upto=last)
        aside = None
        if can_fork():
            forked = Aside(lambda: json_records(db, last))
            aside = read_layout3(conn, db, {}, scan_upto=last, json_aside=forked.result)
    return keyed, scanned, aside


def _profile(tmp_path: Path, seed: int) -> Path:
    spec = Cursor3Spec(seed=seed, conversations=60, classic=4, now_ms=T0, turns=(2, 6))
    return generate_cursor3_profile(tmp_path / "Cursor", tmp_path / "home", spec).db_path


@pytest.mark.parametrize("seed", [1, 7])
def test_one_pass_equals_lookups_by_key_on_a_generated_profile(tmp_path: Path, seed: int) -> None:
    keyed, scanned, aside = _three_ways(_profile(tmp_path, seed))
    expected = _summary(keyed)
    assert expected["calls"] and expected["skip"]  # the profile has decoded roots
    assert "encrypted" in expected["unreadable"].values()
    assert _summary(scanned) == expected
    assert keyed.records is None and scanned.records is not None
    if aside is not None:
        assert _summary(aside) == expected
        assert aside.records == scanned.records


def _parents_first(tmp_path: Path) -> Path:
    """A conversation whose blobs were written parents first: the pass, newest row first, meets
    the user messages and steps before the turns that name them."""
    root, blobs = build_graph(
        [
            TurnSpec(user="u" * 40, assistant=["a" * 80, "b" * 8], timing_ms=T0),
            TurnSpec(user="v" * 12, assistant=["c" * 20], text_in_blob=True, user_ms=T0 + HOUR),
        ],
        prompts=[
            json_message("system", "S" * 16),
            json_message("user", "u" * 40, request_id="req-1"),
            json_message("assistant", "a" * 80, model="gpt-5"),
        ],
    )
    with ProfileWriter(tmp_path / "Cursor") as p:
        w = Cursor3Writer(p)
        w.header(Header("c-rev", folder="/home/me/rev", created_ms=T0, updated_ms=T0 + DAY))
        for blob_id, data in reversed(blobs.items()):
            # JSON as TEXT, like Cursor; the field-18 user text as TEXT too (read by key)
            as_text = data[:1] == b"{" or data == b"v" * 12
            p.put(scan_key(blob_id), data.decode() if as_text else data)
        state = "~" + base64.b64encode(root).decode()
        w.composer("c-rev", created_ms=T0, updated_ms=T0 + DAY, state=state, model="default")
    return p.db_path


def test_rows_passed_before_a_root_reached_them_are_looked_up_by_key(tmp_path: Path) -> None:
    keyed, scanned, aside = _three_ways(_parents_first(tmp_path))
    expected = _summary(keyed)
    # 2 turns: input (40 + 16 system chars)/4 and 12/4, output (80 + 8)/4 and 20/4
    assert [c[2:4] for c in expected["calls"]] == [(14, 22), (3, 5)]
    assert _summary(scanned) == expected
    if aside is not None:
        assert _summary(aside) == expected


def test_the_agent_stream_from_the_pass_equals_a_walk_of_the_rows(tmp_path: Path) -> None:
    db = _profile(tmp_path, 3)
    with ProfileWriter(tmp_path / "Cursor") as p:  # stream-only records beside the roots
        p.agent("loose-1", role="system", content="s" * 30)
        p.agent("loose-2", role="user", content="z" * 8, request_id="req-loose")
        p.agent("loose-3", role="assistant", content="y" * 50, model="gpt-5")
        p.put(scan_key("not-json"), "{ broken")
    reader = CursorReader(db, floor_ms=0)
    reader.read(now_ms=T0 + DAY)
    with open_readonly(db) as conn:
        walker = StreamWalker()
        walk_pages(conn, walker, 0, reader._last_rowid, 100, reader._l3.skip_rowids)
    assert "req-loose" in walker.requests
    assert reader._walker.requests == walker.requests
    assert reader._walker.rows_seen == walker.rows_seen
    assert (reader._walker.pending_user, reader._walker.pending_context) == (
        walker.pending_user,
        walker.pending_context,
    )


def test_sparse_bubbles_are_paged_by_rowid_list_with_the_same_rows(tmp_path: Path) -> None:
    db = _profile(tmp_path, 5)
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        rowids = scan.bubble_rowids(conn, last)
        assert 0 < len(rowids) < scan.total_count(conn) // 4
        for below in (last + 1, rowids[len(rowids) // 2], rowids[0]):
            walked = [r for b in scan.bubble_batches(conn, below, 7) for r in b]
            listed = [r for b in scan.bubble_batches(conn, below, 7, rowids=rowids) for r in b]
            assert listed == walked
            assert len(walked) == min(7, sum(1 for r in rowids if r < below))


@pytest.mark.parametrize("budget", [None, 40])
def test_a_full_parse_with_a_second_process_equals_one_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int | None
) -> None:
    if not can_fork():
        pytest.skip("no fork here")
    db = _profile(tmp_path, 9)

    def full_parse(forked: bool) -> tuple[Any, ...]:
        started: list[int] = []
        real = parse_module.AsideParts
        monkeypatch.setattr(parse_module, "AsideParts", lambda w: started.append(1) or real(w))
        reader = CursorReader(db, floor_ms=0, budget=budget, plan=Plan(forks=forked, walk_rows=0))
        got = reader.read(now_ms=T0 + DAY)
        assert started == ([1] if forked else [])
        calls = sorted((c.key, c.timestamp_ms, c.input_tokens, c.output_tokens) for c in got.calls)
        state = (reader._scan_lo, reader._skipped_sub, reader._other_requests, reader._cutoff)
        return calls, got.conversations, got.budget_hit, got.skipped_undated, state

    alone, beside = full_parse(False), full_parse(True)
    assert alone == beside
    assert alone[2] is (budget is not None)  # the budget cut the bubbles in the second case


def test_each_process_of_the_pass_reads_only_the_rows_and_columns_it_decodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The JSON side gets (ROWID, str) of the TEXT rows alone; the pass gets every row as
    (ROWID, id, value) with 0 for a TEXT value left in the database — and both give what
    lookups by key give, NULL, integer and BLOB-stored JSON values among them, and TEXT that
    is not UTF-8 (decoded with replacement, as lookups decode it)."""
    db = _profile(tmp_path, 11)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.put(scan_key("as-blob"), b'{"role":"user","content":"abcd"}')
        p.put(scan_key("not-json"), "{ broken")
    sqlite_conn = sqlite3.connect(db)
    with sqlite_conn:
        sqlite_conn.execute("INSERT INTO cursorDiskKV VALUES (?, NULL)", (scan_key("null"),))
        sqlite_conn.execute("INSERT INTO cursorDiskKV VALUES (?, 0)", (scan_key("zero"),))
        sqlite_conn.execute(
            "INSERT INTO cursorDiskKV VALUES (?, CAST(? AS TEXT))",
            (scan_key("not-utf8"), b'{"role":"user","content":"caf\xe9 \xe2\x9c"}'),
        )
    sqlite_conn.close()
    pages: list[list[Any]] = []
    real = blob_scan.scan.fetch

    def fetch(conn: Any, sql: str, params: Any = ()) -> list[Any]:
        rows = real(conn, sql, params)
        if sql.endswith("ORDER BY rowid DESC LIMIT ?"):  # the pages of the pass
            pages.append(rows)
        return rows

    monkeypatch.setattr(blob_scan.scan, "fetch", fetch)
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        texts = conn.execute(
            "SELECT count(*) FROM cursorDiskKV WHERE key >= 'agentKv:blob:'"
            " AND key < 'agentKv:blob;' AND typeof(value) = 'text'"
        ).fetchone()[0]
    records = json_records(db, last)
    rows = [r for page in pages for r in page]
    assert len(rows) == texts and all(len(r) == 2 and type(r[1]) is str for r in rows)
    assert len(records) == texts - 1  # all but `{ broken`
    not_utf8 = record_of(b'{"role":"user","content":"caf\xe9 \xe2\x9c"}')
    assert not_utf8 is not None and not_utf8[1] == len("caf\ufffd \ufffd")
    assert not_utf8 in [record for _rowid, record in records]
    keyed, scanned, _aside = _three_ways(db)
    pages.clear()
    with open_readonly(db) as conn:
        aside = read_layout3(conn, db, {}, scan_upto=last, json_aside=lambda: records)
    rows = [r for page in pages for r in page]
    assert all(len(r) == 3 for r in rows)
    assert sum(1 for r in rows if r[2] == 0 and type(r[2]) is int) == texts
    assert (scan_key("zero")[len(scan.AGENT_LO) :], b"0") in {(r[1], r[2]) for r in rows}
    expected = _summary(keyed)
    assert _summary(scanned) == expected
    assert _summary(aside) == expected
    assert aside.records is not None and scanned.records is not None
    assert sorted(aside.records) == sorted(scanned.records)


def test_the_json_rows_travel_as_columns_with_each_name_pickled_once(tmp_path: Path) -> None:
    db = _profile(tmp_path, 13)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.agent("named", role="assistant", content="x" * 9, model="gpt-5", request_id="r-1")
    with open_readonly(db) as conn:
        records = json_records(db, scan.last_row(conn)[0])
    assert len(records) > 100 and any(r[1][3] == "gpt-5" for r in records)
    back = unpack_records(pickle.loads(pickle.dumps(pack_records(records), 5)))
    assert back == records
    assert all(type(rowid) is int for rowid, _record in back)
    roles = {r[1][0] for r in back}
    assert len({id(r[1][0]) for r in back}) == len(roles)  # one object per role
    models = {r[1][3] for r in back}
    assert len({id(r[1][3]) for r in back}) == len(models)
    assert unpack_records(pack_records([])) == []
