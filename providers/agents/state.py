"""What the other tools' log reader keeps of each log (`KeptLog`: identity, offset, what the
bytes up to there said) and that state's JSON form in our cache file (`tool-logs.json`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers.agents.claude_code import ClaudeFile, ClaudeRequest
from codeburn.providers.agents.codex import CodexState, CodexUsage, Totals
from codeburn.providers.agents.logs import Ident
from codeburn.providers.calls import CLAUDE_CODE, CODEX, Call
from codeburn.providers.rules import RULES

STATE_VERSION: Final = 3  # of the kept state's layout; the decoders' rules are `RULES`
PIECES: Final = 64  # a log's records' text kept in at most this many pieces (joined beyond)


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
            [request_row(r) for r in self.claude.requests[self.written :]]
            if self.claude is not None
            else [usage_row(u) for u in self.usages[self.written :]]
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


def decode_state(raw: bytes | None) -> dict[str, KeptLog]:
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


def _entry_of(row: dict[str, Any]) -> KeptLog:
    size, mtime, inode = (int(v) for v in row["ident"])
    entry = KeptLog(
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
        entry.codex = CodexState(session, cwd, model, Totals(*totals) if totals else None, title)
    else:
        raise ValueError(entry.tool)
    return entry
