"""The other tools' log reader: roots, incremental reads, kept state (docs/other-tools.md)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from codeburn.cache.tool_logs import ToolLogsDb
from codeburn.providers.agents import ToolLogs, claude_roots, codex_root
from codeburn.providers.agents.logs import Listings, take_snapshot
from codeburn.providers.agents.state import IDENTITY
from codeburn.providers.calls import Call
from codeburn.providers.localtime import parse_iso_ms
from codeburn.providers.plan import Plan
from tests.agent_fixtures import (
    SESSION,
    assistant,
    jsonl,
    session_meta,
    token_count,
    turn_context,
    usage,
    write,
)

T = "2026-03-02T10:00:{:02d}.000Z"


def _key(calls: list[Call]) -> list[tuple[str, int, int, float]]:
    return sorted((c.key, c.output_tokens, c.timestamp_ms, c.cost) for c in calls)


def _fresh(claude: Path, codex: Path) -> list[Call]:
    return ToolLogs().read(take_snapshot([claude], codex)).calls


def _claude_file(root: Path, n: int) -> Path:
    lines = [assistant(f"m{i}", f"r{i}", T.format(i), usage(out=10 + i)) for i in range(n)]
    return write(root / "projects" / "-home-dev-shop" / f"{SESSION}.jsonl", lines)


def test_roots_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{tmp_path / 'a'}, {tmp_path / 'b'}")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "c"))
    assert claude_roots() == [tmp_path / "a", tmp_path / "b"]
    assert codex_root() == tmp_path / "c"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert claude_roots() == [tmp_path / "home/.config/claude", tmp_path / "home/.claude"]
    assert codex_root() == tmp_path / "home/.codex"


def test_the_suite_never_reads_the_developers_own_logs() -> None:
    for root in [*claude_roots(), codex_root()]:
        assert root.is_dir() and not any(root.iterdir())
        assert Path.home() not in root.parents


def test_appended_lines_are_read_alone_and_equal_a_fresh_read(tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    path = _claude_file(claude, 3)
    rollout = write(
        codex
        / "sessions/2026/03/02"
        / "rollout-2026-03-02T10-00-00-0199f433-233e-74b0-80d8-b9ef1b9fabd7.jsonl",
        [
            session_meta("0199f433-233e-74b0-80d8-b9ef1b9fabd7", "/home/dev/shop", T.format(0)),
            turn_context("gpt-5-codex", T.format(1)),
            token_count(T.format(2), (100, 20, 5, 0)),
        ],
    )
    logs = ToolLogs(ToolLogsDb(tmp_path / "cache"))
    first = logs.read(take_snapshot([claude], codex))
    assert first.found == {"claude-code", "codex"} and len(first.calls) == 4
    with path.open("ab") as fh:  # a whole line and a torn one
        line = jsonl([assistant("m9", "r9", T.format(9), usage(out=99))])
        fh.write(line + line[:40])
    with rollout.open("ab") as fh:
        fh.write(
            jsonl(
                [
                    token_count(T.format(3), (100, 20, 5, 0)),
                    token_count(T.format(4), (300, 20, 9, 0)),
                ]
            )
        )
    second = logs.read(take_snapshot([claude], codex))
    assert len(second.calls) == 6
    assert _key(second.calls) == _key(_fresh(claude, codex))
    with path.open("ab") as fh:  # the torn line completed
        fh.write(line[40:])
    third = logs.read(take_snapshot([claude], codex))
    assert len(third.calls) == 6  # the same request (m9, r9) twice: one call
    assert _key(third.calls) == _key(_fresh(claude, codex))


def test_a_rewritten_or_truncated_file_is_read_again(tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    path = _claude_file(claude, 4)
    logs = ToolLogs()
    assert len(logs.read(take_snapshot([claude], codex)).calls) == 4
    _claude_file(claude, 2)  # truncated: shorter
    assert _key(logs.read(take_snapshot([claude], codex)).calls) == _key(_fresh(claude, codex))
    other = jsonl([assistant("x0", "y0", T.format(0), usage(out=10))] * 2)
    data = path.read_bytes()
    path.write_bytes(other + data[len(other) :] if len(other) < len(data) else other)
    assert _key(logs.read(take_snapshot([claude], codex)).calls) == _key(_fresh(claude, codex))
    path.unlink()
    assert logs.read(take_snapshot([claude], codex)).calls == []


def test_the_kept_state_spares_reading_unchanged_files(tmp_path: Path) -> None:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    path = _claude_file(claude, 3)
    store = ToolLogsDb(tmp_path / "cache")
    logs = ToolLogs(store)
    before = logs.read(take_snapshot([claude], codex)).calls
    logs.save()
    assert store.path.is_file()
    # Same size, inode and time, other bytes: a reader that reopened the file would see them.
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b'"output_tokens":1', b'"output_tokens":7'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = ToolLogs(store).read(take_snapshot([claude], codex)).calls
    assert _key(again) == _key(before)
    assert ToolLogs().read(take_snapshot([claude], codex)).calls != before
    store.path.write_bytes(b"{not json")  # damaged: every file read again, nothing lost
    assert len(ToolLogs(store).read(take_snapshot([claude], codex)).calls) == 3


def test_links_loops_binary_files_and_two_roots(tmp_path: Path) -> None:
    first, second, codex = tmp_path / "c1", tmp_path / "c2", tmp_path / "codex"
    _claude_file(first, 2)
    (first / "projects" / "loop").symlink_to(first / "projects")
    (second / "projects").mkdir(parents=True)
    (second / "projects" / "same").symlink_to(first / "projects" / "-home-dev-shop")
    (first / "projects" / "x").mkdir()
    (first / "projects" / "x" / "bin.jsonl").write_bytes(b"\x00\x01usage\x00" * 100)
    read = ToolLogs().read(take_snapshot([first, second], codex))
    assert len(read.calls) == 2
    assert any("not a text log" in d for d in read.diagnostics)


def test_a_read_since_a_time_from_the_kept_state_equals_a_fresh_read_cut_there(
    tmp_path: Path,
) -> None:
    """A refresh decodes only the files with records in its days; its calls equal the whole
    read's from then (the state's other files say only where their sessions started)."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    old = [
        assistant(f"o{i}", f"q{i}", f"2026-01-0{i + 1}T10:00:00.000Z", usage()) for i in range(3)
    ]
    write(claude / "projects" / "-old" / "11111111-0000-4000-8000-000000000000.jsonl", old)
    _claude_file(claude, 4)
    store = ToolLogsDb(tmp_path / "cache")
    logs = ToolLogs(store)
    logs.read(take_snapshot([claude], codex))
    logs.save()
    since = int(__import__("datetime").datetime(2026, 3, 1).timestamp() * 1000)
    kept = ToolLogs(store)
    got = kept.read(take_snapshot([claude], codex), since).calls
    whole = _fresh(claude, codex)
    assert _key(got) == _key([c for c in whole if c.timestamp_ms >= since])
    assert len(got) == 4
    assert sum(not e.loaded for e in (kept._kept or {}).values()) == 1  # the old file
    with sqlite3.connect(store.path) as db:  # one file's records damaged
        damaged = db.execute("UPDATE parts SET text = '[[garbage' WHERE text LIKE '[[\"o0%'")
        assert damaged.rowcount == 1
    again = ToolLogs(store)
    assert _key(again.read(take_snapshot([claude], codex)).calls) == _key(whole)


