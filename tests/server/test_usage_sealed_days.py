"""Sealed days against a clock that was once ahead, a lost first-seen file, a damaged import
store and a store damaged by a 2099 range (issue 20, items 1, 2, 3 and 18)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import pytest
import time_machine

from codeburn.cache.daily_cache import daily_path
from codeburn.cache.files import write_json_atomic
from codeburn.cache.first_seen import FILE as FIRST_SEEN_FILE
from codeburn.cache.imports.store import import_rows, store_path
from codeburn.providers import runtime
from codeburn.providers.exports.usage_csv import parse_csv
from codeburn.providers.localtime import iso_utc, now_ms, today
from codeburn.providers.samples.home_writer import AgentHomeWriter, assistant, turn_ended, user
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.periods import Period
from codeburn.server.service.usage import UsageService
from tests.csv_fixtures import ExportRow, export_bytes, iso_local, write_export
from tests.usage_fixtures import Env, at, days_ago, isolated_env

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

ONE_DAY = timedelta(days=1)


@contextmanager
def clock_at(ms: int) -> Iterator[None]:
    """This process's clock stands at `ms` (the suite's own clock comes back after); an epoch
    number, not a datetime, so the local time zone stays the suite's."""
    with time_machine.travel(ms / 1000, tick=False):
        yield


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "dot-cursor"))
    return isolated_env(tmp_path, monkeypatch)


def _totals(db: Path, first: date, last: date) -> dict:
    return UsageService(db).report(Period("custom", first, last), sync=False)["totals"]


def _days(db: Path, first: date, last: date) -> list[tuple[str, int]]:
    report = UsageService(db).report(Period("custom", first, last), sync=False)
    return [(d["date"], d["calls"]) for d in report["days"]]


def _answer(root: Path, bubble: str, chars: int, ms: int) -> Path:
    with ProfileWriter(root) as p:
        p.bubble("conv-x", bubble, role="assistant", text="y" * chars, created_at=iso_utc(ms))
    return p.db_path


# -- item 1 -------------------------------------------------------------------------------------


def test_a_clock_once_ahead_hides_no_usage(tmp_path: Path, env: Env) -> None:
    day = days_ago(10)
    db = _answer(tmp_path / "Cursor", "x1", 4, at(day, 10))  # 1 output token
    with clock_at(at(day + ONE_DAY, 0, 30)):  # CODEBURN_NOW ahead: `day` looks over
        assert _totals(db, day, day)["outputTokens"] == 1
    _answer(tmp_path / "Cursor", "x2", 8, at(day, 22, 40))  # 2 more, the same day
    with clock_at(at(day, 22, 50)):  # the real time: `day` is today
        assert _totals(db, day, day)["outputTokens"] == 3
    with clock_at(at(day + 4 * ONE_DAY, 12)):  # four days later, `day` sealed for good
        assert _totals(db, day, day)["outputTokens"] == 3


# -- item 2 -------------------------------------------------------------------------------------


def _lose(cache: Path, how: str) -> None:
    path = cache / FIRST_SEEN_FILE
    assert path.exists()
    if how == "deleted":
        path.unlink()
    else:
        path.write_bytes(b'{"not": json')


def _exchange() -> list[dict[str, object]]:
    return [user("q" * 40), assistant("a" * 80), turn_ended()]


@pytest.mark.parametrize("how", ["deleted", "corrupt"])
def test_a_lost_first_seen_file_dates_no_transcript_turn_again(
    tmp_path: Path, env: Env, how: str
) -> None:
    home = AgentHomeWriter(tmp_path / "dot-cursor")
    db = tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb"  # transcripts only
    day = days_ago(4)
    home.transcript("t1", _exchange() * 2, mtime_ms=at(day, 10))
    assert _days(db, day, today()) == [(day.isoformat(), 2)]  # seals `day`
    _lose(env.cache, how)
    home.transcript("t1", _exchange() * 3, mtime_ms=now_ms())  # grown by one turn today
    assert _days(db, day, today()) == [(day.isoformat(), 2), (today().isoformat(), 1)]


@pytest.mark.parametrize("how", ["deleted", "corrupt"])
def test_a_lost_first_seen_file_dates_no_stream_request_again(
    tmp_path: Path, env: Env, how: str
) -> None:
    day = days_ago(4)
    db, touch = _stream_request(tmp_path / "Cursor")
    touch(at(day, 10))
    assert _days(db, day, today()) == [(day.isoformat(), 1)]  # seals `day`
    _lose(env.cache, how)
    touch(now_ms())  # Cursor wrote the database again today
    assert _days(db, day, today()) == [(day.isoformat(), 1)]


# -- item 3 -------------------------------------------------------------------------------------


def _cli_report(capsys: pytest.CaptureFixture[str], db: Path, day: date) -> dict:
    argv = ["report", "--format", "json", "--cursor-db", str(db), "--no-sync"]
    assert main([*argv, "--from", day.isoformat(), "--to", day.isoformat()]) == 0
    return json.loads(capsys.readouterr().out)


