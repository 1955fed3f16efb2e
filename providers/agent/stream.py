"""Rebuilding agent requests from Cursor's untimed `agentKv:blob:*` stream
(docs/local-data.md#agent-stream)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from sys import intern
from typing import Any, Final, NamedTuple

from codeburn.providers.calls import estimate_tokens
from codeburn.providers.localtime import parse_iso_ms, valid_ms

_COMMAND_SPLIT = re.compile(r"&&|\|\||[;|\n]")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# The C scanner json.loads ends up in (typeshed does not declare the attribute).
_SCAN_ONCE: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009


def json_value(text: str) -> Any | None:
    """`json.loads(text)`, or None when `text` is not JSON; a value starting with `{` (no
    leading whitespace) skips json.loads' Python layers: the scanner, then only whitespace
    may follow the object."""
    if text[:1] != "{":
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return None
    try:
        value, end = _SCAN_ONCE(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return None
    return value


def content_chars(content: Any) -> int:
    """Characters of a message: blocks count only their `text` (or `content`) strings; a
    `tool-result` block counts what the model read: its `result` text, else the text of its
    `experimental_content` (the same text again as blocks, so never both)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content)
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        total = 0
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool-result":
                total += _tool_result_chars(block)
                continue
            text = block.get("text")
            if not isinstance(text, str):
                text = block.get("content")
            if isinstance(text, str):
                total += len(text)
        return total
    return len(json.dumps(content))


def _tool_result_chars(block: dict[str, Any]) -> int:
    result = block.get("result")
    if isinstance(result, str):
        return len(result)
    extra = block.get("experimental_content")
    if extra is not None:
        return content_chars(extra)
    return 0 if result is None else len(json.dumps(result))


def served_model(content: Any) -> str | None:
    """The model that served a message: `providerOptions.cursor.modelName` inside one of its
    content blocks (Cursor 3.7 puts it on `redacted-reasoning` blocks)."""
    if type(content) is not list:
        return None
    for block in content:
        options = block.get("providerOptions") if type(block) is dict else None
        cursor = options.get("cursor") if type(options) is dict else None
        name = cursor.get("modelName") if type(cursor) is dict else None
        if type(name) is str and name:
            return name
    return None


@lru_cache(maxsize=4096)
def command_names(command: str) -> tuple[str, ...]:
    """`cd x && npm test | tee log` → (`cd`, `npm`, `tee`)."""
    names: list[str] = []
    for segment in _COMMAND_SPLIT.split(command):
        words = [w for w in segment.strip().split() if not _ENV_ASSIGNMENT.match(w)]
        if words:
            name = words[0].rsplit("/", 1)[-1]
            if name and name not in names:
                names.append(name)
    return tuple(names)


@dataclass(slots=True)
class StreamRequest:
    """Characters and tool use of one agent request."""

    request_id: str
    user_chars: int = 0
    context_chars: int = 0
    assistant_chars: int = 0
    model: str | None = None
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    served: str | None = None  # the latest model named inside a content block (docs/local-data.md)

    @property
    def input_tokens(self) -> int:
        return estimate_tokens(self.user_chars + self.context_chars)

    @property
    def output_tokens(self) -> int:
        return estimate_tokens(self.assistant_chars)

    def signature(self) -> tuple[Any, ...]:
        """Everything a call derived from this request depends on."""
        return (
            self.user_chars,
            self.context_chars,
            self.assistant_chars,
            self.model,
            tuple(self.tools),
            tuple(self.commands),
            self.served,
        )

    def add_tool(self, name: str, command: str | None) -> None:
        # Interned: a few names shared by thousands of requests a walker keeps.
        tool = "Bash" if name == "Shell" else name
        if tool and tool not in self.tools:
            self.tools.append(intern(tool))
        if tool == "Bash" and command is not None:
            for cmd in command_names(command):
                if cmd not in self.commands:
                    self.commands.append(intern(cmd))


_REQUEST_FIELDS: Final = tuple(f.name for f in fields(StreamRequest))


def tool_calls(content: Any) -> list[tuple[str, str | None]]:
    """(tool name, shell command) of each `tool-call` block of a message."""
    calls: list[tuple[str, str | None]] = []
    if not isinstance(content, list):
        return calls
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool-call":
            name = block.get("toolName")
            args = block.get("args", block.get("input"))
            command = args.get("command") if isinstance(args, dict) else None
            if isinstance(name, str):
                calls.append((name, command if isinstance(command, str) else None))
    return calls


ToolCalls = tuple[tuple[str, str | None], ...]  # (tool name, shell command) of each call


