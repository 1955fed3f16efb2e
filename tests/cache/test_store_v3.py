"""Store v2 → v3: a v2 store written by the code before v3 reads back completely, then migrates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeburn.cache.imports.events import PackedEvents, StoredEvent
from codeburn.cache.imports.store import ImportStoreError, events_as_calls, load, store_path
from codeburn.cache.imports.store_format import decode_store, encode_store
from codeburn.providers.exports.usage_csv import parse_csv
from codeburn.providers.exports.usage_events import EventDetail
from codeburn.providers.localtime import iso_utc
from tests.csv_fixtures import ExportRow, export_bytes
from tests.usage_fixtures import local_zone

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


# Written by the code at d68fe15 (store v2): three real exports imported by hand and one sync.
DATA = Path(__file__).resolve().parent.parent / "data" / "store-v2"
V3_ONLY = {"cells", "usageEvent"}


@pytest.fixture
def imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEBURN_CACHE_DIR", str(tmp_path / "cache"))
    folder = store_path().parent
    folder.mkdir(parents=True)
    shutil.copyfile(DATA / "cursor-usage.v2.json", folder / "cursor-usage.v2.json")
    return folder


@pytest.mark.clock
def test_a_v2_store_reads_back_completely_and_migrates(imports: Path) -> None:
    original = (DATA / "cursor-usage.v2.json").read_bytes()
    v2 = json.loads(original)
    assert v2["version"] == 2 and len(v2["events"]) == 353

    snap = load()

    assert [r.to_json() for r in snap.ranges] == v2["ranges"]
    got = sorted((e.to_json() for e in snap.events), key=lambda e: (e["time"], e["hash"]))
    assert [{k: v for k, v in e.items() if k not in V3_ONLY} for e in got] == v2["events"]
    assert {(e["cells"], e["usageEvent"]) for e in got} == {("csv", None)}
    # Migrated once: the v3 file holds the same, the v2 file is kept byte for byte aside.
    v3 = json.loads((imports / "cursor-usage.v3.json").read_bytes())
    assert v3["version"] == 3 and v3["ranges"] == v2["ranges"]
    assert [{k: v for k, v in e.items() if k not in V3_ONLY} for e in v3["events"]] == v2["events"]
    assert not (imports / "cursor-usage.v2.json").exists()
    assert (imports / "cursor-usage.v2.migrated.json").read_bytes() == original
    assert load() == snap


@pytest.mark.clock
def test_a_v2_store_serves_the_same_calls(imports: Path) -> None:
    # The calls the v2 code served from this store (pricing aside: prices may be refreshed),
    # in the zone it ran in: a call's session names its local day.
    before = json.loads((DATA / "calls-at-v2.json").read_bytes())
    with local_zone("UTC"):
        after = sorted([*c.to_row(), c.not_charged] for c in events_as_calls(load()))
    assert len(after) == len(before) == 353

    def shape(row: list[object]) -> list[object]:
        billed, not_charged = row[12], row[16]
        return row if billed or not_charged else row[:10] + row[11:]

    assert [shape(r) for r in after] == [shape(r) for r in before]
    assert sum(1 for r in after if r[12]) == sum(1 for r in before if r[12]) > 0


def _v3_store(imports: Path) -> Path:
    load()  # migrates the v2 fixture
    return imports / "cursor-usage.v3.json"


@pytest.mark.clock
def test_the_store_is_json_with_one_event_a_line(imports: Path) -> None:
    store = _v3_store(imports)
    raw = store.read_bytes()
    lines = raw.split(b"\n")
    assert len(lines) == 353 + 2 and lines[-1] == b"]}"
    assert all(json.loads(line.rstrip(b",")) for line in lines[1:-1])
    doc = json.loads(raw)
    assert doc == encode_store(load().ranges, load().events)
    # The same JSON in any other layout (one line, indented) reads the same.
    for text in (json.dumps(doc), json.dumps(doc, indent=2)):
        store.write_text(text)
        assert load().events == decode_store(raw).events


@pytest.mark.parametrize("cut", ["mid-event", "after-comma", "before-end", "comma-at-end"])
@pytest.mark.clock
def test_a_store_cut_short_is_unreadable_never_shorter(imports: Path, cut: str) -> None:
    store = _v3_store(imports)
    raw = store.read_bytes()
    body = raw[: -len(b"\n]}")]  # ends with the last event (no comma)
    damaged = {
        "mid-event": raw[: len(raw) // 2],
        "after-comma": raw[: raw.rindex(b",\n") + 2],
        "before-end": body + b"\n",
        "comma-at-end": body + b",\n]}",
    }[cut]
    store.write_bytes(damaged)
    with pytest.raises(ImportStoreError, match="--remove"):
        load()
    assert store.read_bytes() == damaged


def test_packed_events_give_back_every_event_as_it_was(tmp_path: Path) -> None:
    ms = 1_795_000_000_123
    rows = parse_csv(
        export_bytes(
            [
                ExportRow(iso_utc(ms), "gpt-5", input=5, cost="$0.19", kind="On-Demand"),
                ExportRow("2026-11-18", "auto", cache_read=7),  # a date only: local midnight
                ExportRow("2026-11-18 10:00:00", "gpt-5", output=3, cloud_agent_id="bc-1"),
                ExportRow("2026-11-18T10:00:00+00:00", "gpt-5", output=4),
                ExportRow("2026-11-18T10:00:00.5Z", "gpt-5", output=5),
            ]
        )
    )
    detail = EventDetail("USAGE_EVENT_KIND_USAGE_BASED", "conv-1", 204.688495, 39.0061)
    events = [
        StoredEvent(rows[0], "sync", "0123456789abcdef", ms, detail, "json"),
        *(StoredEvent(r, "import", None, None if n else ms) for n, r in enumerate(rows[1:])),
    ]
    packed = PackedEvents(events)
    assert len(packed) == 5 and list(packed) == events and packed == tuple(events)
    assert packed[-1] == events[-1] and packed[1:3] == tuple(events[1:3])
    assert packed.models() == {"gpt-5", "auto"}
    assert [e.row.date for e in packed] == [r.date for r in rows]
    with pytest.raises(IndexError):
        packed[5]
