"""Event identity, property-tested: overlapping re-rendered exports, in any order, one store."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codeburn.cache.files import write_json_atomic
from codeburn.cache.imports.store import import_rows, load
from codeburn.providers.exports.usage_csv import parse_csv
from codeburn.providers.localtime import iso_utc
from tests.csv_fixtures import ExportRow, export_bytes

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

NOW = 1_800_000_000_000  # 2027-01-15T08:00:00Z
START = NOW - 20 * 86_400_000

event = st.tuples(
    st.integers(0, 19 * 86_400_000),  # ms after START
    st.sampled_from(["auto", "gpt-5", "claude-4.5-sonnet-thinking", "composer-1"]),
    st.integers(0, 5_000),
    st.integers(0, 5_000),
)
renderings = st.sampled_from(
    [
        ("Included", "Included"),
        ("0.19", "Included"),
        ("0.00", "On-Demand"),
        ("-", "Errored, No Charge"),
    ]
)


def _export(events: list[tuple[int, str, int, int]], looks: list[tuple[str, str]]) -> bytes:
    rows = [
        ExportRow(iso_utc(START + at), model, input=inp, output=out, cost=cost, kind=kind)
        for (at, model, inp, out), (cost, kind) in zip(events, looks, strict=True)
    ]
    return export_bytes(rows)


looks = st.lists(renderings, min_size=1, max_size=12)  # cycled over an export's rows
INCLUDED = ("Included", "Included")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(event, min_size=1, max_size=12, unique_by=lambda e: (e[0], e[1])),
    cuts=st.tuples(st.integers(0, 12), st.integers(0, 12)),
    looks_of=st.tuples(looks, looks, looks),
)
# Found by Hypothesis: two events in the same millisecond (different models); the newest export
# re-renders the second one only.
@example(
    events=[(0, "gpt-5", 0, 10), (1, "auto", 0, 0), (0, "auto", 0, 0)],
    cuts=(0, 0),
    looks_of=([INCLUDED], [INCLUDED], [INCLUDED, INCLUDED, ("0.19", "Included")]),
)
def test_exports_of_overlapping_slices_give_one_store_in_every_order(
    events: list[tuple[int, str, int, int]],
    cuts: tuple[int, int],
    looks_of: tuple[list[tuple[str, str]], ...],
) -> None:
    cut_a, cut_b = (min(c, len(events)) for c in cuts)
    slices = [events[: max(cut_a, 1)], events[min(cut_b, len(events) - 1) :], events]
    exports = []
    for n, part in enumerate(slices):
        cycled = list(itertools.islice(itertools.cycle(looks_of[n]), len(part)))
        exports.append((parse_csv(_export(part, cycled)), NOW - (3 - n) * 3_600_000))
    stores = []
    with TemporaryDirectory() as tmp:
        for k, order in enumerate(itertools.permutations(exports)):
            store = Path(tmp) / str(k) / "cursor-usage.v3.json"
            for rows, exported in order:
                import_rows(rows, mtime_ms=exported, path=store, now=NOW)
            stores.append(store.read_bytes())
            assert len(load(store).events) == len(events)
    assert len(set(stores)) == 1
    # The newest export (the whole list) decides every rendering. Events are keyed by time AND
    # model: two events may share a millisecond.
    stored = {(e["time"], e["model"]): e["cost"] for e in json.loads(stores[0])["events"]}
    newest_rows = exports[2][0]
    assert {(iso_utc(r.timestamp_ms), r.model): r.cost for r in newest_rows} == stored


def test_a_manual_import_heals_a_store_damaged_by_future_rows(tmp_path: Path) -> None:
    store = tmp_path / "imports" / "cursor-usage.v3.json"
    good = ExportRow(iso_utc(NOW - 3_600_000), "gpt-5", input=5)
    import_rows(parse_csv(export_bytes([good])), mtime_ms=NOW, path=store, now=NOW)
    doc = json.loads(store.read_text())
    future = dict(doc["events"][0], time="2099-01-01T00:00:00.000Z", hash="e" * 32)
    doc["events"].append(future)
    doc["ranges"][0]["end"] = "2099-01-01T23:59:59.999Z"
    write_json_atomic(store, doc)

    later = ExportRow(iso_utc(NOW - 60_000), "gpt-5", input=6)
    summary = import_rows(parse_csv(export_bytes([later])), mtime_ms=NOW, path=store, now=NOW)

    assert summary.total == 2
    healed = json.loads(store.read_text())
    assert [e["time"] for e in healed["events"]] == [good.date, later.date]
    assert [r["end"] for r in healed["ranges"]] == [iso_utc(NOW)]
