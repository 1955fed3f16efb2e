"""`ClaudeWeighing`: `claude_calls`' rules with the files given one at a time, in any order and
in pieces (a command's read lets go of each log's requests once weighed). Property-tested equal
to the rules' plain one pass over every file in order, and to the long-lived reader's memo; a
command's read (in pieces, split across two processes, with a sub-agent's file unreadable)
equals a long-lived read, call for call and in order (docs/other-tools.md)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeburn.cache.tool_logs import ToolLogsDb
from codeburn.providers.agents import ClaudeFile, ClaudeRequest, ToolLogs, claude_calls
from codeburn.providers.agents.claude_code import (
    COPIES_SPAN_MS,
    UNKNOWN_PROJECT,
    agent_id_of,
    make_call,
    note_title,
    parent_session_of,
)
from codeburn.providers.agents.claude_memo import ClaudeCallsMemo
from codeburn.providers.agents.logs import take_snapshot
from codeburn.providers.agents.state import IDENTITY
from codeburn.providers.agents.weighing import ClaudeWeighing
from codeburn.providers.calls import Call, CallChain, CallRun, calls_since, runs_of, session_runs
from codeburn.providers.ide import path_project
from codeburn.providers.plan import Plan
from tests.agent_fixtures import assistant, jsonl, progress, summary, usage, user, write

HOUR = 3_600_000
PATHS = [
    "-home-dev-a/s1.jsonl",
    "-home-dev-a/s1/subagents/agent-x1.jsonl",
    "-home-dev-a/agent-x2.jsonl",
    "-home-dev-b/s2.jsonl",
    "-home-dev-b/s3.jsonl",
]


def _reference(files: list[ClaudeFile], since_ms: int | None) -> tuple[list[Call], dict[str, str]]:
    """The rules as one pass over every file in order (docs/other-tools.md)."""
    present = {a for f in files if (a := agent_id_of(f.path)) is not None}
    low = None if since_ms is None else since_ms - COPIES_SPAN_MS
    chosen: dict[str, tuple[ClaudeRequest, str]] = {}
    titles: dict[str, str] = {}
    prompts: dict[str, str] = {}
    started: dict[str, tuple[int, str]] = {}
    for file in files:
        parent = parent_session_of(file.path)
        for request in file.requests:
            if request.cwd and not (request.agent_id is not None and request.agent_id in present):
                session = parent or request.session or file.path
                first = started.get(session)
                if first is None or request.timestamp_ms < first[0]:
                    started[session] = (request.timestamp_ms, request.cwd)
                break
    for file in files:
        parent = parent_session_of(file.path)
        for request in file.requests:
            if low is not None and request.timestamp_ms < low:
                continue
            if request.agent_id is not None and request.agent_id in present:
                continue
            session = parent or request.session or file.path
            key = request.key or f"{file.path}@{request.offset}"
            held = chosen.get(key)
            if held is None or request.output_tokens > held[0].output_tokens:
                chosen[key] = (request, session)
        note_title(file, titles, prompts)
    for session, prompt in prompts.items():
        titles.setdefault(session, prompt)
    projects = {session: path_project(cwd) for session, (_, cwd) in started.items()}
    calls = [
        make_call(key, request, session, projects.get(session, UNKNOWN_PROJECT))
        for key, (request, session) in chosen.items()
        if since_ms is None or request.timestamp_ms >= since_ms
    ]
    return calls, titles


def _rows(calls: Sequence[Call]) -> list[tuple[Any, ...]]:
    return [dataclasses.astuple(c) for c in calls]


@st.composite
def _files(draw: st.DrawFn) -> list[ClaudeFile]:
    files = []
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=5, unique=True)):
        requests = []
        for offset in range(draw(st.integers(0, 12))):
            agent = draw(st.sampled_from([None, None, None, "x1", "x2", "x9"]))
            requests.append(
                ClaudeRequest(
                    draw(st.sampled_from([None, "m1:r1", "m2:r2", "m3:r3", "m4:r4", "m5:r5"])),
                    offset * 100,
                    draw(st.sampled_from(["s1", "s2", ""])),
                    "claude-sonnet-4-5-20250929",
                    draw(st.integers(0, 60)) * HOUR,
                    draw(st.sampled_from(["", "/home/dev/a", "/home/dev/b"])),
                    3,
                    draw(st.integers(0, 3)),  # (ties are frequent)
                    1000,
                    draw(st.integers(0, 2)),
                    0,
                    agent,
                )
            )
        files.append(
            ClaudeFile(
                path,
                requests,
                draw(st.sampled_from([None, "A summary"])),
                draw(st.sampled_from([None, "a prompt", "another prompt"])),
            )
        )
    return files


@settings(max_examples=300, deadline=None)
@given(
    _files(),
    st.sampled_from([None, 20 * HOUR, 50 * HOUR]),
    st.randoms(use_true_random=False),
)
def test_any_order_and_any_pieces_weigh_as_one_pass_in_order(
    files: list[ClaudeFile], since_ms: int | None, rng: random.Random
) -> None:
    calls, titles = _reference(files, since_ms)
    plain = claude_calls(files, since_ms)
    memo = ClaudeCallsMemo().calls(files, since_ms)
    weighing = ClaudeWeighing([f.path for f in files], since_ms)
    # Each file cut in up to three pieces, given in its order; the files' pieces interleaved
    # in any order.
    queues = []
    for index, file in enumerate(files):
        n = len(file.requests)
        cuts = sorted(rng.sample(range(1, n), k=min(2, n - 1))) if n > 1 else []
        bounds = [0, *cuts, n]
        queues.append([(index, file, a, b) for a, b in itertools.pairwise(bounds)])
    while queues:
        queue = rng.choice(queues)
        index, file, start, end = queue.pop(0)
        part = ClaudeFile(file.path, file.requests[start:end], file.summary, file.first_prompt)
        weighing.add(index, part, start)
        if not queue:
            queues.remove(queue)
    pieced = weighing.result()
    assert _rows(plain.calls) == _rows(calls) and plain.titles == titles
    assert _rows(memo.calls) == _rows(calls) and memo.titles == titles
    assert _rows(pieced.calls) == _rows(calls) and pieced.titles == titles
    _same_as_a_list(pieced.calls, calls)
    _same_as_a_list(CallChain(memo.calls, plain.calls), [*calls, *calls])
    _same_as_a_list(CallChain([], pieced.calls, calls[:2]), [*calls, *calls[:2]])


def _same_as_a_list(made: Sequence[Call], calls: list[Call]) -> None:
    """Calls made as they are asked for (`CallRun`) answer as the list of those calls does."""
    assert isinstance(made, CallRun)
    assert made == calls and len(made) == len(calls)
    assert [made[i] for i in range(-len(made), len(made))] == calls + calls
    assert made[1:3] == calls[1:3] and made[::-2] == calls[::-2]
    for outside in (len(calls), -len(calls) - 1):
        with pytest.raises(IndexError):
            made[outside]
    for ms in (0, 20 * HOUR, 40 * HOUR, 61 * HOUR):
        assert calls_since(made, ms) == [c for c in calls if c.timestamp_ms >= ms]
    assert runs_of(made) == session_runs(calls)
    assert list(runs_of(made)) == list(session_runs(calls))  # (the sessions' order too)


def _history(claude: Path) -> dict[str, Path]:
    """Sessions over three days with streaming copies, a resumed session that copies another's
    requests, a sub-agent's own file and its `progress` copies in the parent."""
    folder = claude / "projects" / "-home-dev-shop"
    days = [f"2026-03-0{d}T1{h}:00:{s:02d}.000Z" for d in (1, 2, 3) for h in (0, 5) for s in (0, 9)]
    parent = [user("build the shop", days[0]), summary("Shop build")]
    sub = []
    for i, at in enumerate(days):
        line = assistant(f"m{i}", f"r{i}", at, usage(out=10 + i % 3))
        parent += [line, assistant(f"m{i}", f"r{i}", at, usage(out=20 + i % 3))]
        own = assistant(f"ms{i}", f"rs{i}", at, usage(out=5))
        sub.append(own)
        parent.append(progress("a1", own))
    resumed = [assistant(f"m{i}", f"r{i}", days[i], usage(out=20 + i % 3)) for i in range(4)]
    resumed.append(assistant("m99", "r99", days[-1], usage(out=7)))
    return {
        "parent": write(folder / "5d1c8a4e-0000-4000-8000-000000000001.jsonl", parent),
        "sub": write(folder / "5d1c8a4e-0000-4000-8000-000000000001/subagents/agent-a1.jsonl", sub),
        "resumed": write(folder / "5d1c8a4e-0000-4000-8000-000000000002.jsonl", resumed),
    }


