"""Claude Code's session logs → its API requests (the rules: docs/other-tools.md).

`decode_claude` turns the bytes of one `.jsonl` file into named records; `claude_calls`
(`weighing.py`) decides, over every file's records, which copy of a request counts and whose
session it is. Both are pure: what was read before, and where files lie on disk, is the reader's
business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers.agents.lines import MarkedLines, complete_end, count, parse_object
from codeburn.providers.calls import CLAUDE_CODE, Call
from codeburn.providers.localtime import parse_iso_ms
from codeburn.providers.pricing import claude_cost

SYNTHETIC: Final = "<synthetic>"  # Claude Code's own placeholder messages: no request, no cost
TITLE_CHARS: Final = 80
UNKNOWN_PROJECT: Final = "claude-code"  # a request whose lines name no folder
COPIES_SPAN_MS: Final = 24 * 60 * 60 * 1000  # copies of one request lie well within a day
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


def session_of(request: ClaudeRequest, path: str, parent: str | None) -> str:
    """Whose session a request of the file at `path` is: the parent's for a sub-agent's folder
    (`parent`, from `parent_session_of`), else its line's `sessionId`, else the file's."""
    return parent or request.session or path


def call_model(model: str) -> str:
    """A call's model: the line's, else "unknown"."""
    return model or "unknown"


@dataclass(slots=True)
class ClaudeCalls:
    calls: Sequence[Call]  # a list, or made as they are asked for (`WeighedCalls`)
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


def call_key(key: str) -> str:
    """A call's key: its request's (`message.id` + `requestId`, else where its line lies), in
    Claude Code's namespace."""
    return f"{CLAUDE_CODE}:{key}"


def make_call(key: str, request: ClaudeRequest, session: str, project: str) -> Call:
    return _call(call_key(key), request, session, project)


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
        call_model(request.model),
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
