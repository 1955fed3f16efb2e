"""The progress bar goes to a terminal's stderr only, never into JSON on stdout."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from codeburn.providers.samples.generator import SampleSpec, generate_sample_profile
from codeburn.server.cli import progress
from codeburn.server.cli.main import main
from tests.usage_fixtures import isolated_env

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _profile(tmp_path: Path) -> Path:
    spec = SampleSpec(seed=5, conversations=60, bubbles=(40, 60), days=5)
    return generate_sample_profile(tmp_path / "Cursor", spec).db_path


def test_progress_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    db = _profile(tmp_path)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    assert main(["report", "--period", "week", "--format", "json", "--cursor-db", str(db)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["totals"]["calls"] > 0
    assert "Reading Cursor history" in terminal.getvalue()


def test_no_progress_when_stderr_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    db = _profile(tmp_path)
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    assert main(["report", "--period", "week", "--format", "json", "--cursor-db", str(db)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    json.loads(captured.out)
