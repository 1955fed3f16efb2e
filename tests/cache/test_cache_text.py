"""Cache files are written a piece at a time (no second copy of the whole file in memory):
the bytes on disk are still exactly the text's UTF-8, whatever falls on a piece's edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeburn.cache import files
from codeburn.cache.agent_files import FILE as AGENT_FILES_FILE
from codeburn.cache.agent_files import save_agent_files
from codeburn.cache.blob_memo import FILE as BLOB_MEMO_FILE
from codeburn.cache.daily_cache import FILE as DAILY_FILE
from codeburn.cache.daily_cache import update_daily
from codeburn.cache.files import read_json, write_cache_json, write_cache_text
from codeburn.cache.first_seen import FILE as FIRST_SEEN_FILE
from codeburn.cache.first_seen import save_first_seen
from codeburn.cache.results_cache import FILE as RESULTS_FILE
from codeburn.cache.results_cache import CachedResults, save_results


def test_a_text_longer_than_a_piece_is_written_whole(tmp_path: Path) -> None:
    step = files._ENCODE_CHUNK
    # a two- and a four-byte character on each side of the first piece's edge
    text = "a" * (step - 1) + "é" + "𝄞" + "b" * (2 * step) + "ü"
    path = tmp_path / "c" / "x.json"
    assert write_cache_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")


def test_json_round_trips_and_empty_text_is_an_empty_file(tmp_path: Path) -> None:
    obj = {"k": ["v" * 1000] * 200, "é": 1}
    path = tmp_path / "y.json"
    assert write_cache_json(path, obj)
    assert read_json(path) == obj
    assert path.read_bytes() == json.dumps(obj, separators=(",", ":")).encode()
    assert write_cache_text(path, "")
    assert path.read_bytes() == b""


def test_only_files_that_hold_what_nothing_else_does_are_synced_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sealed days and first-seen times are the only record of what they hold; the results
    # cache and the agent files are copies of what is read again (lost or torn: a miss).
    synced: list[str] = []
    real_fsync = files.os.fsync
    real_replace = files.os.replace

    def fsync(fd: int) -> None:
        synced.append("fsync")
        real_fsync(fd)

    def replace(src: str, dst: Path) -> None:
        synced.append(Path(dst).name)
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    save_first_seen(tmp_path, "ns", {"a": 1})
    update_daily(tmp_path, timezone="UTC", db_path="/db", change=lambda cache: None)
    save_results(tmp_path, CachedResults("/db", "fp", 0, [], []))
    save_agent_files(tmp_path, "/home", {"/home/t.jsonl": {"turns": []}})
    assert files.write_quietly(tmp_path / BLOB_MEMO_FILE, b"memo")
    assert synced == [
        "fsync",
        FIRST_SEEN_FILE,
        "fsync",
        DAILY_FILE,
        RESULTS_FILE,
        AGENT_FILES_FILE,
        BLOB_MEMO_FILE,
    ]
