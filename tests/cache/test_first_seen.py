"""First-seen times: a reload sees every write, whoever made it; earlier times always win."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeburn.cache.first_seen import FILE, load_first_seen, save_first_seen

DB = "/home/me/.config/Cursor/User/globalStorage/state.vscdb"


def test_a_reload_sees_our_writes_and_another_processs(tmp_path: Path) -> None:
    save_first_seen(tmp_path, DB, {"req-a": 2_000, "req-b": 3_000})
    assert load_first_seen(tmp_path, DB) == {"req-a": 2_000, "req-b": 3_000}
    assert load_first_seen(tmp_path, DB) == {"req-a": 2_000, "req-b": 3_000}  # unchanged file
    save_first_seen(tmp_path, DB, {"req-a": 1_000, "req-b": 9_000, "req-c": 4_000})
    assert load_first_seen(tmp_path, DB) == {"req-a": 1_000, "req-b": 3_000, "req-c": 4_000}
    # Another process's write, same size (a new file renamed over ours): read again.
    path = tmp_path / FILE
    other = tmp_path / "other.json"
    other.write_text(path.read_text().replace("4000", "5000"))
    other.replace(path)
    assert load_first_seen(tmp_path, DB) == {"req-a": 1_000, "req-b": 3_000, "req-c": 5_000}
    loaded = load_first_seen(tmp_path, DB)
    loaded["req-a"] = 7  # what a caller does with its copy stays its own
    assert load_first_seen(tmp_path, DB)["req-a"] == 1_000
    assert json.loads(path.read_text())[DB]["req-a"] == 1_000


def test_a_commands_merge_is_written_by_its_writer_and_seen_by_its_own_reads_meanwhile(
    tmp_path: Path,
) -> None:
    from codeburn.cache.first_seen import first_seen_lost  # noqa: PLC0415
    from codeburn.providers import runtime  # noqa: PLC0415

    if not runtime.can_fork():
        pytest.skip("no fork here")
    save_first_seen(tmp_path, DB, {"req-a": 2_000})
    hold = tmp_path / "writers.lock"
    with runtime.detached_after(hold):
        save_first_seen(tmp_path, DB, {"req-a": 5_000, "req-b": 3_000})
        save_first_seen(tmp_path, "other.vscdb", {"req-c": 1_000})
        save_first_seen(tmp_path, DB, {"req-b": 2_500})
        # Not written yet: what the writer will write once the answer is out ...
        assert json.loads((tmp_path / FILE).read_text()) == {DB: {"req-a": 2_000}}
        # ... and what this command reads meanwhile, as if it were.
        assert load_first_seen(tmp_path, DB) == {"req-a": 2_000, "req-b": 2_500}
        assert load_first_seen(tmp_path, "other.vscdb") == {"req-c": 1_000}
        (tmp_path / FILE).unlink()
        assert not first_seen_lost(tmp_path)  # the writer is about to write it
    runtime.wait_for_writers(hold)
    assert json.loads((tmp_path / FILE).read_text()) == {
        DB: {"req-a": 5_000, "req-b": 2_500},  # the file was removed: only the merges are left
        "other.vscdb": {"req-c": 1_000},
    }
