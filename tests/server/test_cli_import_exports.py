"""`codeburn import cursor` with real exports, team exports, and files that are not exports;
stored exact events shown for any --from/--to, also before the 6-month scan floor."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from codeburn.cache.imports.store import STORE_FILE
from codeburn.server.cli.main import main
from tests.csv_fixtures import ExportRow, iso_local, write_export
from tests.usage_fixtures import days_ago, isolated_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


REAL = Path(__file__).resolve().parent.parent / "data" / "real-csv"


def _import(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict | None, str]:
    code = main(["import", "cursor", *args, "--format", "json", "--cursor-db", "/nowhere/x.vscdb"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else None, captured.err


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    # No Cursor database: CODEBURN_CURSOR_DB keeps `no-data` (an explicit --cursor-db is an error).
    os.environ["CODEBURN_CURSOR_DB"] = "/nowhere/x.vscdb"
    try:
        assert main(["report", "--format", "json", *args]) == 0
    finally:
        del os.environ["CODEBURN_CURSOR_DB"]
    return json.loads(capsys.readouterr().out)


def test_every_real_export_reports_priced_with_the_hand_summed_totals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    for path in sorted(REAL.glob("*.csv")):
        user = ["--user", "alice@example.com"] if path.name.startswith("06_") else []
        code, _, err = _import(capsys, str(path), *user)
        assert (code, err) == (0, "")
    # The samples span 2025-03 to 2026-05: most of it before any 6-month floor from now on.
    report = _report(capsys, "--from", "2024-01-01", "--to", "2026-06-30")
    assert report["unpricedModels"] == []
    totals = report["totals"]
    assert totals["calls"] == 2335 + 199 + 4 + 32 + 119 + 6 + 3
    assert totals["notCharged"] == 119 + 2 + 3 + 1 + 1
    assert totals["cost"] == pytest.approx(
        3496.068985 + 30.666 + 0.973625 + 54.893304 + 7.285995 + 9.45996 + 8.378877
    )
    assert totals["billedCost"] == pytest.approx(30.666 + 0.11)
    own_key = report["userApiKey"]
    assert (own_key["calls"], own_key["tokens"]) == (2, 8000 + 1_750_000)
    assert own_key["apiCost"] == pytest.approx(6.32)
    assert {m["model"] for m in own_key["models"]} == {
        "us.anthropic.claude-opus-4-6-v1",
        "gpt-5-fast",
    }
    assert "notCharged" in report["models"][0] and "notCharged" in report["days"][0]


@pytest.mark.clock
def test_stored_events_before_the_floor_show_for_an_explicit_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    old = days_ago(250)  # always before the floor (6 calendar months ago)
    rows = [
        ExportRow(iso_local(old, 10), "gpt-5", input=1000, output=100, cost="$0.40"),
        ExportRow(iso_local(old, 11), "gpt-5", input=10, kind="Errored, Not Charged", cost="-"),
    ]
    code, summary, _ = _import(capsys, str(write_export(tmp_path / "old.csv", rows)))
    assert code == 0 and summary is not None and summary["added"] == 2
    day = old.isoformat()
    report = _report(capsys, "--from", day, "--to", (old + timedelta(days=1)).isoformat())
    assert report["totals"]["calls"] == 2
    assert report["totals"]["notCharged"] == 1
    assert report["totals"]["cost"] == pytest.approx(0.40)
    assert [d["date"] for d in report["days"]] == [day]
    # "all" starts at the oldest day held: the imported day, before the floor of local files
    everything = _report(capsys, "--period", "all")
    assert everything["period"]["from"] == day
    assert everything["totals"]["calls"] == 2
    assert everything["totals"]["cost"] == report["totals"]["cost"]


def test_team_export_needs_user_and_never_sums_several_people(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = isolated_env(tmp_path, monkeypatch)
    team = REAL / "06_mishka_team_user_requests.csv"
    code, _, err = _import(capsys, str(team))
    assert code == 1
    assert err.count("\n") == 1 and "3 people" in err and "--user EMAIL" in err
    assert not (env.cache / "imports").exists() or not any((env.cache / "imports").glob("*.json"))
    code, _, err = _import(capsys, str(team), "--user", "nobody@example.com")
    assert code == 1 and "has no rows" in err
    code, summary, _ = _import(capsys, str(team), "--user", "BOB@example.com")
    assert code == 0 and summary is not None
    assert (summary["added"], summary["tokens"]) == (4, 494_961 + 133_727 + 48_854 + 61_587)
    stored = (env.cache / "imports" / "cursor-usage.v3.json").read_text()
    assert "example.com" not in stored


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no fifos on this platform")
def test_files_that_are_not_exports_are_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = isolated_env(tmp_path, monkeypatch)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # no writer: opening it for reading the usual way would block forever
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024 + 1)  # sparse: no disk used
    for path, message in (
        ("/dev/zero", "not a regular file"),
        (str(fifo), "not a regular file"),
        (str(tmp_path), "not a regular file"),
        (str(huge), "larger than 200 MB"),
        (str(tmp_path / "missing.csv"), "No such file"),
    ):
        code, _, err = _import(capsys, path)
        assert code == 1
        assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1
        assert message in err and "Traceback" not in err
    assert not (env.cache / "imports" / "cursor-usage.v3.json").exists()


@pytest.mark.clock
def test_rows_dated_after_tomorrow_are_refused_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = isolated_env(tmp_path, monkeypatch)
    rows = [
        ExportRow(iso_local(days_ago(1), 10), "gpt-5", input=10),
        ExportRow("2099-01-01T00:00:00.000Z", "gpt-5", input=20),
    ]
    code, summary, _ = _import(capsys, str(write_export(tmp_path / "f.csv", rows)))
    assert code == 0 and summary is not None
    assert (summary["added"], summary["future"], summary["total"]) == (1, 1, 1)
    doc = json.loads((env.cache / "imports" / "cursor-usage.v3.json").read_text())
    assert [e["date"] for e in doc["events"]] == [rows[0].date]
    assert all(r["end"] < "2099" for r in doc["ranges"])


def test_text_report_counts_not_charged_calls_and_lists_own_key_calls_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    code, _, _ = _import(capsys, str(REAL / "12_jasonholt_team_userapikey_requests_FIXTURE.csv"))
    assert code == 0
    monkeypatch.setenv("CODEBURN_CURSOR_DB", "/nowhere/x.vscdb")
    assert main(["report", "--from", "2026-02-19", "--to", "2026-02-19"]) == 0
    text = capsys.readouterr().out
    # 2026-02-19: 7 rows, 2 of them User API Key; of the other 5 one errored without charge.
    assert "5 calls" in text and "1 not charged by Cursor ($0)" in text
    assert "Not Cursor spend: 2 calls billed to your own API key (~$6.32 at API rates)" in text


def _signed_in_db(path: Path, email: str) -> Path:
    """A Cursor global database holding only the cached login e-mail."""
    import sqlite3  # noqa: PLC0415

    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE, value BLOB)")
        conn.execute(
            "INSERT OR REPLACE INTO ItemTable VALUES ('cursorAuth/cachedEmail', ?)", (email,)
        )
    conn.close()
    return path


def test_a_team_export_of_one_other_person_is_refused_with_the_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its rows were imported as the signed-in user's (issue 20, item 14)."""
    env = isolated_env(tmp_path, monkeypatch)
    team = REAL / "12_jasonholt_team_userapikey_requests_FIXTURE.csv"  # one person, by e-mail
    db = _signed_in_db(tmp_path / "state.vscdb", "ana@example.com")
    argv = ["import", "cursor", str(team), "--format", "json", "--cursor-db", str(db)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("codeburn import cursor: ") and err.count("\n") == 1
    assert "developer@jasonholtdigital.com" in err and "--user EMAIL" in err
    assert "ana@example.com" not in err
    assert not (env.cache / "imports" / STORE_FILE).exists()
    _signed_in_db(db, "Developer@JasonHoltDigital.com")
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 8


def test_a_personal_export_saying_you_is_not_filtered_by_the_signed_in_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    personal = REAL / "10_kenichiro_old_usage-tokens_2025-08-22.csv"  # `You` in every row
    db = _signed_in_db(tmp_path / "state.vscdb", "ana@example.com")
    argv = ["import", "cursor", str(personal), "--format", "json", "--cursor-db", str(db)]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["added"] == 119


def test_control_characters_in_names_paths_and_users_are_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`\x1b]0;pwned\x07` reached the terminal raw: in "Imported …", in errors and in the list
    of a team export's people (issue 20, item 15)."""
    isolated_env(tmp_path, monkeypatch)
    evil = "\x1b]0;pwned\x07"
    shown = "\\x1b]0;pwned\\x07"
    good = write_export(tmp_path / f"{evil}.csv", [ExportRow(iso_local(days_ago(2)), "gpt-5")])
    assert main(["import", "cursor", str(good), "--cursor-db", "/nowhere/x.vscdb"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Imported {shown}.csv:") and "\x1b" not in out
    rows = [
        ExportRow(iso_local(days_ago(2)), "gpt-5", user=f"ana{evil}@example.com"),
        ExportRow(iso_local(days_ago(2), 13), "gpt-5", user="ben@example.com"),
    ]
    team = write_export(tmp_path / "team.csv", rows, "team")
    (tmp_path / evil).mkdir()
    for path in (team, tmp_path / evil / "missing.csv", tmp_path / evil):
        code, _, err = _import(capsys, str(path))
        assert code == 1 and err.count("\n") == 1
        assert "\x1b" not in err and "\x07" not in err and shown in err
