"""Imported usage replaces local estimates inside its coverage, and --remove undoes it."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from codeburn.providers.localtime import day_end_ms, iso_utc, today
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from tests.csv_fixtures import ExportRow, iso_local, spec_rows, write_export
from tests.usage_fixtures import at, days_ago, isolated_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


# docs/import.md scenario on days d1..d3 (8..6 days ago), local Cursor bubbles on d1 and on d5.


def _report(capsys: pytest.CaptureFixture[str], db: Path, first: str, last: str) -> dict:
    argv = ["report", "--format", "json", "--cursor-db", str(db), "--from", first, "--to", last]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    isolated_env(tmp_path, monkeypatch)
    d1 = days_ago(8)
    d5 = d1 + timedelta(days=4)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.bubble(
            "c-in",
            "b",
            role="assistant",
            text="x" * 400,
            created_at=iso_utc(at(d1, 13)),
            model="gpt-5",
        )
        p.bubble(
            "c-out",
            "b",
            role="assistant",
            text="x" * 800,
            created_at=iso_utc(at(d5, 13)),
            model="gpt-5",
        )
    csv = write_export(tmp_path / "usage.csv", spec_rows(d1), mtime_ms=day_end_ms(today()))
    return p.db_path, csv, [d1.isoformat(), d5.isoformat()]


@pytest.mark.clock
def test_import_replaces_local_estimates_inside_coverage(
    scenario: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, csv, (first, last) = scenario
    before = _report(capsys, db, first, last)
    assert before["totals"]["calls"] == 2  # local: 100 + 200 output tokens of gpt-5
    assert before["totals"]["cost"] == pytest.approx(0.001 + 0.002)

    assert main(["import", "cursor", str(csv), "--format", "json", "--cursor-db", str(db)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["added"], summary["skipped"], summary["total"]) == (5, 0, 5)
    assert summary["coverage"]["inferred"] is True
    assert summary["replaced"] == ["cursor", "cursor-agent", "grokbot"]

    after = _report(capsys, db, first, last)
    providers = {p["id"]: p for p in after["providers"]}
    assert providers["cursor"]["calls"] == 4 + 1  # 4 imported + the local call outside coverage
    assert providers["grokbot"]["calls"] == 1
    assert providers["grokbot"]["inputTokens"] + providers["grokbot"]["cacheReadTokens"] == 70_040
    assert providers["cursor"]["billedCost"] == pytest.approx(1.25)
    days = {d["date"]: d for d in after["days"]}
    assert days[last]["cost"] == pytest.approx(0.002)  # outside coverage: still the estimate
    assert after["coverage"]["localEstimateCost"] == pytest.approx(0.002)
    assert (
        len(after["coverage"]["ranges"]) == 1
        and after["coverage"]["ranges"][0]["source"] == "import"
    )
    projects = {p["project"] for p in after["projects"]}
    assert {"Cursor (imported)", "Grok Bot (imported)", "cursor"} <= projects

    assert main(["import", "cursor", "--remove", "--cursor-db", str(db)]) == 0
    assert "local estimates are shown again" in capsys.readouterr().out
    restored = _report(capsys, db, first, last)
    assert restored["totals"] == before["totals"]
    assert restored["days"] == before["days"]


def test_reimport_adds_nothing_and_keeps_the_store(
    scenario: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, csv, _ = scenario
    assert main(["import", "cursor", str(csv), "--cursor-db", str(db)]) == 0
    first = capsys.readouterr().out
    assert "5 new events, 0 already imported; 5 stored in total." in first
    assert "Nothing was uploaded." in first
    store = tmp_path / "cache" / "imports" / "cursor-usage.v3.json"
    mtime = os.stat(store).st_mtime_ns
    assert main(["import", "cursor", str(csv), "--cursor-db", str(db)]) == 0
    assert "0 new events, 5 already imported" in capsys.readouterr().out
    assert os.stat(store).st_mtime_ns == mtime


@pytest.mark.clock
def test_sealed_days_are_rederived_after_import_and_removal(
    scenario: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, csv, (first, last) = scenario
    _report(capsys, db, first, last)  # seals the days
    assert main(["import", "cursor", str(csv), "--cursor-db", str(db)]) == 0
    capsys.readouterr()
    assert _report(capsys, db, first, last)["totals"]["calls"] == 6
    assert main(["import", "cursor", "--remove", "--cursor-db", str(db)]) == 0
    capsys.readouterr()
    assert _report(capsys, db, first, last)["totals"]["calls"] == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "2026-02-30"], "codeburn import cursor: "),
        ([], "codeburn import cursor: "),
    ],
)
def test_import_errors_are_one_line(
    scenario: tuple[Path, Path, list[str]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    argv: list[str],
    message: str,
) -> None:
    db, _, _ = scenario
    bad = tmp_path / "bad.csv"
    bad.write_text("Date,Model\n2026-01-01T00:00:00Z,\n")
    args = ["import", "cursor", str(bad), "--cursor-db", str(db), *argv]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "cache" / "imports" / "cursor-usage.v3.json").exists()


def test_a_broken_row_names_its_line(
    scenario: tuple[Path, Path, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, _, _ = scenario
    rows = [ExportRow(iso_local(days_ago(3)), "gpt-5", input=5), ExportRow("not a date", "gpt-5")]
    csv = write_export(tmp_path / "broken.csv", rows)
    assert main(["import", "cursor", str(csv), "--cursor-db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "line 3" in err and err.count("\n") == 1


@pytest.mark.clock
def test_imported_usage_without_a_cursor_database_is_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "no-cursor" / "state.vscdb"
    csv = write_export(tmp_path / "u.csv", spec_rows(days_ago(8)), mtime_ms=day_end_ms(today()))
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(missing))  # no-data; --cursor-db: an error
    argv = ["--format", "json"]
    assert main(["status", *argv]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "no-data"
    assert main(["import", "cursor", str(csv), *argv]) == 0
    capsys.readouterr()
    assert main(["report", "--period", "30days", *argv]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["calls"] == 5
    assert any(str(missing) in w and "imported usage only" in w for w in report["warnings"])
    assert main(["status", *argv]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == "ok"
