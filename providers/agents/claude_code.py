"""Claude Code's session logs → its API requests (the rules: docs/other-tools.md).

`decode_claude` turns the bytes of one `.jsonl` file into named records; `claude_calls` decides,
over every file's records, which copy of a request counts and whose session it is. Both are
pure: what was read before, and where files lie on disk, is the reader's business.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers.agents.lines import MarkedLines, complete_end, count, parse_object
from codeburn.providers.calls import CLAUDE_CODE, Call
from codeburn.providers.ide import path_project
from codeburn.providers.localtime import parse_iso_ms
from codeburn.providers.pricing import claude_cost

SYNTHETIC: Final = "<synthetic>"  # Claude Code's own placeholder messages: no request, no cost
TITLE_CHARS: Final = 80
UNKNOWN_PROJECT: Final = "claude-code"  # a request whose lines name no folder
COPIES_SPAN_MS: Final = 24 * 60 * 60 * 1000  # copies of one request lie well within a day
_RANK_BITS: Final = 32  # a copy's rank: its file's index, then its place in the file
_TAGS: Final = re.compile(r"<[^>]*>")
_SPACES: Final = re.compile(r"\s+")
# Lines that can matter: a request's usage, a session's summary, its first prompt. Every other
# line (tool output, file snapshots: most of the bytes) is never parsed.
_USAGE: Final = b'"usage"'
_SUMMARY: Final = b'"summary"'
_USER: Final = b'"user"'


@dataclass(slots=True)
class ClaudeRequest:
    """One assistant line with usage: one copy of one API request."""

    key: str | None  # message.id + requestId; None: a line without requestId, its own call
    offset: int  # the line's byte offset in its file
    session: str
    model: str
    timestamp_ms: int
    cwd: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_5m: int
    cache_write_1h: int
    agent_id: str | None = None  # a `progress` copy: the sub-agent whose own file has it

    @property
    def cache_write_tokens(self) -> int:
        return self.cache_write_5m + self.cache_write_1h


@dataclass(slots=True)
class ClaudeChunk:
    """What the whole lines of one chunk of a file hold."""

    requests: list[ClaudeRequest] = field(default_factory=list)
    summary: str | None = None
    first_prompt: str | None = None
    bad_lines: int = 0  # lines that are not a JSON object, or a request with no usable time
    end: int = 0  # bytes of the chunk that were whole lines (a torn tail waits)


def decode_claude(data: bytes, base: int = 0, *, want_title: bool = True) -> ClaudeChunk:
    """The records of `data`, the bytes of one file from offset `base`. `want_title=False`
    once the file's summary is known (its first prompt is then never needed)."""
    chunk = ClaudeChunk(end=complete_end(data))
    markers = (_USAGE, _SUMMARY, _USER) if want_title else (_USAGE,)
    lines = MarkedLines(data, chunk.end, base, markers)
    names: dict[str, str] = {}  # one copy of each session, folder and model name
    for offset, line in lines:
        obj = parse_object(line)
        if obj is None:
            chunk.bad_lines += 1
            continue
        kind = obj.get("type")
        if kind in {"assistant", "progress"}:
            request = _request_of(obj, offset, names)
            if isinstance(request, ClaudeRequest):
                chunk.requests.append(request)
            elif request is False:
                chunk.bad_lines += 1
        elif kind == "summary" and want_title:
            text = obj.get("summary")
            if isinstance(text, str) and text.strip() and chunk.summary is None:
                chunk.summary = shorten(text)
        elif kind == "user" and chunk.first_prompt is None and want_title:
            chunk.first_prompt = _prompt_of(obj)
            if chunk.first_prompt is not None:
                lines.drop(_USER)  # (only the first prompt is wanted)
    return chunk


