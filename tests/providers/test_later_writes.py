"""Cache files a CLI command writes once its answer is out (`runtime.later`): one forked writer
does them before anything `detached`, holding a lock the next command waits for, so that it
reads what it wrote; outside a command, in the demo, or where the process may not fork they
are written at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codeburn.providers import runtime
from codeburn.providers.runtime import can_fork

SLOW_S = 0.4  # the writer's work takes this long: the next command must wait for it


def _slow_write(path: Path, text: str) -> None:
    time.sleep(SLOW_S)
    path.write_text(text)


@pytest.fixture
def forking() -> None:
    if not can_fork():
        pytest.skip("no fork here")


@pytest.mark.usefixtures("forking")
def test_the_next_command_waits_for_what_the_last_one_wrote_later(tmp_path: Path) -> None:
    hold, target = tmp_path / "cache" / "writers.lock", tmp_path / "written"
    with runtime.detached_after(hold):
        assert runtime.later(lambda: _slow_write(target, "sealed"))
        assert not target.exists()
    assert not target.exists()  # the command is over; its writer is still at work
    runtime.wait_for_writers(hold)
    assert target.read_text() == "sealed"
    assert hold.stat().st_mode & 0o777 == 0o600


@pytest.mark.usefixtures("forking")
def test_later_work_comes_first_and_the_next_command_waits_for_detached_work_too(
    tmp_path: Path,
) -> None:
    hold, order = tmp_path / "writers.lock", tmp_path / "order"
    with runtime.detached_after(hold):
        assert runtime.detached(lambda: _slow_write(tmp_path / "memo", "memo"))
        assert runtime.later(lambda: order.write_text("cache"))
    runtime.wait_for_writers(hold)
    assert order.read_text() == "cache"
    assert (tmp_path / "memo").read_text() == "memo"
    assert order.stat().st_mtime_ns <= (tmp_path / "memo").stat().st_mtime_ns


def test_outside_a_command_in_the_demo_and_without_fork_it_is_written_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not runtime.later(lambda: None)  # no command: the caller writes now
    with runtime.detached_after(tmp_path / "writers.lock"), runtime.writes_now():
        assert not runtime.later(lambda: None)
        assert not runtime.detached(lambda: None)
    monkeypatch.setattr(runtime, "can_fork", lambda: False)
    with runtime.detached_after(tmp_path / "writers.lock"):
        assert not runtime.later(lambda: None)
    runtime.wait_for_writers(tmp_path / "never-held.lock")  # nothing held: returns at once


@pytest.mark.usefixtures("forking")
def test_a_thread_started_inside_the_command_gets_its_later_work_done_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "written"
    with runtime.detached_after(tmp_path / "writers.lock"):
        assert runtime.later(lambda: target.write_text("in process"))
        monkeypatch.setattr(runtime, "can_fork", lambda: False)
    assert target.read_text() == "in process"


@pytest.mark.usefixtures("forking")
def test_first_seen_times_are_saved_by_the_writer_and_read_meanwhile(tmp_path: Path) -> None:
    """Both namespaces (the database's and the Cursor home's transcripts) go through one
    queue: a command's saves are the writer's, its own loads see them at once."""
    from codeburn.cache import LocalFiles  # noqa: PLC0415
    from codeburn.providers.local import LocalReader  # noqa: PLC0415

    cache = tmp_path / "cache"
    cache.mkdir()
    store, hold = LocalFiles(cache), cache / "writers.lock"
    local = LocalReader(tmp_path / "state.vscdb", store, tmp_path / "home", keep_state=False)
    assert local.agent.seen is local.seen
    home_key = local.agent.first_seen_key
    local.seen.save(home_key, {"t1": 5_000})  # no command: saved at once
    assert store.load_first_seen(home_key) == {"t1": 5_000}
    with runtime.detached_after(hold):
        local.seen.save(home_key, {"t1": 9_000, "t2": 3_000})
        local.seen.save(local.db_key, {"r1": 7_000})
        assert store.load_first_seen(home_key) == {"t1": 5_000}  # the writer's, later
        assert local.first_seen_of(home_key) == {"t1": 5_000, "t2": 3_000}
        assert local.first_seen_of(local.db_key) == {"r1": 7_000}
    runtime.wait_for_writers(hold)
    assert store.load_first_seen(home_key) == {"t1": 5_000, "t2": 3_000}
    assert store.load_first_seen(local.db_key) == {"r1": 7_000}
