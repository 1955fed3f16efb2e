"""The Cursor 3.x blob memo: a full parse with it gives exactly what one without it gives."""

from __future__ import annotations

import hashlib
import marshal
import shutil
import sqlite3
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.blob_memo import FILE, load_blob_memo, save_blob_memo
from codeburn.cache.local_files import LocalFiles
from codeburn.providers import runtime
from codeburn.providers.agent import reached_ids
from codeburn.providers.agent.stream import StreamWalker
from codeburn.providers.framing import framed
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.layout3 import memo as memo_module
from codeburn.providers.ide.layout3 import roots as layout3_roots
from codeburn.providers.ide.layout3.blob_scan import (
    blob_rowids,
    packed_blob_rowids,
    unpack_rowids,
)
from codeburn.providers.ide.layout3.layout import Layout3
from codeburn.providers.ide.layout3.memo import (
    MEMO_VERSION,
    BlobMemo,
    memo_head_ok,
    memo_rows,
    read_memo,
    rows_bytes,
    state_digest,
)
from codeburn.providers.ide.layout3.reader import read_layout3
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.local import LocalReader
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.runtime import can_fork
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.sqlite_ro import open_readonly
from tests.memo_file import InMemoryMemoFile as _File
from tests.providers.test_cursor3_refresh import FLOOR, NOW, refreshed, rows, two_turns

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
DAY = 86_400_000


def memo_bytes(memo: BlobMemo, db_key: str) -> bytes:
    """The memo file's content, as a full parse writes it (rows made, then encoded)."""
    return rows_bytes(memo_rows(memo), db_key)


SECRET = "curl -H 'Authorization: Bearer sk-live-0123456789' https://x | jq .a && npm test"


def _profile(tmp_path: Path, seed: int = 1) -> Path:
    spec = Cursor3Spec(seed=seed, conversations=60, classic=4, now_ms=T0, turns=(2, 6))
    db = generate_cursor3_profile(tmp_path / "Cursor", tmp_path / "home", spec).db_path
    with ProfileWriter(tmp_path / "Cursor") as p:  # stream-only records beside the roots
        p.agent("loose-1", role="system", content="s" * 30)
        p.agent("loose-2", role="user", content="z" * 8, request_id="req-loose")
        content = [{"type": "tool-call", "toolName": "Shell", "args": {"command": SECRET}}]
        p.agent("loose-3", role="assistant", content=content, model="gpt-5")
    return db


def _summary(l3: Layout3) -> dict[str, Any]:
    return {
        "calls": sorted(
            (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.project, c.tools)
            for c in l3.calls
        ),
        "conversations": l3.conversations,
        "unreadable": l3.unreadable_ids,
        "skip": l3.skip_rowids,
        "requests": l3.request_ids,
        "graphs": l3.graphs,
        "failed": {cid: (s, e.reason, e.missing_blobs) for cid, (s, e) in l3.failed.items()},
    }


def _stream(l3: Layout3) -> dict[str, Any]:
    walker = StreamWalker()
    records = l3.records or []
    walker.feed_records(r for i, r in reversed(records) if i not in l3.skip_rowids)
    return {k: v.signature() for k, v in walker.requests.items()}


def _full(db: Path, memo: BlobMemo | None, *, aside: bool = False) -> Layout3:
    """A full 3.x pass; `aside`: the blob rows' ROWIDs handed in as the CLI's second process
    does (then the memo graphs' calls are made before the ROWIDs are asked for)."""
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        rowids = (lambda: blob_rowids(conn, last)) if aside else None
        return read_layout3(conn, db, {}, scan_upto=last, memo=memo, rowids_aside=rowids)


def _kept(db: Path) -> BlobMemo:
    """The memo a first full parse keeps, through its file form."""
    first = _full(db, BlobMemo())
    assert first.memo is not None
    memo = read_memo(memo_bytes(first.memo, str(db)), str(db))
    assert memo is not None
    return memo


