"""Every way a read may run gives the same figures (docs/architecture.md, `providers.plan`).

The same machine — Cursor 3.x conversations, older ones as bubbles, agent transcripts, Cursor
Agent CLI stores, Claude Code and Codex logs — is read under each plan: a long-lived server's, a
one-shot command's in one process, and a command's that splits all its work across processes
where this one may fork. Each reads cold, then after an append (a new exchange, a transcript and
two other tools' logs grown by a line), then after an in-place rewrite (a message rewritten, a
transcript and a Claude Code log cut short), and every report is equal.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from codeburn.providers import iso_utc, now_ms, today
from codeburn.providers.plan import LONG_LIVED, ONE_SHOT, Plan
from codeburn.providers.runtime import can_fork, writes_at_end
from codeburn.providers.samples.agent_logs_writer import AgentLogsSpec, write_agent_logs
from codeburn.providers.samples.cursor3 import Cursor3Spec, generate_cursor3_profile
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.service import UsageService, named_period

# Reads the clock, but no moment changes the outcome (tests/clock_guard.py).
pytestmark = pytest.mark.any_moment


FORKED: list[bool] = []  # what the forked plan answered each time a read asked it


class _Forking(Plan):
    """The CLI's plan (forks where this process may), noting its answers."""

    def may_fork(self) -> bool:
        answer = super().may_fork()
        FORKED.append(answer)
        return answer


PLANS = {
    "server": LONG_LIVED,
    # (the agent stream read by ROWID, Cursor 3.x's blobs read in one pass)
    "command": Plan(long_lived=False, forks=False, agents_by_rowid=True, one_blob_pass=True),
    # (every piece of work split, however small; the child's older bubbles cut short, the
    # caller reading on past them; the agent stream read by key range)
    "command, forked": _Forking(
        long_lived=ONE_SHOT.long_lived,
        forks=ONE_SHOT.forks,
        split_rows=1,
        walk_rows=1,
        split_bytes=0,
        older_rows=5,
        agents_by_rowid=False,
    ),
}


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("machine")
    spec = Cursor3Spec(conversations=12, classic=6, cli_sessions=2, days=10, now_ms=now_ms())
    generate_cursor3_profile(root / "Cursor", root / "home", spec)
    write_agent_logs(root / "claude", root / "codex", AgentLogsSpec(now_ms(), days=10))
    (root / "appended-at").write_text(iso_utc(now_ms() - 60_000))  # the same for every plan
    return root


def _transcript(home: Path) -> Path:
    return sorted(home.rglob("*.jsonl"))[0]


