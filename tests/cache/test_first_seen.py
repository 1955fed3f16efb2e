"""First-seen times: a reload sees every write, whoever made it; earlier times always win."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_a_save_merges_into_another_processs_write_not_into_what_we_wrote(
    tmp_path: Path,
) -> None:
    """A save reuses what this process last wrote only while the file is that one."""
    other_db = "/home/me/other/state.vscdb"
    save_first_seen(tmp_path, DB, {"req-a": 1_000})
    path = tmp_path / FILE
    written = tmp_path / "other.json"  # another process's write, renamed over ours
    written.write_text(json.dumps({DB: {"req-b": 2_000}, other_db: {"req-x": 5}}))
    written.replace(path)
    save_first_seen(tmp_path, DB, {"req-c": 3_000})
    assert load_first_seen(tmp_path, DB) == {"req-b": 2_000, "req-c": 3_000}
    assert load_first_seen(tmp_path, other_db) == {"req-x": 5}
    save_first_seen(tmp_path, other_db, {"req-y": 6})  # from what we just wrote
    assert json.loads(path.read_text()) == {
        DB: {"req-b": 2_000, "req-c": 3_000},
        other_db: {"req-x": 5, "req-y": 6},
    }
