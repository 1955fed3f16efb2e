"""Atomic, private writes of JSON files and a lock for read-modify-write."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Final, Generic, TypeVar

from codeburn.providers import CodeBurnError

LOCK_TIMEOUT_S = 30.0
log = logging.getLogger(__name__)


class LockTimeoutError(CodeBurnError, RuntimeError):
    """Another CodeBurn process held a lock for too long."""


def private_dir(path: Path) -> Path:
    """`path` as a folder; every level it creates is 0700, whatever the umask."""
    missing: list[Path] = []
    probe = path
    while not probe.is_dir() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, 0o700)  # mkdir's mode passes through the umask
    return path


class FolderUnusableError(OSError):
    """One of our folders cannot exist (a file, or under one, takes its place); says which."""


_UNUSABLE: set[Path] = set()  # folders already said to be unusable (each is logged once)
_UNUSABLE_LOCK = threading.Lock()


def folder_problem(path: Path) -> str | None:
    """None when `path` is (now) a folder we may write in; else why not, logged once per folder.

    A cache that cannot be written only costs time, so callers carry on without it.
    """
    where = path
    try:
        private_dir(path)
        if os.access(path, os.W_OK | os.X_OK):
            return None
        reason = f"the folder {path} is not writable"
    except OSError as exc:
        where = Path(exc.filename) if exc.filename else path
        if isinstance(exc, FileExistsError | NotADirectoryError):
            reason = f"{where} is not a folder"
        else:
            reason = f"cannot make the folder {where}: {exc.strerror or exc}"
    with _UNUSABLE_LOCK:  # the cache folder and the folders in it: one cause, said once
        first = where not in _UNUSABLE
        _UNUSABLE.add(where)
    if first:
        log.error("%s; figures are served without caching, nothing is stored there", reason)
    return reason


def require_folder(path: Path) -> None:
    """Raise `FolderUnusableError` when what must be stored in `path` cannot be."""
    reason = folder_problem(path)
    if reason is not None:
        raise FolderUnusableError(errno.ENOTDIR, reason, str(path))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, rename; the result is mode 0600."""
    write_chunks_atomic(path, (data,))


def write_chunks_atomic(path: Path, chunks: Iterable[bytes], *, durable: bool = True) -> None:
    """`write_bytes_atomic` of data made piece by piece (never all in memory at once).
    `durable=False`: no fsync before the rename, for a file that is only a copy of what can be
    read again (a crash may leave it empty or torn: a miss, rebuilt)."""
    private_dir(path.parent)
    # mkstemp creates the file 0600 on every platform (no fchmod: Windows lacks it before 3.13).
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_bounded(path: Path, max_bytes: int) -> bytes | None:
    """A file's bytes; None when it is missing, unreadable, a folder or over `max_bytes`."""
    try:
        if path.stat().st_size > max_bytes:
            return None
        return path.read_bytes()
    except OSError:
        return None


def write_quietly(path: Path, data: bytes) -> bool:
    """`write_bytes_atomic` of a file whose loss costs only time (so not synced to disk: see
    `write_chunks_atomic`): False, never raised, when it cannot be written."""
    if folder_problem(path.parent) is not None:
        return False
    try:
        write_chunks_atomic(path, (data,), durable=False)
    except OSError:
        return False
    return True


def write_json_atomic(path: Path, obj: Any) -> None:
    write_bytes_atomic(path, json.dumps(obj, separators=(",", ":")).encode("utf-8"))


_ENCODE_CHUNK: Final = 1 << 16


def write_cache_json(path: Path, obj: Any) -> bool:
    """Write one of our cache files: whatever took its name (a folder) is replaced, and a failed
    write is logged, never raised (the figures stand without it). False when not written."""
    return write_cache_text(path, json.dumps(obj, separators=(",", ":")))


def write_cache_text(path: Path, text: str, *, durable: bool = True) -> bool:
    """`write_cache_json` of JSON text already encoded (`durable`: see `write_chunks_atomic`)."""
    if folder_problem(path.parent) is not None:
        return False  # said once already
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        # Encoded a piece at a time: never a second copy of the whole file in memory.
        step = _ENCODE_CHUNK
        chunks = (text[i : i + step].encode("utf-8") for i in range(0, len(text), step))
        write_chunks_atomic(path, chunks, durable=durable)
    except OSError as exc:
        log.warning("cache file %s not written: %s", path, exc.strerror or exc)
        return False
    return True


def json_with(obj: dict[str, Any], name: str, member: str) -> str:
    """`obj` as JSON text, with one more member `name` whose value is JSON text already."""
    head = json.dumps(obj, separators=(",", ":"))
    return f"{head[:-1]}{',' if obj else ''}{json.dumps(name)}:{member}}}"