def test_remove_cleans_sealed_days_with_the_store_unreadable(
    tmp_path: Path, env: Env, capsys: pytest.CaptureFixture[str]
) -> None:
    day = days_ago(5)
    db = _answer(tmp_path / "Cursor", "x1", 400, at(day, 13))  # local: 100 output tokens
    row = ExportRow(iso_local(day, 9), "gpt-5", input=100, output=10, cost="$5.00")
    csv = write_export(tmp_path / "usage.csv", [row], mtime_ms=at(day, 23))
    assert main(["import", "cursor", str(csv), "--cursor-db", str(db)]) == 0
    capsys.readouterr()
    imported = _cli_report(capsys, db, day)  # seals `day` with the imported figure
    assert imported["totals"]["cost"] == pytest.approx(5.0)
    store_path().write_bytes(b"\x00 damaged")
    assert main(["import", "cursor", "--remove", "--cursor-db", str(db)]) == 0
    capsys.readouterr()
    after = _cli_report(capsys, db, day)
    assert after["coverage"]["ranges"] == []
    assert after["totals"]["outputTokens"] == 100
    assert after["totals"]["cost"] == pytest.approx(after["totals"]["estimatedCost"])
    assert after["totals"]["cost"] < 0.01


# -- item 18 ------------------------------------------------------------------------------------


def test_a_store_damaged_with_a_2099_range_hides_no_local_usage_today(
    tmp_path: Path, env: Env
) -> None:
    yesterday = days_ago(1)
    row = ExportRow(iso_local(yesterday, 9), "gpt-5", input=5)
    import_rows(parse_csv(export_bytes([row])), mtime_ms=at(yesterday, 23))
    doc = json.loads(store_path().read_text())
    doc["ranges"][0]["end"] = "2099-01-01T23:59:59.999Z"  # written by an older CodeBurn
    write_json_atomic(store_path(), doc)
    written = at(yesterday, 23) * 1_000_000
    os.utime(store_path(), ns=(written, written))
    db = _answer(tmp_path / "Cursor", "x1", 400, now_ms() - 60_000)
    totals = _totals(db, today(), today())
    assert (totals["calls"], totals["outputTokens"]) == (1, 100)


def _legacy(cache: Path) -> None:
    """The daily cache as a CodeBurn before sealed days kept their first-seen times wrote it."""
    path = daily_path(cache)
    doc = json.loads(path.read_text())
    del doc["firstSeen"]
    path.write_text(json.dumps(doc))


def _stream_request(root: Path) -> tuple[Path, Callable[[int], None]]:
    with ProfileWriter(root) as p:
        p.agent("a1", role="user", content="u" * 27, request_id="req-9", model="gpt-5")
        p.agent("a2", role="assistant", content=[{"type": "text", "text": "v" * 32}])

    def touch(ms: int) -> None:
        for path in (p.db_path, p.db_path.with_name(p.db_path.name + "-wal")):
            if path.exists():
                os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))

    return p.db_path, touch


def test_a_daily_cache_from_before_takes_the_first_seen_times_on_its_first_read(
    tmp_path: Path, env: Env
) -> None:
    day = days_ago(4)
    db, touch = _stream_request(tmp_path / "Cursor")
    touch(at(day, 10))
    assert _days(db, day, today()) == [(day.isoformat(), 1)]
    _legacy(env.cache)
    assert _days(db, day, today()) == [(day.isoformat(), 1)]  # takes them from the file
    _lose(env.cache, "deleted")
    touch(now_ms())
    assert _days(db, day, today()) == [(day.isoformat(), 1)]


def test_first_seen_times_lost_with_nothing_holding_them_are_said(tmp_path: Path, env: Env) -> None:
    day = days_ago(4)
    db, touch = _stream_request(tmp_path / "Cursor")
    touch(at(day, 10))
    _days(db, day, today())
    _legacy(env.cache)
    _lose(env.cache, "corrupt")
    touch(now_ms())
    report = UsageService(db).report(Period("custom", day, today()), sync=False)
    assert any(FIRST_SEEN_FILE in w and "were lost" in w for w in report["warnings"])


def test_a_lost_first_seen_file_with_nothing_to_date_says_nothing(tmp_path: Path, env: Env) -> None:
    day = days_ago(4)
    db = _answer(tmp_path / "Cursor", "x1", 400, at(day, 13))  # dated bubbles only
    _days(db, day, today())
    _legacy(env.cache)
    _lose(env.cache, "deleted")
    _answer(tmp_path / "Cursor", "x2", 40, now_ms() - 60_000)
    report = UsageService(db).report(Period("custom", day, today()), sync=False)
    assert report["warnings"] == []
    assert [(d["date"], d["calls"]) for d in report["days"]] == [
        (day.isoformat(), 1),
        (today().isoformat(), 1),
    ]


# -- a CLI command: the first-seen times are saved by its writer, after its output ---------------


@contextmanager
def _command(cache: Path) -> Iterator[None]:
    """As a CLI command runs: cache files written at its end, before it returns."""
    with runtime.writes_at_end():
        yield


def _stored(cache: Path) -> dict[str, object]:
    path = cache / FIRST_SEEN_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def test_a_commands_first_seen_times_are_written_after_it_and_held_by_what_it_seals(
    tmp_path: Path, env: Env
) -> None:
    day = days_ago(4)
    db, touch = _stream_request(tmp_path / "Cursor")
    touch(at(day, 10))
    with _command(env.cache):
        assert _days(db, day, today()) == [(day.isoformat(), 1)]  # seals `day`
        assert str(db) not in _stored(env.cache)  # not yet: the writer saves them
    assert _stored(env.cache)[str(db)] == {"req-9": at(day, 10)}
    _lose(env.cache, "deleted")
    touch(now_ms())
    with _command(env.cache):  # the sealed day held the time the writer had still to save
        assert _days(db, day, today()) == [(day.isoformat(), 1)]
    _legacy(env.cache)
    _lose(env.cache, "corrupt")
    touch(now_ms())
    with _command(env.cache):
        report = UsageService(db).report(Period("custom", day, today()), sync=False)
    assert any(FIRST_SEEN_FILE in w and "were lost" in w for w in report["warnings"])
