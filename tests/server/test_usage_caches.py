"""Results cache, daily cache and read states of the usage service, on real files."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeburn.cache.config import Budget
from codeburn.cache.daily_cache import daily_path
from codeburn.cache.results_cache import CachedResults, load_results, results_path, save_results
from codeburn.providers.background_writes import (
    disable_write_behind,
    enable_write_behind,
    flush_write_behind,
)
from codeburn.providers.calls import Call
from codeburn.providers.ide import reader as cursor_reader
from codeburn.providers.localtime import iso_utc, timezone_name, today
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.service.periods import Period, named_period
from codeburn.server.service.usage import UsageService
from tests.usage_fixtures import (
    at,
    days_ago,
    isolated_env,
    local_zone,
    write_hand_profile,
    write_profile_with_today,
)

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


NO_BUDGET = Budget()


class ReaderSpy:
    """Counts real parses (the reader still runs)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = cursor_reader.CursorReader.read

        def read(reader: cursor_reader.CursorReader, *args: object, **kwargs: object) -> object:
            self.calls += 1
            return original(reader, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(cursor_reader.CursorReader, "read", read)


def _status(db: Path) -> dict:
    status = UsageService(db).status(budget=NO_BUDGET, sync=False)
    assert status is not None
    return status


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_env(tmp_path, monkeypatch).cache


@pytest.mark.clock
def test_second_run_is_served_from_the_caches(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    spy = ReaderSpy(monkeypatch)
    first = _status(db)
    assert spy.calls == 1 and first["today"]["calls"] == 1
    second = _status(db)
    assert spy.calls == 1
    assert {k: v for k, v in second.items() if k != "generatedAt"} == {
        k: v for k, v in first.items() if k != "generatedAt"
    }
    assert results_path(env).stat().st_mode & 0o777 == 0o600
    # Sealed days are the month's days before today: on the 1st there are none to keep.
    if today().day == 1:
        assert not daily_path(env).exists()
    else:
        assert daily_path(env).stat().st_mode & 0o777 == 0o600


@pytest.mark.clock
def test_a_database_change_is_reparsed(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    spy = ReaderSpy(monkeypatch)
    assert _status(db)["today"]["calls"] == 1
    with ProfileWriter(tmp_path / "Cursor") as p:  # WAL mode: the change lands in the -wal file
        p.bubble(
            "conv-t", "t2", role="assistant", text="y" * 40, created_at=iso_utc(at(today(), 0, 6))
        )
    assert _status(db)["today"]["calls"] == 2 and spy.calls == 2


def test_another_path_never_reuses_the_cache(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    _status(db)
    twin_root = tmp_path / "Twin" / "User" / "globalStorage"
    twin_root.mkdir(parents=True)
    twin = twin_root / "state.vscdb"
    sqlite3.connect(db).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
    shutil.copy2(db, twin)
    spy = ReaderSpy(monkeypatch)
    _status(twin)
    assert spy.calls == 1


@pytest.mark.clock
def test_an_earlier_floor_is_reparsed(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    service = UsageService(db)
    service.report(named_period("today", today()), sync=False)
    spy = ReaderSpy(monkeypatch)
    again = UsageService(db)
    again.report(named_period("today", today()), sync=False)
    assert spy.calls == 0
    week = again.report(named_period("week", today()), sync=False)
    assert spy.calls == 1 and week["totals"]["calls"] == 6


def test_corrupt_cache_files_are_rebuilt_silently(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    good = _status(db)
    results_path(env).write_text("{not json")
    daily_path(env).write_bytes(b"\x00\x01garbage")
    spy = ReaderSpy(monkeypatch)
    again = _status(db)
    assert spy.calls == 1
    assert again["month"] == good["month"] and again["today"] == good["today"]


@pytest.mark.clock
def test_time_zone_change_rebuilds_the_daily_cache(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    UsageService(db).report(named_period("week", today()), sync=False)
    assert json.loads(daily_path(env).read_text())["timezone"]
    zone = "Asia/Tokyo" if timezone_name() == "Asia/Kolkata" else "Asia/Kolkata"
    with local_zone(zone):
        spy = ReaderSpy(monkeypatch)
        UsageService(db).report(named_period("week", today()), sync=False)
        assert spy.calls == 1
        assert json.loads(daily_path(env).read_text())["timezone"] == zone


@pytest.mark.clock
def test_sealed_days_survive_the_source_going_away(tmp_path: Path, env: Path) -> None:
    db = write_hand_profile(tmp_path / "Cursor", days_ago(3), days_ago(2))
    d1 = days_ago(3)
    first = UsageService(db).report(named_period("week", today()), sync=False)
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM cursorDiskKV")
    conn.commit()
    conn.close()
    again = UsageService(db).report(named_period("week", today()), sync=False)
    assert again["totals"] == first["totals"] and again["totals"]["calls"] == 5
    assert json.loads(daily_path(env).read_text())["days"][d1.isoformat()]


def _locked_fixture(root: Path) -> Path:
    with ProfileWriter(root, journal_mode="delete") as p:
        p.bubble(
            "c1",
            "b1",
            role="assistant",
            text="x" * 400,
            created_at=iso_utc(at(today(), 0, 1)),
            model="gpt-5",
        )
    return p.db_path


def test_locked_database_keeps_the_last_figures(tmp_path: Path, env: Path) -> None:
    db = _locked_fixture(tmp_path / "Cursor")
    good = _status(db)
    assert good["state"] == "ok" and good["today"]["calls"] == 1
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("INSERT INTO cursorDiskKV VALUES ('other:1', 'x')")  # moves the fingerprint
    cached_before = results_path(env).read_bytes()
    daily_before = daily_path(env).read_bytes() if today().day > 1 else None
    writer.execute("BEGIN EXCLUSIVE")
    try:
        locked = _status(db)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert locked["state"] == "db-locked"
    assert locked["message"] == "Cursor database busy, retrying"
    assert locked["today"] == good["today"] and locked["month"] == good["month"]
    assert results_path(env).read_bytes() == cached_before
    if daily_before is None:  # the 1st: no sealed day yet
        assert not daily_path(env).exists()
    else:
        assert daily_path(env).read_bytes() == daily_before
    assert _status(db)["state"] == "ok"


def _hammer(cache: str, marker: int) -> None:
    call = Call(
        key=f"k{marker}",
        provider="cursor",
        model="gpt-5",
        project="p",
        session="s",
        timestamp_ms=marker,
    )
    for _ in range(60):
        save_results(Path(cache), CachedResults(f"/db/{marker}", "fp", 0, [call] * 200, []))


def test_concurrent_writers_leave_a_valid_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), n)) for n in (1, 2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    loaded = load_results(tmp_path, "/db/1") or load_results(tmp_path, "/db/2")
    assert loaded is not None and loaded.db_path in {"/db/1", "/db/2"} and len(loaded.calls) == 200
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_older_cache_versions_are_swept_but_never_the_import_store(
    tmp_path: Path, env: Path
) -> None:
    db = write_profile_with_today(tmp_path / "Cursor")
    env.mkdir(parents=True)
    (env / "imports").mkdir()
    old_results = env / "cursor-results.v0.json"
    old_daily = env / "daily.v0.json"
    old_agent_files = env / "cursor-agent-files.v3.json"
    store = env / "imports" / "cursor-usage.v3.json"
    for path in (old_results, old_daily, old_agent_files, store):
        path.write_text("{}")
    _status(db)
    assert not old_results.exists() and not old_daily.exists() and not old_agent_files.exists()
    assert store.exists() and results_path(env).exists()


@pytest.mark.clock
def test_days_sealed_by_the_v1_reader_are_rederived_except_past_the_floor(
    tmp_path: Path, env: Path
) -> None:
    """daily.v1.json (before Cursor 3.x was read): its days inside the floor held wrong figures."""
    db = write_hand_profile(tmp_path / "Cursor", days_ago(3), days_ago(2))
    aged, wrong = days_ago(200), days_ago(3)  # 200 days: always before the 6-month floor

    def slice_of(calls: int, cost: float) -> dict:
        totals = [cost, cost, 0.0, calls, 100, 10, 0, 0, ["s-old"], 0]
        models, projects = {"gpt-5": totals}, {"old-project": totals}
        return {"totals": totals, "models": models, "projects": projects, "unpriced": {}}

    env.mkdir(parents=True)
    (env / "daily.v1.json").write_text(
        json.dumps(
            {
                "version": 1,
                "timezone": timezone_name(),
                "dbPath": str(db),
                "sealedFrom": aged.isoformat(),
                "watermark": days_ago(1).isoformat(),
                "days": {
                    aged.isoformat(): {"cursor": {**slice_of(2, 1.5), "localCost": 1.5}},
                    wrong.isoformat(): {"cursor": {**slice_of(99, 50.0), "localCost": 50.0}},
                },
            }
        )
    )
    report = UsageService(db).report(Period("custom", aged, today()), sync=False)

    assert report["totals"]["calls"] == 2 + 5  # the aged day kept; days_ago(3..2) re-read
    assert not (env / "daily.v1.json").exists()
    days = json.loads(daily_path(env).read_text())["days"]
    assert days[aged.isoformat()]["cursor"]["totals"][:4] == [1.5, 1.5, 0.0, 2]
    assert days[wrong.isoformat()]["cursor"]["totals"][3] == 2  # conversation A: prompt + reply


@pytest.fixture
def held_writes() -> Iterator[None]:
    """Write-behind on, as the language server runs it; what it queues is written only when
    flushed (an hour of quiet), then off again."""
    enable_write_behind(quiet_s=3600.0)
    try:
        yield
    finally:
        disable_write_behind()


@pytest.mark.clock
@pytest.mark.usefixtures("held_writes")
def test_a_long_lived_service_writes_its_results_behind_and_answers_from_them(
    tmp_path: Path, env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the language server runs it (`write_behind` on): the status goes out before the
    results cache is written; the next status of unchanged data reads nothing, even before
    the file is there; a flush writes what a fresh process then answers from."""
    db = write_profile_with_today(tmp_path / "Cursor")
    spy = ReaderSpy(monkeypatch)
    service = UsageService(db)
    first = service.status(budget=NO_BUDGET, sync=False)
    assert first is not None and first["today"]["calls"] == 1
    assert not results_path(env).exists()  # queued, not written yet
    second = service.status(budget=NO_BUDGET, sync=False)
    assert spy.calls == 1 and second is not None
    assert flush_write_behind() and results_path(env).exists()
    fresh = _status(db)  # another process: from the file the writer wrote
    assert spy.calls == 1
    assert {k: v for k, v in fresh.items() if k != "generatedAt"} == {
        k: v for k, v in first.items() if k != "generatedAt"
    }


@pytest.mark.usefixtures("held_writes")
def test_a_long_lived_service_keeps_its_figures_when_the_database_locks_before_its_write(
    tmp_path: Path, env: Path
) -> None:
    """The results of the last read are queued, not written, when the database changes and
    is locked: the status keeps the last figures (never $0), from the service's own results."""
    db = write_profile_with_today(tmp_path / "Cursor")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=delete")  # a writer's lock then keeps readers out
    conn.close()
    service = UsageService(db)
    good = service.status(budget=NO_BUDGET, sync=False)
    assert good is not None and good["today"]["calls"] == 1
    assert not results_path(env).exists()
    stat = db.stat()
    os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))  # changed: read again
    holder = sqlite3.connect(db, timeout=0, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = service.status(budget=NO_BUDGET, sync=False)
    finally:
        holder.rollback()
        holder.close()
    assert locked is not None and locked["state"] == "db-locked"
    assert (locked["today"], locked["month"]) == (good["today"], good["month"])
    flush_write_behind()
