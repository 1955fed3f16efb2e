"""The agent reader re-reads only files whose size or mtime changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codeburn.cache.agent_files import load_agent_files, save_agent_files
from codeburn.providers.home import reader as cursor_agent
from codeburn.providers.home.reader import AgentReader, take_snapshot
from codeburn.providers.samples.home_writer import AgentHomeWriter, TurnSpec, assistant, user

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

T0 = 1_780_000_000_000


def _settled(path: Path) -> Path:
    """Written long ago (SQLite stamps a store with the real clock: written just now, it would
    be read again at every read)."""
    os.utime(path, ns=(T0 * 1_000_000, T0 * 1_000_000))
    return path


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    real_transcript, real_store = cursor_agent.parse_transcript, cursor_agent.read_store

    def transcript(path: Path, data: bytes | None = None) -> object:
        names.append(path.name)
        return real_transcript(path, data)

    def store(path: Path) -> object:
        names.append(path.parent.name)
        return real_store(path)

    monkeypatch.setattr(cursor_agent, "parse_transcript", transcript)
    monkeypatch.setattr(cursor_agent, "read_store", store)
    return names


def test_only_changed_files_are_read_again(tmp_path: Path, parsed: list[str]) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("a", [user("q" * 4), assistant("r" * 8)], mtime_ms=T0)
    home.transcript("b", [user("q" * 4)], mtime_ms=T0)
    _settled(home.cli_session("s", [TurnSpec("hi", ["ok"])], created_ms=T0))
    reader = AgentReader(tmp_path)
    first = reader.read(take_snapshot(tmp_path))
    assert sorted(parsed) == ["a.jsonl", "b.jsonl", "s"] and reader.changed
    assert [t.user_chars for t in first.transcripts["a"].turns] == [4]
    parsed.clear()
    reader.changed = False
    assert reader.read(take_snapshot(tmp_path)) == first
    assert parsed == [] and not reader.changed
    home.transcript("a", [user("q" * 4), assistant("r" * 8), user("w" * 12)], mtime_ms=T0 + 1)
    second = reader.read(take_snapshot(tmp_path))
    assert parsed == ["a.jsonl"] and reader.changed
    assert [t.user_chars for t in second.transcripts["a"].turns] == [4, 12]
    assert second.transcripts["b"] == first.transcripts["b"]
    assert second.sessions == first.sessions


def test_entries_round_trip_and_a_damaged_entry_is_read_again(
    tmp_path: Path, parsed: list[str]
) -> None:
    home = AgentHomeWriter(tmp_path)
    home.transcript("a", [user("q" * 4), assistant("r" * 8)], mtime_ms=T0)
    _settled(home.cli_session("s", [TurnSpec("hi", ["ok"])], created_ms=T0, model="gpt-5"))
    first = AgentReader(tmp_path)
    expected = first.read(take_snapshot(tmp_path))
    stored = json.loads(json.dumps(first.entries))
    parsed.clear()
    again = AgentReader(tmp_path, stored)
    assert again.read(take_snapshot(tmp_path)) == expected
    assert parsed == [] and not again.changed
    key = next(k for k in stored if k.endswith("a.jsonl"))
    stored[key]["turns"] = [["not", "a", "turn"]]
    damaged = AgentReader(tmp_path, stored)
    assert damaged.read(take_snapshot(tmp_path)) == expected
    assert parsed == ["a.jsonl"] and damaged.changed


def test_a_vanished_file_drops_out(tmp_path: Path, parsed: list[str]) -> None:
    home = AgentHomeWriter(tmp_path)
    path = home.transcript("a", [user("q")], mtime_ms=T0)
    reader = AgentReader(tmp_path)
    assert "a" in reader.read(take_snapshot(tmp_path)).transcripts
    path.unlink()
    reader.changed = False
    assert reader.read(take_snapshot(tmp_path)).transcripts == {}
    assert reader.entries == {} and reader.changed


def test_the_saved_entries_follow_every_change(tmp_path: Path) -> None:
    home = AgentHomeWriter(tmp_path / "home")
    home.transcript("a", [user("q" * 4), assistant("r" * 8)], mtime_ms=T0)
    home.transcript("b", [user("q" * 4)], mtime_ms=T0)
    cache = tmp_path / "cache"
    reader = AgentReader(tmp_path / "home")
    reader.read(take_snapshot(tmp_path / "home"))
    save_agent_files(cache, "home", reader.entries)
    assert load_agent_files(cache, "home") == reader.entries
    # One transcript rewritten, one new: the unchanged one keeps its entry, the file all three.
    home.transcript("a", [user("q" * 4), assistant("r" * 8), user("w" * 12)], mtime_ms=T0 + 1)
    home.transcript("c", [user("z" * 8)], mtime_ms=T0)
    reader.read(take_snapshot(tmp_path / "home"))
    save_agent_files(cache, "home", reader.entries)
    stored = load_agent_files(cache, "home")
    assert stored == json.loads(json.dumps(reader.entries))
    user_chars = {Path(k).stem: [row[1] for row in e["turns"]] for k, e in stored.items()}
    assert user_chars == {"a": [4, 12], "b": [4], "c": [8]}


def test_a_store_entry_damaged_into_a_transcript_entry_is_read_again(
    tmp_path: Path, parsed: list[str]
) -> None:
    home = AgentHomeWriter(tmp_path)
    home.cli_session("s", [TurnSpec("hi", ["ok"])], created_ms=T0, model="gpt-5")
    first = AgentReader(tmp_path)
    expected = first.read(take_snapshot(tmp_path))
    stored = json.loads(json.dumps(first.entries))
    key = next(iter(stored))
    stored[key]["turns"] = []
    parsed.clear()
    damaged = AgentReader(tmp_path, stored)
    assert damaged.read(take_snapshot(tmp_path)) == expected
    assert parsed == ["s"] and damaged.changed


def test_a_file_read_just_after_it_was_written_is_read_again(tmp_path: Path) -> None:
    # Written again within the same timestamp tick, same size: its identity does not move.
    home = AgentHomeWriter(tmp_path)
    path = home.transcript("a", [user("q" * 12)])  # written now
    stamp, size = os.stat(path).st_mtime_ns, os.stat(path).st_size
    reader = AgentReader(tmp_path)
    first = reader.read(take_snapshot(tmp_path))
    assert [t.user_chars for t in first.transcripts["a"].turns] == [12]
    # ... and the fingerprint of a home just written never stays the same.
    assert take_snapshot(tmp_path).fingerprint != take_snapshot(tmp_path).fingerprint
    home.transcript("a", [user("\u00e9" * 2)])  # 12 bytes of JSON too: "\\u00e9" twice
    os.utime(path, ns=(stamp, stamp))
    assert os.stat(path).st_size == size
    second = reader.read(take_snapshot(tmp_path))
    assert [t.user_chars for t in second.transcripts["a"].turns] == [2]
