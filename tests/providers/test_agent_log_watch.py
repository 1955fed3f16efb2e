"""A reader told of every change to the other tools' logs by a file watch (`LogListing.watch`):
its snapshot looks again at the files reported only, and equals a new listing of every root
(the same files, identities and order) while nothing unreported changed (docs/lsp.md#file-watch).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeburn.providers.agents import ToolLogs
from codeburn.providers.agents.logs import ToolSnapshot, take_snapshot
from codeburn.providers.agents.watch import LogListing
from codeburn.providers.background_writes import (
    disable_write_behind,
    enable_write_behind,
    flush_write_behind,
)
from codeburn.providers.plan import Plan
from tests.agent_fixtures import SESSION, assistant, jsonl, session_meta, usage, write

T = "2026-03-02T10:00:{:02d}.000Z"


def _line(n: int) -> bytes:
    return jsonl([assistant(f"m{n}", f"r{n}", T.format(n % 60), usage(out=n))])


def _listing(claude: Path, codex: Path) -> list[tuple[str, str, str, tuple[int, int, int]]]:
    return _rows(take_snapshot([claude], codex))


def _rows(snap: ToolSnapshot) -> list[tuple[str, str, str, tuple[int, int, int]]]:
    return [(key, f.tool, f.name, f.ident) for key, f in snap.files.items()]


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    folder = claude / "projects" / "-home-dev-shop"
    for n in range(3):
        write(folder / f"{n}-{SESSION}.jsonl", [assistant(f"a{n}", f"q{n}", T.format(n), usage())])
    write(
        codex / "sessions/2026/03/02/rollout-2026-03-02T10-00-00-0199f433.jsonl",
        [session_meta("0199f433-233e-74b0-80d8-b9ef1b9fabd7", "/home/dev/api", T.format(0))],
    )
    return claude, codex


def test_reported_changes_give_a_new_listing(roots: tuple[Path, Path]) -> None:
    claude, codex = roots
    logs = ToolLogs()
    logs.listing.watch(True)
    first = logs.listing.snapshot()
    assert _rows(first) == _listing(claude, codex)
    assert first.fingerprint == take_snapshot([claude], codex).fingerprint
    folder = claude / "projects" / "-home-dev-shop"
    appended = folder / f"1-{SESSION}.jsonl"
    with appended.open("ab") as fh:
        fh.write(_line(7))
    new_folder = claude / "projects" / "-home-dev-aaa"  # (listed before the others)
    created = write(new_folder / "s" / "subagents" / "agent-x.jsonl", [])
    with created.open("ab") as fh:
        fh.write(_line(8))
    removed = folder / f"2-{SESSION}.jsonl"
    removed.unlink()
    rollout = codex / "archived_sessions" / "rollout-2026-03-01T09-00-00-0199f400.jsonl"
    write(rollout, [session_meta("0199f400-233e-74b0-80d8-b9ef1b9fabd7", "/x", T.format(1))])
    other = write(claude / "projects" / "notes.txt", [])  # (no log: left out)
    logs.listing.files_changed(
        map(str, (appended, created, removed, rollout, other, Path("/elsewhere")))
    )
    snap = logs.listing.snapshot()
    assert _rows(snap) == _listing(claude, codex)
    assert len(snap.files) == 5
    # (moved by the files reported only, to a new listing's)
    assert snap.fingerprint == take_snapshot([claude], codex).fingerprint != first.fingerprint
    assert logs.listing.snapshot() is snap  # nothing reported since: the same snapshot


def test_a_reported_folder_lists_every_root(roots: tuple[Path, Path]) -> None:
    """A folder removed with its logs: the watch reports the folder alone."""
    claude, codex = roots
    logs = ToolLogs()
    logs.listing.watch(True)
    logs.listing.snapshot()
    folder = claude / "projects" / "-home-dev-shop"
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    logs.listing.files_changed([str(folder)])
    snap = logs.listing.snapshot()
    assert _rows(snap) == _listing(claude, codex)
    assert [f.tool for f in snap.files.values()] == ["codex"]


def test_an_unreported_change_waits_for_the_next_listing(roots: tuple[Path, Path]) -> None:
    """A watch that misses a change: its figures catch up at the next listing of every root
    (every `LISTING_NS`, or at once when what changed is not known: the refresh command)."""
    claude, codex = roots
    logs = ToolLogs()
    logs.listing.watch(True)
    before = _rows(logs.listing.snapshot())
    path = claude / "projects" / "-home-dev-shop" / f"0-{SESSION}.jsonl"
    with path.open("ab") as fh:
        fh.write(_line(9))
    os.utime(path, ns=(1, 1))  # (a different identity whatever the clock's grain)
    assert _rows(logs.listing.snapshot()) == before
    logs.listing.files_changed(None)
    assert _rows(logs.listing.snapshot()) == _listing(claude, codex) != before


def test_an_unwatched_reader_lists_every_root_each_time(roots: tuple[Path, Path]) -> None:
    claude, codex = roots
    logs = ToolLogs()
    logs.listing.snapshot()
    path = claude / "projects" / "-home-dev-shop" / f"0-{SESSION}.jsonl"
    with path.open("ab") as fh:
        fh.write(_line(9))
    assert _rows(logs.listing.snapshot()) == _listing(claude, codex)


def test_the_minute_listing_is_made_behind_an_answer(roots: tuple[Path, Path]) -> None:
    """Once a minute a watched reader lists every root again, behind its answer: that answer
    comes from the last snapshot, and the next starts from the listing (what the watch missed
    shows then), made from the one before where the files are the same."""
    claude, codex = roots
    enable_write_behind(quiet_s=60)  # (nothing written until flushed)
    try:
        listing = LogListing(Plan(), every_ns=0)  # (every snapshot: a minute later)
        listing.watch(True)
        first = listing.snapshot()  # listed at once: the watch just began
        path = claude / "projects" / "-home-dev-shop" / f"0-{SESSION}.jsonl"
        with path.open("ab") as fh:
            fh.write(_line(9))
        os.utime(path, ns=(1, 1))  # (missed by the watch)
        second = listing.snapshot()
        assert _rows(second) == _rows(first)
        flush_write_behind()
        third = listing.snapshot()
        assert _rows(third) == _listing(claude, codex) != _rows(first)
        assert third.base == (second.serial, frozenset({str(path.resolve())}))
    finally:
        disable_write_behind()


def test_a_minute_listing_asked_for_before_a_whole_listing_is_dropped(
    roots: tuple[Path, Path],
) -> None:
    """A listing made behind an answer may land after a listing of every root made since (the
    refresh command's): it is dropped, never taken for newer than that one."""
    claude, _ = roots
    enable_write_behind(quiet_s=60)
    try:
        listing = LogListing(Plan(), every_ns=0)
        listing.watch(True)
        listing.snapshot()
        listing.snapshot()  # a minute later: a listing asked for behind the answer
        listing.files_changed(None)  # the refresh command
        whole = listing.snapshot()
        path = claude / "projects" / "-home-dev-shop" / f"0-{SESSION}.jsonl"
        with path.open("ab") as fh:
            fh.write(_line(9))
        os.utime(path, ns=(1, 1))  # (missed by the watch)
        flush_write_behind()  # the listing asked for before lands now
        assert _rows(listing.snapshot()) == _rows(whole)
    finally:
        disable_write_behind()
