"""Transcripts and Cursor Agent CLI sessions through the usage service and the CLI.

Hand-computed: tokens = ceil(chars / 4). s1 (gpt-5, $1.25 / $10 per M): user 20 chars → 5,
answer 50 → 13, cost 0.00013625. t1 (cursor-auto, $3 / $15): two turns of 40 / 80 chars →
10 / 20 each, cost 2 × 0.00033 = 0.00066.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache.agent_files import VERSION as AGENT_FILES_VERSION
from codeburn.cache.agent_files import agent_files_path
from codeburn.providers import agent_side
from codeburn.providers import runtime as fork_aside
from codeburn.providers.home import reader as cursor_agent
from codeburn.providers.localtime import iso_utc, today
from codeburn.providers.plan import Plan
from codeburn.providers.samples.cursor3_writer import Cursor3Writer
from codeburn.providers.samples.home_writer import (
    AgentHomeWriter,
    TurnSpec,
    assistant,
    turn_ended,
    user,
)
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.periods import Period
from codeburn.server.service.usage import UsageService
from tests.csv_fixtures import ExportRow, write_export
from tests.usage_fixtures import at, days_ago, isolated_env, write_hand_profile

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


COST_S1 = 5 * 1.25e-6 + 13 * 10e-6
COST_T1 = 2 * (10 * 3e-6 + 20 * 15e-6)
UNREADABLE_ONE = (
    "1 conversation in a newer Cursor format could not be read (1 encrypted) "
    "— sync or import for exact figures"
)


def exchange(question: int, answer: int) -> list[dict[str, object]]:
    return [user("q" * question), assistant("a" * answer), turn_ended()]


class Machine:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.env = isolated_env(tmp_path, monkeypatch)
        self.home = AgentHomeWriter(tmp_path / "dot-cursor")
        monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(self.home.home))
        self.d1, self.d2 = days_ago(3), days_ago(2)
        self.db = tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb"

    def write_sessions(self) -> None:
        store = self.home.cli_session(
            "s1",
            [TurnSpec("hi" * 10, ["hello" * 10])],
            created_ms=at(self.d1, 9),
            model="gpt-5",
            workspace="/home/me/cli",
        )
        # Written that day, not just now (a file written just now is read again every time).
        os.utime(store, ns=(at(self.d1, 9) * 1_000_000,) * 2)
        self.home.transcript("t1", exchange(40, 80) * 2, mtime_ms=at(self.d2, 10))

    def args(self) -> list[str]:
        span = ["--from", self.d1.isoformat(), "--to", self.d2.isoformat()]
        return [*span, "--format", "json", "--no-sync"]

    def service(self) -> UsageService:
        return UsageService(self.db, cache_dir=self.env.cache)

    def period(self) -> Period:
        return Period("custom", self.d1, self.d2)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    found = Machine(tmp_path, monkeypatch)
    # No IDE database: named by CODEBURN_CURSOR_DB, which keeps `no-data` (docs/report-json.md; an
    # explicit --cursor-db that does not exist is an error).
    monkeypatch.setenv("CODEBURN_CURSOR_DB", str(found.db))
    return found


def test_transcripts_and_cli_sessions_alone_are_data(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    machine.write_sessions()
    report = run_json(capsys, "report", *machine.args())
    totals = report["totals"]
    assert (totals["calls"], totals["sessions"]) == (3, 2)
    assert (totals["inputTokens"], totals["outputTokens"]) == (25, 53)
    assert totals["cost"] == pytest.approx(COST_S1 + COST_T1)
    assert totals["estimatedCost"] == pytest.approx(COST_S1 + COST_T1)
    assert [(p["id"], p["calls"]) for p in report["providers"]] == [("cursor-agent", 3)]
    assert [(p["project"], p["calls"]) for p in report["projects"]] == [
        ("-home-me-app", 2),
        ("-home-me-cli", 1),
    ]
    cli = next(p for p in report["projects"] if p["project"] == "-home-me-cli")
    assert (cli["name"], cli["path"]) == ("cli", "/home/me/cli")  # the CLI store's workspace
    assert [(d["date"], d["calls"]) for d in report["days"]] == [
        (machine.d1.isoformat(), 1),
        (machine.d2.isoformat(), 2),
    ]
    assert [(m["model"], m["calls"]) for m in report["models"]] == [
        ("cursor-auto", 2),
        ("gpt-5", 1),
    ]
    assert report["warnings"] == [
        f"No Cursor database found at {machine.db}; showing agent transcripts and Cursor "
        "Agent CLI sessions only"
    ]
    status = run_json(capsys, "status", "--format", "json")
    assert status["state"] == "ok" and status["unreadable"] == {"count": 0, "reasons": {}}


def test_nothing_anywhere_is_still_no_data(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run_json(capsys, "status", "--format", "json")
    assert status["state"] == "no-data"
    assert status["message"] == f"No Cursor data found at {machine.db}"


def test_unreadable_conversations_are_reported_never_silent(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    machine.write_sessions()
    machine.home.cli_session(
        "s2", [TurnSpec("secret", ["x"])], created_ms=at(machine.d1, 9), encrypt_blobs=True
    )
    report = run_json(capsys, "report", *machine.args())
    assert report["totals"]["calls"] == 3
    assert UNREADABLE_ONE in report["warnings"]
    status = run_json(capsys, "status", "--format", "json")
    assert status["unreadable"] == {"count": 1, "reasons": {"encrypted": 1}}
    assert UNREADABLE_ONE in status["warnings"]
    assert main(["status", "--no-sync"]) == 0
    assert (
        "1 conversation in a newer Cursor format could not be read — sync or import for exact "
        "figures"
    ) in capsys.readouterr().out.replace("\n", " ")


def test_a_changed_transcript_changes_the_fingerprint_and_the_figures(machine: Machine) -> None:
    machine.write_sessions()
    service = machine.service()
    before = service.fingerprint()
    assert service.report(machine.period(), sync=False)["totals"]["calls"] == 3
    assert service.fingerprint() == before
    machine.home.transcript("t1", exchange(40, 80) * 3)  # written now
    assert service.fingerprint() != before
    report = service.report(Period("custom", machine.d1, today()), sync=False)
    assert report["totals"]["calls"] == 4
    # The two turns seen before keep their day; the new one is dated when it was first seen.
    assert [(d["date"], d["calls"]) for d in report["days"]] == [
        (machine.d1.isoformat(), 1),
        (machine.d2.isoformat(), 2),
        (today().isoformat(), 1),
    ]


def test_unchanged_files_are_not_parsed_again_and_a_corrupt_cache_is_rebuilt(
    machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    machine.write_sessions()
    upto_today = Period("custom", machine.d1, today())
    first = machine.service().report(upto_today, sync=False)
    cache_file = agent_files_path(machine.env.cache)
    assert json.loads(cache_file.read_bytes())["version"] == AGENT_FILES_VERSION
    parsed: list[str] = []
    real = cursor_agent.parse_transcript

    def spy(path: Path, data: bytes | None = None) -> object:
        parsed.append(path.name)
        return real(path, data)

    monkeypatch.setattr(cursor_agent, "parse_transcript", spy)
    machine.home.transcript("t2", exchange(4, 4))  # written now
    second = machine.service().report(upto_today, sync=False)  # a new process, say
    assert parsed == ["t2.jsonl"]
    assert second["totals"]["calls"] == first["totals"]["calls"] + 1
    cache_file.write_bytes(b"{not json")
    machine.home.transcript("t3", exchange(4, 4))
    third = machine.service().report(upto_today, sync=False)
    assert third["totals"]["calls"] == first["totals"]["calls"] + 2
    assert json.loads(cache_file.read_bytes())["version"] == AGENT_FILES_VERSION


def test_a_transcript_of_a_bubble_conversation_is_counted_once(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    machine.db = write_hand_profile(machine.db.parents[2], machine.d1, machine.d2)
    without = run_json(capsys, "report", *machine.args())
    machine.home.transcript("conv-a", exchange(400, 800), mtime_ms=at(machine.d2, 10))
    machine.home.transcript("conv-c", exchange(400, 800), mtime_ms=at(machine.d2, 10))
    with_transcripts = run_json(capsys, "report", *machine.args())
    assert with_transcripts["totals"] == without["totals"]
    assert with_transcripts["days"] == without["days"]


def test_ide_3x_conversations_and_transcripts_count_each_id_once(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    """r1 root (10 in / 20 out, cursor-auto) beats its transcript; m1's transcript (3 × 10 / 20,
    gpt-5) replaces its 10,000-token meter; e1's transcript (4 / 8) recovers its encrypted root;
    e2 stays unreadable."""
    d1, d2 = machine.d1, machine.d2
    with ProfileWriter(machine.db.parents[2]) as profile:
        w = Cursor3Writer(profile)
        turn = TurnSpec("u" * 40, ["a" * 80], timing_ms=at(d1, 10))
        w.conversation("r1", [turn], created_ms=at(d1, 10), folder="/home/me/alpha")
        w.composer(
            "m1",
            created_ms=at(d2, 9),
            updated_ms=at(d2, 11),
            folder="/home/me/beta",
            model="gpt-5",
            total_used_tokens=10_000,
        )
        secret = [TurnSpec("x" * 8, ["y" * 8])]
        w.conversation("e1", secret, encrypt_blobs=True, created_ms=at(d1, 12))
        w.conversation("e2", secret, encrypt_blobs=True, created_ms=at(d1, 12))
    home = machine.home
    home.transcript("r1", exchange(400, 800), mtime_ms=at(d2, 20))
    home.transcript("m1", exchange(40, 80) * 3, mtime_ms=at(d2, 20))
    home.transcript("e1", exchange(16, 32), mtime_ms=at(d2, 20))
    report = run_json(capsys, "report", *machine.args())
    totals = report["totals"]
    assert (totals["calls"], totals["sessions"]) == (5, 3)
    assert (totals["inputTokens"], totals["outputTokens"]) == (44, 88)
    cost = (10 * 3e-6 + 20 * 15e-6) + 3 * (10 * 1.25e-6 + 20 * 10e-6) + (4 * 3e-6 + 8 * 15e-6)
    assert totals["cost"] == pytest.approx(cost)
    assert [p["id"] for p in report["providers"]] == ["cursor"]
    assert [(d["date"], d["calls"]) for d in report["days"]] == [
        (d1.isoformat(), 2),
        (d2.isoformat(), 3),
    ]
    assert {(p["project"], p["calls"]) for p in report["projects"]} == {
        ("-home-me-alpha", 1),
        ("-home-me-beta", 3),
        ("-home-me-app", 1),  # e1: no project in the IDE, so the transcript folder's
    }
    named = {p["project"]: (p["name"], p["path"]) for p in report["projects"]}
    assert named["-home-me-alpha"] == ("alpha", "/home/me/alpha")  # Cursor 3.x headers
    assert named["-home-me-beta"] == ("beta", "/home/me/beta")
    assert UNREADABLE_ONE in report["warnings"]


@pytest.mark.clock
def test_an_import_replaces_cursor_agent_estimates_inside_its_coverage(
    machine: Machine, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    machine.write_sessions()
    d1 = machine.d1.isoformat()
    row = ExportRow(
        date=iso_utc(at(machine.d1, 15)), model="gpt-5", input=100, output=50, cost="$0.01"
    )
    csv = write_export(tmp_path / "usage.csv", [row], mtime_ms=at(machine.d2, 23))
    db = str(machine.db)
    assert main(["import", "cursor", str(csv), "--from", d1, "--to", d1, "--cursor-db", db]) == 0
    capsys.readouterr()
    report = run_json(capsys, "report", *machine.args())
    providers = {p["id"]: (p["calls"], p["cost"]) for p in report["providers"]}
    # s1 (d1) is covered by the export; t1's two turns on d2 stay local estimates.
    assert providers == {
        "cursor": (1, pytest.approx(0.01)),
        "cursor-agent": (2, pytest.approx(COST_T1)),
    }


def _forks_counted(machine: Machine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Sessions, transcripts and a database written; one entry per forked agent-side read."""
    if not fork_aside.can_fork():
        pytest.skip("no fork here")
    machine.write_sessions()
    write_hand_profile(tmp_path / "Cursor", machine.d1, machine.d2)
    started: list[int] = []
    real_aside = agent_side.Aside
    monkeypatch.setattr(
        agent_side, "Aside", lambda work, **kw: started.append(1) or real_aside(work, **kw)
    )
    return started


