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


@pytest.mark.parametrize("meter", [2**53 - 1, 10**30])
def test_a_meter_that_is_no_context_size_is_skipped_and_said(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    meter: int,
) -> None:
    """A `contextTokensUsed` of 10^30 crashed the text output; 2^53 - 1 read $11.26 B (issue
    20, item 5)."""
    from tests.cursor_fixtures import NOW_MS, ago, profile  # noqa: PLC0415

    isolated_env(tmp_path, monkeypatch)
    with profile(tmp_path) as p:
        p.composer("c1", created_at_ms=NOW_MS - 60_000, context_tokens_used=meter)
        p.bubble("c1", "u", role="user", text="u" * 400, created_at=ago(1))
    assert main(["report", "--period", "today", "--cursor-db", str(p.db_path)]) == 0
    out = capsys.readouterr().out
    assert "skipped 1 Cursor context meter above 10 M tokens" in out
    assert "Total ~$0.0003  1 calls" in out  # 100 tokens of user text as cursor-auto


def test_cli_sessions_with_a_meter_above_10m_tokens_are_counted() -> None:
    from codeburn.providers.agent.graph import Graph  # noqa: PLC0415
    from codeburn.providers.home.cli_store import CliSession  # noqa: PLC0415
    from codeburn.providers.home.reader import AgentRead  # noqa: PLC0415
    from codeburn.providers.local import local_notices, skipped_cli_gauges  # noqa: PLC0415

    def session(used: int) -> CliSession:
        graph = Graph(
            turns=(), used_tokens=used, started_ms=None, workspace_uris=(), skipped_blobs=0
        )
        return CliSession(f"s{used}", None, None, None, graph)

    agent = AgentRead(sessions={s.conversation_id: s for s in map(session, [5, 10**7, 10**12])})
    assert skipped_cli_gauges(agent) == 1
    assert local_notices(None, {}, 1) == [
        "skipped 1 Cursor context meter above 10 M tokens (not a context size)"
    ]
