"""Report and status figures against a hand-computed profile (numbers written before the run)."""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pytest

from codeburn.providers.localtime import today
from codeburn.server.cli.main import main
from tests.usage_fixtures import days_ago, isolated_env, write_hand_profile

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


# Hand-computed from docs/local-data.md and pricing.md (see write_hand_profile):
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


@pytest.mark.clock
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
    # B and C have no workspace: "(no project)", all of it estimated; A is alpha's.
    assert totals["noProjectCost"] == pytest.approx(COST_B)
    assert totals["noProjectEstimatedCost"] == pytest.approx(COST_B)
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


@pytest.mark.clock
def test_report_shape_follows_the_spec(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, _ = hand_db
    report = run_json(capsys, "report", "--format", "json", "--cursor-db", str(db), "--from", d1)
    assert report["schema"] == "codeburn.report/1"
    assert set(report) == {
        "schema", "period", "totals", "providers", "models", "projects", "days",
        "unpricedModels", "coverage", "userApiKey", "cursorSync", "warnings",
        "attribution", "conversations", "diagnostics",
    }  # fmt: skip
    totals_keys = {
        "cost", "estimatedCost", "billedCost", "calls", "sessions", "inputTokens",
        "outputTokens", "cacheReadTokens", "cacheWriteTokens", "notCharged", "listPriceCost",
        "cursorFee",
    }  # fmt: skip
    assert set(report["totals"]) == totals_keys | {"noProjectCost", "noProjectEstimatedCost"}
    assert set(report["period"]) == {"label", "from", "to", "timezone"}
    assert all(set(p) == totals_keys | {"id", "name"} for p in report["providers"])
    assert all(set(m) == totals_keys | {"model", "name", "provider"} for m in report["models"])
    project_keys = totals_keys | {"project", "name", "path", "providers"}
    assert all(set(p) == project_keys for p in report["projects"])
    tool_keys = {"id", "name", "cost", "estimatedCost", "calls"}
    assert all(set(t) == tool_keys for p in report["projects"] for t in p["providers"])
    assert all(set(d) == totals_keys | {"date"} for d in report["days"])
    assert set(report["coverage"]) == {"ranges", "localEstimateCost"}
    assert report["userApiKey"] == {"calls": 0, "tokens": 0, "apiCost": 0.0, "models": []}
    assert isinstance(report["warnings"], list) and isinstance(report["diagnostics"], list)
    # No exact events: nothing to attribute; the local conversations are listed.
    assert report["attribution"] == {
        k: {"calls": 0, "cost": 0.0} for k in ("byId", "byTime", "otherMachines", "unattributed")
    }
    conv_keys = totals_keys | {"id", "title", "project", "provider", "models", "first", "last"}
    assert all(set(c) == conv_keys for c in report["conversations"])
    assert {c["id"] for c in report["conversations"]} == {"conv-a", "conv-b", "conv-c"}
    assert report["diagnostics"] == []


@pytest.mark.clock
def test_status_shape_and_month_figures(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    status = run_json(capsys, "status", "--format", "json", "--cursor-db", str(db))
    assert set(status) == {
        "schema", "generatedAt", "state", "message", "today", "month", "localEstimateNote",
        "topModels", "budget", "quota", "cursorSync", "warnings", "unreadable", "diagnostics",
        "topProject", "cycle", "forecast", "alerts",
    }  # fmt: skip
    assert status["unreadable"] == {"count": 0, "reasons": {}}
    assert status["warnings"] == []
    assert status["schema"] == "codeburn.status/1" and status["state"] == "ok"
    zero = {
        "cost": 0, "estimatedCost": 0, "billedCost": 0, "listPriceCost": 0, "calls": 0,
        "noProjectCost": 0, "noProjectEstimatedCost": 0,
        "providers": [],
    }  # fmt: skip
    assert status["today"] == zero
    month = today().isoformat()[:7]  # the local month (generatedAt is UTC)
    if d1[:7] == month:  # A (d1) and B (d2) are both this month
        assert status["month"]["calls"] == 5
        assert status["month"]["cost"] == pytest.approx(COST_A + COST_B)
        assert status["topModels"][0] == {
            "name": "Sonnet 4.6",
            "cost": pytest.approx(COST_B),
            "calls": 2,
            "estimatedCost": pytest.approx(COST_B),
        }
        assert status["localEstimateNote"] == (
            "~$0.031 of the estimate is from Cursor's local files"
            " — sync or import for exact figures"
        )
        # B and C have no workspace: no project of this machine, said apart; A's folder names it.
        top = status["topProject"]
        assert top == {
            **top,
            "project": "-home-me-alpha",
            "cost": pytest.approx(COST_A),
            "estimatedCost": pytest.approx(COST_A),
        }
        assert top["name"] == "alpha" and top["path"] == "/home/me/alpha"
        assert status["month"]["noProjectCost"] == pytest.approx(COST_B)
        assert status["month"]["noProjectEstimatedCost"] == pytest.approx(COST_B)
    elif d2[:7] == month:  # the 3rd: only B and C (d2)
        assert status["topProject"] is None
        assert status["month"]["noProjectCost"] == pytest.approx(COST_B)
        assert status["month"]["calls"] == 3
        assert status["month"]["cost"] == pytest.approx(COST_B)
        assert status["topModels"][0]["name"] == "Sonnet 4.6"
    else:  # the 1st or 2nd: nothing yet this month
        assert status["month"] == zero
        assert status["topModels"] == [] and status["localEstimateNote"] is None
        assert status["topProject"] is None
    assert status["budget"] == {"daily": None, "monthly": None, "level": "ok"}


@pytest.mark.clock
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


def test_a_from_that_is_no_date_is_a_usage_error_exit_2(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _, _ = hand_db
    assert main(["report", "--cursor-db", str(db), "--from", "2026-13-45"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: codeburn report ")
    assert err.splitlines()[-1] == (
        "codeburn report: error: argument --from: expects a date like 2026-11-30, got '2026-13-45'"
    )


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["report", "--bogus"], "codeburn report"),
        (["status", "--period", "month"], "codeburn status"),
        (["today", "--format", "yaml"], "codeburn today"),
        (["bogus"], "codeburn"),
    ],
)
def test_usage_errors_print_the_usage_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], prog: str
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"usage: {prog} ")
    assert err.splitlines()[-1].startswith(f"{prog}: error: ")