def _read(logs: ToolLogs, claude: Path, codex: Path, since_ms: int | None) -> list[Any]:
    got = logs.read(take_snapshot([claude], codex), since_ms)
    logs.save()
    assert isinstance(logs.store, ToolLogsDb)
    rows = logs.store.load_tool_logs(IDENTITY)
    parts = logs.store.tool_log_parts(sorted(rows), None)
    records = {k: [r for p in parts.get(k, []) for r in json.loads(p.text or "[]")] for k in rows}
    # The titles of the sessions it counts a call of: no other is shown, and a command need not
    # name a session all of whose logs lie before the days it reads (`Taking.result`).
    sessions = {c.session for c in got.calls}
    titles = {s: t for s, t in got.titles.items() if s in sessions}
    return [_rows(got.calls), titles, sorted(got.diagnostics), sorted(rows.items()), records]


def _plans(tmp_path: Path) -> dict[str, ToolLogs]:
    return {
        "server": ToolLogs(ToolLogsDb(tmp_path / "server"), Plan(forks=False)),
        "command": ToolLogs(ToolLogsDb(tmp_path / "c1"), Plan(long_lived=False, forks=False)),
        "command in pieces": ToolLogs(
            ToolLogsDb(tmp_path / "c2"), Plan(long_lived=False, forks=False), chunk_bytes=700
        ),
        "command, forked": ToolLogs(
            ToolLogsDb(tmp_path / "c3"),
            Plan(long_lived=False, forks=True, split_bytes=0),
            chunk_bytes=700,
        ),
    }


