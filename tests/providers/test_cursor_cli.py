"""Cursor Agent CLI `store.db` sessions (real SQLite files in tmp_path)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeburn.providers.agent.graph import GraphTurn
from codeburn.providers.home import cli_store
from codeburn.providers.home.cli_store import StoreBusy, decode_meta, find_stores, read_store
from codeburn.providers.samples.home_writer import AgentHomeWriter, TurnSpec

CREATED = 1_780_000_000_000  # 2026-05-28T20:26:40Z


def test_session_meta_and_graph(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path)
    path = home.cli_session(
        "s1",
        [TurnSpec("hi" * 10, ["hello" * 10]), TurnSpec("more", ["ok"], user_ms=CREATED + 5000)],
        created_ms=CREATED,
        model="gpt-5",
        workspace="/home/me/cli",
    )
    assert find_stores(tmp_path) == [path]
    session = read_store(path)
    assert session is not None and session.unreadable is None
    assert (session.conversation_id, session.created_ms, session.model, session.workspace) == (
        "s1",
        CREATED,
        "gpt-5",
        "/home/me/cli",
    )
    assert session.graph is not None
    assert session.graph.turns == (
        GraphTurn(None, 20, 0, 50, None, (), ()),
        GraphTurn(CREATED + 5000, 4, 0, 2, None, (), (), end_ms=CREATED + 5000),
    )


def test_encrypted_blobs_make_the_session_unreadable(tmp_path: Path) -> None:
    path = AgentHomeWriter(tmp_path).cli_session(
        "s2", [TurnSpec("secret", ["answer"])], created_ms=CREATED, encrypt_blobs=True
    )
    session = read_store(path)
    assert session is not None
    assert (session.graph, session.unreadable, session.created_ms) == (None, "encrypted", CREATED)


def test_a_session_without_a_root_is_empty_not_unreadable(tmp_path: Path) -> None:
    session = read_store(AgentHomeWriter(tmp_path).cli_session("s3", created_ms=CREATED))
    assert session is not None
    assert (session.graph, session.unreadable) == (None, None)


def test_meta_as_hex_or_plain_json() -> None:
    assert decode_meta(b'{"agentId": "a"}'.hex()) == {"agentId": "a"}
    assert decode_meta(b'{"agentId": "b"}') == {"agentId": "b"}
    assert decode_meta("zz not json") is None
    assert decode_meta("5b315d") is None  # hex of [1]: not an object
    assert decode_meta(42) is None


def test_other_files_named_store_db(tmp_path: Path) -> None:
    folder = tmp_path / "chats" / "abc" / "s4"
    folder.mkdir(parents=True)
    other = folder / "store.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE something (x)")
    conn.commit()
    conn.close()
    assert read_store(other) is None  # not a CLI session at all
    garbage = tmp_path / "chats" / "abc" / "s5" / "store.db"
    garbage.parent.mkdir()
    garbage.write_bytes(b"this is not a database at all" * 100)
    session = read_store(garbage)
    assert session is not None
    assert (session.conversation_id, session.unreadable) == ("s5", "unreadable-store")


def test_a_locked_store_is_busy_not_unreadable(tmp_path: Path) -> None:
    path = AgentHomeWriter(tmp_path).cli_session("s6", [TurnSpec("a", ["b"])], created_ms=CREATED)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreBusy):
            read_store(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert read_store(path) is not None


def _blob_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements on `blobs` that read_store's connections run, from now on."""
    run: list[str] = []
    real = cli_store.open_readonly

    @contextlib.contextmanager
    def traced(path: Path) -> Iterator[sqlite3.Connection]:
        with real(path) as conn:
            conn.set_trace_callback(lambda sql: run.append(sql) if "FROM blobs" in sql else None)
            yield conn

    monkeypatch.setattr(cli_store, "open_readonly", traced)
    return run


@pytest.mark.parametrize("unreadable_text", [False, True])
def test_a_small_store_is_read_in_one_statement_with_what_lookups_by_id_find(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreadable_text: bool
) -> None:
    path = AgentHomeWriter(tmp_path).cli_session(
        "s7",
        [TurnSpec("hé" * 10, ["hello" * 10, "✅"]), TurnSpec("more", ["ok"], user_ms=CREATED + 5)],
        created_ms=CREATED,
        model="gpt-5",
    )
    conn = sqlite3.connect(path)
    with conn:  # rows no graph reaches: TEXT, NULL and integer values
        conn.executemany("INSERT INTO blobs VALUES (?, ?)", [("t", "{}"), ("n", None), ("i", 7)])
        if unreadable_text:  # one whole read cannot decode: looked up blob by blob
            conn.execute("INSERT INTO blobs VALUES ('bad', CAST(x'7bff' AS TEXT))")
    conn.close()
    run = _blob_statements(monkeypatch)
    whole = read_store(path)
    whole_run = list(run)
    run.clear()
    by_id = read_store(path, whole_bytes=0)
    assert whole is not None and whole.graph is not None and whole.graph.turns
    assert whole == by_id
    assert len(run) > 5  # one statement a blob
    if unreadable_text:
        assert whole_run == ["SELECT id, data FROM blobs", *run]
    else:
        assert whole_run == ["SELECT id, data FROM blobs"]