def test_a_full_parse_with_the_memo_equals_one_without(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    plain = _full(db, None)
    assert plain.memo is None and plain.graphs and "encrypted" in plain.unreadable_ids.values()
    memo = _kept(db)
    assert len(memo.graphs) == sum(1 for _s, g, _r in plain.graphs.values() if not g.missing_blobs)
    assert any(r is not None for r in memo.records.values())
    assert any(r is None for r in memo.records.values())  # unreached rows that are no record
    again = _full(db, memo)
    assert again.records is not None and plain.records is not None
    assert _summary(again) == _summary(plain)
    assert _summary(_full(db, memo, aside=True)) == _summary(plain)
    assert _stream(again) == _stream(plain)
    assert "req-loose" in _stream(again)
    # what the second parse keeps says the same: the reader does not write it again
    assert again.memo is not None
    assert again.memo.graphs.keys() == memo.graphs.keys()
    assert again.memo.records.keys() == memo.records.keys()


def test_the_memo_graphs_are_used_and_nothing_is_decoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _profile(tmp_path)
    memo = _kept(db)
    decoded: list[int] = []
    real, finish = layout3_roots.decode_parts, layout3_roots.finish_turns
    monkeypatch.setattr(layout3_roots, "decode_parts", lambda *a: decoded.append(1) or real(*a))
    # (the one pass walks each root's turns ahead and finishes its graph here)
    monkeypatch.setattr(layout3_roots, "finish_turns", lambda w: decoded.append(1) or finish(w))
    again = _full(db, memo)
    failed = len(again.failed)  # roots that failed with every blob there are decoded again
    assert failed and len(decoded) == failed
    # a memo knowing fewer than half of the roots: the one pass over the blobs instead
    few = BlobMemo(dict(list(memo.graphs.items())[:2]), memo.records)
    decoded.clear()
    assert _summary(_full(db, few)) == _summary(_full(db, None))
    assert len(decoded) > len(memo.graphs) // 2


@pytest.mark.parametrize("aside", [False, True])
def test_a_blob_gone_since_the_memo_decodes_its_root_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, aside: bool
) -> None:
    db = _profile(tmp_path)
    memo = _kept(db)
    with_memo = _full(db, memo, aside=aside)
    assert _summary(with_memo) == _summary(_full(db, None))
    graph = next(iter(memo.graphs.values()))
    gone = sorted(reached_ids(graph))[0]
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM cursorDiskKV WHERE key = ?", (scan.AGENT_LO + gone,))
    conn.close()
    expected = _summary(_full(db, None))
    assert any(g.missing_blobs for _s, g, _r in expected["graphs"].values())
    made: list[str] = []
    real = layout3_roots.graph_calls

    def counted(graph: Any, **kw: Any) -> Any:
        made.append(kw["conversation_id"])
        return real(graph, **kw)

    monkeypatch.setattr(layout3_roots, "graph_calls", counted)
    assert _summary(_full(db, memo, aside=aside)) == expected
    # made early for each root the memo knows, and again only for the one decoded anew
    with_turns = [c for c, (_s, g, _r) in with_memo.graphs.items() if g.turns]
    assert len(made) == len(set(made)) + (1 if aside else 0)
    assert set(made) <= set(with_turns) | set(expected["graphs"])


@pytest.mark.parametrize("aside", [False, True])
def test_the_blobs_of_a_memo_graph_no_root_takes_are_stream_rows_again(
    tmp_path: Path, aside: bool
) -> None:
    db = _profile(tmp_path)
    memo = _kept(db)
    plain = _full(db, None)
    cid = next(c for c, (_s, g, _r) in plain.graphs.items() if g.turns and not g.missing_blobs)
    with sqlite3.connect(db) as conn:  # the conversation went: its memo graph is no one's
        conn.execute("DELETE FROM cursorDiskKV WHERE key = ?", (f"composerData:{cid}",))
    conn.close()
    expected = _full(db, None)
    assert cid not in expected.graphs and expected.skip_rowids < plain.skip_rowids
    again = _full(db, memo, aside=aside)
    assert _summary(again) == _summary(expected)
    assert _stream(again) == _stream(expected)
    first = _full(db, BlobMemo())  # what a parse without the memo would keep
    assert again.memo is not None and first.memo is not None
    kept, made = (read_memo(memo_bytes(m, str(db)), str(db)) for m in (again.memo, first.memo))
    assert kept is not None and made is not None and kept.records == made.records


