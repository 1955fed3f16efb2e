"""Work done in a forked child while the caller goes on: the second core, for Python code.

Decoding JSON and protobuf holds the GIL, so a thread would not run beside the caller; a
forked process does. The child gets its own copy of everything and must not use the caller's
open connections (each piece of work opens its own); it sends its result back pickled
through a pipe, and what it raised is raised again by `result()`.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Generic, NoReturn, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Linux, and no other thread alive: a fork copies only the calling thread, so a lock
    another thread holds would never be released in the child (the language server runs
    threads and never forks; the CLI does)."""
    return sys.platform == "linux" and threading.active_count() == 1


class Aside(Generic[T]):
    """`work()` run in a forked child; `result()` waits for its answer."""

    def __init__(self, work: Callable[[], T]) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its work is checked through result())
            os.close(read_fd)
            _run_in_child(work, write_fd)
        os.close(write_fd)
        self._pid, self._read_fd = pid, read_fd
        self._reaped = False

    def result(self) -> T:
        """The child's answer; raises what the work raised."""
        with os.fdopen(self._read_fd, "rb") as pipe:
            data = pipe.read()
        os.waitpid(self._pid, 0)
        self._reaped = True
        if not data:
            raise RuntimeError("a reader process stopped before it finished")
        error, value = pickle.loads(data)  # our own child, over a private pipe
        if error is not None:
            raise error
        return value  # type: ignore[no-any-return]

    def cancel(self) -> None:
        """The caller gives up (an error, Ctrl-C): stop the child and reap it (nothing once
        `result()` has reaped it: its process id may belong to another process by then)."""
        if self._reaped:
            return
        self._reaped = True
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self._pid, 0)
        with contextlib.suppress(OSError):
            os.close(self._read_fd)


def _run_in_child(work: Callable[[], object], write_fd: int) -> NoReturn:
    try:
        try:
            payload = pickle.dumps((None, work()), pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # handed to the caller, which raises it
            try:
                payload = pickle.dumps((exc, None), pickle.HIGHEST_PROTOCOL)
            except Exception:
                payload = pickle.dumps((RuntimeError(repr(exc)), None))
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)  # no atexit handlers, no flushing of the caller's buffers