def test_missing_database_is_no_data_with_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "nowhere" / "state.vscdb"
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(missing))
    status = run_json(capsys, "status", "--format", "json")
    assert status["state"] == "no-data" and str(missing) in status["message"]
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert str(missing) in text and "$0.00" not in text


@pytest.mark.parametrize("command", ["report", "today", "month", "status", "demo"])
def test_an_explicit_cursor_db_that_does_not_exist_is_one_line_and_exit_1(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    """`--cursor-db /nonexistent` only warned and exited 0 (issue 18, item 7)."""
    isolated_env(tmp_path, monkeypatch)
    missing = tmp_path / "nowhere" / "state.vscdb"
    assert main([command, "--cursor-db", str(missing)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"codeburn {command}: --cursor-db {missing} does not exist; give the path of "
        "Cursor's global state.vscdb\n"
    )


def test_version_and_help_with_an_example_for_every_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from importlib.metadata import version  # noqa: PLC0415

    from codeburn.server.cli.main import build_parser  # noqa: PLC0415

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"codeburn {version('codeburn')}\n"
    assert main(["report", "--version"]) == 0
    assert capsys.readouterr().out.startswith("codeburn ")
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        assert "examples:\n  codeburn " + name in (sub.epilog or ""), name
        for action in sub._actions:
            if action.dest in ("help", "version"):
                continue
            assert action.help, (name, action.dest)
            if action.option_strings:
                assert f"e.g. {action.option_strings[0]}" in action.help, (name, action.dest)
    assert main(["status", "--help"]) == 0
    assert "e.g. --quota" in capsys.readouterr().out


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


@pytest.mark.clock
def test_text_report_marks_estimates_and_notes_local_dollars(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    assert main(["report", "--cursor-db", str(db), "--from", d1, "--to", d2]) == 0
    out = capsys.readouterr().out
    assert "~$0.031" in out and "~$0.030" in out  # total and Sonnet 4.6, both estimated
    assert "~$0.031 of the estimate is from Cursor's local files" in out
    assert "mystery-model-x" in out


@pytest.mark.clock
def test_provider_filter(
    hand_db: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, d1, d2 = hand_db
    args = ["report", "--format", "json", "--cursor-db", str(db), "--from", d1, "--to", d2]
    report = run_json(capsys, *args, "--provider", "grokbot")
    assert report["totals"]["calls"] == 0 and report["providers"] == []
    report = run_json(capsys, *args, "--provider", "cursor")
    assert report["totals"]["calls"] == 5
