"""Real Cursor usage exports (tests/data/real-csv, copied from ../shared/data/real-csv).

Expected figures are independent hand sums (the plain csv module and a rate table written by
hand from the providers' price lists), held here as literals.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from codeburn.cache.imports.store import STORE_FILE, events_as_calls, import_file, import_rows, load
from codeburn.providers.calls import USER_API_KEY
from codeburn.providers.exports.usage_csv import CsvFormatError, parse_csv

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

REAL = Path(__file__).resolve().parent.parent / "data" / "real-csv"
# After every event of every sample: no row of them is "in the future".
NOW_MS = 1_830_000_000_000  # 2027-12-29


@dataclass(frozen=True)
class Sums:
    calls: int
    tokens: int
    not_charged: int
    user_api_key: int
    user_api_key_cost: float
    cost: float  # Cursor spend, User API Key rows excluded
    billed: float
    estimated: float


HAND_SUMS = {
    "01_w366813640_requests_col.csv": Sums(
        2335, 4_266_668_308, 119, 0, 0.0, 3496.068985, 0.0, 9.684561
    ),
    "04_gerryyang_v2_auto.csv": Sums(199, 88_695_491, 0, 0, 0.0, 30.666, 30.666, 0.0),
    "06_mishka_team_user_requests.csv": Sums(4, 1_791_757, 0, 0, 0.0, 0.973625, 0.0, 0.973625),
    "07_donlinux_v3_included_dash_EXCERPT.csv": Sums(32, 42_209_913, 2, 0, 0.0, 54.893304, 0, 0),
    "10_kenichiro_old_usage-tokens_2025-08-22.csv": Sums(
        119, 9_568_011, 3, 0, 0.0, 7.285995, 0.0, 7.285995
    ),
    "12_jasonholt_team_userapikey_requests_FIXTURE.csv": Sums(
        8, 4_227_712, 1, 2, 6.32, 9.45996, 0.0, 0.6
    ),
    "13_tokscale_v3_ondemand_FIXTURE.csv": Sums(3, 31_870_476, 1, 0, 0.0, 8.378877, 0.11, 0.0),
}
TEAM_USER = {"06_mishka_team_user_requests.csv": "alice@example.com"}


def test_every_real_sample_is_covered() -> None:
    assert sorted(p.name for p in REAL.glob("*.csv")) == sorted(HAND_SUMS)


@pytest.mark.parametrize("name", sorted(HAND_SUMS))
def test_real_sample_imports_with_hand_summed_totals(name: str, tmp_path: Path) -> None:
    store = tmp_path / "imports" / "cursor-usage.v3.json"
    rows = parse_csv((REAL / name).read_bytes())
    if name in TEAM_USER:
        from codeburn.providers.exports.team import one_persons_rows  # noqa: PLC0415

        rows = one_persons_rows(rows, user=TEAM_USER[name])
    summary = import_rows(rows, mtime_ms=NOW_MS, path=store, now=NOW_MS)
    expected = HAND_SUMS[name]
    calls = events_as_calls(load(store))
    cursor = [c for c in calls if c.provider != USER_API_KEY]
    own_key = [c for c in calls if c.provider == USER_API_KEY]
    assert [c.model for c in calls if not c.priced] == []
    assert summary.added == len(calls) == expected.calls
    assert sum(c.tokens for c in calls) == summary.tokens == expected.tokens
    assert sum(c.not_charged for c in calls) == expected.not_charged
    assert all(c.cost == 0 for c in calls if c.not_charged)
    assert len(own_key) == summary.user_api_key == expected.user_api_key
    assert sum(c.cost for c in own_key) == pytest.approx(expected.user_api_key_cost)
    assert sum(c.cost for c in cursor) == pytest.approx(expected.cost)
    assert sum(c.cost for c in cursor if c.billed) == pytest.approx(expected.billed)
    assert sum(c.cost for c in cursor if c.estimated) == pytest.approx(expected.estimated)


# --- overlapping re-exports ---------------------------------------------------------------------


def _re_render(cells: list[str], header: list[str]) -> list[str]:
    """What Cursor changes in an event's cells between two exports (seen in real daily exports)."""
    out = dict(zip(header, cells, strict=True))
    cost = "Cost" if "Cost" in out else "Cost ($)"
    if out[cost] == "Included":
        out[cost] = "0.19"
    elif out[cost].startswith("0.00"):
        out[cost] = "0.00"
    if out.get("Kind") == "Errored, Not Charged":
        out["Kind"] = "Errored, No Charge"
    return [out[name] for name in header]


