"""Process helpers of a parse: cyclic GC paused, and work done in a forked child while the
caller goes on (the second core, for Python code).

Decoding JSON and protobuf holds the GIL, so a thread would not run beside the caller; a
forked process does. The child gets its own copy of everything and must not use the caller's
open connections (each piece of work opens its own); it sends its result back pickled
through a pipe, and what it raised is raised again by `result()`. A child may also send its
result in parts (`AsideParts`), each taken as soon as the caller needs it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Final, Generic, NoReturn, TypeVar

T = TypeVar("T")


_frozen = [False]  # a parse froze its state (`gc.get_freeze_count` walks every frozen object)


def freeze_state() -> None:
    """`gc.freeze`: a parse's long-lived state is kept from later collections."""
    gc.freeze()
    _frozen[0] = True


def thaw_state() -> None:
    """`gc.unfreeze`: what was frozen is collected again."""
    gc.unfreeze()
    _frozen[0] = False


@contextlib.contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic GC while a parse builds hundreds of thousands of acyclic tuples and calls:
    every collection would walk them all again.

    `freeze`: where a parse froze its state already (`freeze_state`, undone by the next full
    parse), what survived the block is frozen too. A long-lived service's refresh leaves tens
    of thousands of new long-lived objects, and the first collection after it walked them
    all to find nothing (3-7 ms a refresh on the Cursor 3.x profile); a cycle that died in
    the block waits for that next full parse's collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if freeze and _frozen[0]:
                gc.freeze()
            gc.enable()


def can_fork() -> bool:
    """Linux, and no other thread alive: a fork copies only the calling thread, so a lock
    another thread holds would never be released in the child (the language server runs
    threads and never forks; the CLI does)."""
    return sys.platform == "linux" and threading.active_count() == 1


class AsideParts:
    """`work(send)` run in a forked child; each value it sends is one `next()` here.

    The child does not wait for the caller to take a part: a thread of the child writes it
    to the pipe while the work goes on (a cold parse sends its JSON rows, then scans the
    bubbles while the caller walks the graphs).
    """

    def __init__(self, work: Callable[[Callable[[object], None]], object]) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its work is checked through next())
            os.close(read_fd)
            _run_in_child(work, write_fd)
        os.close(write_fd)
        self._pid = pid
        self._pipe = os.fdopen(read_fd, "rb")
        self._reaped = False

    def next(self) -> object:
        """The next part the child sent; raises what the work raised."""
        header = self._pipe.read(_HEADER.size)
        size = _HEADER.unpack(header)[0] if len(header) == _HEADER.size else 0
        data = self._pipe.read(size)
        if not size or len(data) != size:  # the child ended, or was killed mid-part
            self._reap()
            raise RuntimeError("a reader process stopped before it finished")
        error, value = pickle.loads(data)  # our own child, over a private pipe
        if error is not None:
            self._reap()
            raise error
        return value

    def done(self) -> None:
        """Wait for the child to end (after its last part)."""
        self._reap()

    def cancel(self) -> None:
        """The caller gives up (an error, Ctrl-C): stop the child and reap it (nothing once it
        is reaped: its process id may belong to another process by then)."""
        if self._reaped:
            return
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
        self._reap()

    def _reap(self) -> None:
        if self._reaped:
            return
        self._reaped = True
        with contextlib.suppress(OSError):
            self._pipe.close()
        with contextlib.suppress(OSError):
            os.waitpid(self._pid, 0)


class Aside(Generic[T]):
    """`work()` run in a forked child; `result()` waits for its answer."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._parts = AsideParts(lambda send: send(work()))

    def result(self) -> T:
        """The child's answer; raises what the work raised."""
        value = self._parts.next()
        self._parts.done()
        return value  # type: ignore[return-value]

    def cancel(self) -> None:
        self._parts.cancel()


_HEADER: Final = struct.Struct("<Q")  # the length of the pickled part that follows


def _run_in_child(work: Callable[[Callable[[object], None]], object], write_fd: int) -> NoReturn:
    writer: threading.Thread | None = None

    def write(frame: bytes) -> None:
        nonlocal writer
        if writer is not None:
            writer.join()
        writer = threading.Thread(target=_write_all, args=(write_fd, frame))
        writer.start()

    try:
        try:
            work(lambda value: write(_frame((None, value))))
        except BaseException as exc:  # handed to the caller, which raises it
            try:
                write(_frame((exc, None)))
            except Exception:
                write(_frame((RuntimeError(repr(exc)), None)))
        if writer is not None:
            writer.join()
        os.close(write_fd)
    finally:
        os._exit(0)  # no atexit handlers, no flushing of the caller's buffers


def _frame(payload: tuple[BaseException | None, object]) -> bytes:
    data = pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` (unbuffered: a part must not wait in a buffer for the next one)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
