"""Rebuildable cache files a long-lived process writes after its answer, on a thread of their own.

A refresh of the language server rewrote the results cache and the agent files before its
status went out (a noticeable share of the refresh). Nothing in that answer reads
them: they are for the next process (a CLI command, the next start). Each piece of work has a
name; work queued under a name replaces the queued work of that name that has not started
(the newest figures are the only ones worth writing). One thread runs them in turn.

Only what may be lost goes here: a write that never happened (the process killed first)
leaves the older file, which the next reader finds stale and reads again. First-seen times,
sealed days, the import store and settings are written at once, as before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

FLUSH_TIMEOUT_S: Final = 5.0
# Writes wait this long after the newest work was queued: the answer that queued it is still
# being made, and a writer holding the GIL beside it cost it as much as it saved.
QUIET_S: Final = 0.1
# ... but no longer than this after the oldest work waiting (refreshes that never pause).
MAX_WAIT_S: Final = 2.0


class WriteBehind:
    """Named pieces of work, newest of each name, run in turn on one daemon thread."""

    def __init__(self, quiet_s: float = QUIET_S) -> None:
        self._cond = threading.Condition()
        self._pending: dict[str, Callable[[], object]] = {}
        self._running = False
        self._thread: threading.Thread | None = None
        self._quiet_s = quiet_s
        self._queued_at = 0.0
        self._waiting_since = 0.0
        self._flushing = 0

    def submit(self, name: str, work: Callable[[], object]) -> None:
        with self._cond:
            now = time.monotonic()
            if not self._pending:
                self._waiting_since = now
            self._pending.pop(name, None)  # the newest goes last: the order they were made
            self._pending[name] = work
            self._queued_at = now
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="codeburn-write-behind", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until everything queued is written; False when `timeout` passed first."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(lambda: not self._pending and not self._running, timeout)
            finally:
                self._flushing -= 1

    def _quiet_for(self) -> float:
        """Seconds until the writes may start (0: now)."""
        if self._flushing:
            return 0.0
        start = min(self._queued_at + self._quiet_s, self._waiting_since + MAX_WAIT_S)
        return max(0.0, start - time.monotonic())

    def _run(self) -> None:
        """Until nothing is queued: then the thread ends (a process with a thread of its own
        left running may not fork, see `runtime.can_fork`), and the next work starts one."""
        while True:
            with self._cond:
                if not self._pending:
                    self._thread = None
                    return
                while (wait := self._quiet_for()) > 0:
                    self._cond.wait(wait)
                name = next(iter(self._pending))
                work = self._pending.pop(name)
                self._running = True
            try:
                work()
            except Exception as exc:  # a cache file not written: the figures stand without it
                log.warning("cache file not written (%s): %s", name, exc)
            finally:
                with self._cond:
                    self._running = False
                    self._cond.notify_all()


_writer: list[WriteBehind] = []  # set by `enable_write_behind` (the language server)


def enable_write_behind(quiet_s: float = QUIET_S) -> None:
    """This process lives on (the language server): `write_behind` queues from now on, each
    queue written once it has been quiet for `quiet_s`."""
    if not _writer:
        _writer.append(WriteBehind(quiet_s))


def write_behind(name: str, work: Callable[[], object]) -> bool:
    """Queue `work` (a rebuildable cache file nothing in this answer reads) under `name`;
    False where write-behind is off (a CLI command, a test): the caller does the work now."""
    if not _writer:
        return False
    _writer[0].submit(name, work)
    return True


def flush_write_behind(timeout: float = FLUSH_TIMEOUT_S) -> bool:
    """Everything queued written (before the process exits); True when nothing was queued."""
    return _writer[0].flush(timeout) if _writer else True


def disable_write_behind() -> None:
    """Back to writing at once, once what is queued is written (tests, the bench)."""
    if _writer:
        _writer[0].flush()
        _writer.clear()
