"""An incremental refresh must give exactly what a cold parse of the same database gives."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from codeburn.providers.calls import Call
from codeburn.providers.ide.reader import CursorReader
from codeburn.providers.localtime import iso_utc, local_midnight_ms, six_month_floor
from codeburn.providers.samples.generator import SampleSpec, generate_sample_profile
from codeburn.providers.samples.profile_writer import ProfileWriter
from tests.cursor_fixtures import NOW_MS

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

SPEC = SampleSpec(seed=11, conversations=40, bubbles=(4, 12), days=10, now_ms=NOW_MS)


def _floor() -> int:
    return local_midnight_ms(six_month_floor())


def _sorted(calls: list[Call]) -> list[Call]:
    return sorted(calls, key=lambda c: c.key)


def _cold(db: Path, first_seen: dict[str, int], budget: int | None = None) -> list[Call]:
    reader = CursorReader(db, floor_ms=_floor(), first_seen=first_seen, budget=budget)
    return _sorted(reader.read(now_ms=NOW_MS).calls)


def _newest_conversation(db: Path) -> str:
    conn = sqlite3.connect(db)
    key = conn.execute(
        "SELECT key FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"
        " ORDER BY rowid DESC LIMIT 1"
    ).fetchone()[0]
    conn.close()
    return str(key.split(":")[1])


def _append_conversation(db: Path) -> None:
    with ProfileWriter(db.parent.parent.parent) as writer:
        for n in range(50):
            role = "user" if n % 2 == 0 else "assistant"
            writer.bubble(
                "new-conv",
                f"b{n:02d}",
                role=role,
                text="t" * (40 + n),
                created_at=iso_utc(NOW_MS - 60_000 + n),
                model=None if role == "user" else "gpt-5",
            )


def _replace_bubble(db: Path) -> None:
    conn = sqlite3.connect(db)
    key, value = conn.execute(
        "SELECT key, value FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;'"
        " ORDER BY rowid LIMIT 1 OFFSET 7"
    ).fetchone()
    data = json.loads(value)
    data["tokenCount"] = {"inputTokens": 0, "outputTokens": 4321}
    conn.execute("INSERT OR REPLACE INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(data)))
    conn.commit()
    conn.close()


def _update_in_place(db: Path) -> None:
    """Rewrite the first bubble of the newest (streaming, so recent) conversation."""
    composer = _newest_conversation(db)
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE cursorDiskKV SET value = json_set(value, '$.text', ?, '$.modelInfo.modelName',"
        " 'gpt-5') WHERE key = (SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ?"
        " ORDER BY rowid LIMIT 1)",
        ("z" * 999, f"bubbleId:{composer}:", f"bubbleId:{composer};"),
    )
    conn.commit()
    conn.close()


def _delete_bubble(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(
        "DELETE FROM cursorDiskKV WHERE rowid = (SELECT rowid FROM cursorDiskKV"
        " WHERE key >= 'bubbleId:' AND key < 'bubbleId;' ORDER BY rowid LIMIT 1 OFFSET 3)"
    )
    conn.commit()
    conn.close()


def _append_agent_turn(db: Path) -> None:
    with ProfileWriter(db.parent.parent.parent) as writer:
        writer.agent("late-1", role="user", content="q" * 33, request_id="late-request")
        writer.agent("late-2", role="assistant", content=[{"type": "text", "text": "a" * 9}])


def _swap_file(db: Path) -> None:
    other = db.parent / "other"
    info = generate_sample_profile(other, SampleSpec(seed=99, conversations=12, now_ms=NOW_MS))
    db.unlink()
    for side in ("-wal", "-shm"):
        Path(str(db) + side).unlink(missing_ok=True)
    shutil.copyfile(info.db_path, db)


MUTATIONS: dict[str, tuple[Callable[[Path], None], bool]] = {
    "append": (_append_conversation, True),
    "insert-or-replace": (_replace_bubble, True),
    "agent-append": (_append_agent_turn, True),
    "delete": (_delete_bubble, False),
    "swap": (_swap_file, False),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_refresh_equals_cold_parse(tmp_path: Path, name: str) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    reader = CursorReader(info.db_path, floor_ms=_floor())
    before = reader.read(now_ms=NOW_MS)
    mutate, incremental = MUTATIONS[name]
    mutate(info.db_path)
    after = reader.read(now_ms=NOW_MS)
    assert after.full is not incremental
    cold = _cold(info.db_path, after.first_seen)
    assert _sorted(after.calls) == cold
    assert _sorted(before.calls) != cold


def test_refresh_sees_a_recent_bubble_updated_in_place(tmp_path: Path) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    _append_conversation(info.db_path)
    reader = CursorReader(info.db_path, floor_ms=_floor())
    before = reader.read(now_ms=NOW_MS)
    _update_in_place(info.db_path)
    after = reader.read(now_ms=NOW_MS)
    assert not after.full
    cold = _cold(info.db_path, after.first_seen)
    assert _sorted(after.calls) == cold
    assert _sorted(before.calls) != cold


def test_refresh_with_nothing_changed_is_incremental_and_equal(tmp_path: Path) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    reader = CursorReader(info.db_path, floor_ms=_floor())
    first = _sorted(reader.read(now_ms=NOW_MS).calls)
    again = reader.read(now_ms=NOW_MS)
    assert not again.full and _sorted(again.calls) == first


def test_refresh_past_the_budget_moves_the_cutoff(tmp_path: Path) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    reader = CursorReader(info.db_path, floor_ms=_floor(), budget=120)
    assert reader.read(now_ms=NOW_MS).budget_hit
    _append_conversation(info.db_path)
    after = reader.read(now_ms=NOW_MS)
    assert not after.full and after.budget_hit
    assert _sorted(after.calls) == _cold(info.db_path, after.first_seen, budget=120)


def _rename_in_place(db: Path, composer: str, name: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE cursorDiskKV SET value = json_set(value, '$.name', ?) WHERE key = ?",
        (name, f"composerData:{composer}"),
    )
    conn.commit()
    conn.close()


def _counting_rereads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The conversations whose bubbles a refresh reads again, in order."""
    from codeburn.providers.ide import reader as reader_module  # noqa: PLC0415

    read: list[str] = []
    original = reader_module.scan.conversation_bubbles

    def counting(conn: sqlite3.Connection, composer_id: str) -> list[object]:
        read.append(composer_id)
        return original(conn, composer_id)

    monkeypatch.setattr(reader_module.scan, "conversation_bubbles", counting)
    return read


