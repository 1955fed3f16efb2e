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
import functools
import gc
import os
import pickle
import queue
import signal
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
    all to find nothing; a cycle that died in
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


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if sys.platform != "linux":
        return None
    try:
        import ctypes  # noqa: PLC0415 - only a long-lived process needs it

        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    return trim


def release_free_memory() -> bool:
    """Give the C heap's free pages back to the system (glibc's `malloc_trim`); False where
    there is none (macOS, Windows, musl). A parse frees most of what it built, but the heap
    keeps those pages: a long-lived server's resident memory would stay at its parse's peak
    (well above what it holds). Trimming is cheap."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def can_fork() -> bool:
    """Linux, and no other thread alive: a fork copies only the calling thread, so a lock
    another thread holds would never be released in the child (the language server runs
    threads and never forks; the CLI does)."""
    return sys.platform == "linux" and threading.active_count() == 1


@dataclass(slots=True)
class _Deferred:
    """What a `writes_at_end` block holds: the caches (`later`), then the rest (`detached`),
    done in that order when the block ends, the `detached` works to fork then, and the
    writers forked for `detached` works, waited for then."""

    first: list[Callable[[], object]] = field(default_factory=list)
    then: list[Callable[[], object]] = field(default_factory=list)
    forks: list[Callable[[], object]] = field(default_factory=list)
    # Each forked writer and its work, held until the writer is waited for: freeing what the
    # work holds while the writer runs would have this process write to every page of it,
    # which the writer shares (each then copied), and reuse those pages (copied again).
    writers: list[tuple[int, Callable[[], object]]] = field(default_factory=list)


_after: list[_Deferred | None] = []  # the works `writes_at_end` blocks hold (None: `now`)
_kept: list[_Deferred] = []  # blocks of `writes_at_end(keep=True)`: never freed


@contextlib.contextmanager
def writes_at_end(*, keep: bool = False) -> Iterator[None]:
    """Work handed to `later` or `detached` inside the block is done in this process when the
    block ends (a CLI command: once its output is written and flushed), `later` works first.
    Nothing outlives the command (docs/robustness.md): when it returns, every file it writes
    is written and nothing it started is still running. `keep`: the block's works, and all
    they hold (a command's calls), are never freed — the process ends next without freeing
    anything (see the CLI's `run`)."""
    block = _Deferred()
    _after.append(block)
    try:
        yield
    finally:
        _after.remove(block)
        _finish(block)
        if keep:
            _kept.append(block)


@contextlib.contextmanager
def writes_now() -> Iterator[None]:
    """Inside the block, `later` and `detached` work is done at once, by its caller (the CLI's
    demo removes its throw-away folder before its command ends)."""
    _after.append(None)
    try:
        yield
    finally:
        _after.pop()


def _finish(block: _Deferred) -> None:
    if not (block.first or block.then or block.forks or block.writers):
        return
    for stream in (sys.stdout, sys.stderr):  # the answer is out before the caches are written
        with contextlib.suppress(Exception):  # (a closed pipe: nothing to show)
            stream.flush()
    for work in block.forks:  # beside the works done here
        try:
            block.writers.append((_fork_writer(work), work))
        except OSError:  # no process to spare: done here, after the others
            block.then.append(work)
    for work in (*block.first, *block.then):
        with contextlib.suppress(Exception):  # (each on its own: a cache file not written)
            work()
    for pid, _ in block.writers:  # joined: nothing the command started outlives it
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def later(work: Callable[[], object]) -> bool:
    """Queue `work` (a cache file nothing later in the command reads) for the end of the
    `writes_at_end` block. False outside such a block: the caller does the work now."""
    block = _after[-1] if _after else None
    if block is None:
        return False
    block.first.append(work)
    return True


def detached(
    work: Callable[[], object], *, may_fork: bool | None = None, at_end: bool = False
) -> bool:
    """Inside `writes_at_end`: `work()` in a forked process, now, which the end of the block
    waits for (a memo's encoding runs beside the rest of the command on the second core), or
    where this process may not fork, in process at the end of the block, after the `later`
    works. Outside any block (a library caller): `work()` in a forked process nobody waits for
    (a cache file it writes: the caller's answer does not depend on it). False in `writes_now`
    or where this process may not fork (see `can_fork`): the caller does the work itself.

    `at_end`: inside a block, forked when the block ends, beside its `later` works, instead
    of now. A writer shares this process's pages while it lives, and each page this process
    writes meanwhile is copied first: forked now, it shares them with the rest of the command
    (the rest of a Cursor 3.x read); at the end, only with the end's writes.

    The child forks again and ends at once, so the process doing the work belongs to nobody
    (never a zombie of the caller); it holds none of the caller's standard streams open (a
    reader of the caller's output does not wait for it) and its errors go nowhere.
    `may_fork`: the caller's plan's answer (None: `can_fork`).
    """
    forks = can_fork() if may_fork is None else may_fork
    if _after:
        block = _after[-1]
        if block is None:
            return False
        if not forks:
            block.then.append(work)
        elif at_end:
            block.forks.append(work)
        else:
            block.writers.append((_fork_writer(work), work))
        return True
    return _fork_detached(work) if forks else False


def _fork_writer(work: Callable[[], object]) -> int:
    """A child doing `work()` with none of the caller's standard streams (nor its buffers: it
    ends by `os._exit`); its `later` and `detached` works are done by it, at once."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (its work is checked through what it writes)
        try:
            _after[:] = [None]
            _run_silent(work)
        finally:
            os._exit(0)
    return pid


def _run_silent(work: Callable[[], object]) -> None:
    """A forked writer's body: no terminal to write to, and nothing it raises goes anywhere (a
    cache file not written is a miss next time, never a wrong figure)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    with contextlib.suppress(BaseException):
        work()


def _fork_detached(work: Callable[[], object]) -> bool:
    """Fork twice, so that the writer belongs to nobody at once."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (its work is checked through what it writes)
        try:
            if os.fork() == 0:
                _run_silent(work)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return True


class AsideParts:
    """`work(send)` run in a forked child; each value it sends is one `next()` here.

    The child does not wait for the caller to take a part: a thread of the child writes it
    to the pipe while the work goes on (a cold parse sends its JSON rows, then scans the
    bubbles while the caller walks the graphs).
    """

    def __init__(
        self, work: Callable[[Callable[[object], None]], object], *, nice: int = 0
    ) -> None:
        """`nice`: the child's lower priority, for work the caller needs only at its end (on
        two cores a third process took CPU from the two whose work the caller waits for)."""
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its work is checked through next())
            os.close(read_fd)
            if nice:
                with contextlib.suppress(OSError):
                    os.nice(nice)
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


class Mailbox:
    """One value the caller posts to a child after forking it (made before the fork; the child
    calls `listen` first and `receive` when it needs the value, the caller `post` once, or
    `close` when it gives up).

    A cold parse forks before it knows which agent rows its conversation graphs own: the child
    reads bubbles meanwhile and then receives the rows its stream walk must leave out. A thread
    of the child takes the value as soon as it comes, so posting never waits for the child.
    """

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        self._parent = os.getpid()
        self._data: list[bytes] = []
        self._reader: threading.Thread | None = None

    def listen(self) -> None:
        """In the child, first: start taking the caller's value."""
        os.close(self._write_fd)  # this copy: the caller closing its own is the end
        self._write_fd = -1
        self._reader = threading.Thread(target=self._read_all, daemon=True)
        self._reader.start()

    def receive(self) -> object:
        """In the child: the caller's value (EOFError if it closed without posting one)."""
        if self._reader is None:
            self.listen()
        assert self._reader is not None
        self._reader.join()
        data = b"".join(self._data)
        if not data:
            raise EOFError("the caller posted nothing")
        return pickle.loads(data)  # from our own parent, over a private pipe

    def post(self, value: object) -> None:
        """In the caller: send the value (once) and close the pipe."""
        self._close_read()
        with contextlib.suppress(OSError):  # the child is gone: its next part says why
            _write_all(self._write_fd, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        self.close()

    def close(self) -> None:
        self._close_read()
        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1

    def _close_read(self) -> None:
        if self._read_fd >= 0 and os.getpid() == self._parent:
            os.close(self._read_fd)
            self._read_fd = -1

    def _read_all(self) -> None:
        with os.fdopen(self._read_fd, "rb") as pipe:
            while chunk := pipe.read(1 << 16):
                self._data.append(chunk)


class Aside(Generic[T]):
    """`work()` run in a forked child; `result()` waits for its answer."""

    def __init__(self, work: Callable[[], T], *, nice: int = 0) -> None:
        self._parts = AsideParts(lambda send: send(work()), nice=nice)

    def result(self) -> T:
        """The child's answer; raises what the work raised."""
        value = self._parts.next()
        self._parts.done()
        return value  # type: ignore[return-value]

    def cancel(self) -> None:
        self._parts.cancel()


_HEADER: Final = struct.Struct("<Q")  # the length of the pickled part that follows


def _run_in_child(work: Callable[[Callable[[object], None]], object], write_fd: int) -> NoReturn:
    # One writer thread writes the frames in order: the work never waits for the caller to
    # read a part, however many it sends before the caller gets to them.
    frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    # The caller's `writes_at_end` block is the caller's: what the child hands to `later` or
    # `detached` is done by the child, now (it ends without running the block).
    _after[:] = [None]
    writer = threading.Thread(target=_write_frames, args=(write_fd, frames))
    writer.start()
    try:
        try:
            work(lambda value: frames.put(_frame((None, value))))
        except BaseException as exc:  # handed to the caller, which raises it
            try:
                frames.put(_frame((exc, None)))
            except Exception:
                frames.put(_frame((RuntimeError(repr(exc)), None)))
        frames.put(None)
        writer.join()
        os.close(write_fd)
    finally:
        os._exit(0)  # no atexit handlers, no flushing of the caller's buffers


def _write_frames(fd: int, frames: queue.SimpleQueue[bytes | None]) -> None:
    while (frame := frames.get()) is not None:
        try:
            _write_all(fd, frame)
        except OSError:  # the caller stopped reading (it cancels the child): drop the rest
            return


def _frame(payload: tuple[BaseException | None, object]) -> bytes:
    data = pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` (unbuffered: a part must not wait in a buffer for the next one)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