def test_a_large_first_read_reports_progress_by_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codeburn.providers.agents import reader  # noqa: PLC0415

    claude, codex = tmp_path / "claude", tmp_path / "codex"
    for n in range(3):
        write(
            claude / "projects" / "p" / f"{n:08d}-0000-4000-8000-000000000000.jsonl",
            [assistant(f"m{n}", f"r{n}", T.format(n), usage())],
        )
    size = sum(p.stat().st_size for p in claude.rglob("*.jsonl"))
    seen: list[tuple[int, int]] = []
    monkeypatch.setattr(reader, "PROGRESS_BYTES", size)
    logs = ToolLogs()
    logs.read(take_snapshot([claude], codex), progress=lambda d, t: seen.append((d, t)))
    assert [t for _, t in seen] == [size] * 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == size
    seen.clear()
    monkeypatch.setattr(reader, "PROGRESS_BYTES", size + 1)  # below it: no progress
    ToolLogs().read(take_snapshot([claude], codex), progress=lambda d, t: seen.append((d, t)))
    assert seen == []


def test_a_long_log_is_decoded_only_from_the_days_read(tmp_path: Path) -> None:
    """A log's records are kept in parts of one day each: a read of the last days decodes only
    their parts (and the first request, which says where the session started); a read of
    earlier days after that, with records appended and not kept yet, equals a fresh read."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    stamps = [f"2026-03-{day:02d}T10:00:{i:02d}.000Z" for day in (1, 2, 3, 8, 9) for i in range(3)]
    lines = [assistant(f"m{i}", f"r{i}", at, usage(out=i + 1)) for i, at in enumerate(stamps)]
    path = write(claude / "projects" / "-home-dev-shop" / f"{SESSION}.jsonl", lines)
    store = ToolLogsDb(tmp_path / "cache")
    first = ToolLogs(store)
    first.read(take_snapshot([claude], codex))
    first.save()
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT records FROM parts").fetchall() == [(3,)] * 5

    def since(day: int) -> int:
        return parse_iso_ms(f"2026-03-{day:02d}T00:00:00.000Z")

    def fresh(day: int) -> list[tuple[str, int, int, float]]:
        return _key([c for c in _fresh(claude, codex) if c.timestamp_ms >= since(day)])

    logs = ToolLogs(store)
    assert _key(logs.read(take_snapshot([claude], codex), since(9)).calls) == fresh(9)
    entry = next(iter((logs._kept or {}).values()))
    assert entry.claude is not None and len(entry.claude.requests) == 6  # days 8 and 9
    with path.open("ab") as fh:
        fh.write(jsonl([assistant("m99", "r99", "2026-03-09T11:00:00.000Z", usage(out=5))]))
    assert _key(logs.read(take_snapshot([claude], codex), since(9)).calls) == fresh(9)
    assert len(entry.claude.requests) == 7  # the new request appended to the parts read
    assert _key(logs.read(take_snapshot([claude], codex), since(2)).calls) == fresh(2)
    assert _key(logs.read(take_snapshot([claude], codex)).calls) == fresh(1)
    logs.save()
    again = ToolLogs(store)  # the appended request kept in a part of its own
    assert _key(again.read(take_snapshot([claude], codex), since(3)).calls) == fresh(3)


def test_a_read_split_across_two_processes_equals_one_process(tmp_path: Path) -> None:
    """A command's large read takes a second process for half of the logs: the calls, titles,
    diagnostics and kept state equal one process's, cold and after appends."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    folder = claude / "projects" / "-home-dev-shop"
    for n in range(4):
        stamps = [f"2026-03-0{d}T10:00:{n:02d}.000Z" for d in (1, 2, 3)]
        lines = [assistant(f"m{n}{i}", f"r{n}{i}", at, usage(out=i)) for i, at in enumerate(stamps)]
        write(folder / f"{n:08d}-0000-4000-8000-000000000000.jsonl", [*lines, "garbage"])
    rollout = write(
        codex / "sessions/2026/03/02" / "rollout-2026-03-02T10-00-00-0199f433.jsonl",
        [
            session_meta("0199f433-233e-74b0-80d8-b9ef1b9fabd7", "/home/dev/api", T.format(0)),
            turn_context("gpt-5-codex", T.format(1)),
            token_count(T.format(2), (100, 20, 5, 0)),
        ],
    )
    (folder / "bin.jsonl").write_bytes(b"\x00\x01" * 10)

    def reads(logs: ToolLogs) -> list[object]:
        got = logs.read(take_snapshot([claude], codex))
        logs.save()
        assert isinstance(logs.store, ToolLogsDb)
        rows = logs.store.load_tool_logs(IDENTITY)
        return [got.calls, got.titles, sorted(got.diagnostics), sorted(rows.items())]

    split = ToolLogs(ToolLogsDb(tmp_path / "a"), Plan(long_lived=False, forks=True, split_bytes=0))
    alone = ToolLogs(ToolLogsDb(tmp_path / "b"), Plan(long_lived=False, forks=False, split_bytes=0))
    assert reads(split) == reads(alone)
    with rollout.open("ab") as fh:
        fh.write(jsonl([token_count(T.format(3), (300, 20, 9, 0))]))
    with (folder / "00000001-0000-4000-8000-000000000000.jsonl").open("ab") as fh:
        fh.write(jsonl([assistant("m19", "r19", T.format(9), usage(out=9))]))
    assert reads(split) == reads(alone)
    assert split.split_reads == 2 and alone.split_reads == 0


