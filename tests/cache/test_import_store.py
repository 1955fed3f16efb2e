"""The import store: manual imports, coverage, sync merges, locking, serving helpers."""

from __future__ import annotations

import ast
import json
import multiprocessing
import multiprocessing.synchronize
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from codeburn.cache.imports import store as store_mod
from codeburn.cache.imports.store import (
    CoverageError,
    CoverageIndex,
    ImportStoreError,
    Range,
    apply_sync,
    events_as_calls,
    fingerprint,
    import_file,
    import_rows,
    load,
    newest_synced_ms,
    other_accounts_coverage_end,
    parse_boundary,
    remove_imported,
)
from codeburn.providers.exports.usage_csv import CsvFormatError, UsageRow, parse_csv
from codeburn.providers.localtime import (
    CLOCK_ENV,
    day_end_ms,
    iso_utc,
    local_day,
    local_midnight_ms,
    parse_iso_ms,
    today,
)
from tests.csv_fixtures import (
    USER_EMAIL,
    ExportRow,
    export_bytes,
    iso_local,
    local_ms,
    spec_day4_row,
    spec_rows,
    write_export,
)

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


ACCOUNT_A = "0123456789abcdef"
ACCOUNT_B = "fedcba9876543210"
DAY = timedelta(days=1)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "imports" / "cursor-usage.v3.json"


@pytest.fixture
def day1() -> date:
    return today() - timedelta(days=10)


@pytest.fixture(params=["UTC", "America/Los_Angeles", "Asia/Kolkata"])
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = request.param
    time.tzset()
    try:
        yield request.param
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def _rows(*rows: ExportRow) -> list[UsageRow]:
    return parse_csv(export_bytes(list(rows)))


