"""The daily cache's v1 → v2 migration, on real files: sealed days past the floor survive."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from codeburn.cache.daily_cache import V1_FILE, VERSION, daily_path, load_daily, update_daily
from codeburn.cache.results_cache import sweep_old_versions
from codeburn.cache.usage_slices import Slice
from codeburn.providers.rules import RULES

ZONE = "Europe/Berlin"
DB = "/home/me/.config/Cursor/User/globalStorage/state.vscdb"
FLOOR = date(2026, 6, 1)


def _slice(cost: float, calls: int) -> dict[str, Any]:
    totals = [cost, cost, 0.0, calls, 100 * calls, 10 * calls, 0, 0, ["s1"], 0]
    return {
        "totals": totals,
        "models": {"gpt-5": totals},
        "projects": {"alpha": totals},
        "unpriced": {},
        "localCost": cost,
    }


def _write_v1(
    cache: Path, *, sealed_from: str, watermark: str, days: dict[str, float], version: int = 1
) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"daily.v{version}.json"
    doc = {
        "version": version,
        "timezone": ZONE,
        "dbPath": DB,
        "sealedFrom": sealed_from,
        "watermark": watermark,
        "days": {d: {"cursor": _slice(cost, 2)} for d, cost in days.items()},
    }
    path.write_text(json.dumps(doc))
    return path


def test_v1_keeps_only_its_sealed_days_before_the_floor(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(
        cache,
        sealed_from="2026-05-20",
        watermark="2026-06-10",
        days={"2026-05-25": 1.5, "2026-05-31": 0.25, "2026-06-01": 9.0, "2026-06-05": 7.0},
    )
    daily = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)

    assert (daily.sealed_from, daily.watermark) == (date(2026, 5, 20), date(2026, 5, 31))
    assert sorted(daily.days) == [date(2026, 5, 25), date(2026, 5, 31)]
    assert daily.day(date(2026, 5, 25))["cursor"].totals.cost == 1.5
    assert daily.day(date(2026, 5, 31))["cursor"].totals.calls == 2
    assert daily.is_sealed(date(2026, 5, 21))  # sealed, no usage
    assert not daily.is_sealed(FLOOR) and daily.day(date(2026, 6, 5)) == {}
    # Written as v2 at once: the sweep of old versions may remove the v1 file right after.
    sweep_old_versions(cache)
    assert not (cache / V1_FILE).exists()
    doc = json.loads(daily_path(cache).read_text())
    assert daily_path(cache).name == f"daily.v{VERSION}.json" and doc["version"] == VERSION
    assert list(doc["days"]) == ["2026-05-25", "2026-05-31"]
    again = load_daily(cache, timezone=ZONE, db_path=DB, floor=date(2026, 7, 1))
    assert sorted(again.days) == [date(2026, 5, 25), date(2026, 5, 31)]  # migrated once


def test_a_v2_file_is_migrated_like_a_v1_file(tmp_path: Path) -> None:
    # Version 3 (issue 16) changes figures of past days: sealed days from the floor on are
    # derived again, those before it (no scan reads their source any more) are kept.
    cache = tmp_path / "cache"
    days = {"2026-05-25": 1.5, "2026-06-05": 7.0}
    _write_v1(cache, sealed_from="2026-05-20", watermark="2026-06-10", days=days, version=2)
    _write_v1(cache, sealed_from="2026-05-20", watermark="2026-06-10", days={"2026-05-21": 4.0})
    daily = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert sorted(daily.days) == [date(2026, 5, 25)]  # the v2 file's, not the older v1's
    assert daily.watermark == date(2026, 5, 31)


def test_a_v3_file_is_migrated_and_its_kept_days_read_without_conversations(
    tmp_path: Path,
) -> None:
    # Version 4 (issue 17) attributes exact events to conversations and keeps per-conversation
    # sums: days from the floor on are derived again; kept days have neither (no such sums).
    cache = tmp_path / "cache"
    days = {"2026-05-25": 1.5, "2026-06-05": 7.0}
    _write_v1(cache, sealed_from="2026-05-20", watermark="2026-06-10", days=days, version=3)
    _write_v1(
        cache, sealed_from="2026-05-20", watermark="2026-06-10", days={"2026-05-21": 4.0}, version=2
    )
    daily = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert sorted(daily.days) == [date(2026, 5, 25)]  # the v3 file's, not the older v2's
    assert daily.watermark == date(2026, 5, 31)
    kept = daily.day(date(2026, 5, 25))["cursor"]
    assert kept.totals.cost == 1.5 and kept.conversations == {} and kept.attribution == {}
    assert json.loads(daily_path(cache).read_text())["version"] == VERSION == 5


def test_v1_sealed_only_from_the_floor_on_keeps_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(cache, sealed_from="2026-06-01", watermark="2026-06-10", days={"2026-06-02": 3.0})
    daily = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert (daily.sealed_from, daily.watermark, daily.days) == (None, None, {})


def test_a_v1_file_of_another_zone_or_database_is_not_served(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(cache, sealed_from="2026-05-20", watermark="2026-05-31", days={"2026-05-25": 1.5})
    assert load_daily(cache, timezone="Asia/Kolkata", db_path=DB, floor=FLOOR).days == {}
    assert load_daily(cache, timezone=ZONE, db_path="/other.vscdb", floor=FLOOR).days == {}


def test_a_seal_after_the_migration_joins_the_kept_days(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(
        cache,
        sealed_from="2026-05-30",
        watermark="2026-06-03",
        days={"2026-05-30": 0.5, "2026-06-02": 9.0},
    )
    # The new reader finds nothing on 2026-06-02: its source is gone (docs/caches.md), so the
    # figures sealed before stay; on 2026-06-03 it finds usage the old file lacked.
    rederived = {date(2026, 6, 2): {}, date(2026, 6, 3): {"cursor": Slice.load(_slice(2.0, 1))}}

    def change(daily: Any) -> None:
        daily.seal(FLOOR, date(2026, 6, 3), rederived)

    daily = update_daily(cache, timezone=ZONE, db_path=DB, change=change, floor=FLOOR)
    assert (daily.sealed_from, daily.watermark) == (date(2026, 5, 30), date(2026, 6, 3))
    assert sorted(daily.days) == [date(2026, 5, 30), date(2026, 6, 2), date(2026, 6, 3)]
    assert daily.day(date(2026, 6, 2))["cursor"].totals.cost == 9.0
    assert daily.retired == {}  # every retired day sealed again
    assert (
        json.loads(daily_path(cache).read_text())["days"]["2026-05-30"]["cursor"]["totals"][0]
        == 0.5
    )


def test_a_current_file_is_never_overwritten_by_a_v1_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(cache, sealed_from="2026-05-20", watermark="2026-05-31", days={"2026-05-25": 1.5})
    daily_path(cache).write_bytes(b"\x00garbage")  # ours and corrupt: rebuilt, not migrated
    assert load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR).days == {}


def test_a_reload_sees_every_write_and_reuses_an_unchanged_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _write_v1(cache, sealed_from="2026-05-30", watermark="2026-05-31", days={"2026-05-30": 0.5})
    first = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert sorted(first.days) == [date(2026, 5, 30)]
    assert load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR) is first

    def change(daily: Any) -> None:
        daily.seal(
            date(2026, 6, 1), date(2026, 6, 1), {date(2026, 6, 1): first.days[date(2026, 5, 30)]}
        )

    update_daily(cache, timezone=ZONE, db_path=DB, change=change, floor=FLOOR)
    assert sorted(first.days) == [date(2026, 5, 30)]  # the shared copy was not changed
    again = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert sorted(again.days) == [date(2026, 5, 30), date(2026, 6, 1)]
    assert again.watermark == date(2026, 6, 1)
    # Written by someone else, same size, the day and the watermark moved: read again.
    path = daily_path(cache)
    doc = path.read_text()
    other = path.with_name("other.json")
    other.write_text(doc.replace('"2026-06-01"', '"2026-06-02"'))
    other.replace(path)  # as every writer of it does (cache/files.py)
    moved = load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert moved.watermark == date(2026, 6, 2)
    assert sorted(moved.days) == [date(2026, 5, 30), date(2026, 6, 2)]


def test_days_sealed_by_a_clock_ahead_are_forgotten(tmp_path: Path) -> None:
    from codeburn.cache.daily_cache import DailyCache  # noqa: PLC0415
    from codeburn.cache.usage_slices import Slice  # noqa: PLC0415

    cache = DailyCache(timezone=ZONE, db_path=DB)
    first, last = date(2026, 11, 20), date(2026, 12, 1)
    cache.seal(first, last, {last: {"cursor": Slice()}}, {last: ["cursor"]})
    assert cache.forget_from(date(2026, 12, 1))
    assert (cache.sealed_from, cache.watermark) == (first, date(2026, 11, 30))
    assert last not in cache.days and cache.imports == {}
    assert not cache.forget_from(date(2026, 12, 1))  # nothing at or after today any more
    assert cache.forget_from(date(2026, 11, 20))
    assert (cache.sealed_from, cache.watermark) == (None, None)


def test_import_marks_and_first_seen_times_survive_a_reload(tmp_path: Path) -> None:
    from codeburn.cache.usage_slices import Slice  # noqa: PLC0415

    day, other = date(2026, 11, 20), date(2026, 11, 21)

    def change(cache: Any) -> None:
        cache.seal(day, other, {day: {"cursor": Slice()}}, {day: ["grokbot", "cursor"]})
        cache.remember_first_seen(DB, {"req-1": 5, "req-2": 9}, before_ms=7)

    update_daily(tmp_path, timezone=ZONE, db_path=DB, change=change, floor=FLOOR)
    loaded = load_daily(tmp_path, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert loaded.imports == {day: ["cursor", "grokbot"]}
    assert loaded.imported_span(FLOOR) == (day, day)
    assert loaded.first_seen == {DB: {"req-1": 5}}  # req-2 is dated on no sealed day


def test_a_file_without_import_marks_is_cleaned_from_the_floor_on(tmp_path: Path) -> None:
    doc = {
        "version": VERSION,
        "rules": RULES,
        "timezone": ZONE,
        "dbPath": DB,
        "sealedFrom": "2026-05-01",
        "watermark": "2026-11-30",
        "days": {"2026-07-01": {"cursor": _slice(1.0, 2)}},
    }
    daily_path(tmp_path).write_text(json.dumps(doc))
    loaded = load_daily(tmp_path, timezone=ZONE, db_path=DB, floor=FLOOR)
    assert loaded.imports is None and loaded.first_seen == {}
    assert loaded.imported_span(FLOOR) == (FLOOR, date(2026, 11, 30))


def test_sealed_days_keep_the_folders_of_their_projects_only(tmp_path: Path) -> None:
    """`paths` holds the projects sealed days hold (the latest read's folder wins), survives a
    write and a load, and a file without it loads with none."""
    cache = tmp_path / "cache"
    _write_v1(cache, sealed_from="2026-05-01", watermark="2026-05-02", days={"2026-05-01": 1.0})
    update_daily(
        cache,
        timezone=ZONE,
        db_path=DB,
        floor=FLOOR,
        change=lambda c: c.remember_paths({"alpha": "/srv/alpha", "beta": "/srv/beta"}),
    )
    assert load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR).paths == {
        "alpha": "/srv/alpha"
    }
    update_daily(
        cache,
        timezone=ZONE,
        db_path=DB,
        change=lambda c: c.remember_paths({"alpha": "/srv/work/alpha"}),
    )
    raw = json.loads(daily_path(cache).read_text())
    assert raw["paths"] == {"alpha": "/srv/work/alpha"}
    del raw["paths"]
    daily_path(cache).write_text(json.dumps(raw))
    assert load_daily(cache, timezone=ZONE, db_path=DB, floor=FLOOR).paths == {}
