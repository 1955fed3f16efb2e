"""Data is printed as plain text: names from an export are never Rich markup, emoji codes or
terminal escapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.localtime import today
from codeburn.server.cli.main import main
from codeburn.server.cli.text import plain
from tests.csv_fixtures import ExportRow, iso_local, write_export
from tests.usage_fixtures import isolated_env

HOSTILE = [
    "[/]",
    "[link=https://x.io]m[/link]",
    "red\x1b[31mALERT\x1b[0m",
    ":thumbs_up:",
    "rtl\u202eevil",
]


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    day = today()
    rows = [
        ExportRow(iso_local(day, 0, 10 + n), model, input=1000, output=100)
        for n, model in enumerate(HOSTILE)
    ]
    csv = write_export(tmp_path / "usage.csv", rows)
    assert main(["import", "cursor", str(csv)]) == 0
    return tmp_path / "no-cursor" / "state.vscdb"


@pytest.mark.parametrize("command", ["today", "month", "report"])
def test_markup_and_escapes_in_model_names_print_as_text(
    imported: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    capsys.readouterr()
    assert main([command, "--cursor-db", str(imported)]) == 0
    out = capsys.readouterr().out
    for shown in ("[/]", "[link=https://x.io]m[/link]", ":thumbs_up:"):
        assert shown in out
    assert "red\\x1b[31mALERT\\x1b[0m" in out and "rtl\\u202eevil" in out
    assert "\x1b" not in out and "\u202e" not in out and "👍" not in out


def test_plain_escapes_control_and_format_characters_only() -> None:
    assert plain("gpt-5 [fast] · ünïcode 模型") == "gpt-5 [fast] · ünïcode 模型"
    assert plain("a\x1b[2Jb\x07c\nd\u200be") == "a\\x1b[2Jb\\x07c\\nd\\u200be"
    assert plain(12) == "12"