class EncodedItems:
    """The JSON text of each item a cache file holds, kept per item object between writes: a
    long-lived service rewrites the file at each refresh, mostly with the same items, whose
    text is kept rather than encoded again. Items must never be modified once written."""

    def __init__(self, encode: Callable[[Any], Any] | None = None) -> None:
        self._encode = encode
        self._texts: dict[int, tuple[Any, str]] = {}
        self._runs: dict[tuple[int, ...], tuple[tuple[Any, ...], str]] = {}
        self._lock = threading.Lock()

    def texts(self, items: Iterable[Any]) -> list[str]:
        """Each item's JSON text, in order (only the items of this call are kept)."""
        with self._lock:
            before: dict[int, tuple[Any, str]] = self._texts
            now: dict[int, tuple[Any, str]] = {}
            out = self._texts_of(items, before, now)
            self._texts = now
        return out

    def _texts_of(
        self,
        items: Iterable[Any],
        before: dict[int, tuple[Any, str]],
        now: dict[int, tuple[Any, str]],
    ) -> list[str]:
        encode = self._encode
        out: list[str] = []
        for item in items:
            kept = before.get(id(item))
            if kept is None or kept[0] is not item:
                value = encode(item) if encode is not None else item
                kept = (item, json.dumps(value, separators=(",", ":")))
            now[id(item)] = kept
            out.append(kept[1])
        return out

    def joined(self, items: list[Any]) -> str:
        """`",".join(self.texts(items))`, with each run of items the last call held reused as
        one text (a refresh wrote ~4,000 items, nearly all the same: looking each up cost more
        than the few that changed). Runs end after items whose address ends in six zero bits
        (~64 items a run), so an item added or removed changes only its own run."""
        ends = [i + 1 for i, address in enumerate(map(id, items)) if not (address >> 4) & 63]
        if not ends or ends[-1] != len(items):
            ends.append(len(items))
        with self._lock:
            runs_before, items_before = self._runs, self._texts
            runs: dict[tuple[int, ...], tuple[tuple[Any, ...], str]] = {}
            texts: dict[int, tuple[Any, str]] = {}
            out: list[str] = []
            start = 0
            for end in ends:
                run = tuple(items[start:end])
                start = end
                if not run:
                    continue
                key = tuple(map(id, run))
                kept = runs_before.get(key)
                if kept is None or kept[0] != run:
                    kept = (run, ",".join(self._texts_of(run, items_before, texts)))
                runs[key] = kept
                out.append(kept[1])
            self._runs, self._texts = runs, texts
        return ",".join(out)


def loads_json(raw: str | bytes) -> Any | None:
    """Parsed JSON, or None for anything that is not JSON, including nesting too deep to parse."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def read_json(path: Path) -> Any | None:
    """Parsed JSON, or None when the file is missing, unreadable, corrupt or a folder."""
    try:
        with path.open("rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    return loads_json(raw)


FileId = tuple[int, int, int]  # (inode, mtime in ns, size): a file changed when this did
T = TypeVar("T")


def _file_id(st: os.stat_result) -> FileId:
    return st.st_ino, st.st_mtime_ns, st.st_size


class FileMemo(Generic[T]):
    """What was parsed of each file, kept until the file's identity changes: a long-lived
    service reads its cache files at every refresh, and mostly nothing changed them since
    (or it wrote them itself). Callers must not modify what they get: it is shared."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memo: dict[Path, tuple[FileId, T | None]] = {}

    def read(self, path: Path, parse: Callable[[bytes], T | None]) -> T | None:
        """`parse` of the file's bytes, reused while the file is the same; None when the
        file cannot be read."""
        try:
            with path.open("rb") as handle:
                identity = _file_id(os.fstat(handle.fileno()))
                with self._lock:
                    memo = self._memo.get(path)
                if memo is not None and memo[0] == identity:
                    return memo[1]
                raw = handle.read()
        except OSError:
            return None
        value = parse(raw)
        with self._lock:
            self._memo[path] = (identity, value)
        return value

    def remember(self, path: Path, value: T) -> None:
        """`value` was just written to `path`: the next read takes it without parsing."""
        try:
            identity = _file_id(os.stat(path))
        except OSError:
            return
        with self._lock:
            self._memo[path] = (identity, value)


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold `<path>.lock` across a read-modify-write of `path`.

    Where the folder cannot exist nothing is written, so there is nothing to guard: the block
    runs unlocked (writers that must store check `require_folder` first).
    """
    if folder_problem(path.parent) is not None:
        yield
        return
    # Imported here: filelock is slow to import, and a CLI command takes its locks only
    # once its answer is out, if at all.
    from filelock import FileLock, Timeout  # noqa: PLC0415

    lock = FileLock(str(path) + ".lock", timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise LockTimeoutError(
            f"another CodeBurn process is holding {path.name}; try again in a moment"
        ) from exc