def _request_of(
    obj: dict[str, Any], offset: int, names: dict[str, str]
) -> ClaudeRequest | bool | None:
    """The request of an assistant line (or of a sub-agent's message a `progress` line copies);
    None when the line is not one; False when it is one that cannot be dated."""
    line, agent_id = obj, None
    if obj.get("type") == "progress":
        data = obj.get("data")
        if not isinstance(data, dict) or data.get("type") != "agent_progress":
            return None
        inner = data.get("message")
        if not isinstance(inner, dict) or inner.get("type") != "assistant":
            return None
        agent = data.get("agentId")
        line, agent_id = inner, agent if isinstance(agent, str) else ""
    message = line.get("message")
    if not isinstance(message, dict):
        return None
    usage = message.get("usage")
    model = message.get("model")
    if not isinstance(usage, dict) or model == SYNTHETIC:
        return None
    stamp = line.get("timestamp", obj.get("timestamp"))
    ms = parse_iso_ms(stamp) if isinstance(stamp, str) else None
    if ms is None:
        return False
    message_id, request_id = message.get("id"), line.get("requestId")
    key = (
        f"{message_id}:{request_id}"
        if isinstance(message_id, str) and isinstance(request_id, str) and request_id
        else None
    )
    write_5m, write_1h = _cache_writes(usage)
    session = line.get("sessionId", obj.get("sessionId"))
    cwd = line.get("cwd", obj.get("cwd"))
    session = session if isinstance(session, str) else ""
    model = model if isinstance(model, str) else ""
    cwd = cwd if isinstance(cwd, str) else ""
    return ClaudeRequest(
        key,
        offset,
        names.setdefault(session, session),
        names.setdefault(model, model),
        ms,
        names.setdefault(cwd, cwd),
        count(usage.get("input_tokens")),
        count(usage.get("output_tokens")),
        count(usage.get("cache_read_input_tokens")),
        write_5m,
        write_1h,
        agent_id,
    )


def _cache_writes(usage: dict[str, Any]) -> tuple[int, int]:
    """(5-minute, 1-hour) cache-write tokens: `cache_creation_input_tokens` is the total; its
    `cache_creation` parts, when the line has them, say how much of it lives an hour."""
    total = count(usage.get("cache_creation_input_tokens"))
    parts = usage.get("cache_creation")
    if not isinstance(parts, dict):
        return total, 0
    one_hour = count(parts.get("ephemeral_1h_input_tokens"))
    if not total:  # only the parts written
        total = count(parts.get("ephemeral_5m_input_tokens")) + one_hour
    one_hour = min(one_hour, total)
    return total - one_hour, one_hour


def _prompt_of(obj: dict[str, Any]) -> str | None:
    """A person's prompt on a user line (not a tool result, not Claude Code's own meta line)."""
    if obj.get("isMeta") or obj.get("isSidechain"):
        return None
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # blocks: the first text one, unless it answers a tool call
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = texts[0] if texts and len(texts) == len(content) else None
    if not isinstance(content, str):
        return None
    text = _SPACES.sub(" ", _TAGS.sub(" ", content)).strip()
    return shorten(text) if text else None


def shorten(text: str) -> str:
    """A title of at most TITLE_CHARS characters, on one line."""
    text = _SPACES.sub(" ", text).strip()
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass(slots=True)
class ClaudeFile:
    """One file's records and where it lies (`path`: '/'-separated, under `projects/`)."""

    path: str
    requests: list[ClaudeRequest] = field(default_factory=list)
    summary: str | None = None
    first_prompt: str | None = None


def agent_id_of(path: str) -> str | None:
    """`…/agent-<id>.jsonl` (beside a session or in its `subagents/` folder) → `<id>`."""
    name = path.rsplit("/", 1)[-1]
    if name.startswith("agent-") and name.endswith(".jsonl"):
        return name[len("agent-") : -len(".jsonl")]
    return None


