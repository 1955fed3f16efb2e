"""Cache files a CLI command writes once its answer is out (`runtime.later`): done in the
command's own process when its `writes_at_end` block ends; `detached` works (memos) run in a
child forked at once or at the block's end, which the block's end waits for. When the command
returns every file is written; outside a command or in the demo they are written at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codeburn.providers import runtime
from codeburn.providers.plan import ONE_SHOT


def test_later_work_is_done_in_process_when_the_block_ends(tmp_path: Path) -> None:
    done: list[str] = []
    with runtime.writes_at_end():
        assert runtime.later(lambda: done.append(str(os.getpid())))
        assert done == []  # promised, not done yet: the command's answer comes first
    assert done == [str(os.getpid())]  # in this process


def test_detached_work_is_forked_at_once_and_waited_for_at_the_end(tmp_path: Path) -> None:
    if not runtime.can_fork():
        pytest.skip("no fork here")
    gate, target = tmp_path / "gate", tmp_path / "memo"

    def write() -> None:
        while not gate.exists():  # the block's end must wait for this
            time.sleep(0.01)
        target.write_text(str(os.getpid()))

    with runtime.writes_at_end():
        assert runtime.detached(write)
        gate.touch()
    assert int(target.read_text()) != os.getpid()  # a child wrote it, before the block ended


def test_work_detached_to_the_end_is_forked_when_the_block_ends(tmp_path: Path) -> None:
    """A child sees this process's memory as it was when it was forked: one forked at the
    block's end sees what the block did after handing the work over."""
    if not runtime.can_fork():
        pytest.skip("no fork here")
    target, state = tmp_path / "memo", ["when handed over"]

    def write() -> None:
        target.write_text(f"{os.getpid()}\n{state[0]}")

    with runtime.writes_at_end():
        assert runtime.detached(write, at_end=True)
        state[0] = "at the end"
        assert runtime.later(lambda: state.append("in process"))
    pid, seen = target.read_text().split("\n")
    assert int(pid) != os.getpid() and seen == "at the end"  # forked then, waited for
    assert state[1:] == ["in process"]


def test_a_writer_that_cannot_be_forked_at_the_end_is_done_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not runtime.can_fork():
        pytest.skip("no fork here")
    target = tmp_path / "memo"

    def no_fork() -> int:
        raise BlockingIOError("Resource temporarily unavailable")

    with runtime.writes_at_end():
        assert runtime.detached(lambda: target.write_text(str(os.getpid())), at_end=True)
        monkeypatch.setattr(os, "fork", no_fork)  # the system's process table is full
    assert target.read_text() == str(os.getpid())


def test_where_the_process_may_not_fork_detached_work_is_done_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    with runtime.writes_at_end():
        assert runtime.detached(lambda: order.append("memo"), may_fork=False)
        assert runtime.later(lambda: order.append("cache"))
        assert order == []
    assert order == ["cache", "memo"]


def test_a_failing_work_does_not_stop_the_others(tmp_path: Path) -> None:
    def fail() -> None:
        raise OSError("disk full")

    with runtime.writes_at_end():
        runtime.later(fail)
        runtime.later(lambda: (tmp_path / "written").write_text("yes"))
    assert (tmp_path / "written").read_text() == "yes"


def test_outside_a_command_and_in_the_demo_it_is_written_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not runtime.later(lambda: None)  # no command: the caller writes now
    with runtime.writes_at_end(), runtime.writes_now():
        assert not runtime.later(lambda: None)
        assert not runtime.detached(lambda: None)
    # no block and no fork: the caller writes now
    assert not runtime.detached(lambda: None, may_fork=False)


def test_first_seen_times_are_saved_at_the_end_and_read_meanwhile(tmp_path: Path) -> None:
    """Both namespaces (the database's and the Cursor home's transcripts) go through one
    queue: a command's saves are done at its end, its own loads see them at once."""
    from codeburn.cache import LocalFiles  # noqa: PLC0415
    from codeburn.providers.local import LocalReader  # noqa: PLC0415

    cache = tmp_path / "cache"
    cache.mkdir()
    store = LocalFiles(cache)
    local = LocalReader(tmp_path / "state.vscdb", store, tmp_path / "home", plan=ONE_SHOT)
    assert local.agent.seen is local.seen
    home_key = local.agent.first_seen_key
    local.seen.save(home_key, {"t1": 5_000})  # no command: saved at once
    assert store.load_first_seen(home_key) == {"t1": 5_000}
    with runtime.writes_at_end():
        local.seen.save(home_key, {"t1": 9_000, "t2": 3_000})
        local.seen.save(local.db_key, {"r1": 7_000})
        assert store.load_first_seen(home_key) == {"t1": 5_000}  # saved at the end
        assert local.first_seen_of(home_key) == {"t1": 5_000, "t2": 3_000}
        assert local.first_seen_of(local.db_key) == {"r1": 7_000}
    assert store.load_first_seen(home_key) == {"t1": 5_000, "t2": 3_000}
    assert store.load_first_seen(local.db_key) == {"r1": 7_000}


def test_a_forked_reader_writes_what_it_hands_to_later_itself(tmp_path: Path) -> None:
    """A child of `AsideParts` inherits the command's block but never runs it: its `later`
    work is done by the child, at once."""
    if not runtime.can_fork():
        pytest.skip("no fork here")
    target = tmp_path / "child"

    def work(send: object) -> None:
        if not runtime.later(lambda: target.write_text("child")):
            target.write_text("now")

    with runtime.writes_at_end():
        aside = runtime.AsideParts(work)
        aside.done()
        assert target.read_text() == "now"
