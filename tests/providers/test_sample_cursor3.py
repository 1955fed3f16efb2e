"""The Cursor 3.x sample profile: what it writes, checked on the files themselves."""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.agent.graph import GraphUnreadable, decode_root
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.samples.cursor3 import Cursor3Info, Cursor3Spec, generate_cursor3_profile

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

NOW_MS = 1_780_000_000_000  # 2026-05-28T20:26:40Z: a fixed moment, not today
SPEC = Cursor3Spec(
    seed=5,
    conversations=20,
    turns=(3, 3),
    cli_sessions=2,
    cli_transcripts=1,
    classic=2,
    classic_bubbles=(4, 4),
    now_ms=NOW_MS,
)


def _generate(tmp_path: Path, spec: Cursor3Spec = SPEC) -> Cursor3Info:
    return generate_cursor3_profile(tmp_path / "Cursor", tmp_path / "home", spec)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Cursor3Info:
    return _generate(tmp_path_factory.mktemp("cursor3"))


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _composer_data(db: Path) -> dict[str, dict[str, object]]:
    rows = _rows(
        db, "SELECT substr(key, 14), value FROM cursorDiskKV WHERE key LIKE 'composerData:%'"
    )
    return {str(k): json.loads(str(v)) for k, v in rows}


def test_kinds_of_the_twenty_conversation_cycle(sample: Cursor3Info) -> None:
    assert sample.kinds == {
        "root": 7, "root-spread": 3, "bubbles": 2, "root-messages": 2, "root+transcript": 2,
        "transcript": 1, "meter": 1, "transcript+meter": 1, "encrypted": 1,
    }  # fmt: skip
    assert sample.turns == 20 * 3 + 2 * 3 + 1 * 3 + 2  # IDE, CLI stores, CLI transcript, subagent
    assert sample.bubbles == 2 * 4 + 2 * 3 * 2  # classic conversations + `_v:17` user/assistant
    assert sample.cli_sessions == 2 and sample.classic is not None


def test_headers_table_has_ten_named_columns_and_itemtable_lists_the_rest(
    sample: Cursor3Info,
) -> None:
    columns = [r[1] for r in _rows(sample.db_path, "PRAGMA table_info(composerHeaders)")]
    assert columns == [
        "composerId", "workspaceId", "createdAt", "lastUpdatedAt", "isArchived", "isSubagent",
        "recency", "checkpointAt", "subagentTypeName", "value",
    ]  # fmt: skip
    table = {r[0] for r in _rows(sample.db_path, "SELECT composerId FROM composerHeaders")}
    (item,) = _rows(
        sample.db_path, "SELECT value FROM ItemTable WHERE key = 'composer.composerHeaders'"
    )
    listed = {h["composerId"] for h in json.loads(str(item[0]))["allComposers"]}
    assert (len(table), len(listed)) == (18, 2)  # conversations 6 and 14 of 20: ItemTable only
    versions = _composer_data(sample.db_path)
    assert table | listed == {cid for cid, v in versions.items() if v["_v"] != 10}


def test_nine_column_headers(tmp_path: Path) -> None:
    spec = Cursor3Spec(conversations=3, turns=(1, 1), classic=0, cli_sessions=0,
                       cli_transcripts=0, header_columns=9, now_ms=NOW_MS)  # fmt: skip
    info = _generate(tmp_path, spec)
    columns = [r[1] for r in _rows(info.db_path, "PRAGMA table_info(composerHeaders)")]
    assert len(columns) == 9 and "subagentTypeName" not in columns and columns[2] == "value"
    assert _rows(info.db_path, "SELECT count(*) FROM composerHeaders") == [(3,)]


def test_before_cursor_3_15_headers_live_in_the_itemtable_only(tmp_path: Path) -> None:
    spec = Cursor3Spec(conversations=3, turns=(1, 1), classic=0, cli_sessions=0,
                       cli_transcripts=0, header_columns=None, now_ms=NOW_MS)  # fmt: skip
    info = _generate(tmp_path, spec)
    tables = _rows(info.db_path, "SELECT name FROM sqlite_master WHERE type = 'table'")
    assert sorted(str(t[0]) for t in tables) == ["ItemTable", "cursorDiskKV"]
    (item,) = _rows(
        info.db_path, "SELECT value FROM ItemTable WHERE key = 'composer.composerHeaders'"
    )
    assert len(json.loads(str(item[0]))["allComposers"]) == 3
    result = CursorReader(info.db_path, floor_ms=0).read(now_ms=NOW_MS)
    assert sorted(result.conversations.values()) == ["root", "root", "root"]


def test_composer_data_versions_and_roots(sample: Cursor3Info) -> None:
    data = _composer_data(sample.db_path)
    versions = sorted(int(str(v["_v"])) for v in data.values())
    assert versions.count(10) == 2 and versions.count(17) == 2 and versions.count(18) == 18
    states = [str(v.get("conversationState")) for v in data.values() if v["_v"] != 10]
    assert states.count("~") == 3  # transcript, meter, transcript+meter: placeholders
    assert all(s.startswith("~") and len(s) > 100 for s in states if s != "~")
    meters = [v for v in data.values() if "contextTokensUsed" in v]
    assert len(meters) == 2 and all(v["conversationState"] == "~" for v in meters)


