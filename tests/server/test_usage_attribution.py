"""Synced events attributed to local conversations end to end (issue 17 part 2,
docs/attribution.md).

One Cursor profile holds a conversation of bubbles (the older layout, named in composerData), a
Cursor 3.x root-only conversation (named in its header) and two overlapping bubble conversations
of one model; the Cursor home holds a Cursor Agent CLI session. Synced JSON events whose ids,
times and models are known give the ground truth for each rule.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from codeburn.cache import apply_sync
from codeburn.providers import OTHER_MACHINES_PROJECT, parse_events
from codeburn.providers.localtime import iso_utc, local_day, local_midnight_ms, now_ms, today
from codeburn.providers.samples import SampleSpec, generate_sample_profile
from codeburn.providers.samples.cursor3_writer import Cursor3Writer, Header
from codeburn.providers.samples.graph_writer import TurnSpec
from codeburn.providers.samples.home_writer import AgentHomeWriter, assistant, user
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from tests.cursor_fixtures import read
from tests.usage_fixtures import at, days_ago, isolated_env

pytestmark = pytest.mark.clock  # reads the clock: run at every moment of tests/clock.py

S = 1_000
DAY = days_ago(3)
IMPORTED = "Cursor (imported)"


def _t(hour: int, minute: int = 0, second: int = 0) -> int:
    return at(DAY, hour, minute) + second * S


def _bubbles(p: ProfileWriter, cid: str, start: int, model: str, end: int) -> None:
    p.bubble(cid, f"{cid}-u", role="user", text="q" * 40, created_at=iso_utc(start))
    p.bubble(cid, f"{cid}-a", role="assistant", text="r" * 80, created_at=iso_utc(start + S))
    p.bubble(cid, f"{cid}-b", role="assistant", text="s" * 80, created_at=iso_utc(end), model=model)


def _write_local(root: Path, home: Path) -> Path:
    with ProfileWriter(root) as p:
        # Older layout: bubbles, the name in composerData, the workspace in workspaceStorage.
        _bubbles(p, "comp-old", _t(10), "claude-4.5-sonnet", _t(10, 0, 30))
        p.composer("comp-old", created_at_ms=_t(10), extra={"name": "Fix login"})
        p.workspace("w1", folder="file:///home/me/alpha", composers=["comp-old"])
        # Two conversations of one model at once, in two projects.
        _bubbles(p, "comp-o1", _t(14), "claude-4.5-sonnet", _t(14, 1))
        _bubbles(p, "comp-o2", _t(14, 0, 10), "claude-4.5-sonnet", _t(14, 1, 30))
        p.workspace("w2", folder="file:///home/me/delta", composers=["comp-o1"])
        p.workspace("w3", folder="file:///home/me/epsilon", composers=["comp-o2"])
        # Cursor 3.x: a root-only conversation, its name in the header (ItemTable headers).
        c3 = Cursor3Writer(p, header_columns=None)
        c3.item_headers([Header("comp-new", folder="/home/me/beta", name="Refactor")])
        turn = TurnSpec(
            user="please refactor",
            assistant=["one", "two"],
            user_ms=_t(11),
            assistant_ms=_t(11, 0, 5),
            end_ms=_t(11, 1),
        )
        c3.conversation(
            "comp-new", [turn], created_ms=_t(11), model="gpt-5", folder="/home/me/beta"
        )
    # Cursor Agent CLI: one session, named in its meta.
    turn = TurnSpec(
        user="add tests",
        assistant=["x" * 40, "y" * 40],
        user_ms=_t(12),
        assistant_ms=_t(12, 0, 10),
        end_ms=_t(12, 2),
    )
    writer = AgentHomeWriter(home)
    writer.cli_session("cli-1", [turn], workspace="/home/me/gamma", model="gpt-5", name="Add tests")
    # An agent transcript: no times of its own (never time-matched), its id matches.
    writer.transcript("tx-1", [user("why"), assistant("because " * 20)], slug="home-me-zeta")
    return p.db_path


def _event(ts: int, model: str, cents: float, conversation: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "timestamp": str(ts),
        "model": model,
        "kind": "USAGE_EVENT_KIND_USAGE_BASED",
        "tokenUsage": {"inputTokens": 1000, "outputTokens": int(cents)},
        "chargedCents": cents,
    }
    if conversation is not None:
        item["conversationId"] = conversation
    return item


OTHER = OTHER_MACHINES_PROJECT
# (time, model, cents, conversationId) → (attribution, project, conversation)
EVENTS: list[tuple[tuple[int, str, float, str | None], tuple[str, str, str | None]]] = [
    ((_t(10, 0, 5), "claude-4.5-sonnet", 100, "comp-old"), ("byId", "-home-me-alpha", "comp-old")),
    ((_t(12, 0, 5), "gpt-5", 70, "cli-1"), ("byId", "-home-me-gamma", "cli-1")),
    ((_t(15), "gpt-5", 15, "tx-1"), ("byId", "-home-me-zeta", "tx-1")),
    ((_t(10, 0, 20), "claude-4.5-sonnet-thinking", 30, None), ("byTime", "-home-me-alpha", "comp-old")),  # noqa: E501
    ((_t(11, 0, 30), "gpt-5", 40, None), ("byTime", "-home-me-beta", "comp-new")),
    ((_t(12, 1, 50), "gpt-5", 20, None), ("byTime", "-home-me-gamma", "cli-1")),
    ((_t(13), "claude-4.5-sonnet", 300, "bc-cloud-9"), ("otherMachines", OTHER, "bc-cloud-9")),
    ((_t(14, 0, 30), "claude-4.5-sonnet", 50, None), ("unattributed", IMPORTED, None)),
    ((_t(10, 0, 10), "gemini-2.5-pro", 9, None), ("unattributed", IMPORTED, None)),
    ((_t(16), "gpt-5", 5, None), ("unattributed", IMPORTED, None)),
]  # fmt: skip


def _sync(events: list[dict[str, Any]]) -> None:
    parsed = parse_events(events)
    apply_sync(
        [e.row for e in parsed],
        "0123456789abcdef",
        local_midnight_ms(DAY),
        now_ms(),
        details={e.row.hash: e.detail for e in parsed},
    )


def _report(capsys: pytest.CaptureFixture[str], db: Path) -> dict[str, Any]:
    day = DAY.isoformat()
    argv = ["report", "--format", "json", "--cursor-db", str(db), "--from", day, "--to", day]
    assert main(argv) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolated_env(tmp_path, monkeypatch)
    home = tmp_path / "home"
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(home))
    return _write_local(tmp_path / "Cursor", home)


def _expected(rule: str) -> tuple[int, float]:
    picked = [e for e, (r, _, _) in EVENTS if r == rule]
    return len(picked), sum(e[2] for e in picked) / 100


def test_every_rule_gives_the_ground_truth(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sync([_event(*e) for e, _ in EVENTS])
    report = _report(capsys, db)
    for rule in ("byId", "byTime", "otherMachines", "unattributed"):
        calls, cost = _expected(rule)
        got = report["attribution"][rule]
        assert (got["calls"], got["cost"]) == (calls, pytest.approx(cost)), rule
    projects = {p["project"]: p for p in report["projects"]}
    for project in {p for _, (_, p, _) in EVENTS}:
        cents = sum(e[2] for e, (_, p, _) in EVENTS if p == project)
        assert projects[project]["billedCost"] == pytest.approx(cents / 100), project
    # The overlapping conversations' projects get nothing of the exact events.
    assert "-home-me-delta" not in projects and "-home-me-epsilon" not in projects
    convs = {c["id"]: c for c in report["conversations"]}
    assert convs["comp-old"]["title"] == "Fix login"
    assert convs["comp-old"]["project"] == "-home-me-alpha"
    assert convs["comp-new"]["title"] == "Refactor"
    assert (convs["cli-1"]["title"], convs["cli-1"]["provider"]) == ("Add tests", "cursor-agent")
    assert convs["cli-1"]["calls"] == 2
    assert convs["cli-1"]["billedCost"] == pytest.approx(0.9)
    assert convs["cli-1"]["first"] == iso_utc(_t(12, 0, 5))
    assert convs["cli-1"]["last"] == iso_utc(_t(12, 1, 50))
    assert convs["bc-cloud-9"]["project"] == OTHER_MACHINES_PROJECT
    assert convs["comp-old"]["models"] == ["claude-4.5-sonnet", "claude-4.5-sonnet-thinking"]
    assert (convs["tx-1"]["project"], convs["tx-1"]["provider"]) == (
        "-home-me-zeta",
        "cursor-agent",
    )
    # Attributed events count as their conversation's session; unattributed ones as the day's.
    assert report["totals"]["sessions"] == 6


def test_projects_sum_to_the_exact_total_less_unattributed_and_other_machines(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sync([_event(*e) for e, _ in EVENTS])
    report = _report(capsys, db)
    exact_total = report["totals"]["cost"] - report["totals"]["estimatedCost"]
    machine = sum(
        p["cost"] - p["estimatedCost"]
        for p in report["projects"]
        if p["project"] not in (IMPORTED, OTHER_MACHINES_PROJECT)
    )
    split = report["attribution"]
    expected = exact_total - split["unattributed"]["cost"] - split["otherMachines"]["cost"]
    assert machine == pytest.approx(expected) and machine > 0


def test_sealed_days_keep_conversations_and_attribution(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sync([_event(*e) for e, _ in EVENTS])
    first = _report(capsys, db)
    again = _report(capsys, db)  # served from the daily cache now
    for key in ("attribution", "conversations", "projects", "totals"):
        assert again[key] == first[key], key


def test_ids_of_another_namespace_are_time_matched(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        _event(_t(11, 0, 30), "gpt-5", 40, "other-ns-1"),
        _event(_t(12, 1, 50), "gpt-5", 20, "other-ns-2"),
        _event(_t(16), "gpt-5", 5, "other-ns-3"),
    ]
    _sync(events)
    report = _report(capsys, db)
    assert report["attribution"]["otherMachines"]["calls"] == 0
    assert report["attribution"]["byTime"]["calls"] == 2
    assert report["attribution"]["unattributed"]["calls"] == 1
    assert any("matched by time" in d for d in report["diagnostics"])


def test_todays_events_are_attributed_from_the_results_cache_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "home"))
    midnight = local_midnight_ms(today())
    t0 = midnight + (now_ms() - midnight) // 2  # today, before now
    with ProfileWriter(tmp_path / "Cursor") as p:
        _bubbles(p, "c-today", t0, "gpt-5", t0 + 2 * S)
        p.workspace("w1", folder="file:///home/me/today", composers=["c-today"])
    day = today().isoformat()
    events = [_event(t0 + S, "gpt-5-high", 10, None), _event(t0, "gpt-5", 20, "c-today")]
    parsed = parse_events(events)
    apply_sync(
        [e.row for e in parsed],
        "0123456789abcdef",
        midnight,
        now_ms(),
        details={e.row.hash: e.detail for e in parsed},
    )
    argv = ["report", "--format", "json", "--cursor-db", str(p.db_path), "--from", day]
    for _ in range(2):  # a parse, then the results cache (nothing changed)
        assert main(argv) == 0
        report = json.loads(capsys.readouterr().out)
        split = report["attribution"]
        assert (split["byTime"]["calls"], split["byId"]["calls"]) == (1, 1)
        assert [(c["id"], c["project"]) for c in report["conversations"]] == [
            ("c-today", "-home-me-today")
        ]
    assert any(tmp_path.glob("cache/cursor-results.v*.json"))


def test_a_synced_month_of_the_sample_profile_adds_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Done-when of issue 17: on a synced month, this machine's projects' exact figures are the
    exact total less the unattributed and other-machine parts."""
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "home"))
    spec = SampleSpec(seed=5, conversations=40, days=25, now_ms=now_ms())
    db = generate_sample_profile(tmp_path / "Cursor", spec).db_path
    local = read(db)
    rng = random.Random(17)
    items: list[dict[str, Any]] = []
    expected = {"byId": 0, "otherMachines": 0, "noId": 0}
    for call in local.calls:
        if call.key.startswith("cursor:agentKv:"):
            continue
        draw = rng.random()
        cid: str | None = call.session
        if draw < 0.3:
            cid, rule = None, "noId"
        elif draw < 0.4:
            cid, rule = f"cloud-{rng.randrange(5)}", "otherMachines"
        else:
            rule = "byId"
        expected[rule] += 1
        model = "auto" if call.model == "cursor-auto" else call.model
        items.append(_event(call.timestamp_ms, model, rng.randint(1, 300), cid))
    first = min(int(i["timestamp"]) for i in items)
    parsed = parse_events(items)
    apply_sync(
        [e.row for e in parsed],
        "0123456789abcdef",
        local_midnight_ms(local_day(first)),
        now_ms(),
        details={e.row.hash: e.detail for e in parsed},
    )
    assert main(["report", "--format", "json", "--cursor-db", str(db), "--period", "30days"]) == 0
    report = json.loads(capsys.readouterr().out)
    split = report["attribution"]
    assert split["byId"]["calls"] == expected["byId"]
    assert split["otherMachines"]["calls"] == expected["otherMachines"]
    assert split["byTime"]["calls"] + split["unattributed"]["calls"] == expected["noId"]
    assert split["byTime"]["calls"] > expected["noId"] // 2  # most fall inside one turn
    totals = report["totals"]
    assert sum(split[k]["calls"] for k in split) == len(items)  # each event in one part
    machine = sum(
        p["cost"] - p["estimatedCost"]
        for p in report["projects"]
        if p["project"] not in (IMPORTED, OTHER_MACHINES_PROJECT)
    )
    exact = totals["cost"] - totals["estimatedCost"]
    rest = split["unattributed"]["cost"] + split["otherMachines"]["cost"]
    assert machine == pytest.approx(exact - rest)
    assert sum(split[k]["cost"] for k in split) == pytest.approx(exact)
    convs = report["conversations"]
    assert len(convs) <= 50 and {c["project"] for c in convs} > {OTHER_MACHINES_PROJECT}
    assert sum(c["id"].startswith("cloud-") for c in convs) == len(
        {i["conversationId"] for i in items if i.get("conversationId", "").startswith("cloud-")}
    )


