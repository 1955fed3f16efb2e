"""The Cursor 3.x sample through the usage service and `codeburn demo`: every source once."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from codeburn.providers.localtime import now_ms, today
from codeburn.providers.samples.cursor3 import generate_cursor3_profile
from codeburn.server.cli.demo import run_demo
from codeburn.server.service.periods import named_period
from codeburn.server.service.usage import UsageService
from tests.providers.test_sample_cursor3 import SPEC

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


def test_service_counts_each_conversation_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Dated from the clock so that all of it lies in the six-month window, whatever the date;
    # the figures below are totals of the whole window, not of a day or a month.
    spec = replace(SPEC, now_ms=now_ms())
    info = generate_cursor3_profile(tmp_path / "Cursor", tmp_path / "home", spec)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(info.home))
    service = UsageService(info.db_path, cache_dir=tmp_path / "cache")
    report = service.report(named_period("all", today()), sync=False)
    # Cursor: the IDE reader's 71 calls (test_sample_cursor3) less the transcript+meter
    # conversation's meter record, plus its transcript (3 turns), the transcript-only
    # conversation (3) and its subagent (2). Cursor Agent: the CLI store with a meter
    # (3 output turns + 1 input) and the one with turn timings (3), whose transcripts are
    # dropped, and the CLI transcript-only session (3; its legacy .txt is dropped).
    providers = {p["name"]: p["calls"] for p in report["providers"]}
    assert providers == {"Cursor": 71 - 1 + 3 + 3 + 2, "Cursor Agent": 4 + 3 + 3}
    assert report["totals"]["calls"] == 88
    unreadable = [w for w in report["warnings"] if "could not be read" in w]
    assert unreadable == [
        "1 conversation in a newer Cursor format could not be read (1 encrypted)"
        " — sync or import for exact figures"
    ]


def test_demo_shows_both_layouts_labelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    monkeypatch.delenv("COLUMNS", raising=False)  # a pipe without COLUMNS: every line whole
    home = str(tmp_path / "cursor-home")
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", home)
    assert run_demo(sample=True) == 0
    out = capsys.readouterr().out
    first = out.index("Sample 1 of 2 — Cursor ≤ 2.x layout: conversations stored as bubbles")
    second = out.index("Sample 2 of 2 — Cursor 3.x layout")
    assert 0 < first < second
    assert "40 IDE conversations in the 3.x layout" in out[second:]
    assert "4 Cursor Agent CLI sessions (store.db)" in out[second:]
    assert "2 encrypted" in out[second:]
    assert "could not be read" not in out[:second]
    assert "could not be read" in out[second:]
    assert not Path(home).exists()  # the demo wrote its own homes, not the one set outside
    assert os.environ["CODEBURN_CURSOR_HOME"] == home  # and put the setting back
