"""Claude Code's and Codex's logs on this machine, read incrementally (docs/other-tools.md).

`LogListing.snapshot` finds the files (cheap: no file is read); `ToolLogs.read` reads each file
once, then only its new bytes: per file it keeps the identity, the offset read to and what the
bytes up to there said. A truncated or rewritten file (smaller, another inode, other first
bytes) is read again from the start. What it keeps goes through a `ToolStore` (our cache
folder's file, `cache.LocalFiles`): this module never touches a file of ours.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any, Final, cast

from codeburn.providers.agents.claude_code import (
    COPIES_SPAN_MS,
    ClaudeFile,
    ClaudeRequest,
    decode_claude,
)
from codeburn.providers.agents.claude_memo import ClaudeCallsMemo
from codeburn.providers.agents.codex import (
    FALLBACK_MODEL,
    CodexState,
    codex_calls,
    codex_session,
    decode_codex,
)
from codeburn.providers.agents.logs import (
    LogFile,
    ToolRead,
    ToolSnapshot,
)
from codeburn.providers.agents.split import (
    Changed,
    Shipped,
    halves,
    new_bytes,
    sent_parts,
    shipped,
    unpacked,
)
from codeburn.providers.agents.state import (
    IDENTITY,
    KeptLog,
    LogChange,
    ToolStore,
    decode_state,
)
from codeburn.providers.agents.synced import SyncedState
from codeburn.providers.agents.taking import Taking
from codeburn.providers.agents.watch import LogListing
from codeburn.providers.agents.weighing import claude_calls
from codeburn.providers.agents.window import CallsWindow
from codeburn.providers.calls import CLAUDE_CODE, CODEX, Call, CallChain
from codeburn.providers.plan import LONG_LIVED, Plan
from codeburn.providers.runtime import AsideParts

CHUNK_BYTES: Final = 16 * 1024 * 1024  # new bytes read at a time (a line may span chunks)
HEAD_BYTES: Final = 4096  # a file whose first bytes changed was rewritten: read it again
_SNIFF: Final = 4096
PROGRESS_BYTES: Final = 32 * 1024 * 1024  # less than this to read: no progress shown


class ToolLogs:
    """Every Claude Code and Codex log of this machine, kept between reads."""

    def __init__(
        self,
        store: ToolStore | None = None,
        plan: Plan = LONG_LIVED,
        *,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self.store = store
        self.plan = plan
        self.chunk_bytes = chunk_bytes  # (tests read in small chunks)
        self.split_reads = 0  # reads that took a second process (tests read it)
        self._kept: dict[str, KeptLog] | None = None
        # Claude Code's calls per period read: after an append, only the new requests are
        # weighed (equal to `claude_calls` of every file; see `ClaudeCallsMemo`).
        self.claude_memo = ClaudeCallsMemo()
        self._window: CallsWindow | None = None  # the last `calls_between`
        self.window_hits = 0  # its answers kept (tests read it)
        self.changed = False
        self._gone: set[str] = set()  # logs gone since the last save
        # The files as this reader sees them between refreshes (told of changes by a watch).
        self.listing = LogListing(plan)
        self._synced = SyncedState()  # what changed since each reader of the state looked

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
        # A command reads once: each Claude Code log's records are saved and weighed as they
        # are taken, then let go of, so that it holds the calls rather than every copy of
        # every request (equal answers, by test).
        taking = None if self.plan.long_lived else Taking(self.store, snap, since_ms)
        kept = self._update(snap, since_ms, problems, progress, taking)
        if taking is not None and not taking.whole(kept):
            taking = None  # (see `Taking.whole`)
            kept = self._update(snap, since_ms, [], None)
        return self._result(kept, problems, since_ms, taking)

    def calls_between(self, snap: ToolSnapshot, first_ms: int, end_ms: int) -> list[Call]:
        """`read(snap, first_ms)`'s calls before `end_ms` (the days before the month a status
        shows). Kept between reads: after appends whose new records all lie at or after
        `end_ms`, are no copies of a request counted before it and cannot move a session's
        folder, the same calls (see `CallsWindow.holds`); else read again."""
        problems = list(snap.problems)
        kept = self._update(snap, first_ms, problems, None)
        touched = self._synced.take_touched("window")
        window = self._window
        if window is not None and window.holds(kept, first_ms, end_ms, touched):
            self.window_hits += 1
            return window.calls
        calls = [c for c in self._result(kept, problems, first_ms).calls if c.timestamp_ms < end_ms]
        self._window = CallsWindow.of(kept, first_ms, end_ms, calls)
        return calls

    def _update(
        self,
        snap: ToolSnapshot,
        since_ms: int | None,
        problems: list[str],
        progress: Callable[[int, int], None] | None,
        taking: Taking | None = None,
    ) -> dict[str, KeptLog]:
        """The kept state, each file of `snap` read to its end (its new bytes only); each log
        handed to `taking` once whole."""
        kept = self._load()
        # The records a read since `since_ms` needs: `claude_calls` weighs copies that far back.
        low = None if since_ms is None else since_ms - COPIES_SPAN_MS
        keys = self._synced.keys_since(snap, low) if taking is None else None
        if keys is not None:
            return self._update_keys(kept, snap, keys, problems, low, progress)
        gone = set(kept) - set(snap.files)
        for key in gone:
            kept.pop(key)
            self._gone.add(key)
        changed = [
            (key, file, kept.get(key))
            for key, file in snap.files.items()
            if (old := kept.get(key)) is None or old.ident != file.ident
        ]
        self._read_into(kept, changed, problems, low, progress, taking)
        if gone:
            self.changed = True
        taken = taking.taken if taking is not None else set()
        wanted = [key for key, e in kept.items() if not e.holds(low) and key not in taken]
        for key in self._take_rows(kept, wanted, low):  # damaged: read it again
            found = snap.files.get(key)
            again = self._read_file(key, found, None, problems, low) if found else None
            kept.pop(key)
            self._gone.add(key)
            self.changed = True
            if again is not None:
                kept[key] = again
        # In the snapshot's order (the calls' order follows it), whatever order they were
        # kept or read in.
        kept = self._kept = {key: kept[key] for key in snap.files if key in kept}
        if taking is not None:
            for key, entry in kept.items():
                if key not in taken:
                    taking.take(key, entry)
            taking.save()
            self._synced.forget()  # (its logs' records were taken, not kept)
        else:
            self._synced.brought_to(kept, snap, low)
        return kept

    def _read_into(
        self,
        kept: dict[str, KeptLog],
        changed: list[Changed],
        problems: list[str],
        low: int | None,
        progress: Callable[[int, int], None] | None,
        taking: Taking | None = None,
    ) -> None:
        """Read the `changed` files' new bytes into `kept` (an unreadable file's old entry, if
        any, stays)."""
        total = sum(new_bytes(item) for item in changed)
        if total < PROGRESS_BYTES:
            progress = None
        done = 0
        for read, key, new in self._read_changed(changed, total, problems, low, taking):
            if new is not None:
                kept[key] = new
                self.changed = True
                if taking is not None:
                    taking.take(key, new)
            done += read
            if progress is not None:
                progress(min(done, total), total)

    def _update_keys(
        self,
        kept: dict[str, KeptLog],
        snap: ToolSnapshot,
        keys: frozenset[str],
        problems: list[str],
        low: int | None,
        progress: Callable[[int, int], None] | None,
    ) -> dict[str, KeptLog]:
        """`_update` where only the files at `keys` may differ from the state's, the snapshot
        listing the same files in the same order as the one the state was brought to (see
        `SyncedState`)."""
        files = snap.files
        changed: list[Changed] = []
        for key in self._synced.in_order(keys):
            old, file = kept.get(key), files[key]
            if old is None or old.ident != file.ident:
                changed.append((key, file, old))
        before = len(kept)
        self._read_into(kept, changed, problems, low, progress)
        if len(kept) != before:  # a log read for the first time: in the snapshot's order
            kept = self._kept = {key: kept[key] for key in files if key in kept}
            self._synced.brought_to(kept, snap, self._synced.held_low)
        else:
            self._synced.brought_keys(kept, snap, keys, [key for key, _, _ in changed])
        return kept

    def _read_changed(
        self,
        changed: list[Changed],
        total: int,
        problems: list[str],
        low: int | None,
        taking: Taking | None,
    ) -> Iterator[tuple[int, str, KeptLog | None]]:
        """(new bytes read, key, its entry or None) of each changed file. With the plan's
        `split_bytes` or more to read where it may fork, a second process reads half of the
        files (the second core: decoding holds the GIL) and sends their entries back (equal
        to one process's read, by test)."""
        aside = None
        if total >= self.plan.split_bytes and len(changed) > 1 and self.plan.may_fork():
            theirs, changed = halves(changed)
            saves = taking is not None
            aside = AsideParts(
                lambda send: shipped(self._read_file, self.store, theirs, low, send, saves=saves)
            )
            self.split_reads += 1
        for item in changed:
            yield new_bytes(item), item[0], self._read_file(*item, problems, low, taking)
        if aside is None:
            return
        # The second process sends each file's entry as it is read (see `_shipped`), then
        # its problems.
        for done, item in enumerate(theirs):
            try:
                key, entry, parts = cast(Shipped, aside.next())
                if parts is None:  # (a log read whole: its records follow, its change saved)
                    assert taking is not None and entry is not None
                    taking.take_sent(key, entry, sent_parts(aside))
                else:
                    entry = unpacked(entry, parts)
            except Exception:  # (the second process failed: the rest is read here)
                aside.cancel()
                if taking is not None and taking.taken_part:
                    taking.spoiled = True  # (a log half weighed)
                for rest in theirs[done:]:
                    yield new_bytes(rest), rest[0], self._read_file(*rest, problems, low)
                return
            yield new_bytes(item), key, entry
        try:
            problems += cast(list[str], aside.next())
        finally:
            aside.done()

    def _take_rows(self, kept: dict[str, KeptLog], keys: list[str], low: int | None) -> list[str]:
        """Decode the kept records of the logs `keys` a read since `low` needs; returns those
        whose records could not be (damaged, or rewritten by another process since their rows
        were loaded, or records read since that are not kept yet)."""
        if not keys:
            return []
        store, failed = self.store, []
        claude = [k for k in keys if kept[k].claude is not None]
        codex = [k for k in keys if kept[k].claude is None]
        for group, since in ((claude, low), (codex, None)):
            if not group:
                continue
            parts = store.tool_log_parts(group, since) if store is not None else {}
            for key in group:
                entry = kept[key]
                if entry.records != entry.stored_records or not entry.take_rows(
                    parts.get(key), since
                ):
                    failed.append(key)
        return failed

    def _read_file(
        self,
        key: str,
        file: LogFile,
        old: KeptLog | None,
        problems: list[str],
        low: int | None,
        taking: Taking | None = None,
    ) -> KeptLog | None:
        """The file's entry after reading its new bytes; None: unreadable (the old entry, if
        any, stays). A Claude Code log read whole for `taking` is taken as it is read."""
        pieces = None
        try:
            with open(file.path, "rb") as fh:
                head = fh.read(HEAD_BYTES)
                if old is None and b"\x00" in head[:_SNIFF]:
                    problems.append(f"{file.path} is not a text log (binary bytes)")
                    return None
                entry = old if old is not None and self._continues(old, file, head) else None
                if (
                    entry is not None
                    and not (entry.loaded and entry.holds(low))
                    and self._take_rows({key: entry}, [key], low)
                ):
                    entry = None
                if entry is None:
                    entry = KeptLog(file.tool, file.name, file.ident, 0, "")
                    if file.tool == CLAUDE_CODE:
                        entry.claude = ClaudeFile(file.name)
                        pieces = taking.pieces(key, entry) if taking is not None else None
                    else:
                        entry.codex = CodexState()
                fh.seek(entry.offset)
                self._decode(fh, entry, pieces)
        except OSError as exc:
            problems.append(f"could not read {file.path}: {exc.strerror or exc}")
            if pieces is not None:
                taking.spoiled = True  # type: ignore[union-attr]
            return None
        entry.ident = file.ident
        entry.head = _digest(head[: min(len(head), entry.offset)])
        entry.calls = None
        entry.dirty = True
        if pieces is not None:
            taking.pieces_done(key, entry)  # type: ignore[union-attr]
        return entry

    @staticmethod
    def _continues(old: KeptLog, file: LogFile, head: bytes) -> bool:
        """The file is the one read before, grown: same inode, not shorter, same first bytes."""
        size, _, inode = file.ident
        return (
            inode == old.ident[2]
            and size >= old.offset
            and _digest(head[: min(len(head), old.offset)]) == old.head
        )

    def _decode(
        self,
        fh: Any,
        entry: KeptLog,
        pieces: Callable[[list[ClaudeRequest]], None] | None = None,
    ) -> None:
        """Decode from the file's position on, a chunk at a time; a torn last line waits.
        `pieces`: where a Claude Code log's requests go, a chunk's at a time (else: kept)."""
        carry = b""
        while True:
            block = fh.read(self.chunk_bytes)
            if not block:
                return
            data = carry + block if carry else block
            base = entry.offset
            if entry.claude is not None:
                file = entry.claude
                chunk = decode_claude(data, base, want_title=file.summary is None)
                if pieces is not None:
                    pieces(chunk.requests)
                else:
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
        self,
        kept: dict[str, KeptLog],
        problems: list[str],
        since_ms: int | None,
        taking: Taking | None = None,
    ) -> ToolRead:
        read = ToolRead(diagnostics=problems)
        # A command reads once: `claude_calls` whole, or as each log was taken (the memo's
        # bookkeeping is for the next refresh of a long-lived reader; equal answers, by test).
        if taking is not None:
            made = taking.result()
        elif self.plan.long_lived:
            files, places = self._synced.claude_views(kept)
            made = self.claude_memo.calls(files, since_ms, places)
        else:
            files = [e.claude_view() for e in kept.values() if e.claude is not None]
            made = claude_calls(files, since_ms)
        codex: list[Call] = []
        read.titles.update(made.titles)
        counts = self._synced.counts(kept)
        read.found = counts.found
        for key in counts.codex:
            entry = kept[key]
            assert entry.codex is not None
            if not entry.records or (since_ms is not None and entry.last_ms < since_ms):
                continue  # nothing of it in the period read
            if entry.calls is None:
                entry.calls = codex_calls(entry.name, entry.codex, entry.usages)
            codex.extend(c for c in entry.calls if since_ms is None or c.timestamp_ms >= since_ms)
            if entry.codex.title and entry.calls:
                read.titles[codex_session(entry.name, entry.codex)] = entry.codex.title
        read.calls = CallChain(made.calls, codex)
        for tool, label in ((CLAUDE_CODE, "Claude Code"), (CODEX, "Codex")):
            if tool in counts.bad:
                lines, logs = counts.bad[tool]
                read.diagnostics.append(
                    f"skipped {lines} {label} log lines that are not JSON or have no usable "
                    f"time (in {logs} files)"
                )
        if counts.assumed:
            read.diagnostics.append(
                f"{counts.assumed} Codex requests name no model; priced as {FALLBACK_MODEL}"
            )
        return read

    # -- what is kept between runs -------------------------------------------------------

    def _load(self) -> dict[str, KeptLog]:
        if self._kept is None:
            rows = self.store.load_tool_logs(IDENTITY) if self.store is not None else {}
            self._kept = decode_state(rows)
        return self._kept

    def changes(self) -> Iterator[LogChange]:
        """What the store must learn since the last save (the logs read or gone since), each
        log's records' text made as it is taken (only the records added since)."""
        gone, self._gone = sorted(self._gone), set()
        self.changed = False
        return _changes(gone, list((self._kept or {}).items()))

    def unsaved_records(self) -> int:
        """How many records the next save adds to the store (a first read: every one)."""
        return sum(e.unsaved for e in (self._kept or {}).values() if e.dirty)

    def save_later(self, *, lazy: bool = False) -> Callable[[], None]:
        """`save`, written when called (behind the answer). Its changes are made now, unless
        `lazy`: then as they are written, one log's text at a time (for a caller that reads
        nothing more before it, as a command's end)."""
        changes = self.changes()
        if not lazy:
            changes = iter(list(changes))
        store = self.store

        def save() -> None:
            if store is not None:
                store.save_tool_logs(IDENTITY, changes)
            else:
                for _ in changes:  # (nowhere to keep them: taken as kept)
                    pass

        return save

    def save(self) -> None:
        self.save_later()()


def _changes(gone: list[str], kept: list[tuple[str, KeptLog]]) -> Iterator[LogChange]:
    for key in gone:
        yield LogChange(key, None)
    for key, entry in kept:
        change = entry.change(key)
        if change is not None:
            yield change


def _digest(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()