def _same_reads(tmp_path: Path, claude: Path, since_ms: int | None) -> None:
    codex = tmp_path / "codex"
    codex.mkdir(parents=True, exist_ok=True)
    reads = {name: _read(logs, claude, codex, since_ms) for name, logs in _plans(tmp_path).items()}
    first = reads["server"]
    assert first[0]  # (calls were made)
    for name, read in reads.items():
        assert read[:3] == first[:3], name  # calls in order, titles, diagnostics
        # Kept state: the same logs, each with its records (parts may be cut elsewhere).
        assert [k for k, _ in read[3]] == [k for k, _ in first[3]], name
        assert sorted((k, len(v)) for k, v in read[4].items()) == sorted(
            (k, len(v)) for k, v in first[4].items()
        ), name


def test_a_commands_read_equals_a_servers_call_for_call(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    _history(claude)
    for since_ms in (None, 1772409600000):  # (2026-03-02: the day before is still weighed)
        _same_reads(tmp_path / str(since_ms), claude, since_ms)


def test_an_unreadable_subagent_file_counts_its_copies_in_a_commands_read(
    tmp_path: Path,
) -> None:
    """A sub-agent's file that cannot be read is absent: the parent's `progress` copies count.
    A command weighs logs as it reads them, so it reads again from what it saved."""
    claude = tmp_path / "claude"
    logs = _history(claude)
    logs["sub"].write_bytes(b"\x00\x01" + logs["sub"].read_bytes())
    _same_reads(tmp_path, claude, None)
    alone = ToolLogs(ToolLogsDb(tmp_path / "x"), Plan(long_lived=False, forks=False))
    got = alone.read(take_snapshot([claude], tmp_path / "codex"))
    copies = [c for c in got.calls if c.key.startswith("claude-code:ms")]
    assert len(copies) == 12  # (the copies of the sub-agent's requests)


def test_a_commands_read_after_appends_equals_a_servers(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    logs = _history(claude)
    codex = tmp_path / "codex"
    codex.mkdir()
    plans = _plans(tmp_path)
    firsts = {name: _read(r, claude, codex, None) for name, r in plans.items()}
    with logs["parent"].open("ab") as fh:
        at = "2026-03-03T18:00:00.000Z"
        fh.write(
            jsonl([assistant("m0", "r0", at, usage(out=99)), assistant("n1", "q1", at, usage())])
        )
    # (a command is a new reader over the same store)
    again = {
        name: _read(ToolLogs(r.store, r.plan, chunk_bytes=r.chunk_bytes), claude, codex, None)
        for name, r in plans.items()
    }
    for name in plans:
        assert again[name][:3] == again["server"][:3], name
        assert again[name][:3] != firsts[name][:3], name  # (the append moved the figures)


def test_a_later_commands_read_names_sessions_from_logs_it_does_not_decode(
    tmp_path: Path,
) -> None:
    """A read of the last days decodes only the logs with records in them; a log all of whose
    records are older still says where a session with a call in those days started, and names
    it (its sub-agent's file below); one whose session has no call there is not shown."""
    claude = tmp_path / "claude"
    folder = claude / "projects" / "-home-dev-shop"
    old, new = "2026-03-01T10:00:00.000Z", "2026-03-05T10:00:00.000Z"
    a, c = "5d1c8a4e-0000-4000-8000-00000000000a", "5d1c8a4e-0000-4000-8000-00000000000c"
    write(
        folder / f"{a}.jsonl",
        [summary("Old start"), assistant("a1", "r1", old, usage(), session=a)],
    )
    write(
        folder / a / "subagents" / "agent-b1.jsonl",
        [assistant("b1", "r2", new, usage(), session=a, cwd="/home/dev/shop/sub")],
    )
    write(
        folder / f"{c}.jsonl", [summary("Unused"), assistant("c1", "r3", old, usage(), session=c)]
    )
    # Session `d` started in its sub-agent's older file, whose lines name another session: a
    # sub-agent's file is its parent folder's session's, whatever its lines say.
    d = "5d1c8a4e-0000-4000-8000-00000000000d"
    write(folder / f"{d}.jsonl", [assistant("d1", "r4", new, usage(), session=d)])
    write(
        folder / d / "subagents" / "agent-e1.jsonl",
        [assistant("e1", "r5", old, usage(), session="elsewhere", cwd="/home/dev/first")],
    )
    codex = tmp_path / "codex"
    codex.mkdir()
    plans = _plans(tmp_path)
    for logs in plans.values():
        _read(logs, claude, codex, None)  # (the store then holds every log)
    since = 1772668800000  # 2026-03-05: the logs of 03-01 lie before the day before
    later = {
        name: _read(ToolLogs(r.store, r.plan, chunk_bytes=r.chunk_bytes), claude, codex, since)
        for name, r in plans.items()
    }
    calls, titles = later["server"][:2]
    assert titles == {a: "Old start"}
    assert sorted((row[4], row[3]) for row in calls) == [
        (a, path_project("/home/dev/shop")),  # (where `a` started, not its sub-agent's folder)
        (d, path_project("/home/dev/first")),
    ]
    for name, read in later.items():
        assert read[:3] == later["server"][:3], name