def _doc(store: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(store.read_bytes())


# --- the docs/import.md scenario -------------------------------------------------------------


@pytest.mark.clock
def test_spec_import_scenario(tmp_path: Path, store: Path, day1: date) -> None:
    day3, day4 = day1 + 2 * DAY, day1 + 3 * DAY
    first = write_export(tmp_path / "usage-1.csv", spec_rows(day1))

    summary = import_file(first, path=store)
    assert summary.to_json() == {
        "changed": True,
        "added": 5,
        "skipped": 0,
        "total": 5,
        "coverage": {
            "start": iso_utc(local_midnight_ms(day1)),
            "end": iso_utc(day_end_ms(day3)),
            "inferred": True,
        },
        "tokens": 14_770 + 70_047,
        "replaced": ["cursor", "cursor-agent", "grokbot"],
        "future": 0,
        "userApiKey": 0,
    }
    assert (summary.first_day, summary.last_day) == (day1, day3)

    calls = events_as_calls(load(store))
    cursor = [c for c in calls if c.provider == "cursor"]
    grokbot = [c for c in calls if c.provider == "grokbot"]
    assert (len(cursor), sum(c.tokens for c in cursor)) == (4, 14_770)
    assert (len(grokbot), sum(c.tokens for c in grokbot)) == (1, 70_047)
    by_model = {c.model: c for c in calls}
    opus = by_model["claude-opus-5-thinking-high"]
    assert (opus.cost, opus.billed, opus.estimated) == (1.25, True, False)
    assert by_model["cursor-auto"].estimated and not by_model["cursor-auto"].billed
    assert by_model["grok-bot-automation"].estimated
    assert not by_model["grok-4.6-high"].estimated
    assert not by_model["composer-2.5-fast"].estimated
    assert by_model["cursor-auto"].cost == pytest.approx(2587.5e-6)
    assert by_model["grok-bot-automation"].cost == pytest.approx(35_122e-6)
    assert len({c.session for c in calls}) == 4

    # The same file again: nothing added, the store is not rewritten.
    os.utime(store, ns=(1_000_000_000, 1_000_000_000))
    before = store.read_bytes()
    again = import_file(first, path=store)
    assert (again.changed, again.added, again.skipped, again.total) == (False, 0, 5, 5)
    assert (again.first_day, again.last_day) == (None, None)
    assert store.stat().st_mtime_ns == 1_000_000_000
    assert store.read_bytes() == before

    # An overlapping export: the last two rows plus one new row on day 4.
    second_rows = [*spec_rows(day1)[3:], spec_day4_row(day4)]
    second = write_export(tmp_path / "usage-2.csv", second_rows)
    third = import_file(second, path=store)
    assert (third.changed, third.added, third.skipped, third.total) == (True, 1, 2, 6)
    assert load(store).ranges == (Range(local_midnight_ms(day1), day_end_ms(day4), "import", None),)
    assert _doc(store)["ranges"] == [
        {
            "start": iso_utc(local_midnight_ms(day1)),
            "end": iso_utc(day_end_ms(day4)),
            "source": "import",
            "account": None,
        }
    ]


@pytest.mark.clock
def test_store_file_shape_keeps_no_personal_cells(tmp_path: Path, store: Path, day1: date) -> None:
    import_file(write_export(tmp_path / "team.csv", spec_rows(day1), "team"), path=store)
    raw = store.read_bytes()
    assert USER_EMAIL.encode() not in raw
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    doc = json.loads(raw)
    assert doc["version"] == 3 and set(doc) == {"version", "ranges", "events"}
    event = next(e for e in doc["events"] if e["model"] == "claude-opus-5-thinking-high")
    assert event["cost"] == "$1.25"
    assert (event["source"], event["account"]) == ("import", None)
    assert (event["input"], event["cacheRead"], event["output"], event["cacheWrite"]) == (
        200,
        8000,
        90,
        0,
    )
    assert event["time"].endswith("Z") and len(event["hash"]) == 32


@pytest.mark.clock
def test_team_personal_and_old_exports_of_the_same_events_dedupe(
    tmp_path: Path, store: Path, day1: date
) -> None:
    rows = [ExportRow(iso_local(day1, h), "gpt-5", input=h, kind="", max_mode="") for h in (8, 9)]
    assert import_file(write_export(tmp_path / "p.csv", rows), path=store).added == 2
    for variant in ("team", "no-agent", "oldest"):
        summary = import_file(write_export(tmp_path / f"{variant}.csv", rows, variant), path=store)
        assert (summary.added, summary.skipped, summary.changed) == (0, 2, False)
    assert len(load(store).events) == 2


def test_a_range_a_little_past_the_readers_clock_is_clipped_not_dropped(store: Path) -> None:
    """Under `CODEBURN_NOW` each process starts its clock at that instant, so the server that
    imported runs a little ahead of a CLI started after it: the CLI clips the range to when
    the store was written, on its own clock. Taken as the kernel's time, that write was before
    the range began, the whole range was dropped, and the local calls it covers came back
    beside the export's rows (a flaky LSP-against-CLI comparison at the new-year clock)."""
    moment = parse_iso_ms("2090-01-01T01:15:00Z")
    assert moment is not None
    row = ExportRow(iso_utc(moment - 60_000), "gpt-5", input=5)
    ahead = moment + 5_000  # the importing process's clock
    import_rows(parse_csv(export_bytes([row])), mtime_ms=ahead, path=store, now=ahead)
    assert [r["end"] for r in json.loads(store.read_text())["ranges"]] == [iso_utc(ahead)]

    code = (
        "import sys; from pathlib import Path; from codeburn.cache.imports.store import load; "
        "print([(r.start_ms, r.end_ms) for r in load(Path(sys.argv[1])).ranges])"
    )
    env = {**os.environ, CLOCK_ENV: iso_utc(moment)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(store)], env=env, capture_output=True, check=True
    )
    ((start, end),) = ast.literal_eval(out.stdout.decode())
    assert start == local_midnight_ms(local_day(moment - 60_000))
    assert moment - 60_000 < end <= moment + 60_000


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.clock
def test_a_broken_row_stores_nothing_and_names_the_line(
    tmp_path: Path, store: Path, day1: date
) -> None:
    good = spec_rows(day1)
    import_file(write_export(tmp_path / "ok.csv", good[:2]), path=store)
    before = store.read_bytes()
    broken = [*good, ExportRow(iso_local(day1), "gpt-5", input="7x")]
    with pytest.raises(CsvFormatError) as err:
        import_file(write_export(tmp_path / "bad.csv", broken), path=store)
    assert "line 7" in str(err.value)
    assert store.read_bytes() == before


def test_not_an_export_changes_nothing(tmp_path: Path, store: Path) -> None:
    path = tmp_path / "contacts.csv"
    path.write_text("Name,Email\nAnn,ann@example.com\n")
    with pytest.raises(CsvFormatError, match="not a Cursor usage export"):
        import_file(path, path=store)
    assert not store.exists()