def parent_session_of(path: str) -> str | None:
    """`<session>/subagents/<file>.jsonl` → `<session>`: a sub-agent's requests are its
    parent's."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[-2] == "subagents":
        return parts[-3]
    return None


@dataclass(slots=True)
class ClaudeCalls:
    calls: list[Call]
    titles: dict[str, str]  # session → its title


def note_title(file: ClaudeFile, titles: dict[str, str], prompts: dict[str, str]) -> None:
    """A session's own file (not a sub-agent's) names it: its `summary` line, else its first
    prompt (the caller falls back to `prompts`); the first file to name a session wins."""
    if parent_session_of(file.path) is not None or agent_id_of(file.path) is not None:
        return
    if not file.requests:
        return
    session = file.requests[0].session or file.path
    if file.summary and session not in titles:
        titles[session] = file.summary
    if file.first_prompt and session not in prompts:
        prompts[session] = file.first_prompt


def claude_calls(files: Iterable[ClaudeFile], since_ms: int | None = None) -> ClaudeCalls:
    """One call per API request over every file: of a request's copies, the one with the
    largest output; a `progress` copy only when its sub-agent's own file is absent.

    `since_ms`: only the calls at or after it are made (a refresh wants the days not sealed
    yet); the copies of one request lie seconds apart, so those of the day before still
    compete, and a session's folder is still where it started."""
    files = list(files)
    weighing = ClaudeWeighing([f.path for f in files], since_ms)
    for index, file in enumerate(files):
        weighing.add(index, file)
    return weighing.result()


# A weighed request's numbers, `_WIDTH` per slot of `ClaudeWeighing.numbers`: its chosen copy's
# time and tokens, that copy's rank, and the rank of its first copy (the calls' order).
_TIME, _INPUT, _OUTPUT, _READ, _WRITE_5M, _WRITE_1H, _CHOSEN_AT, _FIRST_AT = range(8)
_WIDTH: Final = 8