def test_the_agent_side_read_beside_the_database_equals_the_read_in_process(
    machine: Machine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started = _forks_counted(machine, monkeypatch, tmp_path)
    beside = machine.service().report(machine.period(), sync=False)
    assert started == [1]  # the transcripts and CLI stores were read in a forked child
    alone = UsageService(machine.db, cache_dir=tmp_path / "other-cache", plan=Plan(forks=False))
    in_process = alone.report(machine.period(), sync=False)
    assert started == [1]
    assert beside["totals"] == in_process["totals"]
    assert beside["providers"] == in_process["providers"]
    assert [p["id"] for p in beside["providers"]] == ["cursor", "cursor-agent"]


def test_the_database_reader_is_made_before_the_agent_side_forks(
    machine: Machine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The child then has the modules the reader imports (the agent formats) from its parent.
    _forks_counted(machine, monkeypatch, tmp_path)
    made: list[bool] = []
    real_beside = agent_side.AgentSide.read_beside

    def beside(side: agent_side.AgentSide, snapshot: Any) -> Any:
        made.append(service._local._reader is not None)
        return real_beside(side, snapshot)

    monkeypatch.setattr(agent_side.AgentSide, "read_beside", beside)
    service = machine.service()
    service.report(machine.period(), sync=False)
    assert made == [True]


def test_a_long_lived_service_reads_beside_the_database_only_the_first_time(
    machine: Machine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started = _forks_counted(machine, monkeypatch, tmp_path)
    upto_today = Period("custom", machine.d1, today())
    service = machine.service()
    first = service.report(upto_today, sync=False)
    machine.home.transcript("t2", exchange(4, 4))  # written now
    decoded: list[object] = []
    real_decode = cursor_agent.turn_from_row
    monkeypatch.setattr(
        cursor_agent, "turn_from_row", lambda r: decoded.append(r) or real_decode(r)
    )
    refreshed = service.report(upto_today, sync=False)
    assert started == [1]  # the refresh read in process, from what the child saved
    # ... and decoded only the new t2's one turn and s1's store (t1 as the child decoded it).
    assert len(decoded) == 2
    calls = {p["id"]: p["calls"] for p in refreshed["providers"]}
    assert (
        calls["cursor-agent"]
        == {p["id"]: p["calls"] for p in first["providers"]}["cursor-agent"] + 1
    )  # t2's one turn
    fresh = UsageService(machine.db, cache_dir=tmp_path / "other-cache", plan=Plan(forks=False))
    assert refreshed["providers"] == fresh.report(upto_today, sync=False)["providers"]


@pytest.mark.clock
def test_verbose_lists_the_transcripts_whose_dates_are_inferred(
    machine: Machine, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transcript's lines carry no time: how its turns were dated is a diagnostic (issue 37)."""
    machine.write_sessions()
    note = (
        "dated 1 agent transcript from when CodeBurn first saw the file (no conversation time "
        "is known for them; approximate)"
    )
    assert note in run_json(capsys, "report", *machine.args())["diagnostics"]
    span = ["--from", machine.d1.isoformat()]  # to today: a day never sealed, always read
    assert main(["report", *span, "--no-sync"]) == 0
    assert note not in capsys.readouterr().out  # a fact, not a warning: --verbose only
    assert main(["report", *span, "--no-sync", "--verbose"]) == 0
    assert f"· {note}" in capsys.readouterr().out