@pytest.mark.clock
def test_events_outside_from_to_are_refused(tmp_path: Path, store: Path, day1: date) -> None:
    rows = spec_rows(day1)
    path = write_export(tmp_path / "u.csv", rows)
    day2 = (day1 + DAY).isoformat()
    with pytest.raises(CoverageError) as err:
        import_file(path, start=day2, path=store)
    assert "line 2" in str(err.value) and "2 row(s)" in str(err.value)
    with pytest.raises(CoverageError, match="line 5"):
        import_file(path, end=day2, path=store)
    assert not store.exists()


@pytest.mark.parametrize(
    "bad",
    [
        "yesterday",
        "2026-13-01",
        "20260827",
        "",
        "12:00",
        "000000000000",  # epoch ms 0: 1970 (issue 20, item 16)
        "946684799999",  # the last millisecond of 1999
        "4133980800000",  # 2101-01-01
        "9999-12-31",
    ],
)
@pytest.mark.clock
def test_bad_boundaries_are_refused(tmp_path: Path, store: Path, day1: date, bad: str) -> None:
    path = write_export(tmp_path / "u.csv", spec_rows(day1))
    with pytest.raises(CoverageError, match="--from"):
        import_file(path, start=bad, path=store)
    assert not store.exists()


@pytest.mark.clock
def test_from_later_than_to_is_refused(tmp_path: Path, store: Path) -> None:
    with pytest.raises(CoverageError, match="later than"):
        import_rows([], start="2026-08-28", end="2026-08-27", path=store)


# --- coverage ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "end", "expected"),
    [
        ("1787788800000", False, "2026-08-27T00:00:00.000Z"),
        ("1787788800000", True, "2026-08-27T00:00:00.000Z"),
        ("2026-08-27T10:00:00Z", False, "2026-08-27T10:00:00.000Z"),
        ("2026-08-27T10:00:00.250+05:30", True, "2026-08-27T04:30:00.250Z"),
    ],
)
def test_zone_independent_boundaries(zone: str, text: str, end: bool, expected: str) -> None:
    assert iso_utc(parse_boundary(text, end=end)) == expected


LOCAL_BOUNDARIES = {
    "UTC": ("2026-08-27T00:00:00.000Z", "2026-08-27T23:59:59.999Z", "2026-08-27T10:00:00.000Z"),
    "America/Los_Angeles": (
        "2026-08-27T07:00:00.000Z",
        "2026-08-28T06:59:59.999Z",
        "2026-08-27T17:00:00.000Z",
    ),
    "Asia/Kolkata": (
        "2026-08-26T18:30:00.000Z",
        "2026-08-27T18:29:59.999Z",
        "2026-08-27T04:30:00.000Z",
    ),
}


def test_dates_are_whole_local_days_and_naive_times_local(zone: str) -> None:
    start, end, ten_am = LOCAL_BOUNDARIES[zone]
    assert iso_utc(parse_boundary("2026-08-27", end=False)) == start
    assert iso_utc(parse_boundary("2026-08-27", end=True)) == end
    assert iso_utc(parse_boundary("2026-08-27T10:00", end=False)) == ten_am


@pytest.mark.clock
def test_import_with_from_to_dates_in_each_zone(
    zone: str, tmp_path: Path, store: Path, day1: date
) -> None:
    day3 = day1 + 2 * DAY
    rows = [
        ExportRow(iso_local(day1, 0, 0, 0, 0), "gpt-5", input=1),
        ExportRow(iso_local(day3, 23, 59, 59, 999), "gpt-5", input=2),
    ]
    path = write_export(tmp_path / "u.csv", rows)
    summary = import_file(path, start=day1.isoformat(), end=day3.isoformat(), path=store)
    assert summary.added == 2 and summary.inferred is False
    assert summary.coverage_start_ms == local_midnight_ms(day1)
    assert summary.coverage_end_ms == day_end_ms(day3)
    late = [ExportRow(iso_local(day3 + DAY, 0), "gpt-5", input=3)]
    with pytest.raises(CoverageError):
        import_file(write_export(tmp_path / "late.csv", late), end=day3.isoformat(), path=store)


@pytest.mark.clock
def test_coverage_never_ends_after_the_files_mtime(tmp_path: Path, store: Path, day1: date) -> None:
    day2 = day1 + DAY
    rows = [ExportRow(iso_local(day1, 9), "gpt-5", input=1)]
    mtime = local_ms(day2, 13, 30)
    path = write_export(tmp_path / "u.csv", rows, mtime_ms=mtime)
    summary = import_file(path, end=(day2 + DAY).isoformat(), path=store)
    assert summary.coverage_end_ms == mtime
    assert summary.inferred is True
    assert load(store).ranges[0].end_ms == mtime


