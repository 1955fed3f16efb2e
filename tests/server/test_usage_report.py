"""Report and status figures against a hand-computed profile (numbers written before the run)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.localtime import today
from codeburn.server.cli.main import main
from tests.usage_fixtures import days_ago, isolated_env, write_hand_profile

# Hand-computed from SPEC §2/§3 (see write_hand_profile):
# A: input 10 × $1.25/M + output 50 × $10/M = 0.0000125 + 0.0005
# B: meter 10,000 × $3/M = 0.03; output 20 × $15/M = 0.0003
# C: unpriced → $0
COST_A = 0.0000125 + 0.0005
COST_B = 0.03 + 0.0003


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def hand_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    isolated_env(tmp_path, monkeypatch)
    d1, d2 = days_ago(3), days_ago(2)
    return write_hand_profile(tmp_path / "Cursor", d1, d2), d1.isoformat(), d2.isoformat()


def test_report_totals_match_hand_computed_figures(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    report = run_json(
        capsys, "report", "--format", "json", "--cursor-db", str(db), "--from", d1, "--to", d2
    )
    totals = report["totals"]
    assert totals["calls"] == 5 and totals["sessions"] == 3
    assert totals["inputTokens"] == 11_010 and totals["outputTokens"] == 570
    assert totals["cost"] == pytest.approx(COST_A + COST_B)
    assert totals["estimatedCost"] == pytest.approx(COST_A + COST_B)
    assert totals["billedCost"] == 0
    assert [(d["date"], d["calls"]) for d in report["days"]] == [(d1, 2), (d2, 3)]
    assert report["days"][0]["cost"] == pytest.approx(COST_A)
    models = {m["model"]: m for m in report["models"]}
    assert models["claude-4.6-sonnet"]["name"] == "Sonnet 4.6"
    assert models["claude-4.6-sonnet"]["cost"] == pytest.approx(COST_B)
    assert models["gpt-5"]["calls"] == 2 and models["mystery-model-x"]["cost"] == 0
    assert [m["model"] for m in report["models"]] == [
        "claude-4.6-sonnet",
        "gpt-5",
        "mystery-model-x",
    ]
    projects = {p["project"]: p for p in report["projects"]}
    assert projects["cursor"]["calls"] == 3 and projects["-home-me-alpha"]["calls"] == 2
    assert report["unpricedModels"] == [{"model": "mystery-model-x", "calls": 1, "tokens": 1500}]
    assert report["providers"][0]["id"] == "cursor" and report["providers"][0]["name"] == "Cursor"
    assert report["coverage"] == {"ranges": [], "localEstimateCost": pytest.approx(COST_A + COST_B)}
    assert report["cursorSync"] is None


def test_report_shape_follows_the_spec(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, _ = hand_db
    report = run_json(capsys, "report", "--format", "json", "--cursor-db", str(db), "--from", d1)
    assert report["schema"] == "codeburn.report/1"
    assert set(report) == {
        "schema", "period", "totals", "providers", "models", "projects", "days",
        "unpricedModels", "coverage", "userApiKey", "cursorSync", "warnings",
    }  # fmt: skip
    totals_keys = {
        "cost", "estimatedCost", "billedCost", "calls", "sessions", "inputTokens",
        "outputTokens", "cacheReadTokens", "cacheWriteTokens", "notCharged",
    }  # fmt: skip
    assert set(report["totals"]) == totals_keys
    assert set(report["period"]) == {"label", "from", "to", "timezone"}
    assert all(set(p) == totals_keys | {"id", "name"} for p in report["providers"])
    assert all(set(m) == totals_keys | {"model", "name", "provider"} for m in report["models"])
    assert all(set(p) == totals_keys | {"project", "name", "path"} for p in report["projects"])
    assert all(set(d) == totals_keys | {"date"} for d in report["days"])
    assert set(report["coverage"]) == {"ranges", "localEstimateCost"}
    assert report["userApiKey"] == {"calls": 0, "tokens": 0, "apiCost": 0.0, "models": []}
    assert isinstance(report["warnings"], list)


def test_status_shape_and_month_figures(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    status = run_json(capsys, "status", "--format", "json", "--cursor-db", str(db))
    assert set(status) == {
        "schema", "generatedAt", "state", "message", "today", "month", "localEstimateNote",
        "topModels", "topProject", "budget", "quota", "cursorSync", "warnings", "unreadable",
    }  # fmt: skip
    assert status["unreadable"] == {"count": 0, "reasons": {}}
    assert status["warnings"] == []
    assert status["schema"] == "codeburn.status/1" and status["state"] == "ok"
    assert status["today"] == {"cost": 0, "estimatedCost": 0, "calls": 0}
    month = today().isoformat()[:7]  # the local month (generatedAt is UTC)
    if d1[:7] == month:  # A (d1) and B (d2) are both this month
        assert status["month"]["calls"] == 5
        assert status["month"]["cost"] == pytest.approx(COST_A + COST_B)
        assert status["topModels"][0] == {
            "name": "Sonnet 4.6",
            "cost": pytest.approx(COST_B),
            "calls": 2,
        }
        assert status["localEstimateNote"] == (
            "includes $0.031 of Cursor priced from local files, not Cursor's bill"
        )
        assert status["topProject"] == {
            "project": "cursor",  # B, with no workspace
            "name": "(no project)",
            "path": None,
            "cost": pytest.approx(COST_B),
        }
    elif d2[:7] == month:  # the 3rd: only B and C (d2)
        assert status["month"]["calls"] == 3
        assert status["month"]["cost"] == pytest.approx(COST_B)
        assert status["topModels"][0]["name"] == "Sonnet 4.6"
    else:  # the 1st or 2nd: nothing yet this month
        assert status["month"] == {"cost": 0, "estimatedCost": 0, "calls": 0}
        assert status["topModels"] == [] and status["localEstimateNote"] is None
        assert status["topProject"] is None
    assert status["budget"] == {"daily": None, "monthly": None, "level": "ok"}


def test_budget_levels_from_config(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db, _, _ = hand_db
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "config.json").write_text(json.dumps({"budget": {"monthly": 0.035}}))
    status = run_json(capsys, "status", "--format", "json", "--cursor-db", str(db))
    month = status["month"]["cost"]
    expected = "over" if month >= 0.035 else "warning" if month >= 0.028 else "ok"
    assert status["budget"] == {"daily": None, "monthly": 0.035, "level": expected}


def test_bad_from_is_one_line_and_exit_1(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _, _ = hand_db
    assert main(["report", "--cursor-db", str(db), "--from", "2026-13-45"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("codeburn report: --from expects a date")


def test_unknown_option_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--bogus"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("codeburn report:")


def test_missing_database_is_no_data_with_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "nowhere" / "state.vscdb"
    status = run_json(capsys, "status", "--format", "json", "--cursor-db", str(missing))
    assert status["state"] == "no-data" and str(missing) in status["message"]
    assert main(["status", "--cursor-db", str(missing)]) == 0
    text = capsys.readouterr().out
    assert str(missing) in text and "$0.00" not in text


def test_foreign_database_is_unrecognized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    db = tmp_path / "state.vscdb"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes(x)")
    conn.close()
    status = run_json(capsys, "status", "--format", "json", "--cursor-db", str(db))
    assert status["state"] == "db-unrecognized"
    assert status["message"] == f"Cursor storage format not recognized: {db}"
    assert main(["status", "--cursor-db", str(db)]) == 0
    assert "not recognized" in capsys.readouterr().out


def test_text_report_marks_estimates_and_notes_local_dollars(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    assert main(["report", "--cursor-db", str(db), "--from", d1, "--to", d2]) == 0
    out = capsys.readouterr().out
    assert "~$0.031" in out and "~$0.030" in out  # total and Sonnet 4.6, both estimated
    assert "includes $0.031 of Cursor priced from local files, not Cursor's bill" in out
    assert "mystery-model-x" in out


def test_provider_filter(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    args = ["report", "--format", "json", "--cursor-db", str(db), "--from", d1, "--to", d2]
    report = run_json(capsys, *args, "--provider", "grokbot")
    assert report["totals"]["calls"] == 0 and report["providers"] == []
    report = run_json(capsys, *args, "--provider", "cursor")
    assert report["totals"]["calls"] == 5
