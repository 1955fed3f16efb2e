"""Work in a forked child: its answer, its parts, its errors, and no child left behind."""

from __future__ import annotations

import io
import os
import select
import struct
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest

from codeburn.providers.plan import ONE_SHOT
from codeburn.providers.runtime import Aside, AsideParts, Mailbox, can_fork

# More than a pipe holds (64 KiB on Linux): a child that waited for the caller to take it
# would never get to what follows.
BIG = bytes(range(256)) * 4096
# How long the caller waits for the child's signal before calling it stuck (a liveness
# check, not a speed limit: the child needs milliseconds).
STUCK_S = 60


@pytest.fixture(autouse=True)
def _fork_here() -> None:
    if not can_fork():
        pytest.skip("no fork here")


def test_work_aside_raises_its_error_in_the_caller_and_is_reaped_once() -> None:
    def fails() -> int:
        raise ValueError("bad blob")

    with pytest.raises(ValueError, match="bad blob"):
        Aside(fails).result()
    done = Aside(lambda: 41 + 1)
    assert done.result() == 42
    done.cancel()  # reaped already: no signal to a process id that may be another's now
    assert done._parts._reaped


def test_a_child_goes_on_before_the_caller_takes_its_first_part() -> None:
    signal_read, signal_write = os.pipe()

    def work(send: Callable[[object], None]) -> None:
        send(BIG)
        os.write(signal_write, b"!")  # reached only if sending did not wait for the caller
        send(("second", len(BIG)))

    parts = AsideParts(work)
    os.close(signal_write)
    try:
        ready, _, _ = select.select([signal_read], [], [], STUCK_S)
        assert ready, "the child waited for the caller to take its first part"
        assert os.read(signal_read, 1) == b"!"
        assert parts.next() == BIG
        assert parts.next() == ("second", len(BIG))
        parts.done()
        assert parts._reaped
    finally:
        parts.cancel()
        os.close(signal_read)


def test_an_error_after_a_part_is_raised_at_the_next_part_and_the_child_is_reaped() -> None:
    def work(send: Callable[[object], None]) -> None:
        send([1, 2, 3])
        raise KeyError("late")

    parts = AsideParts(work)
    assert parts.next() == [1, 2, 3]
    with pytest.raises(KeyError, match="late"):
        parts.next()
    assert parts._reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(parts._pid, os.WNOHANG)


def test_a_child_that_dies_between_parts_is_an_error_not_a_hang() -> None:
    taken_read, taken_write = os.pipe()

    def work(send: Callable[[object], None]) -> None:
        send("first")
        os.read(taken_read, 1)  # the caller has the first part
        os._exit(3)  # killed, say, before its second part

    parts = AsideParts(work)
    os.close(taken_read)
    try:
        assert parts.next() == "first"
        os.write(taken_write, b"!")
        with pytest.raises(RuntimeError, match="stopped before it finished"):
            parts.next()
        assert parts._reaped
    finally:
        parts.cancel()
        os.close(taken_write)


def test_cancel_stops_a_child_that_is_still_working() -> None:
    def work(send: Callable[[object], None]) -> None:
        send("started")
        select.select([], [], [])  # blocks until killed

    parts = AsideParts(work)
    assert parts.next() == "started"
    parts.cancel()
    assert parts._reaped
    with pytest.raises(ChildProcessError):
        os.waitpid(parts._pid, os.WNOHANG)


def test_a_part_cut_short_is_an_error_not_garbage() -> None:
    parts = AsideParts(lambda send: send("whole"))
    assert parts.next() == "whole"
    parts.done()
    # What the pipe holds when a child is killed halfway through writing a part.
    parts._pipe = io.BufferedReader(io.BytesIO(struct.pack("<Q", 100) + b"x" * 10))
    with pytest.raises(RuntimeError, match="stopped before it finished"):
        parts.next()


def test_a_child_sends_all_its_parts_before_the_caller_takes_any() -> None:
    """Many parts, each more than the pipe holds: the child must not wait for the caller to
    take one before it goes on (a split scan sends its older bubbles page by page long
    before the caller's own scan reaches them)."""
    signal_read, signal_write = os.pipe()

    def work(send: Callable[[object], None]) -> None:
        for i in range(8):
            send((i, BIG))
        os.write(signal_write, b"!")  # reached only if no send waited for the caller

    parts = AsideParts(work)
    os.close(signal_write)
    try:
        ready, _, _ = select.select([signal_read], [], [], STUCK_S)
        assert ready, "the child waited for the caller to take its parts"
        assert [parts.next() for _ in range(8)] == [(i, BIG) for i in range(8)]
        parts.done()
    finally:
        parts.cancel()


