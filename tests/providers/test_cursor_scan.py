"""Paged reads and SQL-side extraction must give exactly what one plain pass would."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
import weakref
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.agent.stream import StreamWalker
from codeburn.providers.ide import full_parse
from codeburn.providers.ide import sql as scan
from codeburn.providers.ide.stream_rows import WalkAside, by_rowid, walk_all, walk_pages, walk_whole
from codeburn.providers.plan import Plan
from codeburn.providers.samples.generator import SampleSpec, generate_sample_profile
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.providers.sqlite_ro import DatabaseMissingError, open_readonly
from tests.cursor_fixtures import ago, profile, read

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

SHELL = {"type": "tool-call", "toolName": "Shell", "args": {"command": "cd x && npm test"}}


def _opts(request_id: Any = None, model: Any = None) -> dict[str, Any]:
    cursor: dict[str, Any] = {}
    if request_id is not None:
        cursor["requestId"] = request_id
    if model is not None:
        cursor["modelName"] = model
    return {"providerOptions": {"cursor": cursor}}


# Values an agent stream may hold; each is written as JSON text unless it is bytes already.
AGENT_VALUES: list[Any] = [
    {"role": "system", "content": "s" * 50},
    {"role": "user", "content": "pending user text"},
    {"role": "user", "content": "opening", **_opts("R1", "gpt-5")},
    {"role": "tool", "content": [{"type": "text", "text": "t" * 300}]},
    {"role": "tool", "content": [{"type": "text", "text": "caf\u00e9 \u2705 \U0001f600"}]},
    {"role": "tool", "content": 'line\none\ttab \\ slash "quoted"'},
    {"role": "tool", "content": "nul \u0000 inside"},
    {"role": "tool", "content": None},
    {"role": "tool"},
    {"role": "tool", "content": 12.5},
    {"role": "tool", "content": True},
    {"role": "tool", "content": {"type": "text", "text": "an object"}},
    {"role": "tool", "content": []},
    {"role": "tool", "content": ["plain string block", 7, None]},
    {"role": "tool", "content": [{"text": 5, "content": "content used"}]},
    {"role": "tool", "content": [{"text": "text wins", "content": "ignored"}]},
    {"role": "tool", "content": [{"text": "a"}, {"text": "b"}, {"text": "third block"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "done"}, SHELL], **_opts(None, "m")},
    {"role": "assistant", "content": [SHELL]},
    {
        "role": "assistant",
        "content": [
            {"type": "tool-call", "toolName": "Shell", "input": {"command": "ls -la | wc"}},
            {"type": "tool-call", "toolName": "Read", "args": None, "input": {"command": "x"}},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "tool-call", "toolName": "Bash", "args": ["not", "a", "dict"]},
            {"type": "tool-call", "toolName": 42},
        ],
    },
    {"role": "assistant", "content": [{"type": "tool-call", "toolName": ""}, "x"]},
    {"role": "assistant", "content": "plain answer"},
    {"role": "system", "content": "ends the request"},
    {"role": "assistant", "content": [SHELL]},  # no current request: dropped
    {"role": "user", "content": "second", **_opts("R2")},
    {"role": "user", "content": "no id", **_opts("")},
    {"role": "user", "content": "numeric id", **_opts(17)},
    {"role": "user", "content": "x", "providerOptions": {"cursor": "not a dict"}},
    {"role": "user", "content": "x", "providerOptions": []},
    {"role": 3, "content": "odd role"},
    {"role": {"nested": "role"}, "content": "odd role"},
    {"content": "no role at all"},
    {"role": "tool", "content": [{"type": "text", "text": "é" * 10}, SHELL]},
    b'{"role":"tool","content":"bad \xe2\x82 bytes \xc3\xa9\xa9 and \xc0\x80"}',
    b'{"role":"tool","content":[{"type":"text","text":"\xff\xfe"}]}',
    b'{"role":"tool","content":"nan","n":NaN}',
    b"{not json at all",
    b"\x00\x01binary",
    b"[1, 2, 3]",
    b' {"role":"tool","content":"leading space"}',
    {"role": "user", "content": "third", **_opts("R3", "claude-4.6-sonnet")},
    {"role": "tool", "content": [{"type": "text", "text": "x" * 5000}]},
]


def _write_agents(tmp_path: Path, values: list[Any]) -> Path:
    with profile(tmp_path) as p:
        for i, value in enumerate(values):
            if isinstance(value, bytes):
                p.put(f"agentKv:blob:{i:04d}", value)
            elif i % 5 == 0:  # JSON stored as BLOB must read the same
                p.put(f"agentKv:blob:{i:04d}", json.dumps(value, ensure_ascii=False).encode())
            else:
                p.put(f"agentKv:blob:{i:04d}", value)
            p.flush()  # one row per ROWID, in list order
    return p.db_path


def test_agent_values_stored_as_text_with_bad_bytes_or_as_numbers(tmp_path: Path) -> None:
    db = _write_agents(tmp_path, AGENT_VALUES[:3])
    conn = sqlite3.connect(db)
    bad = json.dumps({"role": "tool", "content": "MARK"}).encode().replace(b"MARK", b"ab\xff\xfe")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:t', CAST(? AS TEXT))", (bad,))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:n', 42)")
    conn.commit()
    conn.close()
    walker = _walk_paged(db)
    assert _state(walker) == _state(_walk_raw(db))
    assert walker.requests["R1"].context_chars == 50 + 4  # "ab" + two replacement characters


def _state(walker: StreamWalker) -> tuple[Any, ...]:
    requests = {r: q.signature() for r, q in walker.requests.items()}
    return requests, walker.current, walker.pending_user, walker.pending_context, walker.rows_seen


def _walk_paged(db: Path) -> StreamWalker:
    walker = StreamWalker()
    with open_readonly(db) as conn:
        walk_pages(conn, walker, 0, 1 << 62, 7)  # small pages: state carried across page edges
    return walker


def _walk_raw(db: Path) -> StreamWalker:
    walker = StreamWalker()
    with open_readonly(db) as conn:
        rows = conn.execute(
            "SELECT rowid, CAST(value AS BLOB) FROM cursorDiskKV WHERE key >= ? AND key < ?"
            " AND hex(substr(value, 1, 1)) = '7B' ORDER BY rowid",
            (scan.AGENT_LO, scan.AGENT_HI),
        ).fetchall()
    walker.feed(rows)
    return walker


def test_paged_agent_walk_matches_one_pass(tmp_path: Path) -> None:
    db = _write_agents(tmp_path, AGENT_VALUES)
    paged, whole = _walk_paged(db), _walk_raw(db)
    assert _state(paged) == _state(whole)
    assert set(paged.requests) == {"R1", "R2", "R3"}
    r1 = paged.requests["R1"]
    assert r1.tools == ["Bash", "Read"] and r1.commands == ["cd", "npm", "ls", "wc"]
    assert r1.model == "gpt-5"
    assert paged.rows_seen == len(AGENT_VALUES) - 4  # not JSON, binary, an array, a space


def _interleaved(tmp_path: Path) -> Path:
    """The agent values of AGENT_VALUES between bubbles and other rows (as older builds store
    them), an undecodable TEXT value, a number and duplicate keys among them."""
    with profile(tmp_path) as p:
        for i, value in enumerate(AGENT_VALUES):
            p.bubble("c1", f"{i:03d}", role="assistant", text="b" * 40, created_at=ago(50 - i))
            p.put(f"composerData:x{i:03d}", "{}")
            if isinstance(value, bytes):
                p.put(f"agentKv:blob:{i:04d}", value)
            else:
                p.put(f"agentKv:blob:{i:04d}", value)
            p.flush()
    conn = sqlite3.connect(p.db_path)
    bad = json.dumps({"role": "tool", "content": "MARK"}).encode().replace(b"MARK", b"ab\xff")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:t', CAST(? AS TEXT))", (bad,))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:n', 42)")
    conn.execute(
        "INSERT INTO cursorDiskKV VALUES ('agentKv:blob:z', ?)", (json.dumps(AGENT_VALUES[2]),)
    )
    duplicate = '{"role":"user","content":"first","content":"the last one counts"}'
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:d', ?)", (duplicate,))
    conn.commit()
    conn.close()
    return p.db_path


@pytest.mark.parametrize("page_rows", [1, 7, 2000])
def test_a_whole_walk_by_rowid_matches_the_rowid_range_walk(tmp_path: Path, page_rows: int) -> None:
    db = _interleaved(tmp_path)
    with open_readonly(db) as conn:
        agent_ids = scan.agent_rowids(conn, 1 << 62)
        upto = agent_ids[-2]  # the last agent row is past `upto`: left out by both
        skip = frozenset(agent_ids[3:9:2])
        for skipped in (frozenset(), skip):
            by_range, by_id = StreamWalker(), StreamWalker()
            walk_pages(conn, by_range, 0, upto, page_rows, skipped)
            walk_whole(conn, by_id, upto, page_rows, skipped, by_rowid=True)
            assert _state(by_id) == _state(by_range)
            assert by_id.rows_seen == by_range.rows_seen > 10
    assert _state(walk_all(db, upto, skip, 5, rowids=True)) == _state(walk_all(db, upto, skip, 5))
    with open_readonly(db) as conn:  # bytes for the undecodable text, as agent_page gives
        rows = scan.agent_rows_by_rowid(conn, agent_ids)
    assert [r[0] for r in rows] == agent_ids
    assert any(isinstance(v, bytes) for _r, v in rows)


def test_a_whole_walk_reads_by_rowid_only_where_agent_rows_are_a_minority() -> None:
    assert by_rowid(36, 100) and not by_rowid(68, 100) and not by_rowid(0, 0)


@pytest.mark.parametrize("chosen", [False, True], ids=["range", "by-rowid"])
def test_the_plan_may_choose_how_a_whole_walk_reads_the_agent_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen: bool
) -> None:
    spec = SampleSpec(seed=3, conversations=30, bubbles=(4, 10), days=5)
    db = generate_sample_profile(tmp_path / "Cursor", spec).db_path
    alone = sorted(read(db, plan=Plan(forks=False)).calls, key=lambda c: c.key)
    asked: list[int] = []
    real = scan.agent_rows_by_rowid

    def recording(conn: sqlite3.Connection, rowids: Any) -> Any:
        asked.append(len(rowids))
        return real(conn, rowids)

    monkeypatch.setattr(scan, "agent_rows_by_rowid", recording)
    plan = Plan(forks=False, agents_by_rowid=chosen)
    assert sorted(read(db, plan=plan).calls, key=lambda c: c.key) == alone
    assert any(c.key.startswith("cursor:agentKv:") for c in alone)
    assert bool(asked) is chosen


@pytest.mark.parametrize(
    ("raw", "chars"),
    [
        (b"caf\xc3\xa9", 4),  # valid non-ASCII
        (b"cut \xe2\x82", 5),  # truncated character: one replacement character
        (b"x\xc3\xa9\xa9", 3),  # an extra continuation byte: SQLite alone would say 2
        (b"\xc0\x80!", 3),  # overlong encoding: two replacement characters
        (b"\xed\xa0\x80", 3),  # encoded surrogate: three replacement characters
    ],
)
def test_bubble_text_chars_after_decoding_with_replacement(
    tmp_path: Path, raw: bytes, chars: int
) -> None:
    with profile(tmp_path) as p:
        value = ProfileWriter.bubble_value(role="assistant", text="MARK", created_at=ago(2))
        p.put("bubbleId:c1:b", json.dumps(value).encode().replace(b"MARK", raw))
    with open_readonly(p.db_path) as conn:
        rows = scan.bubble_rows_by_rowid(conn, [1])
    text = rows[0][9]
    counted = text if isinstance(text, int) else len(text.decode("utf-8", "replace"))
    assert counted == chars
    assert read(p.db_path).calls[0].output_tokens == (chars + 3) // 4


@pytest.mark.parametrize(
    ("blocks", "tools"),
    [
        (None, ()),
        ([], ()),
        ({"languageId": "python"}, ()),  # not an array
        ([{"languageId": "python"}], ("cursor:edit", "lang:python")),
        ([{"languageId": "plaintext"}], ()),
        ([{"languageId": "go"}, {"languageId": "go"}], ("cursor:edit", "lang:go")),
        ([{"languageId": 5}, {"languageId": "rust"}], ("cursor:edit", "lang:rust")),
        (["python", {"languageId": "ts"}], ("cursor:edit", "lang:ts")),
        (
            [{"languageId": "a"}, {"x": 1}, "s", {"languageId": "b,a"}, {"languageId": "c"}],
            ("cursor:edit", "lang:a", "lang:b", "lang:c"),
        ),
        ([{"languageId": {"nested": 1}}, {"languageId": ""}, {"languageId": "sql"}], None),
    ],
)
def test_code_block_languages_by_index_or_by_walk(
    tmp_path: Path, blocks: Any, tools: tuple[str, ...] | None
) -> None:
    value = ProfileWriter.bubble_value(role="assistant", text="code", created_at=ago(2))
    if blocks is not None:
        value["codeBlocks"] = blocks
    with profile(tmp_path) as p:
        p.put("bubbleId:c1:b", value)
    expected = ("cursor:edit", "lang:sql") if tools is None else tools
    assert read(p.db_path).calls[0].tools == expected


def test_a_full_parse_freezes_its_objects_and_the_next_one_thaws_them(tmp_path: Path) -> None:
    class Node:
        other: Any = None

    with profile(tmp_path) as p:
        for i in range(50):
            p.bubble("c1", f"b{i}", role="assistant", text="x" * 8, created_at=ago(5))
    cycle = Node()
    cycle.other = Node()
    cycle.other.other = cycle  # garbage the reference count alone cannot free
    alive = weakref.ref(cycle)
    first = read(p.db_path)
    assert len(first.calls) == 50 and gc.get_freeze_count() > 50
    del cycle
    gc.collect()
    assert alive() is not None  # frozen: the collector does not look at it
    read(p.db_path)
    assert alive() is None  # thawed and collected by the next full parse
    gc.unfreeze()


def test_a_value_that_is_not_json_mid_scan_is_skipped_not_fatal(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        for i in range(10):
            if i == 4:
                p.put(f"bubbleId:c1:{i:02d}", b"\xff{ not json")
            else:
                p.bubble("c1", f"{i:02d}", role="assistant", text="x" * 8, created_at=ago(9 - i))
            p.flush()
    calls = read(p.db_path, plan=Plan(page_rows=3)).calls
    assert sorted(c.key[-2:] for c in calls) == [f"{i:02d}" for i in range(10) if i != 4]


def test_the_agent_walk_in_a_forked_child_equals_the_walk_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    spec = SampleSpec(seed=3, conversations=30, bubbles=(4, 10), days=5)
    info = generate_sample_profile(tmp_path / "Cursor", spec)
    serial = sorted(read(info.db_path).calls, key=lambda c: c.key)
    forked: list[WalkAside] = []
    monkeypatch.setattr(
        full_parse, "WalkAside", lambda *a, **k: forked.append(WalkAside(*a, **k)) or forked[-1]
    )
    aside = sorted(
        read(info.db_path, plan=Plan(forks=True, walk_rows=0)).calls, key=lambda c: c.key
    )
    assert len(forked) == 1 and aside == serial
    assert any(c.key.startswith("cursor:agentKv:") for c in aside)


def test_a_failing_walk_in_the_child_raises_in_the_parent(tmp_path: Path) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    with pytest.raises(DatabaseMissingError):
        WalkAside(tmp_path / "missing.vscdb", 10, 100).result()


def test_a_cancelled_walk_leaves_no_child_behind(tmp_path: Path) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    db = _write_agents(tmp_path, AGENT_VALUES)
    aside = WalkAside(db, 1 << 62, 5)
    aside.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(aside._parts._pid, os.WNOHANG)


def test_text_that_is_not_utf8_mid_scan_is_decoded_with_replacement_once(tmp_path: Path) -> None:
    with profile(tmp_path) as p:
        for i in range(12):
            p.bubble(
                "c1", f"{i:02d}", role="assistant", text="x" * 8, created_at=ago(20 - i), model="m"
            )
            p.flush()
    conn = sqlite3.connect(p.db_path)
    raw = json.dumps(
        ProfileWriter.bubble_value(role="assistant", text="y" * 8, created_at=ago(3), model="MM")
    ).encode()
    conn.execute(
        "UPDATE cursorDiskKV SET value = CAST(? AS TEXT) WHERE key = 'bubbleId:c1:06'",
        (raw.replace(b"MM", b"g\xffpt"),),
    )
    conn.commit()
    conn.close()
    calls = read(p.db_path, plan=Plan(page_rows=4)).calls
    assert len(calls) == 12 and len({c.key for c in calls}) == 12
    assert {c.model for c in calls} == {"m", "g\ufffdpt"}


@pytest.mark.parametrize("bubbles, agents", [(3, 40), (40, 3), (20, 20), (0, 5), (5, 0), (0, 0)])
def test_family_counts_walk_the_smaller_family_and_equal_counting_both(
    tmp_path: Path, bubbles: int, agents: int
) -> None:
    """Keys of every kind outside the two families (NULL, numbers, BLOBs, text on either side
    and between them) are the rest the larger family's count leaves out."""
    db = tmp_path / "state.vscdb"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        rows: list[tuple[Any, bytes]] = [(f"bubbleId:c:{i}", b"{}") for i in range(bubbles)]
        rows += [(f"agentKv:blob:{i:04x}", b"\x0a") for i in range(agents)]
        rows += [(None, b""), (None, b""), (7, b""), (2.5, b""), (b"bubbleId:blob", b"")]
        rows += [(k, b"") for k in ("agentKv:blob", "agentKv:blob;", "b", "bubbleId;", "z")]
        rows += [("agentKv:blob:", b""), ("bubbleId:", b""), ("composerData:x", b"{}")]
        conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
    with open_readonly(db) as conn:
        last = scan.last_row(conn)[0]
        expected = (
            scan.family_count(conn, scan.BUBBLE_LO, scan.BUBBLE_HI, last),
            scan.family_count(conn, scan.AGENT_LO, scan.AGENT_HI, last),
            scan.total_count(conn),
        )
        assert expected[:2] == (bubbles + 1, agents + 1)  # the bare prefixes are members
        assert scan.family_counts(conn) == expected
