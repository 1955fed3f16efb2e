"""Attribution does not depend on which report ran first (issue 38, docs/attribution.md).

A real Cursor profile, JSON events synced by the real CLI from a loopback cursor.com, then
`codeburn report --format json` at a fixed clock, in two orders in two fresh cache folders:
`--period yesterday` then `--period 30days`, and `--period 30days` alone. The second order
reads every day at once; the first seals yesterday before the older days were ever read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from codeburn.cache import apply_sync, load_store
from codeburn.providers import OTHER_MACHINES_PROJECT, LocalConversation, iso_utc, parse_events
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.service.derive import derive_days, sealed_evidence, stale_days
from tests.sync.fake_cursor import FakeCursor, cookie_for, make_jwt, write_global_db
from tests.usage_fixtures import at, isolated_env

pytestmark = pytest.mark.clock  # sets CODEBURN_NOW: run at every moment of tests/clock.py

CLI = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"
ZONE = "Europe/Berlin"
NOW = datetime(2026, 11, 18, 12, 0, tzinfo=ZoneInfo(ZONE))  # the CLI's clock
S = 1_000
MODEL = "claude-4.5-sonnet"
IMPORTED = "Cursor (imported)"


def _ms(days_ago: int, hour: int, minute: int = 0, second: int = 0) -> int:
    day = (NOW - timedelta(days=days_ago)).replace(hour=hour, minute=minute, second=second)
    return int(day.timestamp() * 1000)


def _conversation(p: ProfileWriter, cid: str, start: int, folder: str) -> None:
    """One turn: a user message at `start`, replies to `start` + 30 s, in its own workspace."""
    p.bubble(cid, f"{cid}-u", role="user", text="q" * 40, created_at=iso_utc(start))
    p.bubble(cid, f"{cid}-a", role="assistant", text="r" * 80, created_at=iso_utc(start + S))
    p.bubble(
        cid, f"{cid}-b", role="assistant", text="s" * 80, created_at=iso_utc(start + 30 * S),
        model=MODEL,
    )  # fmt: skip
    p.workspace(f"w-{cid}", folder=f"file:///home/me/{folder}", composers=[cid])


def _profile(root: Path, token: str) -> Path:
    with ProfileWriter(root) as p:
        _conversation(p, "c-four", _ms(4, 9), "beta")  # four days ago
        _conversation(p, "c-old", _ms(3, 9), "gamma")  # three days ago
        _conversation(p, "c-y", _ms(1, 10), "alpha")  # yesterday at 10:00
    return write_global_db(p.db_path, token)


def _event(ts: int, cents: float, conversation: str) -> dict[str, Any]:
    return {
        "timestamp": str(ts),
        "model": MODEL,
        "kind": "USAGE_EVENT_KIND_USAGE_BASED",
        "tokenUsage": {"inputTokens": 1000, "outputTokens": 10},
        "chargedCents": cents,
        "conversationId": conversation,
    }


# Each case: the synced events, and where the fresh 30-day report puts each project's cents.
CASES: dict[str, tuple[list[dict[str, Any]], dict[str, float]]] = {
    # The guard: one id anywhere in the window is a local conversation's, so an unknown id
    # inside a local turn is another machine's (not alpha's).
    "unknown-id-in-a-local-turn": (
        [_event(_ms(3, 9, 0, 5), 100, "c-old"), _event(_ms(1, 10, 0, 3), 40, "remote-xyz")],
        {"-home-me-gamma": 100, OTHER_MACHINES_PROJECT: 40},
    ),
    # An id of a conversation from four days ago, used yesterday: that conversation's project.
    "id-of-an-older-conversation": (
        [_event(_ms(1, 10, 0, 5), 30, "c-y"), _event(_ms(1, 15), 70, "c-four")],
        {"-home-me-alpha": 30, "-home-me-beta": 70},
    ),
}


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _env(tmp_path: Path, fake: FakeCursor, db: Path, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEBURN_")}
    env.update(
        CODEBURN_CACHE_DIR=str(tmp_path / name / "cache"),
        CODEBURN_CONFIG_DIR=str(tmp_path / name / "config"),
        CODEBURN_CURSOR_DB=str(db),
        CODEBURN_CURSOR_HOME=str(tmp_path / "cursor-home"),
        CODEBURN_CURSOR_BASE_URL=fake.url,
        CODEBURN_NOW=iso_utc(int(NOW.timestamp() * 1000)),
        TZ=ZONE,
        HOME=str(tmp_path / "home"),
    )
    return env


def _run(tmp_path: Path, fake: FakeCursor, db: Path, name: str, periods: list[str]) -> Any:
    """A fresh cache folder: sync, then a report of each period; the last report's JSON."""
    env = _env(tmp_path, fake, db, name)
    synced = _cli(env, "import", "cursor", "--sync", "--format", "json")
    assert synced["added"] == len(fake.events or [])
    report: dict[str, Any] = {}
    for period in periods:
        report = _cli(env, "report", "--period", period, "--format", "json", "--no-sync")
    return report


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_period_asked_first_changes_no_attribution(tmp_path: Path, case: str) -> None:
    events, expected = CASES[case]
    exp_s = int(NOW.timestamp()) + 7 * 24 * 3600
    token = make_jwt(exp=exp_s)
    db = _profile(tmp_path / "Cursor", token)
    with FakeCursor(expected_cookie=cookie_for(token), events=events) as fake:
        alone = _run(tmp_path, fake, db, "alone", ["30days"])
        after = _run(tmp_path, fake, db, "after-yesterday", ["yesterday", "30days"])
    exact = {
        p["project"]: round((p["cost"] - p["estimatedCost"]) * 100, 6)
        for p in alone["projects"]
        if p["cost"] > p["estimatedCost"]
    }
    assert exact == expected  # the fresh 30-day report is right
    assert after["projects"] == alone["projects"]
    assert after["attribution"] == alone["attribution"]
    assert after["conversations"] == alone["conversations"]


