"""Values no parse may trip over (issue 10, defects 4 and 5): JSON nested 2,000 levels deep,
dates in year 9999, a symlink loop at the database path. Each is skipped like any bad value;
the rest of the data is read, and nothing raises."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codeburn.cache.config import Budget
from codeburn.providers.localtime import iso_utc, today
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.usage import UsageService
from tests.usage_fixtures import at, isolated_env

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

DEEP_ARRAY = "[" * 2000 + "]" * 2000
DEEP_OBJECT = '{"a":' * 2000 + "1" + "}" * 2000
GOOD_COST = 100 * 10 / 1e6  # 400 characters of gpt-5 output → 100 tokens × $10/M


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_env(tmp_path, monkeypatch)


def _good_bubble(p: ProfileWriter, composer: str = "good") -> None:
    p.bubble(
        composer,
        "b1",
        role="assistant",
        text="x" * 400,
        created_at=iso_utc(at(today(), 0, 5)),
        model="gpt-5",
    )


def _today(db: Path) -> dict:
    status = UsageService(db).status(budget=Budget(), sync=False)
    assert status is not None and status["state"] == "ok"
    today_figures: dict = status["today"]
    return today_figures


def test_deep_agent_stream_values_are_skipped(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _good_bubble(p)
        p.put("agentKv:blob:deep1", '{"role":"user","content":' + DEEP_ARRAY + "}")
        p.put("agentKv:blob:deep2", DEEP_OBJECT)
    figures = _today(p.db_path)
    assert figures["calls"] == 1 and figures["cost"] == pytest.approx(GOOD_COST)


def test_deep_workspace_files_leave_the_project_unmapped(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _good_bubble(p)
        folder = p.workspace("w1", folder="file:///home/me/alpha", composers=["good"])
    (folder / "workspace.json").write_text('{"folder":' + DEEP_ARRAY + "}")
    conn = sqlite3.connect(folder / "state.vscdb")
    conn.execute(
        "UPDATE ItemTable SET value = ? WHERE key = 'composer.composerData'", (DEEP_OBJECT,)
    )
    conn.commit()
    conn.close()
    figures = _today(p.db_path)
    assert figures["calls"] == 1 and figures["cost"] == pytest.approx(GOOD_COST)


def test_deep_composer_values_are_skipped(tmp_path: Path) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _good_bubble(p)
        p.put("composerData:good", '{"_v":10,"composerId":"good","x":' + DEEP_ARRAY + "}")
        p.put_item("composer.composerHeaders", '{"allComposers":' + DEEP_ARRAY + "}")
    status = UsageService(p.db_path).status(budget=Budget(), sync=False)
    assert status is not None and status["state"] == "ok"


@pytest.mark.parametrize(
    "created_at",
    ["9999-12-31T23:59:59.999Z", "2101-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "0001-01-01"],
)
def test_a_date_out_of_range_is_skipped(tmp_path: Path, created_at: str) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _good_bubble(p)
        p.bubble(
            "far", "b1", role="assistant", text="y" * 800, created_at=created_at, model="gpt-5"
        )
    figures = _today(p.db_path)
    assert figures["calls"] == 1 and figures["cost"] == pytest.approx(GOOD_COST)


@pytest.mark.parametrize("created_ms", [253_402_300_799_999, 1e300, 10**30])
def test_a_conversation_created_out_of_range_keeps_its_bubbles_day(
    tmp_path: Path, created_ms: float
) -> None:
    with ProfileWriter(tmp_path / "Cursor") as p:
        _good_bubble(p)
        p.composer("good", created_at_ms=created_ms, total_used_tokens=10_000)
    figures = _today(p.db_path)
    # the bubble, and the meter's 10,000 input tokens × $1.25/M dated by the bubble, not 9999
    assert figures["calls"] == 2 and figures["cost"] == pytest.approx(GOOD_COST + 0.0125)


def test_a_symlink_loop_at_the_database_path_is_a_clear_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "state.vscdb"
    loop.symlink_to(loop)
    assert main(["status", "--cursor-db", str(loop)]) == 0
    out = capsys.readouterr()
    assert "No Cursor data found at" in out.out and "Traceback" not in out.err