class ClaudeWeighing:
    """`claude_calls` with the files given one at a time, in any order: `index` is a file's
    place among `paths`, the order `claude_calls` weighs them in (a copy's rank is its file's
    index, then its place in the file). Of each request only its chosen copy's numbers, model
    and session are held, in columns, and its call is made once every file is weighed: a
    caller that lets go of a file's requests once it is added holds little more than that
    (a command's first read of a large history)."""

    def __init__(self, paths: Iterable[str], since_ms: int | None = None) -> None:
        self.since_ms = since_ms
        self.low = None if since_ms is None else since_ms - COPIES_SPAN_MS
        self.present = {a for p in paths if (a := agent_id_of(p)) is not None}
        # A session's folder is where it started: Claude Code's `cwd` follows the agent's
        # `cd`s, and one session is one project row. A file is written in time order: its
        # first request with a `cwd` is its earliest (session → time, file index, cwd).
        self.started: dict[str, tuple[int, int, str]] = {}
        self.starts: set[int] = set()  # the files whose start is weighed
        self.slots: dict[str, int] = {}  # call key → its slot in the columns below
        self.keys: list[str] = []
        self.models: list[str] = []
        self.sessions: list[str] = []
        self.numbers = array("q")  # `_WIDTH` numbers per slot
        self.heads: list[tuple[int, ClaudeFile]] = []  # what names a session, per file

    def add(self, index: int, file: ClaudeFile, start: int = 0) -> None:
        """Weigh the requests of the file at `index`; `start`: they are its requests from
        that place on (a large file may be given in consecutive pieces, from 0)."""
        present, low = self.present, self.low
        parent = parent_session_of(file.path)
        if index not in self.starts:
            self._note_start(index, file, parent)
        slots, keys, models, sessions = self.slots, self.keys, self.models, self.sessions
        numbers = self.numbers
        base = (index << _RANK_BITS) + start
        for position, request in enumerate(file.requests):
            if low is not None and request.timestamp_ms < low:
                continue
            if request.agent_id is not None and request.agent_id in present:
                continue  # the sub-agent's own file holds it
            at = base + position
            key = f"{CLAUDE_CODE}:{request.key or f'{file.path}@{request.offset}'}"
            slot = slots.get(key)
            if slot is None:
                slots[key] = len(keys)
                keys.append(key)
                models.append(request.model)
                sessions.append(parent or request.session or file.path)
                numbers.extend(_numbers(request, at))
                numbers.append(at)
                continue
            i = slot * _WIDTH
            numbers[i + _FIRST_AT] = min(numbers[i + _FIRST_AT], at)
            held = numbers[i + _OUTPUT]
            if request.output_tokens > held or (
                request.output_tokens == held and at < numbers[i + _CHOSEN_AT]
            ):
                models[slot] = request.model
                sessions[slot] = parent or request.session or file.path
                numbers[i : i + _FIRST_AT] = array("q", _numbers(request, at))
        if not start and file.requests and (file.summary or file.first_prompt):
            self.name(
                index, ClaudeFile(file.path, file.requests[:1], file.summary, file.first_prompt)
            )

    def _note_start(self, index: int, file: ClaudeFile, parent: str | None) -> None:
        """Weigh where the session of the file at `index` started: its first request that
        names a folder (a `progress` copy only when its sub-agent's own file is absent)."""
        for request in file.requests:
            if request.cwd and (request.agent_id is None or request.agent_id not in self.present):
                session = parent or request.session or file.path
                first = self.started.get(session)
                if first is None or (request.timestamp_ms, index) < first[:2]:
                    self.started[session] = (request.timestamp_ms, index, request.cwd)
                self.starts.add(index)
                return

    def name(self, index: int, head: ClaudeFile) -> None:
        """What names a session in the file at `index`: its first request, summary and first
        prompt (a file given in pieces is named once read)."""
        self.heads.append((index, head))

    def result(self) -> ClaudeCalls:
        """The calls, in the order of their requests' first copies, and the sessions' titles."""
        projects = {s: path_project(cwd) for s, (_, _, cwd) in self.started.items()}
        numbers, since_ms = self.numbers, self.since_ms
        keys, models, sessions = self.keys, self.models, self.sessions
        self.slots = {}  # (the weighing is over: its index goes before the calls are made)
        self.keys, self.models, self.sessions, self.numbers = [], [], [], array("q")
        firsts = numbers[_FIRST_AT::_WIDTH]
        order: Iterable[int] = range(len(keys))
        if any(firsts[i] > firsts[i + 1] for i in range(len(firsts) - 1)):
            order = sorted(order, key=firsts.__getitem__)
        del firsts
        calls = []
        for slot in order:
            i = slot * _WIDTH
            timestamp_ms = numbers[i + _TIME]
            if since_ms is not None and timestamp_ms < since_ms:
                continue
            model, session = models[slot], sessions[slot]
            input_tokens, output_tokens = numbers[i + _INPUT], numbers[i + _OUTPUT]
            read, write_5m, write_1h = numbers[i + _READ : i + _CHOSEN_AT]
            cost, priced = claude_cost(model, input_tokens, output_tokens, write_5m, write_1h, read)
            calls.append(
                Call(
                    keys[slot],
                    CLAUDE_CODE,
                    model or "unknown",
                    # (its session's folder is known once every file is weighed)
                    projects.get(session, UNKNOWN_PROJECT),
                    session,
                    timestamp_ms,
                    input_tokens,
                    output_tokens,
                    read,
                    write_5m + write_1h,
                    cost,
                    estimated=False,
                    billed=False,
                    priced=priced,
                )
            )
        titles: dict[str, str] = {}
        prompts: dict[str, str] = {}
        for _, head in sorted(self.heads, key=lambda item: item[0]):
            note_title(head, titles, prompts)
        for session, prompt in prompts.items():
            titles.setdefault(session, prompt)
        return ClaudeCalls(calls, titles)


def _numbers(request: ClaudeRequest, at: int) -> tuple[int, ...]:
    """A chosen copy's numbers in a weighing's columns, up to its rank `at`."""
    return (
        request.timestamp_ms,
        request.input_tokens,
        request.output_tokens,
        request.cache_read_tokens,
        request.cache_write_5m,
        request.cache_write_1h,
        at,
    )


def make_call(key: str, request: ClaudeRequest, session: str, project: str) -> Call:
    return _call(f"{CLAUDE_CODE}:{key}", request, session, project)


def _call(call_key: str, request: ClaudeRequest, session: str, project: str) -> Call:
    cost, priced = claude_cost(
        request.model,
        request.input_tokens,
        request.output_tokens,
        request.cache_write_5m,
        request.cache_write_1h,
        request.cache_read_tokens,
    )
    return Call(
        call_key,
        CLAUDE_CODE,
        request.model or "unknown",
        project,
        session,
        request.timestamp_ms,
        request.input_tokens,
        request.output_tokens,
        request.cache_read_tokens,
        request.cache_write_tokens,
        cost,
        estimated=False,
        billed=False,
        priced=priced,
    )