@pytest.mark.clock
def test_epoch_ms_boundaries_from_the_export_url(tmp_path: Path, store: Path, day1: date) -> None:
    start, end = local_midnight_ms(day1), day_end_ms(day1)
    rows = [ExportRow(iso_local(day1, 12), "gpt-5", input=1)]
    summary = import_file(
        write_export(tmp_path / "u.csv", rows), start=str(start), end=str(end), path=store
    )
    assert (summary.coverage_start_ms, summary.coverage_end_ms) == (start, end)


@pytest.mark.clock
def test_touching_ranges_merge_and_gaps_do_not(tmp_path: Path, store: Path, day1: date) -> None:
    d = [day1 + i * DAY for i in range(6)]
    import_rows([], start=d[0].isoformat(), end=d[0].isoformat(), mtime_ms=None, path=store)
    import_rows([], start=d[1].isoformat(), end=d[1].isoformat(), path=store)  # touching
    import_rows([], start=d[3].isoformat(), end=d[4].isoformat(), path=store)  # a gap of one day
    starts_ends = [(r.start_ms, r.end_ms) for r in load(store).ranges]
    assert starts_ends == [
        (local_midnight_ms(d[0]), day_end_ms(d[1])),
        (local_midnight_ms(d[3]), day_end_ms(d[4])),
    ]
    gap_end = local_midnight_ms(d[3]) - 2
    import_rows([], start=iso_utc(local_midnight_ms(d[2])), end=iso_utc(gap_end), path=store)
    assert len(load(store).ranges) == 2  # a 1 ms gap before d[3]: not touching
    import_rows([], start=d[2].isoformat(), end=d[2].isoformat(), path=store)
    assert [(r.start_ms, r.end_ms) for r in load(store).ranges] == [
        (local_midnight_ms(d[0]), day_end_ms(d[4]))
    ]


@pytest.mark.clock
def test_coverage_index_applies_to_cursor_and_agent_and_grokbot_only_with_bot_events(
    tmp_path: Path, store: Path, day1: date
) -> None:
    rows = [ExportRow(iso_local(day1, 12), "gpt-5", input=1)]
    import_file(write_export(tmp_path / "u.csv", rows), path=store)
    index = CoverageIndex.from_snapshot(load(store))
    start, end = local_midnight_ms(day1), day_end_ms(day1)
    assert index.covers("cursor", start) and index.covers("cursor-agent", end)
    assert not index.covers("cursor", start - 1) and not index.covers("cursor", end + 1)
    assert not index.covers("grokbot", start + 5)
    assert not index.covers("claude", start + 5)
    bot = [ExportRow(iso_local(day1, 13), "grok-bot-review", input=1)]
    import_file(write_export(tmp_path / "b.csv", bot), path=store)
    assert CoverageIndex.from_snapshot(load(store)).covers("grokbot", start + 5)
    assert not CoverageIndex([])


# --- sync merges -------------------------------------------------------------------------------


def _sync(store: Path, account: str, window_start: int, *rows: ExportRow):  # type: ignore[no-untyped-def]
    return apply_sync(
        _rows(*rows), account, window_start, window_start + 40 * 86_400_000, path=store
    )


@pytest.mark.clock
def test_sync_replaces_its_accounts_rows_from_the_window_start(store: Path, day1: date) -> None:
    d2, d3 = day1 + DAY, day1 + 2 * DAY
    r1 = ExportRow(iso_local(day1, 10), "gpt-5", input=1)
    r2 = ExportRow(iso_local(d2, 10), "gpt-5", input=2)
    r2_changed = ExportRow(iso_local(d2, 10), "gpt-5", input=2, cost="$0.02")
    r3 = ExportRow(iso_local(d3, 10), "gpt-5", input=3)
    first = _sync(store, ACCOUNT_A, local_midnight_ms(day1), r1, r2)
    assert (first.added, first.skipped, first.total, first.empty) == (2, 0, 2, False)
    assert first.to_json()["window"]["start"] == iso_utc(local_midnight_ms(day1))
    second = _sync(store, ACCOUNT_A, local_midnight_ms(d2), r2_changed, r3)
    # r2_changed is r2 re-rendered (same time, model, tokens): it replaces r2, it is not added.
    assert (second.added, second.skipped, second.total) == (1, 1, 3)
    snap = load(store)
    assert sorted(e.row.cost for e in snap.events) == ["$0.02", "Included", "Included"]
    assert {(e.source, e.account) for e in snap.events} == {("sync", ACCOUNT_A)}
    assert snap.ranges == (Range(local_midnight_ms(day1), local_ms(d3, 10), "sync", ACCOUNT_A),)
    third = _sync(store, ACCOUNT_A, local_midnight_ms(d2), r2_changed, r3)
    assert (third.changed, third.added, third.skipped) == (False, 0, 2)
    assert newest_synced_ms(ACCOUNT_A, store) == local_ms(d3, 10)


