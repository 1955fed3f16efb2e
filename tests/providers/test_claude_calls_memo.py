"""Claude Code's calls kept between reads (`ClaudeCallsMemo`): after appends, rewrites and
truncations, a long-lived reader's calls and titles equal `claude_calls` over every file read
whole, in the same order (docs/other-tools.md)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeburn.cache.tool_logs import ToolLogsDb
from codeburn.providers.agents import ClaudeFile, ToolLogs, claude_calls, decode_claude
from codeburn.providers.agents.logs import take_snapshot
from codeburn.providers.agents.state import IDENTITY
from codeburn.providers.calls import CLAUDE_CODE
from codeburn.providers.localtime import parse_iso_ms
from tests.agent_fixtures import (
    assistant,
    jsonl,
    progress,
    session_meta,
    summary,
    token_count,
    turn_context,
    usage,
    user,
    write,
)

T = "2026-03-02T10:{:02d}:00.000Z"
S1 = "5d1c8a4e-0000-4000-8000-0000000000b1"
S2 = "5d1c8a4e-0000-4000-8000-0000000000a2"  # sorts first: its copies win ties
SINCE = parse_iso_ms(T.format(20))


def _kept(db: ToolLogsDb) -> dict[str, tuple[Any, list[Any]]]:
    """What a store holds: per log, its row and its records (the parts joined)."""
    rows = db.load_tool_logs(IDENTITY)
    parts = db.tool_log_parts(sorted(rows), None)
    return {
        key: (json.loads(meta), [r for p in parts.get(key, []) for r in json.loads(p.text or "")])
        for key, meta in rows.items()
    }


def _plain(claude: Path, codex: Path, since_ms: int | None) -> tuple[list[Any], dict[str, str]]:
    """`claude_calls` over every file read whole, in the order the reader keeps them."""
    snap = take_snapshot([claude], codex)
    files = []
    for log in snap.files.values():
        if log.tool != CLAUDE_CODE:
            continue
        chunk = decode_claude(Path(log.path).read_bytes())
        files.append(ClaudeFile(log.name, chunk.requests, chunk.summary, chunk.first_prompt))
    made = claude_calls(files, since_ms)
    return made.calls, made.titles


def _append(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("ab") as fh:
        fh.write(jsonl(lines))


def _check(logs: ToolLogs, claude: Path, codex: Path) -> None:
    for since_ms in (None, SINCE):
        read = logs.read(take_snapshot([claude], codex), since_ms)
        calls, titles = _plain(claude, codex, since_ms)
        assert read.calls == calls  # the same calls, in the same order
        assert read.titles == titles
    # The state saved after an append (only the new records added) equals a fresh reader's.
    logs.save()
    fresh = ToolLogs(ToolLogsDb(claude.parent / f"fresh-{len(list(claude.parent.iterdir()))}"))
    fresh.read(take_snapshot([claude], codex))
    fresh.save()
    assert isinstance(logs.store, ToolLogsDb) and isinstance(fresh.store, ToolLogsDb)
    assert _kept(logs.store) == _kept(fresh.store)


def test_appends_rewrites_and_truncations_equal_claude_calls(tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    folder = claude / "projects" / "-home-dev-shop"
    s1 = write(
        folder / f"{S1}.jsonl",
        [
            user("fix the cart", T.format(0), session=S1),
            *(
                assistant(f"m{i}", f"r{i}", T.format(i * 10), usage(out=10 + i), session=S1)
                for i in range(4)
            ),
            progress("a2", assistant("p1", "q1", T.format(31), usage(out=7), sidechain=True)),
        ],
    )
    resumed = [  # a resumed session copies m1 (a tie) and m2 with less output
        assistant("m1", "r1", T.format(10), usage(out=11), session=S2, cwd="/home/dev/api"),
        assistant("m2", "r2", T.format(20), usage(out=5), session=S2, cwd="/home/dev/api"),
    ]
    s2 = write(folder / f"{S2}.jsonl", resumed)
    agent = write(
        folder / S1 / "subagents" / "agent-a1.jsonl",
        [assistant("s0", "t0", T.format(25), usage(out=3), session=S1, sidechain=True)],
    )
    logs = ToolLogs(ToolLogsDb(tmp_path / "cache"))
    _check(logs, claude, codex)
    made = logs.claude_memo.full_makes

    # Appends: new requests, streaming copies that win, lose or tie with copies held elsewhere.
    _append(s1, [assistant("m2", "r2", T.format(21), usage(out=12), session=S1)])
    _append(s1, [assistant("m5", "r5", T.format(50), usage(out=30), session=S1)])
    _append(s2, [assistant("m5", "r5", T.format(50), usage(out=30), session=S2)])
    _append(s2, [assistant("m3", "r3", T.format(30), usage(out=99), session=S2)])
    _append(agent, [assistant("s1", "t1", T.format(40), usage(out=4), session=S1)])
    _append(s1, [assistant("m6", None, T.format(55), usage(out=1), session=S1)])
    _check(logs, claude, codex)
    assert logs.claude_memo.full_makes == made  # only the new requests were weighed

    # Many appends, the state saved after each: its records in one part per save.
    for i in range(70):
        at = f"2026-03-02T11:{i % 60:02d}:{i // 60:02d}.000Z"
        _append(s1, [assistant(f"n{i}", f"o{i}", at, usage(out=i), session=S1)])
        logs.read(take_snapshot([claude], codex))
        logs.save()
    _check(logs, claude, codex)

    # A torn line waits; completed, it counts once.
    line = jsonl([assistant("m7", "r7", T.format(57), usage(out=8), session=S1)])
    with s1.open("ab") as fh:
        fh.write(line[:30])
    _check(logs, claude, codex)
    with s1.open("ab") as fh:
        fh.write(line[30:])
    _check(logs, claude, codex)
    assert logs.claude_memo.full_makes == made

    # A title line, a rewritten file, a truncated one, a new file: made again whole.
    _append(s1, [summary("Cart fixes")])
    _check(logs, claude, codex)
    s2.write_bytes(jsonl([assistant("x0", "y0", T.format(45), usage(out=2), session=S2)]))
    _check(logs, claude, codex)
    data = s1.read_bytes()
    s1.write_bytes(data[: len(data) // 2].rsplit(b"\n", 2)[0] + b"\n")
    _check(logs, claude, codex)
    write(
        folder / "agent-a2.jsonl",
        [assistant("p1", "q1", T.format(31), usage(out=9), session=S1, sidechain=True)],
    )
    _check(logs, claude, codex)
    assert logs.claude_memo.full_makes > made

    # The state saved and read by a new reader: the same answers.
    logs.save()
    _append(agent, [assistant("s2", "t2", T.format(58), usage(out=6), session=S1)])
    _check(ToolLogs(logs.store), claude, codex)


D = "2026-03-{:02d}T10:00:00.000Z"
ROLLOUT = "0199f433-233e-74b0-80d8-b9ef1b9fabd7"


def test_the_days_before_the_month_are_kept_while_appends_cannot_change_them(
    tmp_path: Path,
) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    folder = claude / "projects" / "-home-dev-shop"
    s1 = write(
        folder / f"{S1}.jsonl",
        [
            assistant("m1", "r1", D.format(2), usage(out=10), session=S1),
            assistant("m2", "r2", D.format(12), usage(out=20), session=S1),
        ],
    )
    rollout = write(
        codex / "sessions/2026/03/02" / f"rollout-2026-03-02T10-00-00-{ROLLOUT}.jsonl",
        [
            session_meta(ROLLOUT, "/home/dev/api", D.format(2)),
            turn_context("gpt-5-codex", D.format(2)),
            token_count(D.format(2), (100, 20, 5, 0)),
            token_count(D.format(12), (300, 20, 9, 0)),
        ],
    )
    first, end = parse_iso_ms(D.format(1)), parse_iso_ms(D.format(10))
    logs = ToolLogs()

    def check(kept: bool) -> None:
        hits = logs.window_hits
        got = logs.calls_between(take_snapshot([claude], codex), first, end)
        plain = ToolLogs().read(take_snapshot([claude], codex), first).calls
        assert sorted(got, key=str) == sorted((c for c in plain if c.timestamp_ms < end), key=str)
        assert got and (logs.window_hits > hits) == kept

    check(kept=False)
    _append(s1, [assistant("m3", "r3", D.format(13), usage(out=5), session=S1)])
    check(kept=True)  # a new request after the days asked
    _append(rollout, [token_count(D.format(13), (400, 20, 12, 0))])
    check(kept=True)
    _append(s1, [assistant("m1", "r1", D.format(14), usage(out=90), session=S1)])
    check(kept=False)  # a copy of a request counted before: it moves out
    _append(s1, [assistant("m4", "r4", D.format(3), usage(out=7), session=S1)])
    check(kept=False)  # a request inside the days asked
    _append(rollout, [token_count(D.format(4), (500, 20, 15, 0))])
    check(kept=False)
    write(folder / f"{S2}.jsonl", [assistant("x1", "y1", D.format(3), usage(out=3), session=S2)])
    check(kept=False)  # a new log
    s1.write_bytes(jsonl([assistant("m1", "r1", D.format(2), usage(out=10), session=S1)]))
    check(kept=False)  # a rewritten log


# -- a watched reader (`LogListing.watch`): told which logs changed, it looks at those alone -------

_SESSIONS = (S1, S2)
_Op = tuple[str, int, int, int, int]  # what, file, request, minute, output


def _op_line(op: _Op) -> dict[str, Any]:
    _, file, request, minute, out = op
    session = _SESSIONS[file % 2]
    return assistant(
        f"m{request}", f"r{request}", T.format(minute), usage(out=out), session=session
    )


@st.composite
def _ops(draw: st.DrawFn) -> list[_Op]:
    what = st.sampled_from(
        ["append"] * 6 + ["summary", "rewrite", "new", "remove", "codex", "none"]
    )
    op = st.tuples(
        what,
        st.integers(0, 2),
        st.integers(0, 8),  # few request ids: copies of one request across files
        st.integers(0, 59),  # either side of SINCE (minute 20)
        st.integers(0, 40),
    )
    return draw(st.lists(op, min_size=1, max_size=12))


def _apply(op: _Op, claude: Path, codex: Path) -> list[Path]:
    """Make the change `op` names; returns the paths a file watch would report."""
    what, file, *_ = op
    folder = claude / "projects" / "-home-dev-shop"
    paths = [
        folder / f"{S1}.jsonl",
        folder / f"{S2}.jsonl",
        folder / S1 / "subagents" / "agent-a1.jsonl",
    ]
    path = paths[file]
    rollout = codex / "sessions/2026/03/02" / f"rollout-2026-03-02T10-00-00-{ROLLOUT}.jsonl"
    if what == "append" or (what == "new" and not path.exists()):
        path.parent.mkdir(parents=True, exist_ok=True)
        _append(path, [_op_line(op)])
    elif what == "summary" and path.exists():
        _append(path, [summary(f"Title {op[2]}")])
    elif what == "rewrite" and path.exists():
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[: len(lines) // 2]) + jsonl([_op_line(op)]))
    elif what == "remove" and path.exists():
        path.unlink()
    elif what == "codex":
        if not rollout.exists():
            write(rollout, [session_meta(ROLLOUT, "/home/dev/api", T.format(0)),
                            turn_context("gpt-5-codex", T.format(0))])  # fmt: skip
        _append(rollout, [token_count(T.format(op[3]), (100 * (op[4] + 1), 20, op[4] + 1, 0))])
        return [rollout]
    return [path]


@settings(max_examples=60, deadline=None)
@given(_ops())
def test_a_watched_reader_told_of_each_change_answers_as_a_fresh_read(ops: list[_Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as env:
        claude, codex = Path(tmp) / "claude", Path(tmp) / "codex"
        env.setenv("CLAUDE_CONFIG_DIR", str(claude))
        env.setenv("CODEX_HOME", str(codex))
        _apply(("append", 0, 0, 5, 3), claude, codex)
        watched = ToolLogs()
        watched.listing.watch(True)
        first, end = parse_iso_ms(T.format(0)), SINCE
        for op in [("none", 0, 0, 0, 0), *ops]:
            watched.listing.files_changed(map(str, _apply(op, claude, codex)))
            snap = watched.listing.snapshot()
            before = watched.calls_between(snap, first, end)
            plain = ToolLogs().read(take_snapshot([claude], codex), first).calls
            assert before == [c for c in plain if c.timestamp_ms < end]
            for since_ms in (SINCE, None):
                got = watched.read(snap, since_ms)
                fresh = ToolLogs().read(take_snapshot([claude], codex), since_ms)
                assert got.calls == fresh.calls  # the same calls, in the same order
                assert (got.titles, got.diagnostics) == (fresh.titles, fresh.diagnostics)
