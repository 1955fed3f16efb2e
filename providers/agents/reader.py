"""Claude Code's and Codex's logs on this machine, read incrementally (docs/other-tools.md).

`ToolLogs.snapshot` finds the files (cheap: no file is read); `ToolLogs.read` reads each file
once, then only its new bytes: per file it keeps the identity, the offset read to and what the
bytes up to there said. A truncated or rewritten file (smaller, another inode, other first
bytes) is read again from the start. What it keeps goes through a `ToolStore` (our cache
folder's file, `cache.LocalFiles`): this module never touches a file of ours.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from codeburn.providers.agents.claude_code import (
    ClaudeFile,
    ClaudeRequest,
    decode_claude,
)
from codeburn.providers.agents.claude_memo import ClaudeCallsMemo
from codeburn.providers.agents.codex import (
    FALLBACK_MODEL,
    CodexState,
    CodexUsage,
    codex_calls,
    codex_session,
    decode_codex,
)
from codeburn.providers.calls import CLAUDE_CODE, CODEX, Call
from codeburn.providers.rules import RULES

CLAUDE_ENV: Final = "CLAUDE_CONFIG_DIR"
CODEX_ENV: Final = "CODEX_HOME"
STATE_VERSION: Final = 3  # of the kept state's layout; the decoders' rules are `RULES`
CHUNK_BYTES: Final = 64 * 1024 * 1024  # new bytes read at a time (a line may span chunks)
HEAD_BYTES: Final = 4096  # a file whose first bytes changed was rewritten: read it again
_SNIFF: Final = 4096
DAY_MS: Final = 24 * 60 * 60 * 1000
PIECES: Final = 64  # a log's records' text kept in at most this many pieces (joined beyond)
PROGRESS_BYTES: Final = 32 * 1024 * 1024  # less than this to read: no progress shown

Ident = tuple[int, int, int]  # size, mtime_ns, inode


class ToolStore(Protocol):
    """Where the reader's per-file state is kept between runs (the cache layer)."""

    def load_tool_logs(self) -> bytes | None: ...
    def save_tool_logs(self, data: bytes) -> None: ...


def claude_roots() -> list[Path]:
    """`$CLAUDE_CONFIG_DIR` (comma-separated), else `~/.config/claude` and `~/.claude`."""
    env = os.environ.get(CLAUDE_ENV, "").strip()
    if env:
        return [Path(p.strip()).expanduser() for p in env.split(",") if p.strip()]
    home = Path.home()
    return [home / ".config" / "claude", home / ".claude"]


def codex_root() -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    env = os.environ.get(CODEX_ENV, "").strip()
    return Path(env).expanduser() if env else Path.home() / ".codex"


@dataclass(frozen=True, slots=True)
class LogFile:
    tool: str
    path: str
    name: str  # Claude Code: '/'-separated under `projects/` (root-numbered); Codex: the path
    ident: Ident


@dataclass(slots=True)
class ToolSnapshot:
    """The log files found under every root, each with its identity."""

    files: dict[str, LogFile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # folders that could not be listed
    taken_ns: int = 0

    @property
    def fingerprint(self) -> str:
        parts = [f"{k}={f.ident}" for k, f in sorted(self.files.items())]
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:32]

    def found(self, tool: str) -> bool:
        return any(f.tool == tool for f in self.files.values())


