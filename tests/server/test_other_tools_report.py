"""Claude Code and Codex in the same meter (docs/other-tools.md): one project row per folder
across Cursor, Claude Code and Codex; `--provider` filters; an appended line shows at the next
report; only other tools' logs, no Cursor, is still data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.config import Budget
from codeburn.providers import iso_utc, now_ms
from codeburn.providers.localtime import today
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.periods import Period
from codeburn.server.service.usage import UsageService
from tests.agent_fixtures import (
    SESSION,
    assistant,
    jsonl,
    session_meta,
    token_count,
    turn_context,
    usage,
    user_message,
    write,
)
from tests.usage_fixtures import at, days_ago, isolated_env, local_zone

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

FOLDER = "/srv/other-tools-test/shop"
SLUG = "-srv-other-tools-test-shop"
ROLLOUT = "019c16bd-a0fc-7293-855d-2948ce5dc471"


def _claude(root: Path, *extra: dict[str, object]) -> Path:
    day = days_ago(1)
    lines = [
        assistant("m1", "r1", iso_utc(at(day, 9)), usage(inp=10, out=100, read=1000), cwd=FOLDER),
        assistant(
            "m2", "r2", iso_utc(at(day, 9, 5)), usage(inp=5, out=50, write_1h=400), cwd=FOLDER
        ),
        *extra,
    ]
    return write(root / "projects" / SLUG / f"{SESSION}.jsonl", lines)


def _codex(root: Path) -> Path:
    day = days_ago(1)
    return write(
        root / "sessions" / f"rollout-2026-01-01T00-00-00-{ROLLOUT}.jsonl",
        [
            session_meta(ROLLOUT, FOLDER, iso_utc(at(day, 10))),
            user_message("fix the cart", iso_utc(at(day, 10))),
            turn_context("gpt-5.2-codex", iso_utc(at(day, 10))),
            token_count(iso_utc(at(day, 10, 1)), (1000, 400, 30, 0)),
            token_count(iso_utc(at(day, 10, 1)), (1000, 400, 30, 0)),
        ],
    )


@pytest.fixture
def three_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    day = days_ago(1)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.bubble("c1", "c1-1", role="user", text="q" * 40, created_at=iso_utc(at(day, 8)))
        p.bubble(
            "c1", "c1-2", role="assistant", text="r" * 200, created_at=iso_utc(at(day, 8, 1)),
            model="gpt-5",
        )  # fmt: skip
        p.workspace("w1", folder=f"file://{FOLDER}", composers=["c1"])
    _claude(Path(os.environ["CLAUDE_CONFIG_DIR"]))
    _codex(Path(os.environ["CODEX_HOME"]))
    return p.db_path


def _report(capsys: pytest.CaptureFixture[str], db: Path | None, *extra: str) -> dict:
    args = ["report", "--format", "json", "--from", days_ago(3).isoformat()]
    args += ["--cursor-db", str(db)] if db is not None else []
    assert main([*args, *extra]) == 0
    return json.loads(capsys.readouterr().out)


DECODERS = ("codeburn.providers.agents.claude_code", "codeburn.providers.agents.codex")


def _decoders_a_report_imports(db: Path) -> list[str]:
    """The other tools' decoders in `sys.modules` after a report in a fresh process."""
    probe = (
        "import sys\n"
        "from codeburn.server.cli.main import main\n"
        f"assert main(['report', '--format', 'json', '--cursor-db', {str(db)!r}]) == 0\n"
        f"print(' '.join(m for m in {DECODERS!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stderr.split()


def test_a_command_imports_the_other_tools_decoders_only_when_their_logs_exist(
    three_tools: Path,
) -> None:
    # A warm status or a Cursor-only report imports neither decoder (its start-up time).
    assert _decoders_a_report_imports(three_tools) == list(DECODERS)
    for root in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        shutil.rmtree(os.environ[root])
    assert _decoders_a_report_imports(three_tools) == []


def test_one_project_row_for_a_folder_used_from_three_tools(
    three_tools: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(capsys, three_tools)
    providers = {p["id"]: p for p in report["providers"]}
    assert set(providers) == {"cursor", "claude-code", "codex"}
    assert providers["claude-code"]["name"] == "Claude Code"
    assert providers["claude-code"]["calls"] == 2 and providers["codex"]["calls"] == 1
    claude_cost = (10 * 3 + 100 * 15 + 1000 * 0.30 + 5 * 3 + 50 * 15 + 400 * 6 + 1000 * 0.30) / 1e6
    assert providers["claude-code"]["cost"] == pytest.approx(claude_cost)
    assert providers["claude-code"]["listPriceCost"] == pytest.approx(claude_cost)
    assert providers["claude-code"]["billedCost"] == 0 == providers["codex"]["estimatedCost"]
    assert providers["codex"]["inputTokens"] == 600
    assert providers["codex"]["cacheReadTokens"] == 400
    (row,) = report["projects"]
    assert (row["project"], row["name"], row["path"]) == (SLUG, "shop", FOLDER)
    assert row["calls"] == sum(p["calls"] for p in providers.values())
    split = {t["id"]: (t["name"], t["calls"]) for t in row["providers"]}  # the row, by tool
    assert split == {p: (providers[p]["name"], providers[p]["calls"]) for p in providers}
    assert sum(t["cost"] for t in row["providers"]) == pytest.approx(row["cost"])
    conversations = {c["provider"]: c for c in report["conversations"]}
    assert conversations["claude-code"]["id"] == SESSION
    assert conversations["claude-code"]["project"] == SLUG
    assert conversations["codex"]["id"] == ROLLOUT
    assert conversations["codex"]["title"] == "fix the cart"
    only = _report(capsys, three_tools, "--provider", "codex")
    assert [p["id"] for p in only["providers"]] == ["codex"]
    assert only["totals"]["calls"] == 1


def test_an_appended_line_shows_at_the_next_report(
    three_tools: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _report(capsys, three_tools, "--provider", "claude-code")["totals"]
    path = _claude(Path(os.environ["CLAUDE_CONFIG_DIR"]))
    line = assistant("m3", "r3", iso_utc(at(days_ago(0), 0, 1)), usage(out=7), cwd=FOLDER)
    with path.open("ab") as fh:
        fh.write(jsonl([line]))
    after = _report(capsys, three_tools, "--provider", "claude-code")["totals"]
    assert after["calls"] == before["calls"] + 1
    assert after["outputTokens"] == before["outputTokens"] + 7


def test_other_tools_alone_are_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    _codex(Path(os.environ["CODEX_HOME"]))
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    report = _report(capsys, None)
    assert [p["id"] for p in report["providers"]] == ["codex"]
    assert any("Claude Code and Codex logs only" in w for w in report["warnings"])


def test_status_today_and_month_carry_a_line_per_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    just_now = iso_utc(now_ms() - 60_000)
    write(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / SLUG / f"{SESSION}.jsonl",
        [assistant("m1", "r1", just_now, usage(inp=10, out=100, read=0), cwd=FOLDER)],
    )
    write(
        Path(os.environ["CODEX_HOME"]) / "sessions" / f"rollout-x-{ROLLOUT}.jsonl",
        [
            session_meta(ROLLOUT, FOLDER, just_now),
            turn_context("gpt-5-codex", just_now),
            token_count(just_now, (1000, 0, 10, 0)),
        ],
    )
    assert main(["status", "--format", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    for period in ("today", "month"):
        rows = status[period]["providers"]
        assert [(r["id"], r["name"], r["calls"]) for r in rows] == [
            ("claude-code", "Claude Code", 1),
            ("codex", "Codex", 1),
        ]
        assert rows[0]["cost"] == pytest.approx((10 * 3 + 100 * 15) / 1e6)
        assert rows[1]["cost"] == pytest.approx((1000 * 1.25 + 10 * 10) / 1e6)
        assert status[period]["listPriceCost"] == pytest.approx(rows[0]["cost"] + rows[1]["cost"])


def test_the_providers_setting_chooses_what_status_and_budgets_count(
    three_tools: Path,
) -> None:
    from codeburn.cache import Budget  # noqa: PLC0415
    from codeburn.providers import today  # noqa: PLC0415
    from codeburn.server.service import UsageService  # noqa: PLC0415

    service = UsageService(three_tools)
    budget = Budget(daily=None, monthly=0.000_001)
    every = service.status(budget=budget, sync=False)
    only = service.status(budget=budget, sync=False, providers=frozenset({"cursor"}))
    assert every is not None and only is not None
    if days_ago(1).month != today().month:
        pytest.skip("yesterday's usage is in another month")
    assert {p["id"] for p in every["month"]["providers"]} == {"cursor", "claude-code", "codex"}
    assert [p["id"] for p in only["month"]["providers"]] == ["cursor"]
    assert only["month"]["cost"] == pytest.approx(only["month"]["providers"][0]["cost"])
    assert every["month"]["cost"] > only["month"]["cost"]

    def budget_over(status: dict[str, Any]) -> str:
        (alert,) = [a for a in status["alerts"] if a["id"].startswith("budget-monthly:over:")]
        return str(alert["message"])

    assert "this month's AI spend" in budget_over(every)
    assert "this month's Cursor spend" in budget_over(only)


def test_other_tools_history_before_the_six_month_floor_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Cursor's own files are read back to the floor only; these logs whole."""
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    old, recent = days_ago(240), days_ago(2)
    write(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / SLUG / f"{SESSION}.jsonl",
        [
            assistant("m1", "r1", iso_utc(at(old, 12)), usage(out=11), cwd=FOLDER),
            assistant("m2", "r2", iso_utc(at(recent, 12)), usage(out=22), cwd=FOLDER),
        ],
    )
    args = ["report", "--format", "json", "--from", days_ago(300).isoformat()]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert [d["date"] for d in report["days"]] == [old.isoformat(), recent.isoformat()]
    assert report["totals"]["outputTokens"] == 33
    # all history starts at the oldest day held: here the tool's oldest call
    assert main(["report", "--format", "json", "--period", "all"]) == 0
    every = json.loads(capsys.readouterr().out)
    assert every["period"]["from"] == old.isoformat()
    assert every["days"] == report["days"]


@pytest.mark.parametrize(
    ("provider", "tool", "golden", "cost_key"),
    [
        ("claude-code", "claude", "ccusage-claude-daily.json", "totalCost"),
        ("codex", "codex", "ccusage-codex-daily.json", "costUSD"),
    ],
)
def test_the_report_days_of_the_real_logs_equal_ccusage(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    provider: str,
    tool: str,
    golden: str,
    cost_key: str,
) -> None:
    """End to end, as a person runs it (UTC days; the logs lie before the 6-month floor)."""
    import gzip  # noqa: PLC0415

    from tests.providers.test_agents_vs_ccusage import DATA  # noqa: PLC0415

    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(tmp_path / "no-cursor" / "state.vscdb"))
    root = Path(os.environ["CLAUDE_CONFIG_DIR" if tool == "claude" else "CODEX_HOME"])
    for source in (DATA / tool).rglob("*.jsonl*"):
        target = root / source.relative_to(DATA / tool)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = source.read_bytes()
        if source.suffix == ".gz":
            target, data = target.with_suffix(""), gzip.decompress(data)
        target.write_bytes(data)
    with local_zone("UTC"):
        args = ["report", "--format", "json", "--from", "2025-08-01", "--provider", provider]
        assert main(args) == 0
    ours = {d["date"]: d for d in json.loads(capsys.readouterr().out)["days"]}
    theirs = {d["date"]: d for d in json.loads((DATA / golden).read_text())["daily"]}
    assert sorted(ours) == sorted(theirs)
    for day, d in theirs.items():
        o = ours[day]
        mine = (o["inputTokens"], o["outputTokens"], o["cacheReadTokens"], o["cacheWriteTokens"])
        assert mine == (
            d["inputTokens"], d["outputTokens"], d["cacheReadTokens"], d["cacheCreationTokens"]
        ), day  # fmt: skip
        assert o["cost"] == pytest.approx(d[cost_key], rel=1e-9), day
        assert o["listPriceCost"] == pytest.approx(d[cost_key], rel=1e-9), day


def _figures(answer: dict[str, Any] | None) -> dict[str, Any]:
    assert answer is not None
    return {k: v for k, v in answer.items() if k != "generatedAt"}


def test_a_long_lived_service_after_appends_and_rewrites_equals_a_fresh_one(
    three_tools: Path, tmp_path: Path
) -> None:
    """The language server's service keeps the other tools' reads between refreshes (only new
    requests weighed, the days before the month kept): every status and report equals a fresh
    service's (fresh caches) on the same files. (Sealed days keep their figures by design, so
    the changes here are to today's records.)"""
    root = Path(os.environ["CLAUDE_CONFIG_DIR"])
    old = days_ago(40)  # before the month: the status's forecast history
    path = _claude(root, assistant("m0", "r0", iso_utc(at(old, 9)), usage(out=30), cwd=FOLDER))
    now = iso_utc(at(today(), 0, 1))
    other = SESSION.replace("0001", "0002")
    today_only = root / "projects" / SLUG / f"{other}.jsonl"
    write(today_only, [assistant("t1", "u1", now, usage(out=11), session=other, cwd=FOLDER)])
    service = UsageService(three_tools, cache_dir=tmp_path / "kept-cache")
    period = Period("range", days_ago(45), today())
    fresh_dirs = iter(range(100))

    def check() -> None:
        fresh = UsageService(three_tools, cache_dir=tmp_path / f"fresh-{next(fresh_dirs)}")
        budget = Budget()
        assert _figures(service.status(budget=budget, sync=False)) == _figures(
            fresh.status(budget=budget, sync=False)
        )
        assert _figures(service.report(period, sync=False)) == _figures(
            fresh.report(period, sync=False)
        )

    check()
    for log, lines in (
        (path, [assistant("m4", "r4", now, usage(out=7), cwd=FOLDER)]),  # a new request
        (today_only, [assistant("t1", "u1", now, usage(out=40), session=other, cwd=FOLDER)]),
        (path, [assistant("t1", "u1", now, usage(out=40), cwd=FOLDER)]),  # copied into another log
    ):
        with log.open("ab") as fh:
            fh.write(jsonl(lines))
        check()
    rollout = next(Path(os.environ["CODEX_HOME"]).rglob("rollout-*.jsonl"))
    with rollout.open("ab") as fh:
        fh.write(jsonl([token_count(iso_utc(at(today(), 0, 2)), (2000, 400, 60, 0))]))
    check()
    write(today_only, [assistant("t2", "u2", now, usage(out=5), session=other, cwd=FOLDER)])
    check()  # rewritten
    today_only.write_bytes(today_only.read_bytes()[:10])
    check()  # truncated: a torn line, nothing


def test_a_long_lived_services_first_refresh_after_an_append_weighs_only_what_is_new(
    three_tools: Path, tmp_path: Path
) -> None:
    """A status that seals the days before today makes the other tools' read from today ready
    at once (`LocalReader.prepare_tools`): the first status after an append then weighs the new
    requests alone, rather than every request of the days it reads, and equals a fresh one."""
    service = UsageService(three_tools, cache_dir=tmp_path / "kept-cache")
    budget = Budget()
    service.status(budget=budget, sync=False)
    memo = service._local.tools.claude_memo
    made = memo.full_makes
    path = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / SLUG / f"{SESSION}.jsonl"
    with path.open("ab") as fh:
        fh.write(jsonl([assistant("m9", "r9", iso_utc(at(today(), 0, 1)), usage(), cwd=FOLDER)]))
    after = service.status(budget=budget, sync=False)
    assert memo.full_makes == made  # (the answer from today was made by the first status)
    fresh = UsageService(three_tools, cache_dir=tmp_path / "fresh-cache")
    assert _figures(after) == _figures(fresh.status(budget=budget, sync=False))