def test_refresh_reads_again_only_the_recent_conversations_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    _append_conversation(info.db_path)  # "new-conv": recent (its messages a minute old)
    reader = CursorReader(info.db_path, floor_ms=_floor())
    reader.read(now_ms=NOW_MS)
    read = _counting_rereads(monkeypatch)
    reader.read(now_ms=NOW_MS)  # the first refresh reads the recent ones once more
    assert "new-conv" in read
    read.clear()
    unchanged = reader.read(now_ms=NOW_MS)
    assert not unchanged.full and read == []
    _update_in_place(info.db_path)  # rewrites a message of "new-conv" (same ROWID)
    after = reader.read(now_ms=NOW_MS)
    assert not after.full and read == ["new-conv"]
    assert _sorted(after.calls) == _cold(info.db_path, after.first_seen)


def test_refresh_sees_a_recent_conversation_renamed_in_place(tmp_path: Path) -> None:
    info = generate_sample_profile(tmp_path / "Cursor", SPEC)
    _append_conversation(info.db_path)
    with ProfileWriter(info.db_path.parent.parent.parent) as writer:
        writer.composer("new-conv", created_at_ms=NOW_MS - 60_000, extra={"name": "Parser"})
    reader = CursorReader(info.db_path, floor_ms=_floor())
    reader.read(now_ms=NOW_MS)
    reader.read(now_ms=NOW_MS)
    assert reader.read(now_ms=NOW_MS).titles.get("new-conv") == "Parser"
    _rename_in_place(info.db_path, "new-conv", "Parser rework")
    after = reader.read(now_ms=NOW_MS)
    assert not after.full and after.titles.get("new-conv") == "Parser rework"
