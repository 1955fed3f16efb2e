"""What the other tools' log reader keeps of each log (`KeptLog`: identity, offset, what the
bytes up to there said), as the rows a `ToolStore` keeps: per log, its row (JSON text) and its
records' parts (JSON arrays, one per save that added records); `LogChange` is one log's change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, Protocol

from codeburn.providers.agents.claude_code import ClaudeFile, ClaudeRequest
from codeburn.providers.agents.codex import CodexState, CodexUsage, Totals
from codeburn.providers.agents.logs import Ident
from codeburn.providers.calls import CLAUDE_CODE, CODEX, Call
from codeburn.providers.rules import RULES

STATE_VERSION: Final = 4  # of the kept state's layout; the decoders' rules are `RULES`
IDENTITY: Final = f"{STATE_VERSION}:{RULES}"  # a state kept under another is nothing
PART_MS: Final = 24 * 60 * 60 * 1000  # a part's records lie within one UTC day


class Part(NamedTuple):
    """Consecutive records of one log, as a store keeps them: how many, the latest one's time
    (a read of later days leaves the part out) and their JSON text (None: left out)."""

    records: int
    last_ms: int
    text: str | None


class ToolStore(Protocol):
    """Where the reader's per-file state is kept between runs (the cache layer): per log, its
    row and its records' parts (`providers.agents.state`), under the state's identity."""

    def load_tool_logs(self, identity: str) -> dict[str, str]: ...
    def tool_log_parts(self, keys: Sequence[str], low: int | None) -> dict[str, list[Part]]: ...
    def save_tool_logs(self, identity: str, changes: Iterable[LogChange]) -> None: ...


class LogChange(NamedTuple):
    """One log's change to the kept state. `meta`: its row (None: the log is gone); `parts`:
    records to add; `base`: the row the change was made from (None: its records are replaced
    by `parts`). A store whose row is no longer `base` forgets the log instead."""

    key: str
    meta: str | None
    parts: tuple[Part, ...] = ()
    base: str | None = None


@dataclass(slots=True)
class KeptLog:
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
    # Whether its records are in memory: the state's logs are decoded only when a read needs
    # them (a refresh decodes the files that changed or have records in the days it reads),
    # and of a Claude Code log only the parts with records at or after `loaded_low` (None:
    # every record; a session's start is its row's `first`).
    loaded: bool = True
    loaded_low: int | None = None
    records: int = 0
    last_ms: int = 0  # the latest record's time
    first: ClaudeRequest | None = None  # Claude Code: the first request that names a folder
    assumed: int = 0  # Codex: requests priced as FALLBACK_MODEL
    # What the store holds of it: its row (None: nothing, or rows to be replaced) and how
    # many of its records; saving after an append adds only the records after those.
    stored: str | None = None
    stored_records: int = 0
    dirty: bool = True  # read since it was loaded or saved

    def holds(self, low: int | None) -> bool:
        """Whether the records a read of the calls since `low` needs are in memory."""
        if not self.loaded:
            return low is not None and self.last_ms < low
        return self.loaded_low is None or (low is not None and self.loaded_low <= low)

    def take_rows(self, parts: list[Part] | None, low: int | None) -> bool:
        """Its records from the store's parts (those left out lie before `low`); False
        (nothing taken) when they are not the records its row counts (damaged, or written by
        another process since)."""
        texts: list[str] = []
        held = taken = 0
        for part in parts or ():
            held += part.records
            if part.text is not None:
                texts.append(part.text)
                taken += part.records
            elif self.claude is None or low is None or part.last_ms >= low:
                return False  # (a store that left out a part this read needs)
        if held != self.stored_records:
            return False
        try:
            self.set_texts(texts)
        except (ValueError, TypeError):
            return False
        if len(self.claude.requests if self.claude is not None else self.usages) != taken:
            return False  # (a part whose text holds another count of records)
        self.loaded = True
        self.loaded_low = low if taken < held else None
        return True

    @property
    def unsaved(self) -> int:
        """How many of its records the store does not hold (all, when it holds no row)."""
        return self.records - (self.stored_records if self.stored is not None else 0)

    def change(self, key: str) -> LogChange | None:
        """What the store must learn of it (None: nothing); the store is then taken to hold it."""
        if not self.dirty:
            return None
        self.dirty = False
        meta = json.dumps(entry_row(self))
        if meta == self.stored and self.records == self.stored_records:
            return None
        parts = self._parts(self.unsaved)
        change = LogChange(key, meta, parts, self.stored)
        self.stored, self.stored_records = meta, self.records
        return change

    def shipped_change(self, key: str, parts: tuple[Part, ...]) -> LogChange:
        """`change` of a log read whole, whose records are already `parts` (sent back by a
        second process, or made as it was read), without making them again."""
        meta = json.dumps(entry_row(self))
        self.dirty = False
        self.stored, self.stored_records = meta, self.records
        return LogChange(key, meta, parts, None)

    def _parts(self, last: int) -> tuple[Part, ...]:
        """Its `last` records (in file order) as parts."""
        records: list[Any] = self.claude.requests if self.claude is not None else self.usages
        return parts_of(records[len(records) - last :] if last else [])

    def held_parts(self) -> tuple[Part, ...]:
        """Every record in memory, as parts (what a second process sends back)."""
        held = self.claude.requests if self.claude is not None else self.usages
        return self._parts(len(held))

    def set_texts(self, texts: Iterable[str]) -> None:
        """Its records made of the JSON texts of the store's rows, one text decoded at a time
        (one copy of each session, model and folder)."""
        if self.claude is None:
            self.usages = [CodexUsage(*u) for text in texts for u in json.loads(text)]
            return
        names: dict[str, str] = {}
        requests: list[ClaudeRequest] = []
        self.claude.requests = requests
        for text in texts:
            requests += [
                ClaudeRequest(
                    r[0],
                    r[1],
                    names.setdefault(r[2], r[2]),
                    names.setdefault(r[3], r[3]),
                    r[4],
                    names.setdefault(r[5], r[5]),
                    *r[6:],
                )
                for r in json.loads(text)
            ]

    def claude_view(self) -> ClaudeFile:
        """Its Claude Code file as `claude_calls` needs it: whole, or without the records that
        lie before the days read but its first request, which says where its session started."""
        file, first = self.claude, self.first
        assert file is not None
        if first is None or (self.loaded and self.loaded_low is None):
            return file
        requests = file.requests if self.loaded else []
        if requests and requests[0].offset <= first.offset:
            return file
        return ClaudeFile(file.path, [first, *requests], file.summary, file.first_prompt)

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


def one_part_day(last_ms: Iterable[int]) -> bool:
    """Whether parts whose latest records are at `last_ms` all hold one UTC day's records (a
    part holds one day's), so that they may be joined."""
    return len({ms // PART_MS for ms in last_ms}) == 1


def joined_parts(parts: Sequence[Part]) -> Part | None:
    """Consecutive parts of one log as one part, the same records in the same order; None
    when their records do not all lie in one UTC day (`one_part_day`)."""
    if not one_part_day(p.last_ms for p in parts):
        return None
    texts = [p.text[1:-1] for p in parts if p.text and p.text != "[]"]
    return Part(
        sum(p.records for p in parts), max(p.last_ms for p in parts), f"[{','.join(texts)}]"
    )


def parts_of(records: list[ClaudeRequest] | list[CodexUsage]) -> tuple[Part, ...]:
    """Consecutive records (in file order) as parts, a new one at each UTC day of their times
    (one day's rows made at a time: a large log's records are many)."""
    row: Callable[[Any], list[Any]] = request_row
    if records and isinstance(records[0], CodexUsage):
        row = usage_row
    parts: list[Part] = []
    start = 0
    for i in range(1, len(records) + 1):
        if (
            i == len(records)
            or records[i].timestamp_ms // PART_MS != records[i - 1].timestamp_ms // PART_MS
        ):
            rows = [row(r) for r in records[start:i]]
            latest = max(r.timestamp_ms for r in records[start:i])
            parts.append(Part(len(rows), latest, json.dumps(rows)))
            start = i
    return tuple(parts)


def request_row(r: ClaudeRequest) -> list[Any]:
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


def usage_row(u: CodexUsage) -> list[Any]:
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


def entry_row(e: KeptLog) -> dict[str, Any]:
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
        "first": request_row(e.first) if e.first is not None else None,
    }
    if e.claude is not None:
        row["summary"] = e.claude.summary
        row["prompt"] = e.claude.first_prompt
    if e.codex is not None:
        s = e.codex
        row["state"] = [s.session, s.cwd, s.model, list(s.totals) if s.totals else None, s.title]
    return row


def decode_state(rows: dict[str, str]) -> dict[str, KeptLog]:
    """The kept logs of the store's rows, their records not decoded yet; a damaged row is
    nothing (its file is read again: time, never a figure)."""
    kept: dict[str, KeptLog] = {}
    for key, meta in rows.items():
        try:
            entry = _entry_of(json.loads(meta))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        entry.stored, entry.stored_records, entry.dirty = meta, entry.records, False
        kept[key] = entry
    return kept


def _entry_of(row: dict[str, Any]) -> KeptLog:
    size, mtime, inode = (int(v) for v in row["ident"])
    entry = KeptLog(
        str(row["tool"]),
        str(row["name"]),
        (size, mtime, inode),
        int(row["offset"]),
        str(row["head"]),
        int(row["bad"]),
        loaded=False,
        records=int(row["records"]),
        last_ms=int(row["last"]),
        first=ClaudeRequest(*row["first"]) if row["first"] else None,
        assumed=int(row["assumed"]),
    )
    if entry.tool == CLAUDE_CODE:
        entry.claude = ClaudeFile(entry.name, [], row["summary"], row["prompt"])
    elif entry.tool == CODEX:
        session, cwd, model, totals, title = row["state"]
        entry.codex = CodexState(session, cwd, model, Totals(*totals) if totals else None, title)
    else:
        raise ValueError(entry.tool)
    return entry