def _steps(work: Path) -> Iterator[str]:
    """Change the machine between reads: the name of the read that follows."""
    yield "cold"
    with ProfileWriter(work / "Cursor") as p:
        at = (work / "appended-at").read_text()
        p.bubble("plans-new", "u", role="user", text="one more " * 50, created_at=at)
        p.bubble("plans-new", "a", role="assistant", text="ok " * 600, created_at=at, model="gpt-5")
    transcript = _transcript(work / "home")
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join([*lines, lines[0]]))
    claude = sorted((work / "claude").rglob("*.jsonl"))[0]
    claude_lines = claude.read_bytes().splitlines(keepends=True)
    usage = {"input_tokens": 5, "output_tokens": 70, "cache_read_input_tokens": 900}
    message = {"id": "msg_plans", "model": "claude-sonnet-4-5-20250929", "usage": usage}
    line = {"type": "assistant", "timestamp": at, "requestId": "req_plans", "message": message}
    claude.write_bytes(b"".join([*claude_lines, json.dumps(line).encode() + b"\n"]))
    rollout = sorted((work / "codex").rglob("*.jsonl"))[0]
    totals = {"input_tokens": 10**7, "cached_input_tokens": 10, "output_tokens": 10**6}
    info = {"total_token_usage": totals, "last_token_usage": totals}
    event = {"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": info}}
    with rollout.open("ab") as fh:
        fh.write(json.dumps(event).encode() + b"\n")
    yield "after an append"
    with ProfileWriter(work / "Cursor") as p:
        p.bubble("plans-new", "a", role="assistant", text="longer " * 900, created_at=at)
    transcript.write_bytes(b"".join(lines[:-1]))
    claude.write_bytes(b"".join(claude_lines[: len(claude_lines) // 2]))
    yield "after an in-place rewrite"


def _reports(machine: Path, work: Path, plan: Plan, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(machine, work)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(work / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(work / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(work / "codex"))
    db = work / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    service = UsageService(db, cache_dir=work / "cache", plan=plan)
    period = named_period("30days", today())
    reports = []
    for step in _steps(work):
        if not plan.long_lived:  # a command: a new process, its files written at its end
            service = UsageService(db, cache_dir=work / "cache", plan=plan)
        with writes_at_end() if not plan.long_lived else nullcontext():
            report = service.report(period, sync=False)
        assert report["totals"]["calls"] > 0, step
        # Money to the nano-dollar: sealed days and fresh ones add the same floats in another
        # order (the last digit of a sum), which no figure shown or exported can tell.
        same = json.loads(json.dumps(report), parse_float=lambda f: round(float(f), 9))
        reports.append((step, json.dumps(same, sort_keys=True)))
    return reports


def test_every_plan_reads_the_same(
    machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not can_fork():
        pytest.skip("no fork here: the forked plan would read in process")
    work = tmp_path / "work"  # one path for every plan: the reports name the same folders
    seen = {name: _reports(machine, work, plan, monkeypatch) for name, plan in PLANS.items()}
    assert any(FORKED)  # the forked plan did split its reads
    first = seen["server"]
    assert len(first) == 3
    assert len({r for _, r in first}) == 3  # each change moved the figures
    assert all('"id": "claude-code"' in r and '"id": "codex"' in r for _, r in first)
    for name, reports in seen.items():
        assert reports == first, name


DETACHED: list[bool] = []  # what a command's plan answered when asked to detach work


class _Detaching(Plan):
    """A command's plan, noting what it was asked to do in another process."""

    def detach(self, work: Any, *, at_end: bool = False) -> bool:
        answer = super().detach(work, at_end=at_end)
        DETACHED.append(answer)
        return answer


def _tool_state(machine: Path, work: Path, plan: Plan, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The other tools' log state a command leaves after a cold read."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(machine, work)
    monkeypatch.setenv("CODEBURN_CURSOR_HOME", str(work / "no-home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(work / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(work / "codex"))
    service = UsageService(work / "no-cursor" / "state.vscdb", cache_dir=work / "cache", plan=plan)
    with writes_at_end():
        service.report(named_period("30days", today()), sync=False)
    db = sqlite3.connect(work / "cache" / "tool-logs.v1.sqlite")
    try:
        rows = db.execute("SELECT key, meta FROM logs ORDER BY key").fetchall()
        parts = db.execute("SELECT key, records, text FROM parts ORDER BY key, rowid").fetchall()
    finally:
        db.close()
    # (each copy of the machine has its own inodes: a row's file identity is left out)
    metas = [
        (key, {k: v for k, v in json.loads(meta).items() if k != "ident"}) for key, meta in rows
    ]
    return metas, parts


def test_a_first_reads_log_state_is_written_beside_the_command_and_equal(
    machine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many records to save (a first read): a writer forked for them, waited for before the
    command's end; the state it leaves is the one a command writing it in process leaves."""
    if not can_fork():
        pytest.skip("no fork here")
    DETACHED.clear()
    work = tmp_path / "work"
    forked = _tool_state(machine, work, _Detaching(long_lived=False, split_rows=1), monkeypatch)
    assert DETACHED == [True]  # (no Cursor database: no memo of it to write)
    in_process = _tool_state(machine, work, Plan(long_lived=False, forks=False), monkeypatch)
    assert forked[0] and forked[1]  # every log's row and records, written by the end
    assert forked == in_process
