"""Data is printed as plain text: names from an export are never Rich markup, emoji codes or
terminal escapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeburn.providers.localtime import today
from codeburn.server.cli.lines import plain
from codeburn.server.cli.main import main
from tests.csv_fixtures import ExportRow, iso_local, write_export
from tests.usage_fixtures import isolated_env

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


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
    missing = tmp_path / "no-cursor" / "state.vscdb"
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(missing))  # no-data, not an explicit path
    return missing


@pytest.mark.parametrize("command", ["today", "month", "report"])
def test_markup_and_escapes_in_model_names_print_as_text(
    imported: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    capsys.readouterr()
    assert main([command]) == 0
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
    assert "skipped 1 Cursor context meter" not in out  # a diagnostic: --verbose only
    assert "Total ~$0.0003  1 call, 1 session" in out  # 100 tokens of user text as cursor-auto
    assert main(["report", "--period", "today", "--verbose", "--cursor-db", str(p.db_path)]) == 0
    assert "· skipped 1 Cursor context meter above 10 M tokens" in capsys.readouterr().out
    import json  # noqa: PLC0415

    argv = ["report", "--period", "today", "--format", "json", "--cursor-db", str(p.db_path)]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["warnings"] == []  # a fact of the read, not a warning (issue 18, item 6)
    assert report["diagnostics"] == [
        "skipped 1 Cursor context meter above 10 M tokens (not a context size)"
    ]
    assert main(["status", "--format", "json", "--cursor-db", str(p.db_path)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["warnings"] == [] and len(status["diagnostics"]) == 1


def test_cli_sessions_with_a_meter_above_10m_tokens_are_counted() -> None:
    from codeburn.providers.agent.graph import Graph  # noqa: PLC0415
    from codeburn.providers.home.cli_store import CliSession  # noqa: PLC0415
    from codeburn.providers.home.reader import AgentRead  # noqa: PLC0415
    from codeburn.providers.local import local_diagnostics, skipped_cli_gauges  # noqa: PLC0415

    def session(used: int) -> CliSession:
        graph = Graph(
            turns=(), used_tokens=used, started_ms=None, workspace_uris=(), skipped_blobs=0
        )
        return CliSession(f"s{used}", None, None, None, graph)

    agent = AgentRead(sessions={s.conversation_id: s for s in map(session, [5, 10**7, 10**12])})
    assert skipped_cli_gauges(agent) == 1
    assert local_diagnostics(None, 1) == [
        "skipped 1 Cursor context meter above 10 M tokens (not a context size)"
    ]


def test_the_cli_total_is_split_into_parts_that_add_up_on_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Billed rows, exact tokens at list price and estimates: three parts naming every dollar
    (the CLI said "$24.07 exact, $25.80 estimated" and never named the export's list-price
    rows, issue 18 item 5)."""
    import json  # noqa: PLC0415
    import re  # noqa: PLC0415
    from decimal import Decimal  # noqa: PLC0415

    isolated_env(tmp_path, monkeypatch)
    day = today()
    rows = [
        ExportRow(iso_local(day, 0, 10), "claude-4.5-sonnet", input=5000, cost="$1.005"),
        ExportRow(iso_local(day, 0, 20), "gpt-5", input=400_000, output=20_000),  # list price
        ExportRow(iso_local(day, 0, 30), "cursor-auto", input=300_000, output=9_000),  # estimate
    ]
    assert main(["import", "cursor", str(write_export(tmp_path / "u.csv", rows))]) == 0
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    capsys.readouterr()
    assert main(["report", "--period", "today", "--format", "json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    parts = [totals["billedCost"], totals["listPriceCost"], totals["estimatedCost"]]
    assert all(p > 0 for p in parts) and sum(parts) == pytest.approx(totals["cost"])
    assert main(["report", "--period", "today"]) == 0
    out = capsys.readouterr().out
    assert "CodeBurn — today (" in out
    found = re.search(
        r"^Total ~\$([\d.]+) .*\n  = \$([\d.]+) billed by Cursor \+ \$([\d.]+) exact tokens at "
        r"list price \+ ~\$([\d.]+) estimated$",
        out,
        re.MULTILINE,
    )
    assert found is not None, out
    total, *shown = (Decimal(g) for g in found.groups())
    assert sum(shown) == total
    assert main(["status"]) == 0
    month = re.search(
        r"^this month ~\$([\d.]+) = \$([\d.]+) billed by Cursor \+ \$([\d.]+) exact tokens at "
        r"list price \+ ~\$([\d.]+) estimated$",
        capsys.readouterr().out,
        re.MULTILINE,
    )
    assert month is not None
    total, *shown = (Decimal(g) for g in month.groups())
    assert sum(shown) == total


def test_the_model_table_names_the_provider_when_there_are_several(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Cursor (auto)" twice, once per provider, with nothing to tell the rows apart."""
    isolated_env(tmp_path, monkeypatch)
    day = today()
    rows = [
        ExportRow(iso_local(day, 0, 10), "gpt-5", input=1000, output=100),
        ExportRow(iso_local(day, 0, 20), "gpt-5", input=1000, output=100, cloud_agent_id="bc-1"),
        ExportRow(iso_local(day, 0, 30), "grok-bot-1", input=1000, output=100),
    ]
    assert main(["import", "cursor", str(write_export(tmp_path / "u.csv", rows))]) == 0
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    capsys.readouterr()
    assert main(["report", "--period", "today"]) == 0
    out = capsys.readouterr().out
    model_table = out[out.index("Model ") : out.index("Project ")]
    assert model_table.splitlines()[0].split()[:3] == ["Model", "┃", "Provider"]
    assert "Grok Bot" in model_table
    assert main(["report", "--period", "today", "--provider", "cursor"]) == 0
    out = capsys.readouterr().out
    assert "Provider" not in out[out.index("Model ") : out.index("Project ")]


def test_a_title_loses_its_control_characters_and_keeps_format_ones_visible() -> None:
    from codeburn.server.service import title_text  # noqa: PLC0415

    assert title_text("fix\x7f the\tbuild\r\nnow\x07") == "fix the build now"
    assert title_text("rtl\u202eevil") == "rtl\\u202eevil"  # a bidi override stays visible
    assert title_text("plain title") == "plain title"
    assert title_text(None) == ""


def test_counts_agree_with_their_noun_and_one_day_is_one_date() -> None:
    from codeburn.server.cli.lines import counted, period_days  # noqa: PLC0415

    assert [counted(n, "call") for n in (0, 1, 2, 1234)] == [
        "0 calls", "1 call", "2 calls", "1,234 calls"
    ]  # fmt: skip
    assert counted(1, "new event") == "1 new event"
    assert period_days("2026-12-06", "2026-12-06") == "2026-12-06"
    assert period_days("2026-12-01", "2026-12-06") == "2026-12-01 – 2026-12-06"
