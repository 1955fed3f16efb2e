"""Cache files a long-lived process writes behind its answers (`background_writes`): the newest
work of each name, after a quiet moment, on one thread; flushed before the process exits."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from codeburn.providers import background_writes
from codeburn.providers.background_writes import WriteBehind

NEVER_QUIET_S = 3600.0  # the writer waits for a flush: nothing in a test depends on timing


@pytest.fixture
def off() -> Iterator[None]:
    background_writes.disable_write_behind()
    yield
    background_writes.disable_write_behind()


@pytest.mark.usefixtures("off")
def test_off_by_default_the_caller_writes_now() -> None:
    done: list[str] = []
    assert not background_writes.write_behind("results", lambda: done.append("x"))
    assert done == []  # the caller does it, not the writer
    assert background_writes.flush_write_behind()


def test_only_the_newest_work_of_a_name_runs_in_the_order_they_were_made() -> None:
    writer = WriteBehind(quiet_s=NEVER_QUIET_S)
    done: list[str] = []
    writer.submit("results", lambda: done.append("results 1"))
    writer.submit("agent files", lambda: done.append("agent files 1"))
    writer.submit("results", lambda: done.append("results 2"))
    assert done == []  # queued, waiting for a quiet moment
    assert writer.flush()
    assert done == ["agent files 1", "results 2"]


def test_a_failing_write_is_logged_and_the_next_one_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer = WriteBehind(quiet_s=NEVER_QUIET_S)
    done: list[str] = []

    def fail() -> None:
        raise OSError("disk full")

    writer.submit("results", fail)
    writer.submit("agent files", lambda: done.append("agent files"))
    with caplog.at_level(logging.WARNING, logger=background_writes.__name__):
        assert writer.flush()
    assert done == ["agent files"]
    assert "cache file not written (results): disk full" in caplog.text


def test_flush_waits_for_the_write_under_way() -> None:
    writer = WriteBehind(quiet_s=0.0)
    started, release = threading.Event(), threading.Event()
    done: list[str] = []

    def slow() -> None:
        started.set()
        release.wait()
        done.append("written")

    writer.submit("results", slow)
    assert started.wait(30)
    assert not writer.flush(timeout=0.01)  # still under way
    release.set()
    assert writer.flush() and done == ["written"]


@pytest.mark.usefixtures("off")
def test_enabled_the_work_is_queued_and_flushed() -> None:
    background_writes.enable_write_behind()
    done: list[str] = []
    assert background_writes.write_behind("results", lambda: done.append("x"))
    assert background_writes.flush_write_behind()
    assert done == ["x"]


def test_the_writer_thread_ends_once_nothing_is_queued() -> None:
    """A thread left running would keep the process from forking (`runtime.can_fork`)."""
    writer = WriteBehind(quiet_s=0.0)
    writer.submit("results", lambda: None)
    thread = writer._thread
    assert thread is not None
    assert writer.flush()
    thread.join(timeout=30)
    assert not thread.is_alive() and writer._thread is None
    done: list[str] = []
    writer.submit("results", lambda: done.append("again"))  # a new thread for new work
    assert writer.flush() and done == ["again"]