def test_kept_folder_listings_see_every_new_gone_or_renamed_log(tmp_path: Path) -> None:
    """A long-lived reader lists a folder again only when its time moved (`Listings`): a log
    added, removed or renamed in a folder listed before is seen at the next snapshot, and the
    snapshot equals a fresh one every time."""
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    path = _claude_file(claude, 2)
    folder = path.parent
    listings = Listings()

    def settle() -> None:  # the folders' times well before the next listing
        for f in (folder, folder.parent):
            os.utime(f, ns=(0, 1_000_000_000))

    def same_as_fresh() -> set[str]:
        kept = take_snapshot([claude], codex, listings)
        fresh = take_snapshot([claude], codex)
        assert kept.files == fresh.files and kept.fingerprint == fresh.fingerprint
        return {f.path for f in kept.files.values()}

    settle()
    assert same_as_fresh() == {str(path)}
    assert listings.get(str(folder), folder.stat()) is not None  # kept: settled
    other = write(
        folder / "22222222-0000-4000-8000-000000000000.jsonl",
        [assistant("m7", "r7", T.format(7), usage())],
    )
    # (changed now on the clock the listing reads, which the suite may move off midnight)
    now = time.time_ns()
    os.utime(folder, ns=(now, now))
    assert same_as_fresh() == {str(path), str(other)}
    assert listings.get(str(folder), folder.stat()) is None  # just changed: not kept
    settle()
    same_as_fresh()
    renamed = other.rename(folder / "33333333-0000-4000-8000-000000000000.jsonl")
    assert same_as_fresh() == {str(path), str(renamed)}
    settle()
    same_as_fresh()
    path.unlink()
    assert same_as_fresh() == {str(renamed)}