def test_blobs_are_content_addressed_and_roots_decode(sample: Cursor3Info) -> None:
    blobs = {
        str(k)[len("agentKv:blob:") :]: bytes(v) if isinstance(v, bytes) else str(v).encode()
        for k, v in _rows(
            sample.db_path, "SELECT key, value FROM cursorDiskKV WHERE key LIKE 'agentKv:blob:%'"
        )
    }
    stream = [k for k in blobs if len(k) != 64]  # the classic part's agent-stream rows
    assert blobs and all(
        hashlib.sha256(v).hexdigest() == k for k, v in blobs.items() if len(k) == 64
    )
    assert sample.blobs == len(blobs) and stream
    turns: list[int] = []
    unreadable: list[str] = []
    for value in _composer_data(sample.db_path).values():
        state = str(value.get("conversationState", "~"))
        if len(state) <= 1:
            continue
        try:
            graph = decode_root(base64.b64decode(state[1:]), blobs.get)
        except GraphUnreadable as exc:
            unreadable.append(exc.reason)
            continue
        assert graph.skipped_blobs == 0
        turns.append(len(graph.turns))
    assert unreadable == ["undecodable"]  # the encrypted root: not even a protobuf message
    assert turns == [3] * 16  # 7 root, 3 spread, 2 messages, 2 with transcripts, 2 `_v:17`


def test_cursor_home_transcripts_and_cli_stores(sample: Cursor3Info) -> None:
    home = sample.home
    files = sorted(p.relative_to(home / "projects") for p in (home / "projects").rglob("*.*"))
    transcripts = [p for p in files if p.parts[1] == "agent-transcripts"]
    assert len(transcripts) == sample.transcripts == 8
    assert sum(p.suffix == ".txt" for p in transcripts) == 1
    assert sum(p.parent.name == "subagents" for p in transcripts) == 1
    assert [p for p in files if p.parts[1] == "mcps"] == [
        Path("home-dev-infra/mcps/github/calls.jsonl")
    ]
    stores = sorted((home / "chats").glob("*/*/store.db"))
    assert len(stores) == 2
    for store in stores:
        ((meta_hex,),) = _rows(store, "SELECT value FROM meta WHERE key = '0'")
        meta = json.loads(bytes.fromhex(str(meta_hex)))
        assert meta["agentId"] == store.parent.name and meta["createdAt"] < NOW_MS
        assert store.parent.parent.name == hashlib.md5(meta["workspacePath"].encode()).hexdigest()
        root = _rows(store, f"SELECT data FROM blobs WHERE id = '{meta['latestRootBlobId']}'")
        assert hashlib.sha256(bytes(root[0][0])).hexdigest() == meta["latestRootBlobId"]


def _snapshot(info: Cursor3Info) -> tuple[list[tuple[object, ...]], dict[str, bytes]]:
    rows = _rows(info.db_path, "SELECT key, value FROM cursorDiskKV ORDER BY rowid")
    rows += _rows(info.db_path, "SELECT * FROM composerHeaders ORDER BY composerId")
    files = {
        str(p.relative_to(info.home)): p.read_bytes()
        for p in sorted(info.home.rglob("*"))
        if p.is_file() and p.name != "store.db"
    }
    for store in sorted(info.home.glob("chats/*/*/store.db")):
        files[str(store.relative_to(info.home))] = repr(
            _rows(store, "SELECT * FROM blobs ORDER BY id") + _rows(store, "SELECT * FROM meta")
        ).encode()
    return rows, files


def test_same_seed_same_profile(sample: Cursor3Info, tmp_path: Path) -> None:
    again = _generate(tmp_path)
    assert _snapshot(again) == _snapshot(sample)
    other = _generate(tmp_path / "other", Cursor3Spec(**{**_fields(SPEC), "seed": 6}))
    assert _snapshot(other)[0] != _snapshot(sample)[0]


def _fields(spec: Cursor3Spec) -> dict[str, object]:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__}


def test_ide_reader_reads_each_representation(sample: Cursor3Info) -> None:
    result = CursorReader(sample.db_path, floor_ms=0).read(now_ms=NOW_MS)
    kinds = sorted(result.conversations.values())
    # root: 7 root + 3 spread + 2 messages + 2 with a transcript; bubbles: 2 `_v:17`, 2 classic
    # and the classic part's 2 conversations whose one message has no usable date.
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "root": 14, "bubbles": 6, "meter": 2, "unreadable": 1,
    }  # fmt: skip
    assert result.unreadable == {"encrypted": 1}
    families: dict[str, int] = {}
    for call in result.calls:
        family = call.key.split(":")[1]
        families[family] = families.get(family, 0) + 1
    # root: 7 × (3 output turns + 1 meter input) + 7 × 3 turns with their own input;
    # bubble: `_v:17` 2 × 3 × (user + assistant), classic bubble tokens 4, classic meter's 2
    # assistants; composer-input: meter, transcript+meter, the classic meter conversation.
    assert families == {"root": 49, "bubble": 18, "composer-input": 3, "agentKv": 1}
