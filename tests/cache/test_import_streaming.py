"""Large manual imports are streamed (issue 20, item 12): rows are packed as they are read and
merged into packed events; the figures and the refusals stay those of the whole file."""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path

import pytest

from codeburn.cache.imports.events import PackedEvents, StoredEvent
from codeburn.cache.imports.incoming import incoming_of, merge_into
from codeburn.cache.imports.records import SOURCE_IMPORT, SOURCE_SYNC
from codeburn.cache.imports.store import import_file, import_rows, load
from codeburn.cache.imports.store_format import encode_store_lines
from codeburn.providers.exports.usage_csv import CsvFormatError, parse_csv
from codeburn.providers.exports.usage_events import EventDetail
from codeburn.providers.localtime import now_ms, today
from tests.csv_fixtures import ExportRow, export_bytes, iso_local, write_export

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

ACCOUNT = "0123456789abcdef"
ROWS = 2_000


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "imports" / "cursor-usage.v3.json"


def _many(day1: date, count: int, seed: int = 7) -> list[ExportRow]:
    rng = random.Random(seed)
    models = ("auto", "gpt-5", "claude-4.5-sonnet-thinking", "composer-1")
    rows = []
    for n in range(count):
        billed = rng.random() < 0.3
        rows.append(
            ExportRow(
                iso_local(
                    day1 + timedelta(days=n % 5), 1 + n % 20, n % 60, (n // 60) % 60, n % 997
                ),
                rng.choice(models),
                cache_write=rng.randrange(50_000),
                input=rng.randrange(20_000),
                cache_read=rng.randrange(2_000_000),
                output=rng.randrange(8_000),
                cost=f"${rng.random() * 2:.2f}" if billed else "Included",
                kind="On-Demand" if billed else "Included",
            )
        )
    return rows


def test_a_large_import_stores_every_row_once(tmp_path: Path, store: Path) -> None:
    """(Its memory a row, packed, is measured by bench/import_memory.py.)"""
    day1 = today() - timedelta(days=8)
    export = write_export(tmp_path / "big.csv", _many(day1, ROWS))
    import_file(export, path=store)
    assert len(load(store).events) == ROWS
    before = store.read_bytes()
    import_file(export, path=store)
    assert store.read_bytes() == before


def test_streamed_import_stores_what_the_parsed_rows_give(tmp_path: Path) -> None:
    day1 = today() - timedelta(days=8)
    rows = _many(day1, 300)
    rows += rows[:7]  # repeated rows of one file are distinct events
    data = export_bytes(rows)
    export = tmp_path / "e.csv"
    export.write_bytes(data)
    streamed, parsed = tmp_path / "a.json", tmp_path / "b.json"
    mtime = export.stat().st_mtime_ns // 1_000_000
    now = now_ms()
    a = import_file(export, path=streamed)
    b = import_rows(parse_csv(data), mtime_ms=mtime, path=parsed, now=now)
    assert a.to_json() == b.to_json()
    assert a.added == len(rows) == a.total
    assert streamed.read_bytes() == parsed.read_bytes()


def test_a_broken_last_row_of_a_large_file_stores_nothing(tmp_path: Path, store: Path) -> None:
    day1 = today() - timedelta(days=8)
    rows = _many(day1, 3_000)
    import_file(write_export(tmp_path / "ok.csv", rows[:10]), path=store)
    before = store.read_bytes()
    broken = [*rows, ExportRow(iso_local(day1), "gpt-5", input="7x")]
    with pytest.raises(CsvFormatError, match="line 3002"):
        import_file(write_export(tmp_path / "bad.csv", broken), path=store)
    assert store.read_bytes() == before


def test_team_filter_future_rows_and_coverage_on_packed_rows(tmp_path: Path, store: Path) -> None:
    day1 = today() - timedelta(days=8)
    mine = _many(day1, 40)
    theirs = [ExportRow(r.date, r.model, input=1, user="other@example.com") for r in mine[:15]]
    future = ExportRow(iso_local(today() + timedelta(days=5)), "gpt-5", input=3)
    export = write_export(tmp_path / "team.csv", [*theirs, *mine, future], "team")
    summary = import_file(export, path=store, signed_in="Dev.Person@example.com")
    assert (summary.added, summary.total, summary.future) == (40, 40, 1)
    assert summary.tokens == sum(r.tokens for r in mine)
    assert b"other@example.com" not in store.read_bytes()
    with pytest.raises(CsvFormatError, match="has no rows"):
        import_file(export, path=store, user="nobody@example.com")


def test_repeated_identities_given_to_import_rows_fold_as_one_event(store: Path) -> None:
    day1 = today() - timedelta(days=3)
    [row] = parse_csv(export_bytes([ExportRow(iso_local(day1), "gpt-5", input=5)]))
    summary = import_rows([row, row], mtime_ms=now_ms(), path=store)
    assert (summary.added, summary.skipped, summary.total) == (1, 1, 1)


def _event(n: int, **kw: object) -> StoredEvent:
    [row] = parse_csv(
        export_bytes([ExportRow(iso_local(today() - timedelta(days=2), 3, n), "gpt-5", input=n)])
    )
    fields: dict[str, object] = {"source": SOURCE_IMPORT, "exported_at_ms": 1_700_000_000_000}
    fields.update(kw)
    return StoredEvent(row, **fields)  # type: ignore[arg-type]


def test_packed_events_put_keep_only_and_json_match_the_events() -> None:
    detail = EventDetail("Usage-based", "conv-1", 12.5, 0.25)
    events = [
        _event(1),
        _event(2, detail=detail),
        _event(3, source=SOURCE_SYNC, account=ACCOUNT, exported_at_ms=None),
        _event(4),
    ]
    packed = PackedEvents(events)
    assert [packed.json_at(n) for n in range(4)] == [e.to_json() for e in events]
    assert packed.same_at(1, PackedEvents(events), 1)
    assert not packed.same_at(1, PackedEvents(events), 0)
    other = _event(2, exported_at_ms=1_800_000_000_000)
    packed.put(1, other)
    assert packed[1] == other and not packed.same_at(1, PackedEvents(events), 1)
    with pytest.raises(ValueError):
        packed.put(0, events[3])
    packed.put(1, events[1])
    packed.keep_only(bytearray([0, 1, 0, 1]))
    assert list(packed) == [events[1], events[3]]
    assert packed.json_at(0) == events[1].to_json()


def test_packed_store_lines_are_the_events_lines() -> None:
    events = [_event(n) for n in (5, 1, 4, 2)] + [_event(9, exported_at_ms=None)]
    packed = b"".join(encode_store_lines((), PackedEvents(events)))
    plain = b"".join(encode_store_lines((), list(events)))
    assert packed == plain
    doc = json.loads(packed)
    assert [e["input"] for e in doc["events"]] == [1, 2, 4, 5, 9]


def test_merge_drops_future_stored_events_and_keeps_the_rest() -> None:
    now = now_ms()
    stored = PackedEvents([_event(1), _event(2)])
    [late] = parse_csv(export_bytes([ExportRow(iso_local(today() + timedelta(days=9)), "x")]))
    stored.append(StoredEvent(late, SOURCE_IMPORT, None, now))
    incoming = incoming_of([_event(2).row, _event(7).row], 1_700_000_000_000)
    merged, healed = merge_into(incoming, stored, now)
    assert (merged.added, merged.skipped, healed, merged.bumped) == (1, 1, 1, False)
    assert sorted(e.row.input for e in incoming.events) == [1, 2, 7]