def _walk(
    top: str, rel: str, real: str | None, problems: list[str], seen: set[tuple[int, int]]
) -> Iterator[tuple[str, str, str]]:
    """Every file under `top`: its path, its path under the walk's start ('/'-separated) and
    its real path, following folder links once each (a link loop ends there). A file or
    folder that is no link is its folder's real path plus its name: `realpath` runs for
    links only (`real`: `top`'s, None when not known)."""
    try:
        st = os.stat(top)
    except OSError:
        return
    if (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    try:
        entries = list(os.scandir(top))
    except OSError as exc:
        problems.append(f"could not list {top}: {exc.strerror or exc}")
        return
    if real is None:
        real = os.path.realpath(top)
    for entry in sorted(entries, key=lambda e: e.name):
        try:
            is_dir = entry.is_dir()
            is_link = entry.is_symlink()
        except OSError:
            continue
        name = entry.name
        under = f"{rel}/{name}" if rel else name
        if is_dir:
            inner = None if is_link else os.path.join(real, name)
            yield from _walk(entry.path, under, inner, problems, seen)
        else:
            key = os.path.realpath(entry.path) if is_link else os.path.join(real, name)
            yield entry.path, under, key


def _ident(path: str) -> Ident | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def take_snapshot(claude: list[Path] | None = None, codex: Path | None = None) -> ToolSnapshot:
    """The files under the roots (the environment's when not given)."""
    snap = ToolSnapshot(taken_ns=time.time_ns())
    seen: set[tuple[int, int]] = set()
    for index, root in enumerate(claude if claude is not None else claude_roots()):
        for path, under, key in _walk(str(root / "projects"), "", None, snap.problems, seen):
            if _is_log(under.rsplit("/", 1)[-1]):
                _add(snap, CLAUDE_CODE, path, key, f"{index}/{under}")
    root = codex if codex is not None else codex_root()
    for folder, pattern in (("sessions", "rollout-"), ("archived_sessions", "")):
        for path, under, key in _walk(str(root / folder), "", None, snap.problems, seen):
            name = under.rsplit("/", 1)[-1]
            if _is_log(name) and name.startswith(pattern):
                _add(snap, CODEX, path, key, path)
    return snap


def _is_log(name: str) -> bool:
    """`*.jsonl` (`.jsonl` alone is a hidden file with no suffix)."""
    return len(name) > len(".jsonl") and name.endswith(".jsonl")


def _add(snap: ToolSnapshot, tool: str, path: str, key: str, name: str) -> None:
    """`key`: the file's real path (one file reached through two roots is read once)."""
    ident = _ident(path)
    if ident is None:
        return
    snap.files.setdefault(key, LogFile(tool, path, name, ident))


@dataclass(slots=True)
class _Kept:
    """What one file said up to `offset`."""

    tool: str
    name: str
    ident: Ident
    offset: int
    head: str
    bad_lines: int = 0
    claude: ClaudeFile | None = None
    codex: CodexState | None = None
    usages: list[CodexUsage] = field(default_factory=list)
    calls: list[Call] | None = None  # Codex: this file's calls, made once per change
    # The records as the state file holds them (JSON text), until they are needed: a refresh
    # decodes only the files that changed or have records in the days it reads.
    raw: str | None = None
    records: int = 0
    last_ms: int = 0  # the latest record's time
    first: ClaudeRequest | None = None  # Claude Code: the first request that names a folder
    assumed: int = 0  # Codex: requests priced as FALLBACK_MODEL
    # Its row in the state file, as JSON text, until the file is read again; and its records'
    # JSON text (quoted) for the first `written` of them: saving the state after an append
    # encodes only the new records of the files that changed.
    text: tuple[str, ...] | None = None
    quoted: list[str] | None = None
    written: int = 0

    def decoded(self) -> bool:
        """Its records decoded from `raw` (False: `raw` is damaged; read the file again)."""
        if self.raw is None:
            return True
        try:
            rows = json.loads(self.raw)
            if self.claude is not None:
                self.claude.requests = [ClaudeRequest(*r) for r in rows]
            else:
                self.usages = [CodexUsage(*u) for u in rows]
        except (ValueError, TypeError):
            return False
        self.quoted, self.written = [json.dumps(self.raw)[:-2]], len(rows)
        self.raw = None
        return True

    def quoted_rows(self) -> tuple[str, ...]:
        """The records' JSON text as a JSON string (the state file's `rows`) in pieces, less
        its closing `]"`, encoding only the records not encoded yet: a string's escapes are
        per character, so the text of more records is one more piece."""
        if self.raw is not None:
            return (json.dumps(self.raw)[:-2],)
        records: list[Any] = (
            [_request_row(r) for r in self.claude.requests[self.written :]]
            if self.claude is not None
            else [_usage_row(u) for u in self.usages[self.written :]]
        )
        if self.quoted is None:
            self.quoted = [json.dumps(json.dumps(records))[:-2]]
        elif records:
            more = json.dumps(records)[1:-1]  # "c" of "[c]"
            self.quoted.append(json.dumps(f", {more}" if self.written else more)[1:-1])
            if len(self.quoted) > PIECES:
                self.quoted[:] = ["".join(self.quoted)]
        self.written += len(records)
        return tuple(self.quoted)

    def took(self, requests: list[ClaudeRequest], usages: list[CodexUsage]) -> None:
        """Note what new records say of the whole file."""
        for r in requests:
            self.last_ms = max(self.last_ms, r.timestamp_ms)
            if self.first is None and r.cwd and r.agent_id is None:
                self.first = r
        for u in usages:
            self.last_ms = max(self.last_ms, u.timestamp_ms)
            self.assumed += u.assumed_model
        self.records += len(requests) + len(usages)


@dataclass(slots=True)
class ToolRead:
    calls: list[Call] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # session → title
    diagnostics: list[str] = field(default_factory=list)
    found: set[str] = field(default_factory=set)  # tools whose root holds a file with usage


@dataclass(slots=True)
class _Window:
    """The calls of [first_ms, end_ms) of one read, and what each file was then."""

    first_ms: int
    end_ms: int
    calls: list[Call]
    keys: set[str]  # its calls' keys
    # per file: its entry (a file read again from the start gets a new one), its records,
    # whether its session's folder was known, and Codex's session and folder
    files: dict[str, tuple[_Kept, int, bool, tuple[str | None, str | None]]]

    @staticmethod
    def of(kept: dict[str, _Kept], first_ms: int, end_ms: int, calls: list[Call]) -> _Window:
        files = {
            key: (e, e.records, e.first is not None, _codex_where(e)) for key, e in kept.items()
        }
        return _Window(first_ms, end_ms, calls, {c.key for c in calls}, files)

    def holds(self, kept: dict[str, _Kept], first_ms: int, end_ms: int) -> bool:
        """Whether the calls are still those of `kept`: the same files, each the one read
        before or grown by records at or after `end_ms` that are no copies of a request
        counted here, of a Claude Code log whose first request named its folder already
        (its session's folder stays) or of a rollout whose session and folder stay."""
        if (first_ms, end_ms) != (self.first_ms, self.end_ms) or len(kept) != len(self.files):
            return False
        for key, entry in kept.items():
            was = self.files.get(key)
            if was is None or was[0] is not entry:
                return False
            if entry.records == was[1]:
                continue
            new = entry.records - was[1]
            if entry.claude is not None:
                if not was[2] or new > len(entry.claude.requests):
                    return False
                for r in entry.claude.requests[-new:]:
                    key_of = r.key or f"{entry.claude.path}@{r.offset}"
                    if r.timestamp_ms < end_ms or f"{CLAUDE_CODE}:{key_of}" in self.keys:
                        return False
            else:
                if _codex_where(entry) != was[3] or new > len(entry.usages):
                    return False
                if any(u.timestamp_ms < end_ms for u in entry.usages[-new:]):
                    return False
            self.files[key] = (entry, entry.records, was[2], was[3])
        return True


def _codex_where(entry: _Kept) -> tuple[str | None, str | None]:
    state = entry.codex
    return (state.session, state.cwd) if state is not None else (None, None)


class ToolLogs:
    """Every Claude Code and Codex log of this machine, kept between reads."""

    def __init__(self, store: ToolStore | None = None) -> None:
        self.store = store
        self._kept: dict[str, _Kept] | None = None
        # Claude Code's calls per period read: after an append, only the new requests are
        # weighed (equal to `claude_calls` of every file; see `ClaudeCallsMemo`).
        self.claude_memo = ClaudeCallsMemo()
        self._window: _Window | None = None  # the last `calls_between`
        self.window_hits = 0  # its answers kept (tests read it)
        self.changed = False

    def snapshot(self) -> ToolSnapshot:
        return take_snapshot()

    def read(
        self,
        snap: ToolSnapshot,
        since_ms: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ToolRead:
        """The calls at or after `since_ms` (all: None) of the files in `snap`. `progress`:
        (bytes read, bytes to read), after each file, when there is much to read (a first
        read of a large history: the editor's `$/progress`, the CLI's bar)."""
        problems = list(snap.problems)
        kept = self._update(snap, since_ms, problems, progress)
        return self._result(kept, problems, since_ms)

    def calls_between(self, snap: ToolSnapshot, first_ms: int, end_ms: int) -> list[Call]:
        """`read(snap, first_ms)`'s calls before `end_ms` (the days before the month a status
        shows). Kept between reads: after appends whose new records all lie at or after
        `end_ms`, are no copies of a request counted before it and cannot move a session's
        folder, the same calls (see `_Window.holds`); else read again."""
        problems = list(snap.problems)
        kept = self._update(snap, first_ms, problems, None)
        window = self._window
        if window is not None and window.holds(kept, first_ms, end_ms):
            self.window_hits += 1
            return window.calls
        calls = [c for c in self._result(kept, problems, first_ms).calls if c.timestamp_ms < end_ms]
        self._window = _Window.of(kept, first_ms, end_ms, calls)
        return calls

    def _update(
        self,
        snap: ToolSnapshot,
        since_ms: int | None,
        problems: list[str],
        progress: Callable[[int, int], None] | None,
    ) -> dict[str, _Kept]:
        """The kept state, each file of `snap` read to its end (its new bytes only)."""
        kept = self._load()
        gone = set(kept) - set(snap.files)
        for key in gone:
            self._forget(kept.pop(key))
        changed = [
            (key, file, kept.get(key))
            for key, file in snap.files.items()
            if (old := kept.get(key)) is None or old.ident != file.ident
        ]
        total = sum(max(0, f.ident[0] - (o.offset if o else 0)) for _, f, o in changed)
        if total < PROGRESS_BYTES:
            progress = None
        done = 0
        for key, file, old in changed:
            new = self._read_file(file, old, problems)
            if new is not None:
                kept[key] = new
                self._forget(new)
            done += max(0, file.ident[0] - (old.offset if old else 0))
            if progress is not None:
                progress(min(done, total), total)
        if gone:
            self.changed = True
        low = None if since_ms is None else since_ms - DAY_MS
        for key, entry in list(kept.items()):
            if self._needed(entry, low) and not entry.decoded():  # damaged: read it again
                found = snap.files.get(key)
                again = self._read_file(found, None, problems) if found is not None else None
                self._forget(kept.pop(key))
                if again is not None:
                    kept[key] = again
        return kept

    def _forget(self, entry: _Kept) -> None:
        self.changed = True

    def _read_file(self, file: LogFile, old: _Kept | None, problems: list[str]) -> _Kept | None:
        """The file's entry after reading its new bytes; None: unreadable (the old entry, if
        any, stays)."""
        try:
            with open(file.path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
                if old is None and b"\x00" in head[:_SNIFF]:
                    problems.append(f"{file.path} is not a text log (binary bytes)")
                    return None
                entry = old if old is not None and self._continues(old, file, head) else None
                if entry is not None and not entry.decoded():
                    entry = None
                if entry is None:
                    entry = _Kept(file.tool, file.name, file.ident, 0, "")
                    if file.tool == CLAUDE_CODE:
                        entry.claude = ClaudeFile(file.name)
                    else:
                        entry.codex = CodexState()
                fh.seek(entry.offset)
                self._decode(fh, entry)
        except OSError as exc:
            problems.append(f"could not read {file.path}: {exc.strerror or exc}")
            return None
        entry.ident = file.ident
        entry.head = _digest(head[: min(len(head), entry.offset)])
        entry.calls = None
        entry.text = None
        return entry

    @staticmethod
    def _continues(old: _Kept, file: LogFile, head: bytes) -> bool:
        """The file is the one read before, grown: same inode, not shorter, same first bytes."""
        size, _, inode = file.ident
        return (
            inode == old.ident[2]
            and size >= old.offset
            and _digest(head[: min(len(head), old.offset)]) == old.head
        )

    @staticmethod
    def _decode(fh: Any, entry: _Kept) -> None:
        """Decode from the file's position on, a chunk at a time; a torn last line waits."""
        carry = b""
        while True:
            block = fh.read(CHUNK_BYTES)
            if not block:
                return
            data = carry + block if carry else block
            base = entry.offset
            if entry.claude is not None:
                file = entry.claude
                chunk = decode_claude(data, base, want_title=file.summary is None)
                file.requests += chunk.requests
                file.summary = file.summary or chunk.summary
                file.first_prompt = file.first_prompt or chunk.first_prompt
                entry.took(chunk.requests, [])
                end, bad = chunk.end, chunk.bad_lines
            else:
                assert entry.codex is not None
                got = decode_codex(data, entry.codex, base)
                entry.usages += got.usages
                entry.took([], got.usages)
                end, bad = got.end, got.bad_lines
            entry.bad_lines += bad
            entry.offset = base + end
            carry = data[end:]

    def _result(
        self, kept: dict[str, _Kept], problems: list[str], since_ms: int | None
    ) -> ToolRead:
        read = ToolRead(diagnostics=problems)
        low = None if since_ms is None else since_ms - DAY_MS
        files = [self._claude_file(e, low) for e in kept.values() if e.claude is not None]
        made = self.claude_memo.calls(files, since_ms)
        read.calls.extend(made.calls)
        read.titles.update(made.titles)
        read.found = {e.tool for e in kept.values() if e.records}
        assumed = 0
        for entry in kept.values():
            if entry.codex is None or not entry.records:
                continue
            assumed += entry.assumed
            if since_ms is not None and entry.last_ms < since_ms:
                continue  # nothing of it in the period read
            if entry.calls is None:
                entry.calls = codex_calls(entry.name, entry.codex, entry.usages)
            read.calls.extend(
                c for c in entry.calls if since_ms is None or c.timestamp_ms >= since_ms
            )
            if entry.codex.title and entry.calls:
                read.titles[codex_session(entry.name, entry.codex)] = entry.codex.title
        for tool, label in ((CLAUDE_CODE, "Claude Code"), (CODEX, "Codex")):
            bad = [e for e in kept.values() if e.tool == tool and e.bad_lines]
            if bad:
                lines = sum(e.bad_lines for e in bad)
                read.diagnostics.append(
                    f"skipped {lines} {label} log lines that are not JSON or have no usable "
                    f"time (in {len(bad)} files)"
                )
        if assumed:
            read.diagnostics.append(
                f"{assumed} Codex requests name no model; priced as {FALLBACK_MODEL}"
            )
        return read

    @staticmethod
    def _needed(entry: _Kept, low: int | None) -> bool:
        """Whether the records of a file are wanted by a read of the calls since `low`."""
        return low is None or entry.last_ms >= low

    @staticmethod
    def _claude_file(entry: _Kept, low: int | None) -> ClaudeFile:
        """The file as `claude_calls` needs it: whole, or (all its records before the period
        read) only its first request, which says where its session started."""
        file = entry.claude
        assert file is not None
        if entry.raw is None:
            return file
        first = [entry.first] if entry.first is not None else []
        return ClaudeFile(file.path, first, file.summary, file.first_prompt)

    # -- what is kept between runs -------------------------------------------------------

    def _load(self) -> dict[str, _Kept]:
        if self._kept is None:
            raw = self.store.load_tool_logs() if self.store is not None else None
            self._kept = _decode_state(raw)
        return self._kept

    def dump(self) -> bytes:
        """The per-file state as our cache file's bytes."""
        return self.dump_later()()

    def dump_later(self) -> Callable[[], bytes]:
        """`dump`, its rows encoded now (only those of files read since) and the file's bytes
        joined when called: a write behind the answer does that part."""
        texts: list[tuple[str, tuple[str, ...]]] = []
        for key, entry in (self._kept or {}).items():
            text = entry.text
            if text is None:
                # "rows": the records' JSON text, decoded only when a read needs them
                head = json.dumps(_entry_row(entry))[:-1]
                text = entry.text = (f'{head}, "rows": ', *entry.quoted_rows(), ']"}')
            texts.append((key, text))

        def joined() -> bytes:
            files = ",".join(f"{json.dumps(key)}:{''.join(text)}" for key, text in texts)
            head = f'"version": {STATE_VERSION}, "rules": "{RULES}"'
            return f'{{{head}, "files": {{{files}}}}}'.encode()

        return joined

    def save(self) -> None:
        if self.store is not None and self.changed:
            self.store.save_tool_logs(self.dump())
        self.changed = False


def _digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def _request_row(r: ClaudeRequest) -> list[Any]:
    return [
        r.key,
        r.offset,
        r.session,
        r.model,
        r.timestamp_ms,
        r.cwd,
        r.input_tokens,
        r.output_tokens,
        r.cache_read_tokens,
        r.cache_write_5m,
        r.cache_write_1h,
        r.agent_id,
    ]


def _usage_row(u: CodexUsage) -> list[Any]:
    return [
        u.offset,
        u.timestamp_ms,
        u.model,
        u.assumed_model,
        u.input_tokens,
        u.cache_read_tokens,
        u.output_tokens,
        u.reasoning_tokens,
    ]


def _entry_row(e: _Kept) -> dict[str, Any]:
    row: dict[str, Any] = {
        "tool": e.tool,
        "name": e.name,
        "ident": list(e.ident),
        "offset": e.offset,
        "head": e.head,
        "bad": e.bad_lines,
        "records": e.records,
        "last": e.last_ms,
        "assumed": e.assumed,
        "first": _request_row(e.first) if e.first is not None else None,
    }
    if e.claude is not None:
        row["summary"] = e.claude.summary
        row["prompt"] = e.claude.first_prompt
    if e.codex is not None:
        s = e.codex
        row["state"] = [s.session, s.cwd, s.model, list(s.totals) if s.totals else None, s.title]
    return row


def _decode_state(raw: bytes | None) -> dict[str, _Kept]:
    """The kept state; anything unreadable, of another version or damaged is nothing (every
    file is then read again: it costs time, never a figure)."""
    if not raw:
        return {}
    try:
        data = json.loads(raw)
        if data.get("version") != STATE_VERSION or data.get("rules") != RULES:
            return {}
        return {key: _entry_of(row) for key, row in data["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}


def _entry_of(row: dict[str, Any]) -> _Kept:
    size, mtime, inode = (int(v) for v in row["ident"])
    entry = _Kept(
        str(row["tool"]),
        str(row["name"]),
        (size, mtime, inode),
        int(row["offset"]),
        str(row["head"]),
        int(row["bad"]),
        raw=str(row["rows"]),
        records=int(row["records"]),
        last_ms=int(row["last"]),
        first=ClaudeRequest(*row["first"]) if row["first"] else None,
        assumed=int(row["assumed"]),
    )
    if entry.tool == CLAUDE_CODE:
        entry.claude = ClaudeFile(entry.name, [], row["summary"], row["prompt"])
    elif entry.tool == CODEX:
        session, cwd, model, totals, title = row["state"]
        entry.codex = CodexState(session, cwd, model, tuple(totals) if totals else None, title)
    else:
        raise ValueError(entry.tool)
    return entry