def test_a_value_posted_to_a_busy_child_is_not_waited_for() -> None:
    """The caller posts more than a pipe holds while the child is still busy (a split scan
    posts its graphs' agent rows while the child reads bubbles): posting does not wait."""
    mailbox = Mailbox()
    go_read, go_write = os.pipe()

    def work(send: Callable[[object], None]) -> None:
        mailbox.listen()
        os.read(go_read, 1)  # busy until the caller has posted
        send(len(cast(bytes, mailbox.receive())))

    parts = AsideParts(work)
    try:
        poster = threading.Thread(target=mailbox.post, args=(BIG * 4,))
        poster.start()
        poster.join(STUCK_S)
        assert not poster.is_alive(), "posting waited for the child"
        os.write(go_write, b"!")
        assert parts.next() == len(BIG) * 4
        parts.done()
    finally:
        parts.cancel()


def test_a_child_waiting_for_a_value_the_caller_never_posts_ends() -> None:
    mailbox = Mailbox()
    parts = AsideParts(lambda send: send(mailbox.receive()))
    try:
        mailbox.close()
        with pytest.raises(EOFError):
            parts.next()
    finally:
        parts.cancel()


def test_a_child_asked_to_be_nice_runs_at_a_lower_priority_the_caller_keeps_its_own() -> None:
    if not can_fork():
        pytest.skip("no fork here")
    mine = os.nice(0)
    assert Aside(lambda: os.nice(0), nice=5).result() == mine + 5
    assert Aside(lambda: os.nice(0)).result() == mine
    assert os.nice(0) == mine


def test_the_transcripts_beside_the_database_are_read_at_a_lower_priority(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codeburn.providers import agent_side  # noqa: PLC0415

    asked: list[int] = []
    monkeypatch.setattr(agent_side, "Aside", lambda work, nice=0: asked.append(nice) or Aside(work))
    side = cast(agent_side.AgentSide, type("Side", (), {"read": lambda self, snap: "read"})())
    side.store = cast(agent_side.LocalStore, None)
    assert agent_side.ReadBeside(side, cast(agent_side.AgentSnapshot, None))._aside.result() == (
        "read",
        [],
    )
    assert asked == [agent_side.BESIDE_NICE] and agent_side.BESIDE_NICE > 0


class _Store:
    """A `LocalStore` that keeps what is saved to it, in order."""

    def __init__(self) -> None:
        self.saved: list[tuple[str, tuple[object, ...]]] = []

    def load_agent_files(self, home: str) -> dict[str, Any]:
        return {"kept": home}

    def save_agent_files(self, home: str, entries: dict[str, Any]) -> None:
        self.saved.append(("agent files", (home, entries)))

    def load_agent_memo(self) -> bytes | None:
        return b"memo"

    def save_agent_memo(self, data: bytes) -> None:
        self.saved.append(("agent memo", (data,)))


def test_the_saves_of_the_forked_transcripts_reader_are_made_by_the_caller() -> None:
    """The child reads the store but leaves its saves to the caller (whose writer makes them
    after the output), in the order it made them."""
    if not can_fork():
        pytest.skip("no fork here")
    from codeburn.providers import agent_side  # noqa: PLC0415

    class Side:
        plan = ONE_SHOT

        def __init__(self) -> None:
            self.store: Any = _Store()

        def read(self, snapshot: object) -> object:
            loaded = self.store.load_agent_files("home"), self.store.load_agent_memo()
            self.store.save_agent_memo(b"new memo")
            self.store.save_agent_files("home", {"a.jsonl": {"turns": [1, 2]}})
            return loaded

    side = Side()
    beside = agent_side.ReadBeside(
        cast(agent_side.AgentSide, side), cast(agent_side.AgentSnapshot, None)
    )
    assert beside.result() == ({"kept": "home"}, b"memo")  # the child read the store
    assert side.store.saved == [
        ("agent memo", (b"new memo",)),
        ("agent files", ("home", {"a.jsonl": {"turns": [1, 2]}})),
    ]