def test_no_project_cost_is_the_imported_and_other_machines_part(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`noProjectCost` (docs/figures.md) is the ground truth's imported and other-machine events;
    the sync covers the day, so no local estimate is left in it."""
    _sync([_event(*e) for e, _ in EVENTS])
    totals = _report(capsys, db)["totals"]
    cents = sum(e[2] for e, (_, p, _) in EVENTS if p in (IMPORTED, OTHER))
    assert cents == 364
    assert totals["noProjectCost"] == pytest.approx(cents / 100)
    assert totals["noProjectEstimatedCost"] == 0


def test_status_says_what_is_in_no_project_beside_the_top_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(tmp_path / "home"))
    midnight = local_midnight_ms(today())
    t0 = midnight + (now_ms() - midnight) // 2  # today, before now
    with ProfileWriter(tmp_path / "Cursor") as p:
        _bubbles(p, "c-mine", t0, "gpt-5", t0 + 2 * S)
        _bubbles(p, "c-loose", t0 + 60 * S, "gpt-5", t0 + 62 * S)  # no workspace: no project
        p.workspace("w1", folder="file:///home/me/mine", composers=["c-mine"])
    argv = ["status", "--format", "json", "--cursor-db", str(p.db_path)]

    def status() -> dict[str, Any]:
        assert main(argv) == 0
        got: dict[str, Any] = json.loads(capsys.readouterr().out)
        return got

    # Local estimates only: the top project and the rest are both estimated, and add up.
    local = status()
    top, day = local["topProject"], local["today"]
    assert top["name"] == "mine" and top["cost"] > 0 and day["noProjectCost"] > 0
    assert top["estimatedCost"] == pytest.approx(top["cost"])
    assert day["noProjectEstimatedCost"] == pytest.approx(day["noProjectCost"])
    assert top["cost"] + day["noProjectCost"] == pytest.approx(day["cost"])
    # Synced (the sync covers today, so its events replace the estimates): 20 cents by id in
    # "mine", 300 cents of another machine, 50 cents that match no turn ("Cursor (imported)").
    events = [
        _event(t0 + S, "gpt-5", 20, "c-mine"),
        _event(t0 + 30 * S, "gpt-5", 300, "bc-cloud-1"),
        _event(t0 + 600 * S, "gpt-5", 50, None),
    ]
    parsed = parse_events(events)
    details = {e.row.hash: e.detail for e in parsed}
    apply_sync([e.row for e in parsed], "0123456789abcdef", midnight, now_ms(), details=details)
    synced = status()
    top, day = synced["topProject"], synced["today"]
    assert (top["name"], top["cost"], top["estimatedCost"]) == ("mine", pytest.approx(0.2), 0)
    assert (day["noProjectCost"], day["noProjectEstimatedCost"]) == (pytest.approx(3.5), 0)
    assert synced["month"]["noProjectCost"] >= day["noProjectCost"]
