"""What a long-lived reader keeps of the Cursor 3.x composer rows between refreshes: a digest
of each stored value, not the value (issue 19: ~1.3 kB a composerData row), and a changed
value is still seen."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from codeburn.providers.ide.layout3.headers import stored_digest
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.profile_writer import ProfileWriter

T0 = 1_795_168_800_000  # 2026-11-20T10:00:00Z
DAY = 86_400_000
FLOOR, NOW = T0 - 30 * DAY, T0 + 10 * DAY


def stored(db: Path, sql: str) -> bytes:
    conn = sqlite3.connect(db)
    try:
        return bytes(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_the_memo_keeps_digests_and_a_value_rewritten_with_the_same_length_is_seen(
    tmp_path: Path,
) -> None:
    p = ProfileWriter(tmp_path / "Cursor")
    w = Cursor3Writer(p, header_columns=None)
    w.item_headers([Header("c-i", folder="/home/me/one", created_ms=T0)])
    w.composer("c-i", state="~", total_used_tokens=4_000)
    p.flush()
    reader = CursorReader(p.db_path, floor_ms=FLOOR)
    assert [c.input_tokens for c in reader.read(now_ms=NOW).calls] == [4_000]
    memo = reader._l3.composer_rows
    data_sql = "SELECT CAST(value AS BLOB) FROM cursorDiskKV WHERE key = 'composerData:c-i'"
    items_sql = "SELECT CAST(value AS BLOB) FROM ItemTable WHERE key = 'composer.composerHeaders'"
    assert memo.data["c-i"][1] == stored_digest(stored(p.db_path, data_sql))
    assert memo.items[0] == stored_digest(stored(p.db_path, items_sql))
    assert all(len(kept[1] or b"") == 16 for kept in memo.data.values())
    conn = sqlite3.connect(p.db_path)
    conn.execute(
        "UPDATE cursorDiskKV SET value = replace(value, '4000', '7000')"
        " WHERE key = 'composerData:c-i'"
    )
    conn.commit()
    conn.close()
    p.close()
    after = reader.read(now_ms=NOW)
    assert not after.full
    assert [c.input_tokens for c in after.calls] == [7_000]
    assert reader._l3.composer_rows.data["c-i"][1] == stored_digest(stored(p.db_path, data_sql))


def test_no_stored_value_has_no_digest() -> None:
    assert stored_digest(None) is None
    assert stored_digest(b"{}") != stored_digest(b"{ }")