def _exports(name: str, tmp_path: Path) -> tuple[Path, Path, int]:
    """An earlier export (older rows) and a later one (newer rows, re-rendered), overlapping."""
    lines = list(csv.reader(io.StringIO((REAL / name).read_text(encoding="utf-8-sig"))))
    header, body = lines[0], lines[1:]  # newest first, as Cursor writes them
    third = len(body) // 3
    early, late = body[third:], [_re_render(c, header) for c in body[: 2 * third]]
    paths = []
    for label, rows, mtime in (
        ("early", early, 1_800_000_000_000),
        ("late", late, 1_800_086_400_000),
    ):
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n").writerows([header, *rows])
        path = tmp_path / f"{label}.csv"
        path.write_text(out.getvalue(), encoding="utf-8")
        os.utime(path, ns=(mtime * 1_000_000, mtime * 1_000_000))
        paths.append(path)
    return paths[0], paths[1], len(body)


@pytest.mark.parametrize(
    ("name", "overlap_cost"),
    [("04_gerryyang_v2_auto.csv", None), ("10_kenichiro_old_usage-tokens_2025-08-22.csv", "0.19")],
)
def test_overlapping_re_exports_give_the_same_store_in_any_order(
    name: str, overlap_cost: str | None, tmp_path: Path
) -> None:
    early, late, real_events = _exports(name, tmp_path)
    stores = []
    for order in ((early, late), (late, early)):
        store = tmp_path / "-".join(p.stem for p in order) / "cursor-usage.v3.json"
        for path in order:
            import_file(path, path=store)
        stores.append(store)
    forward, backward = (s.read_bytes() for s in stores)
    assert forward == backward
    snap = load(stores[0])
    assert len(snap.events) == real_events  # never one more event for a re-rendered row
    # The overlapping rows carry the later export's rendering.
    newest = max(snap.events, key=lambda e: e.row.timestamp_ms)
    middle = sorted(snap.events, key=lambda e: e.row.timestamp_ms)[real_events // 2]
    assert newest.exported_at_ms == middle.exported_at_ms == 1_800_086_400_000
    if overlap_cost is not None:
        assert middle.row.cost == overlap_cost
    assert not any(
        e.row.kind == "Errored, Not Charged" and e.exported_at_ms == 1_800_086_400_000
        for e in snap.events
    )


def test_reimporting_the_later_export_again_changes_nothing(tmp_path: Path) -> None:
    early, late, real_events = _exports("10_kenichiro_old_usage-tokens_2025-08-22.csv", tmp_path)
    store = tmp_path / "s" / "cursor-usage.v3.json"
    import_file(early, path=store)
    import_file(late, path=store)
    before = store.read_bytes()
    again = import_file(late, path=store)
    assert (again.changed, again.added, again.total) == (False, 0, real_events)
    assert store.read_bytes() == before


# --- v1 → v2 ------------------------------------------------------------------------------------


def _v1_event(row: dict[str, str], digest: str, source: str = "import") -> dict[str, object]:
    return {
        "time": row["time"],
        "date": row["date"],
        "cloudAgentId": "",
        "automationId": "",
        "kind": row["kind"],
        "model": row["model"],
        "maxMode": "No",
        "cacheWrite": int(row["cw"]),
        "input": int(row["in"]),
        "cacheRead": int(row["cr"]),
        "output": int(row["out"]),
        "totalTokens": int(row["cw"]) + int(row["in"]) + int(row["cr"]) + int(row["out"]),
        "cost": row["cost"],
        "hash": digest,
        "source": source,
        "account": None if source == "import" else "0123456789abcdef",
    }


def test_a_v1_store_migrates_without_losing_an_event(tmp_path: Path) -> None:
    base = {"date": "2025-08-21T15:33:46.948Z", "time": "2025-08-21T15:33:46.948Z", "model": "auto"}
    tokens = {"cw": "1514", "in": "0", "cr": "23246", "out": "1142"}
    included = {**base, **tokens, "kind": "Errored, Not Charged", "cost": "Included"}
    re_rendered = {**base, **tokens, "kind": "Errored, No Charge", "cost": "0.19"}
    other = {
        "date": "2025-08-21T15:31:21.623Z",
        "time": "2025-08-21T15:31:21.623Z",
        "model": "auto",
        "cw": "7450",
        "in": "0",
        "cr": "20665",
        "out": "936",
        "kind": "Included in Pro",
        "cost": "Included",
    }
    synced = {**other, "date": "2025-08-22T09:00:00.000Z", "time": "2025-08-22T09:00:00.000Z"}
    v1 = {
        "version": 1,
        "ranges": [
            {"start": "2025-08-21T00:00:00.000Z", "end": "2025-08-21T23:59:59.999Z",
             "source": "import", "account": None},
            {"start": "2025-08-22T00:00:00.000Z", "end": "2025-08-22T09:00:00.000Z",
             "source": "sync", "account": "0123456789abcdef"},
        ],
        "events": [
            _v1_event(included, "a" * 32),
            _v1_event(re_rendered, "b" * 32),  # the same event re-rendered: v1 double counted it
            _v1_event(other, "c" * 32),
            _v1_event(synced, "d" * 32, source="sync"),
        ],
    }  # fmt: skip
    folder = tmp_path / "imports"
    folder.mkdir()
    legacy = folder / "cursor-usage.v1.json"
    legacy.write_text(json.dumps(v1), encoding="utf-8")
    store = folder / "cursor-usage.v3.json"

    snap = load(store)

    assert store.exists() and not legacy.exists()
    assert json.loads((folder / "cursor-usage.v1.migrated.json").read_text()) == v1
    doc = json.loads(store.read_text())
    assert doc["version"] == 3 and doc["ranges"] == v1["ranges"]
    assert len(snap.events) == 3
    by_time = {e.row.date: e for e in snap.events}
    assert set(by_time) == {included["date"], other["date"], synced["date"]}
    assert by_time[included["date"]].row.cost == "0.19"  # the billed rendering is kept
    assert (by_time[synced["date"]].source, by_time[synced["date"]].account) == (
        "sync",
        "0123456789abcdef",
    )
    assert sum(e.row.tokens for e in snap.events) == (1514 + 23246 + 1142) + 2 * (
        7450 + 20665 + 936
    )
    assert set(load(store).events) == set(snap.events)  # read again from v2: the same


@pytest.mark.parametrize("cut", [1, 2, 3, 4])
def test_a_real_export_cut_inside_its_last_cell_is_refused(tmp_path: Path, cut: int) -> None:
    """Real exports quote every cell and end without a newline: cut inside the last Cost cell
    (`"0.10"` → `"0.1`, `"0.`, `"0`, `"`), the file was imported with a wrong last figure
    (issue 20, item 19)."""
    data = (REAL / "04_gerryyang_v2_auto.csv").read_bytes()
    assert data.endswith(b',"0.10"')
    path = tmp_path / "usage-events.csv"
    path.write_bytes(data[:-cut])
    store = tmp_path / "imports" / STORE_FILE
    with pytest.raises(CsvFormatError) as err:
        import_file(path, path=store)
    lines = data.count(b"\n") + 1
    assert err.value.line == lines and str(err.value).startswith(f"line {lines}: a quoted cell")
    assert not store.exists()