@pytest.mark.clock
def test_sync_ignores_rows_before_the_window(store: Path, day1: date) -> None:
    old = ExportRow(iso_local(day1, 10), "gpt-5", input=1)
    new = ExportRow(iso_local(day1 + DAY, 10), "gpt-5", input=2)
    summary = _sync(store, ACCOUNT_A, local_midnight_ms(day1 + DAY), old, new)
    assert (summary.added, summary.total, summary.tokens) == (1, 1, 2)
    assert [e.row.input for e in load(store).events] == [2]


@pytest.mark.clock
def test_manual_coverage_wins_over_sync(tmp_path: Path, store: Path, day1: date) -> None:
    manual = [ExportRow(iso_local(day1, 9), "gpt-5", input=1)]
    import_file(write_export(tmp_path / "m.csv", manual), path=store)
    synced = [
        ExportRow(iso_local(day1, 9), "gpt-5", input=1, cost="$0.01"),  # revised later
        ExportRow(iso_local(day1 + DAY, 9), "gpt-5", input=5),
    ]
    summary = _sync(store, ACCOUNT_A, local_midnight_ms(day1), *synced)
    assert (summary.added, summary.skipped, summary.total) == (1, 1, 2)
    events = {(e.row.input, e.row.cost, e.source) for e in load(store).events}
    assert events == {(1, "Included", "import"), (5, "Included", "sync")}


@pytest.mark.clock
def test_manual_import_claims_a_synced_row(tmp_path: Path, store: Path, day1: date) -> None:
    row = ExportRow(iso_local(day1, 9), "gpt-5", input=1)
    _sync(store, ACCOUNT_A, local_midnight_ms(day1), row)
    summary = import_file(write_export(tmp_path / "m.csv", [row]), path=store)
    assert (summary.changed, summary.added, summary.skipped, summary.total) == (True, 0, 1, 1)
    [event] = load(store).events
    assert (event.source, event.account) == ("import", None)
    # A later sync of that account whose window covers the row no longer replaces it.
    _sync(store, ACCOUNT_A, local_midnight_ms(day1 - DAY))
    assert [(e.source, e.row.input) for e in load(store).events] == [("import", 1)]


@pytest.mark.clock
def test_account_change_keeps_both_accounts(store: Path, day1: date) -> None:
    a_rows = [ExportRow(iso_local(day1 + i * DAY, 10), "gpt-5", input=i + 1) for i in range(2)]
    _sync(store, ACCOUNT_A, local_midnight_ms(day1), *a_rows)
    a_end = other_accounts_coverage_end(ACCOUNT_B, store)
    assert a_end == local_ms(day1 + DAY, 10)
    assert other_accounts_coverage_end(ACCOUNT_A, store) is None
    b_row = ExportRow(iso_local(day1 + 2 * DAY, 10), "gpt-5", input=9)
    summary = _sync(store, ACCOUNT_B, a_end + 1, b_row)
    assert summary.added == 1
    # B syncing from an earlier window start still never touches A's events.
    _sync(store, ACCOUNT_B, local_midnight_ms(day1), b_row)
    snap = load(store)
    assert sorted((e.account, e.row.input) for e in snap.events) == [
        (ACCOUNT_A, 1),
        (ACCOUNT_A, 2),
        (ACCOUNT_B, 9),
    ]
    assert {r.account for r in snap.ranges} == {ACCOUNT_A, ACCOUNT_B}
    assert newest_synced_ms(ACCOUNT_B, store) == local_ms(day1 + 2 * DAY, 10)


@pytest.mark.clock
def test_sync_ranges_merge_per_account(store: Path, day1: date) -> None:
    _sync(store, ACCOUNT_A, local_midnight_ms(day1), ExportRow(iso_local(day1 + DAY), "m", input=1))
    later = ExportRow(iso_local(day1 + 3 * DAY), "m", input=2)
    _sync(store, ACCOUNT_A, local_midnight_ms(day1), later)
    assert load(store).ranges == (
        Range(local_midnight_ms(day1), local_ms(day1 + 3 * DAY, 12), "sync", ACCOUNT_A),
    )