def test_new_stream_rows_since_the_memo_are_decoded(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    memo = _kept(db)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.agent("late-1", role="user", content="n" * 12, request_id="req-late")
        p.agent("late-2", role="assistant", content="m" * 44, model="gpt-5")
    expected = _full(db, None)
    again = _full(db, memo)
    assert "req-late" in _stream(again)
    assert _stream(again) == _stream(expected)
    assert _summary(again) == _summary(expected)


def test_the_memo_never_holds_a_command_line(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    first = _full(db, BlobMemo())
    assert first.memo is not None
    data = memo_bytes(first.memo, str(db))
    assert b"sk-live" not in data and b"Bearer" not in data and b"https://" not in data
    memo = read_memo(data, str(db))
    assert memo is not None
    # ... and the command names it keeps are what the stream takes from the line
    assert _stream(_full(db, memo)) == _stream(_full(db, None))
    req = [s for s in _stream(_full(db, memo)).values() if "curl" in s[5]]
    assert req and req[0][5] == ("curl", "jq", "npm")


def test_anything_but_an_intact_memo_of_this_database_is_no_memo(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    first = _full(db, BlobMemo())
    assert first.memo is not None
    data = memo_bytes(first.memo, str(db))
    assert read_memo(data, str(db)) is not None
    assert read_memo(data, str(db) + "-other") is None
    assert read_memo(data[:-1], str(db)) is None  # truncated
    at = len(data) // 2
    assert read_memo(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :], str(db)) is None
    assert read_memo(b"", str(db)) is None and read_memo(None, str(db)) is None
    assert read_memo(b'{"version": 1}', str(db)) is None
    other = data.replace(b'"version":%d' % MEMO_VERSION, b'"version":%d' % (MEMO_VERSION + 1))
    assert read_memo(other, str(db)) is None  # (its checksum fails too)
    # intact, of this database and version, but its rows are no `marshal` data
    magic, _crc, head, _rows = data.split(b"\n", 3)
    not_rows = framed(magic + b"\n", head + b"\nnot marshal data")
    assert memo_head_ok(not_rows, str(db)) and read_memo(not_rows, str(db)) is None


def test_a_memo_written_by_another_python_is_no_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its rows are in `marshal`'s form, which only the Python that wrote it reads back."""
    db = _profile(tmp_path)
    first = _full(db, BlobMemo())
    assert first.memo is not None
    mine = memo_bytes(first.memo, str(db))
    monkeypatch.setattr(memo_module, "PYTHON", "cpython-399")
    theirs = memo_bytes(first.memo, str(db))
    assert b"cpython-399" in theirs and read_memo(theirs, str(db)) is not None
    monkeypatch.undo()
    assert read_memo(mine, str(db)) is not None
    assert read_memo(theirs, str(db)) is None and not memo_head_ok(theirs, str(db))


def test_blob_rowids_come_from_the_key_index(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        rows = conn.execute(
            "SELECT substr(key, 14), rowid FROM cursorDiskKV"
            " WHERE key >= 'agentKv:blob:' AND key < 'agentKv:blob;' AND rowid <= ?",
            (last,),
        ).fetchall()
        assert blob_rowids(conn, last) == dict(rows)
        assert blob_rowids(conn, rows[0][1] - 1) == {k: r for k, r in rows if r < rows[0][1]}


def test_packed_blob_rowids_unpack_to_blob_rowids(tmp_path: Path) -> None:
    db = _profile(tmp_path)
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        expected = blob_rowids(conn, last)
        packed = packed_blob_rowids(conn, last)
        assert isinstance(packed, tuple) and unpack_rowids(packed) == expected
        first = min(expected.values())
        assert unpack_rowids(packed_blob_rowids(conn, first)) == blob_rowids(conn, first)
        assert unpack_rowids(packed_blob_rowids(conn, first - 1)) == {}
    # odd ids: one holding the separator (then the dict itself), one not UTF-8 (decoded with
    # replacement either way), an empty one
    with sqlite3.connect(db) as conn:
        for key in (scan.AGENT_LO + "a b", scan.AGENT_LO.encode() + b"\xff\xfe", scan.AGENT_LO):
            value = key if isinstance(key, bytes) else key.encode()
            conn.execute(
                "INSERT INTO cursorDiskKV (key, value) VALUES (CAST(? AS TEXT), ?)", (key, value)
            )
    conn.close()
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        rows = blob_rowids(conn, last)
        assert "a b" in rows and "" in rows
        assert isinstance(packed_blob_rowids(conn, last), dict)
        assert unpack_rowids(packed_blob_rowids(conn, last)) == rows
        conn_rows = {k: r for k, r in rows.items() if k != "a b"}
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM cursorDiskKV WHERE key = ?", (scan.AGENT_LO + "a b",))
    conn.close()
    with open_readonly(db) as conn:
        packed = packed_blob_rowids(conn, last)
        assert isinstance(packed, tuple) and unpack_rowids(packed) == conn_rows


def test_state_digest_is_the_sha256_of_the_state() -> None:
    assert state_digest("~abc") == hashlib.sha256(b"~abc").hexdigest()


def _calls(db: Path, memo_file: _File | None, plan: Plan = LONG_LIVED) -> tuple[Any, ...]:
    reader = CursorReader(db, floor_ms=0, memo_file=memo_file, plan=plan)
    got = reader.read(now_ms=T0 + DAY)
    calls = sorted(
        (c.key, c.timestamp_ms, c.input_tokens, c.output_tokens, c.model, c.tools, c.commands)
        for c in got.calls
    )
    return calls, got.conversations, got.unreadable_ids, got.turns


@pytest.mark.parametrize("forked", [False, True])
def test_the_reader_keeps_the_memo_and_reads_the_same_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    if forked and not can_fork():
        pytest.skip("no fork here")
    plan = Plan(forks=forked, walk_rows=0)
    db = _profile(tmp_path)
    expected = _calls(db, None, plan)
    kept = _File()
    assert _calls(db, kept, plan) == expected
    assert kept.saves == 1 and read_memo(kept.data, str(db))
    assert _calls(db, kept, plan) == expected  # with the memo: same figures, nothing new to keep
    assert kept.saves == 1
    broken = _File(b"codeburn-blob-memo\n00000000\n{}")
    assert _calls(db, broken, plan) == expected  # a corrupt memo is rebuilt silently
    assert broken.saves == 1 and read_memo(broken.data, str(db))
    # Kept to look at (the second process is told to send ROWIDs, not the JSON rows), but
    # damaged, or intact and not of a memo's shape: the pass decodes the JSON rows itself.
    assert kept.data is not None
    for data in (kept.data[:-3] + b"xyz", _reshaped(kept.data, graphs={"0" * 64: "no"})):
        looks = _File(data)
        assert memo_head_ok(looks.data, str(db)) and read_memo(looks.data, str(db)) is None
        assert _calls(db, looks, plan) == expected
        assert looks.saves == 1 and read_memo(looks.data, str(db))
    assert not memo_head_ok(kept.data, str(db) + "-other")


def _reshaped(data: bytes, *, graphs: object) -> bytes:
    """A memo file's content with other graphs in its body, checksum made anew."""
    magic, _crc, head, rows = data.split(b"\n", 3)
    records = marshal.loads(rows)[1]
    new = head + b"\n" + marshal.dumps((graphs, records))
    return b"%b\n%08x\n%b" % (magic, zlib.crc32(new), new)


def test_the_memo_file_survives_a_version_bump_and_is_private(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert load_blob_memo(cache) is None
    assert save_blob_memo(cache, b"memo")
    assert load_blob_memo(cache) == b"memo"
    assert (cache / FILE).stat().st_mode & 0o777 == 0o600
    files = LocalFiles(cache)
    files.save_blob_memo(b"again")
    assert files.load_blob_memo() == b"again"
    (cache / FILE).unlink()
    (cache / FILE).mkdir()  # something else in its place: no memo, no error
    assert load_blob_memo(cache) is None
    shutil.rmtree(cache / FILE)


def test_a_detached_write_lands_and_the_caller_does_it_when_it_may_not_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "written"
    if can_fork():
        assert runtime.detached(lambda: target.write_text("from the child"))
        for _ in range(3000):  # the write is the child's: wait for it to land
            if target.exists() and target.read_text() == "from the child":
                break
            time.sleep(0.01)
        assert target.read_text() == "from the child"
    assert not runtime.detached(lambda: target.write_text("never"), may_fork=False)
    assert target.read_text() != "never"


def test_a_cli_read_keeps_the_memo_file_in_the_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    detached: list[bool] = []

    class Counting(Plan):
        def detach(self, work: Callable[[], object], *, at_end: bool = False) -> bool:
            detached.append(at_end)
            return super().detach(work, at_end=at_end)

    db = _profile(tmp_path)
    cache = tmp_path / "cache"
    reader = LocalReader(db, LocalFiles(cache), tmp_path / "home", plan=Counting())
    got = reader.read(0, reader.snapshot())
    for _ in range(3000):  # written beside the read when it may fork
        if read_memo(load_blob_memo(cache), str(db)) is not None:
            break
        time.sleep(0.01)
    memo = read_memo(load_blob_memo(cache), str(db))
    assert memo is not None and memo.graphs
    assert detached == [True]  # asked for a command's end (outside one: forked at once)
    again = LocalReader(db, LocalFiles(cache), tmp_path / "home", plan=Counting())
    assert sorted(c.key for c in again.read(0, again.snapshot()).calls) == sorted(
        c.key for c in got.calls
    )
    assert detached == [True]  # the same memo: not written again


def test_a_refresh_after_a_parse_with_the_memo_equals_a_cold_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns, prompts = two_turns()
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p)
    for cid in ("c-a", "c-b", "c-c"):
        w.header(Header(cid, created_ms=T0))
        w.conversation(cid, turns, prompts=prompts, created_ms=T0)
    p.agent("loose", role="user", content="z" * 8, request_id="req-x")
    p.flush()
    kept = _File()
    first = CursorReader(p.db_path, floor_ms=FLOOR, first_seen={"req-b": T0 + DAY}, memo_file=kept)
    first.read(now_ms=NOW)
    memo = read_memo(kept.data, str(p.db_path))
    assert memo is not None and len(memo.graphs) == 1  # three roots, the same bytes
    expected = rows(first.read(now_ms=NOW).calls)
    decoded: list[int] = []
    real, finish = layout3_roots.decode_parts, layout3_roots.finish_turns
    monkeypatch.setattr(layout3_roots, "decode_parts", lambda *a: decoded.append(1) or real(*a))
    # (the one pass walks each root's turns ahead and finishes its graph here)
    monkeypatch.setattr(layout3_roots, "finish_turns", lambda w: decoded.append(1) or finish(w))
    reader = CursorReader(p.db_path, floor_ms=FLOOR, first_seen={"req-b": T0 + DAY}, memo_file=kept)
    assert rows(reader.read(now_ms=NOW).calls) == expected
    assert decoded == []  # every root from the memo
    # one root rewritten to reach fewer blobs, a new one, a new stream row: a refresh
    w.conversation("c-a", turns[:1], prompts=prompts[:2], created_ms=T0)
    w.header(Header("c-d", created_ms=T0))
    w.conversation("c-d", turns[1:], prompts=prompts[2:], created_ms=T0)
    p.agent("loose-2", role="assistant", content="q" * 20, model="gpt-5")
    p.close()
    after = refreshed(reader)
    assert not after.full
    assert "cursor:root:c-d:0" in {c.key for c in after.calls}


def test_work_detached_inside_a_command_is_done_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "written"
    with runtime.writes_at_end():
        assert runtime.detached(lambda: target.write_text("at the end"))
    assert target.read_text() == "at the end"  # done before the block (the command) ended
    # outside any block and no fork: the caller's
    assert not runtime.detached(lambda: None, may_fork=False)


def test_a_cli_report_has_written_its_memo_when_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codeburn.server.cli import main as cli  # noqa: PLC0415

    db = _profile(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(cache))
    monkeypatch.setenv("CODEBURN_CURSOR_SYNC", "0")
    args = ["report", "--cursor-db", str(db), "--format", "json", "--period", "all", "--no-sync"]
    assert cli.main(args) == 0
    assert capsys.readouterr().out.startswith("{")
    memo = read_memo(load_blob_memo(cache), str(db))
    assert memo is not None and memo.graphs