def test_a_sealed_day_is_derived_again_when_a_later_read_knows_more(tmp_path: Path) -> None:
    """Yesterday is sealed while "c-four" is unknown (its event goes to other machines); then
    the conversation goes on today, and a report of today alone reads back to yesterday and
    seals it anew: yesterday's report, served from the daily cache, now says beta."""
    events, _ = CASES["id-of-an-older-conversation"]
    exp_s = int(NOW.timestamp()) + 7 * 24 * 3600
    token = make_jwt(exp=exp_s)
    db = _profile(tmp_path / "Cursor", token)
    with FakeCursor(expected_cookie=cookie_for(token), events=events) as fake:
        first = _run(tmp_path, fake, db, "cache", ["yesterday"])
        env = _env(tmp_path, fake, db, "cache")
    assert {p["project"] for p in first["projects"]} >= {OTHER_MACHINES_PROJECT}
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.bubble(
            "c-four", "c-four-today", role="assistant", text="t" * 80,
            created_at=iso_utc(_ms(0, 9)), model=MODEL,
        )  # fmt: skip
    _cli(env, "report", "--period", "today", "--format", "json", "--no-sync")
    again = _cli(env, "report", "--period", "yesterday", "--format", "json", "--no-sync")
    exact = {
        p["project"]: round((p["cost"] - p["estimatedCost"]) * 100, 6)
        for p in again["projects"]
        if p["cost"] > p["estimatedCost"]
    }
    assert exact == {"-home-me-alpha": 30, "-home-me-beta": 70}
    assert again["attribution"]["otherMachines"]["calls"] == 0


def test_a_day_derived_now_is_never_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What `stale_days` counts is what attribution does: a day just derived from the same
    evidence is not derived again (else every run would read it again). Grok Bot and User API
    Key events carry ids too, and attribution leaves them alone."""
    isolated_env(tmp_path, monkeypatch)
    day = date(2026, 11, 17)
    t0 = at(day, 10)
    local = LocalConversation(
        "c-y",
        "-home-me-alpha",
        "cursor",
        None,
        (MODEL,),
        ((t0, t0 + 30 * S, MODEL),),
        t0,
        t0 + 30 * S,
    )
    events = [
        _event(t0 + 3 * S, 10, "c-y"),
        _event(t0 + 4 * S, 20, "remote-xyz"),
        {**_event(t0 + 5 * S, 30, "c-y"), "kind": "USAGE_EVENT_KIND_USER_API_KEY"},
        {**_event(t0 + 6 * S, 40, "c-y"), "model": "grok-bot"},
        {k: v for k, v in _event(t0 + 7 * S, 50, "").items() if k != "conversationId"},
    ]
    parsed = parse_events(events)
    details = {e.row.hash: e.detail for e in parsed}
    apply_sync(
        [e.row for e in parsed], "0123456789abcdef", at(day, 0), at(day, 23), details=details
    )
    snapshot = load_store()
    mine, other = {"c-y": local}, {"c-other": local._replace(id="c-other")}
    derived = {}
    for name, known in (("mine", mine), ("none", {}), ("other", other)):
        derived[name] = derive_days(day, day, [], snapshot, known)
        split = {k: v for part in derived[name][day].values() for k, v in part.attribution.items()}
        assert sum(calls for calls, _ in split.values()) == 3  # Cursor's own events only
        assert stale_days(sealed_evidence(derived[name]), snapshot, known, (day, day)) == [], name
    # Now an id is a local conversation's: the guard is off, and "c-y" is no other machine's.
    assert stale_days(sealed_evidence(derived["other"]), snapshot, mine, (day, day)) == [day]
    assert stale_days(sealed_evidence(derived["none"]), snapshot, mine, (day, day)) == [day]
    # A conversation whose files are gone: the sealed day keeps what it was given.
    assert stale_days(sealed_evidence(derived["mine"]), snapshot, {}, (day, day)) == []