@pytest.mark.clock
def test_empty_sync_creates_a_possibly_empty_store(store: Path, day1: date) -> None:
    assert fingerprint(store) is None
    summary = _sync(store, ACCOUNT_A, local_midnight_ms(day1))
    assert store.exists() and fingerprint(store) is not None
    assert _doc(store) == {"version": 3, "ranges": [], "events": []}
    assert summary.to_json()["empty"] is True
    assert (summary.added, summary.total, summary.changed) == (0, 0, False)
    assert summary.to_json()["coverage"] == {"start": None, "end": None, "inferred": False}
    assert newest_synced_ms(ACCOUNT_A, store) is None
    assert load(store).exists


def test_sync_refuses_a_raw_subject_as_account(store: Path) -> None:
    with pytest.raises(ValueError, match="16"):
        apply_sync([], "auth0|user_123", 0, 1, path=store)
    assert not store.exists()


# --- unreadable store, removal, fingerprint ------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"version": 4, "ranges": [], "events": []}',
        b'{"version": 3, "ranges": [{"start": "x"}], "events": []}',
        b'{"version": 3, "ranges": [], "events": [{"hash": 1}]}',
        b"[]",
        b"\xff\xfe",
    ],
)
@pytest.mark.clock
def test_unreadable_store_is_reported_with_the_fix_and_left_alone(
    tmp_path: Path, store: Path, day1: date, content: bytes
) -> None:
    store.parent.mkdir(parents=True)
    store.write_bytes(content)
    csv_path = write_export(tmp_path / "u.csv", spec_rows(day1))
    for action in (
        lambda: load(store),
        lambda: import_file(csv_path, path=store),
        lambda: apply_sync([], ACCOUNT_A, 0, 1, path=store),
        lambda: newest_synced_ms(ACCOUNT_A, store),
    ):
        with pytest.raises(ImportStoreError, match="codeburn import cursor --remove"):
            action()
    assert store.read_bytes() == content
    result = remove_imported(store)
    assert result.existed and result.ranges == () and not store.exists()


@pytest.mark.clock
def test_remove_returns_the_ranges_and_days(tmp_path: Path, store: Path, day1: date) -> None:
    import_file(write_export(tmp_path / "u.csv", spec_rows(day1)), path=store)
    ranges = load(store).ranges
    result = remove_imported(store)
    assert (result.existed, result.ranges) == (True, ranges)
    assert (result.first_day, result.last_day) == (day1, day1 + 2 * DAY)
    assert not store.exists() and fingerprint(store) is None
    assert remove_imported(store).existed is False
    assert load(store).exists is False


@pytest.mark.clock
def test_fingerprint_changes_with_the_store(tmp_path: Path, store: Path, day1: date) -> None:
    import_file(write_export(tmp_path / "a.csv", spec_rows(day1)[:1]), path=store)
    first = fingerprint(store)
    import_file(write_export(tmp_path / "b.csv", spec_rows(day1)[1:2]), path=store)
    assert first is not None and fingerprint(store) not in (None, first)


def test_default_store_path_follows_the_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path / "c"))
    assert store_mod.store_path() == tmp_path / "c" / "imports" / "cursor-usage.v3.json"


# --- two processes at once ---------------------------------------------------------------------


def _import_in_child(
    csv_paths: list[str], store: str, start: multiprocessing.synchronize.Event
) -> None:
    start.wait(60)
    for csv_path in csv_paths:
        import_file(Path(csv_path), path=Path(store))


@pytest.mark.clock
def test_two_processes_importing_at_once_neither_double_nor_lose_rows(
    tmp_path: Path, store: Path, day1: date
) -> None:
    rows = [
        ExportRow(iso_local(day1 + (i // 250) * DAY, 0, i % 60, i % 60), "gpt-5", input=i + 1)
        for i in range(1000)
    ]
    # Each process imports its half in five files, so the read-modify-writes interleave;
    # the halves overlap by 200 rows.
    halves = {"a": rows[:600], "b": rows[400:]}
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = []
    for name, half in halves.items():
        paths = [str(write_export(tmp_path / f"{name}{k}.csv", half[k::5])) for k in range(5)]
        procs.append(ctx.Process(target=_import_in_child, args=(paths, str(store), start)))
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    snap = load(store)
    assert len(snap.events) == 1000
    assert len({e.row.hash for e in snap.events}) == 1000
    assert snap.ranges == (
        Range(local_midnight_ms(day1), day_end_ms(day1 + 3 * DAY), "import", None),
    )
