"""`codeburn report --by conversation` and the default report's "Top conversations" (issue 17
item 4): the report JSON's conversations as a table, in its order, with the names people read.

The profile is test_usage_attribution's: named conversations in both IDE layouts and the Cursor
Agent CLI, a transcript, and synced events of known ids, times and models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers.localtime import iso_utc
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from tests.server.test_usage_attribution import DAY, EVENTS, _event, _sync, _write_local
from tests.usage_fixtures import at, isolated_env

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment

HEAD = ["Title", "Project", "Provider", "Model(s)", "Cost", "Calls", "Last"]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(home))
    return _write_local(tmp_path / "Cursor", home)


def _run(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> str:
    day = DAY.isoformat()
    capsys.readouterr()
    assert main(["report", "--cursor-db", str(db), "--from", day, "--to", day, *extra]) == 0
    out: str = capsys.readouterr().out
    return out


def _json(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(_run(capsys, db, "--format", "json", *extra))
    return report


def _table(out: str) -> list[list[str]]:
    """The cells of the conversation table's rows (header checked)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Title "))
    assert [c.strip() for c in lines[start].split("┃")] == HEAD
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        rows.append([c.strip() for c in line.split("│")])
    return rows


def test_by_conversation_lists_the_reports_conversations_with_their_names(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sync([_event(*event) for event, _ in EVENTS])
    report = _json(capsys, db)
    again = _json(capsys, db, "--by", "conversation")
    # The same JSON; but for `diagnostics`, facts of a local read: the second run serves the
    # past day sealed, without a read (the first dated the transcript tx-1 by inference).
    assert {**again, "diagnostics": report["diagnostics"]} == report
    out = _run(capsys, db, "--by", "conversation")
    assert "Sessions" not in out and "Total" not in out  # no other table
    day = DAY.isoformat()
    assert _table(out) == [
        ["bc-cloud", "Other machines and clou…", "Cursor", "Sonnet 4.5", "$3.00", "1", day],
        ["Fix login", "alpha", "Cursor", "Sonnet 4.5, Sonnet 4.5 (T…", "$1.30", "2", day],
        ["Add tests", "gamma", "Cursor Agent", "GPT-5", "$0.900", "2", day],
        ["Refactor", "beta", "Cursor", "GPT-5", "$0.400", "1", day],
        ["tx-1", "zeta", "Cursor Agent", "GPT-5", "$0.150", "1", day],  # a transcript's slug
    ]
    # In the report's order, which the JSON gives (its ids: the untitled rows' first column).
    ids = [c["id"] for c in report["conversations"]]
    assert ids == ["bc-cloud-9", "comp-old", "cli-1", "comp-new", "tx-1"]
    fix_login = report["conversations"][1]
    assert fix_login["models"] == ["claude-4.5-sonnet", "claude-4.5-sonnet-thinking"]
    names = {p["project"]: p["name"] for p in report["projects"]}
    assert (fix_login["project"], names[fix_login["project"]]) == ("-home-me-alpha", "alpha")


def _write_seven(root: Path) -> Path:
    """Seven bubble conversations of one project, costlier as `n` grows; the names of two are
    markup and an escape, one has none."""
    names = ["[red]x[/red]", "a\x1b[2Jb", None, "four", "five", "six", "seven"]
    with ProfileWriter(root) as p:
        for n, name in enumerate(names, start=1):
            cid = f"conv-{n:02d}-untitled"
            start = at(DAY, 9 + n)
            p.bubble(cid, "u", role="user", text="q" * 40, created_at=iso_utc(start))
            p.bubble(
                cid,
                "a",
                role="assistant",
                text="r" * 400 * n,
                created_at=iso_utc(start + 60_000),
                model="gpt-5",
            )
            p.composer(cid, created_at_ms=start, extra={} if name is None else {"name": name})
        p.workspace(
            "w1",
            folder="file:///home/me/web-app",
            composers=[f"conv-0{n}-untitled" for n in range(1, 8)],
        )
    return p.db_path


def test_estimates_are_marked_and_the_default_report_shows_the_top_five(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing synced: every conversation is a local estimate (`~`); seven of them, five shown
    in the default report; names printed as text."""
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "no-home"))
    db = _write_seven(tmp_path / "Cursor")
    convs = _json(capsys, db)["conversations"]
    assert [c["id"][5:7] for c in convs] == ["07", "06", "05", "04", "03", "02", "01"]
    assert all(c["estimatedCost"] > 0 for c in convs)
    listed = _table(_run(capsys, db, "--by", "conversation"))
    day = DAY.isoformat()
    # a title's control characters are removed (ESC included: nothing reaches the terminal)
    titles = ["seven", "six", "five", "four", "conv-03-", "a[2Jb", "[red]x[/red]"]
    assert [row[0] for row in listed] == titles
    assert {(row[1], row[2], row[3], row[5], row[6]) for row in listed} == {
        ("web-app", "Cursor", "GPT-5", "2", day)
    }
    assert all(row[4].startswith("~$") for row in listed)
    out = _run(capsys, db)
    assert out.index("Project ") < out.index("Top conversations") < out.index("Total ~$")
    top = _table(out[out.index("Top conversations") :])
    assert top[:5] == listed[:5]
    assert top[5][0] == "… 2 more" and len(top) == 6


def test_no_conversations_no_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Synced events alone (no local conversation): all unattributed, no conversation."""
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "no-home"))
    db = tmp_path / "no-cursor" / "state.vscdb"
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(db))
    _sync([_event(*event) for event, _ in EVENTS if event[3] is None])
    day = DAY.isoformat()
    argv = ["report", "--from", day, "--to", day]
    assert main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["conversations"] == [] and report["totals"]["calls"] == 6
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Total $" in out and "Top conversations" not in out and "Title " not in out
    assert main([*argv, "--by", "conversation"]) == 0
    assert "No conversations in this period." in capsys.readouterr().out


def test_by_takes_conversation_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--by", "project"]) == 2
    err = capsys.readouterr().err
    assert "argument --by: invalid choice: 'project'" in err and "conversation" in err
    assert main(["today", "--by", "conversation"]) == 2
    assert "unrecognized arguments: --by" in capsys.readouterr().err
    assert main(["report", "--help"]) == 0
    assert "codeburn report --by conversation" in capsys.readouterr().out