class Record(NamedTuple):
    """What the walks use of one JSON record (`{role, content, providerOptions.cursor…}`).
    A tuple: a cold parse sends tens of thousands of them from its second process, as
    columns (`layout3.blob_scan.pack_records`)."""

    role: str | None
    chars: int  # characters of `content` (`content_chars`)
    request_id: str | None  # providerOptions.cursor.requestId
    model: str | None  # providerOptions.cursor.modelName
    tools: ToolCalls  # the tool calls of an assistant message
    created_ms: int | None  # an assistant message's createdAt, in epoch ms
    served: str | None  # the model named inside its content blocks (`served_model`)


_new_tuple: Final = tuple.__new__


def parse_record(text: str) -> Record | None:
    """The record in one JSON value, or None when the value is not exactly one JSON object."""
    value = json_value(text)
    if type(value) is not dict:
        return None
    options = value.get("providerOptions")
    cursor = options.get("cursor") if type(options) is dict else None
    request_id = model = None
    if type(cursor) is dict:
        request_id, model = cursor.get("requestId"), cursor.get("modelName")
        request_id = request_id if type(request_id) is str and request_id else None
        model = model if type(model) is str and model else None
    role, content = value.get("role"), value.get("content")
    chars = len(content) if type(content) is str else content_chars(content)
    tools: ToolCalls = ()
    created_ms = served = None
    if role == "assistant":
        tools = tuple(tool_calls(content)) if type(content) is list else ()
        created = value.get("createdAt")
        if created is not None:
            created_ms = valid_ms(parse_iso_ms(created) if type(created) is str else created)
        served = served_model(content)
    role = role if type(role) is str else None
    # tuple.__new__: the same Record without the constructor's Python-level call (every row).
    return _new_tuple(Record, (role, chars, request_id, model, tools, created_ms, served))


def record_of(raw: Any) -> Record | None:
    """The record in a raw agentKv value (TEXT or BLOB); None for binary, numeric or NULL."""
    if type(raw) is str:
        return parse_record(raw) if raw[:1] == "{" else None
    if type(raw) is bytes and raw[:1] == b"{":
        return parse_record(raw.decode("utf-8", "replace"))
    return None


@dataclass(slots=True)
class StreamWalker:
    """State machine over agentKv rows in ROWID order; can resume on appended rows."""

    requests: dict[str, StreamRequest] = field(default_factory=dict)
    current: str | None = None
    pending_user: int = 0
    pending_context: int = 0
    rows_seen: int = 0
    touched: set[str] = field(default_factory=set)

    def __getstate__(self) -> tuple[Any, ...]:
        """Pickled with its requests as columns (a cold CLI parse gets its walk back from a
        forked child): pickled one by one, each request's fields came as a dict of their own,
        all held until the end, which raised a cold report's peak memory."""
        requests = self.requests.values()
        columns = tuple([getattr(r, name) for r in requests] for name in _REQUEST_FIELDS)
        return (
            columns,
            self.current,
            self.pending_user,
            self.pending_context,
            self.rows_seen,
            (self.touched),
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        columns, self.current, self.pending_user, self.pending_context, self.rows_seen = state[:5]
        self.touched = state[5]
        self.requests = {r.request_id: r for r in map(StreamRequest, *columns)}

    def feed(self, rows: Iterable[tuple[int, Any]]) -> None:
        """Raw agent values in ROWID order; only JSON objects (first byte `{`) count."""
        self.feed_records(record for _rowid, raw in rows if (record := record_of(raw)))

    def feed_records(self, records: Iterable[Record]) -> None:
        """Records of JSON agent values, in ROWID order."""
        apply = self._apply
        seen = 0
        for record in records:
            seen += 1
            apply(record)
        self.rows_seen += seen

    def _open(self, request_id: str) -> StreamRequest:
        request = self.requests.get(request_id)
        if request is None:
            request = self.requests[request_id] = StreamRequest(request_id)
        request.user_chars += self.pending_user
        request.context_chars += self.pending_context
        self.pending_user = self.pending_context = 0
        self.current = request_id
        self.touched.add(request_id)
        return request

    def _apply(self, record: Record) -> None:
        """One record (the hot loop of the walk, see docs/local-data.md#agent-stream)."""
        role, chars, request_id, model, tools, _created, served = record
        if request_id is not None:
            self._open(request_id)
        current = self.current
        request = self.requests.get(current) if current else None
        if request is not None:
            self.touched.add(request.request_id)
            if model is not None and not request.model:
                request.model = intern(model)
            if served is not None:
                request.served = intern(served)
        if role == "system":
            self.pending_context += chars
            self.current = None
        elif role == "user":
            if request is None:
                self.pending_user += chars
            else:
                request.user_chars += chars
        elif role == "tool" and request is not None:
            request.context_chars += chars
        elif role == "assistant" and request is not None:
            request.assistant_chars += chars
            for name, command in tools:
                request.add_tool(name, command)
