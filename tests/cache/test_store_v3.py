"""Store v2 → v3: a v2 store written by the code before v3 reads back completely, then migrates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeburn.cache.import_store import events_as_calls, load, store_path

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
    assert [{k: v for k, v in e.items() if k not in V3_ONLY} for e in v3["events"]] == v2[
        "events"
    ]
    assert not (imports / "cursor-usage.v2.json").exists()
    assert (imports / "cursor-usage.v2.migrated.json").read_bytes() == original
    assert load() == snap


def test_a_v2_store_serves_the_same_calls(imports: Path) -> None:
    # The calls the v2 code served from this store (pricing aside: prices may be refreshed).
    before = json.loads((DATA / "calls-at-v2.json").read_bytes())
    after = sorted([*c.to_row(), c.not_charged] for c in events_as_calls(load()))
    assert len(after) == len(before) == 353

    def shape(row: list[object]) -> list[object]:
        billed, not_charged = row[12], row[16]
        return row if billed or not_charged else row[:10] + row[11:]

    assert [shape(r) for r in after] == [shape(r) for r in before]
    assert sum(1 for r in after if r[12]) == sum(1 for r in before if r[12]) > 0
