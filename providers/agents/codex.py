"""Codex's rollout logs → its requests (the rules: docs/other-tools.md).

`decode_codex` turns the bytes of one rollout file into usage records, carrying what a later
chunk of the same file needs (the session, the model, the last running totals) in a
`CodexState`; `codex_calls` makes priced calls of them. Both are pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from codeburn.providers.agents.claude_code import shorten
from codeburn.providers.agents.lines import MarkedLines, complete_end, count, parse_object
from codeburn.providers.calls import CODEX, Call
from codeburn.providers.ide import path_project
from codeburn.providers.localtime import parse_iso_ms
from codeburn.providers.pricing import cost_of

# What a request is priced as when no turn_context has named a model yet (ccusage's choice);
# such calls are counted and said in the diagnostics.
FALLBACK_MODEL: Final = "gpt-5"
UNKNOWN_PROJECT: Final = "codex"
_ROLLOUT_ID: Final = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
# The only lines that matter; every other line (messages, tool output) is never parsed.
_WANTED: Final = (b'"token_count"', b'"turn_context"', b'"session_meta"', b'"user_message"')


class Totals(NamedTuple):
    """A `token_count` event's usage (running totals, or the last request's)."""

    input: int  # cached included
    cached: int
    output: int  # reasoning included
    reasoning: int

    def minus(self, other: Totals) -> Totals:
        return Totals(
            self.input - other.input,
            self.cached - other.cached,
            self.output - other.output,
            self.reasoning - other.reasoning,
        )


@dataclass(slots=True)
class CodexState:
    """What one rollout file said so far, for the chunks that follow."""

    session: str | None = None
    cwd: str | None = None
    model: str | None = None
    totals: Totals | None = None
    title: str | None = None  # the first prompt, cut short


@dataclass(slots=True)
class CodexUsage:
    """One `token_count` event that brought new usage: one request."""

    offset: int
    timestamp_ms: int
    model: str
    assumed_model: bool  # no turn_context named one before it: FALLBACK_MODEL
    input_tokens: int  # not cached
    cache_read_tokens: int
    output_tokens: int  # reasoning included
    reasoning_tokens: int


@dataclass(slots=True)
class CodexChunk:
    usages: list[CodexUsage] = field(default_factory=list)
    bad_lines: int = 0  # not a JSON object, or usage with no usable time
    end: int = 0  # bytes that were whole lines (a torn tail waits)


def decode_codex(data: bytes, state: CodexState, base: int = 0) -> CodexChunk:
    """The usage records of `data`, the bytes of one rollout from offset `base`; `state`
    (updated in place) is what the bytes before `base` said."""
    chunk = CodexChunk(end=complete_end(data))
    for offset, line in MarkedLines(data, chunk.end, base, _WANTED):
        obj = parse_object(line)
        if obj is None:
            chunk.bad_lines += 1
            continue
        kind, payload = obj.get("type"), obj.get("payload")
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            _meta(payload, state)
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model:
                state.model = model
        elif kind == "event_msg" and payload.get("type") == "user_message":
            text = payload.get("message")
            if state.title is None and isinstance(text, str) and text.strip():
                state.title = shorten(text)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            usage = _usage_of(obj, payload, state, offset)
            if isinstance(usage, CodexUsage):
                chunk.usages.append(usage)
            elif usage is False:
                chunk.bad_lines += 1
    return chunk


def _meta(payload: dict[str, Any], state: CodexState) -> None:
    session, cwd = payload.get("id"), payload.get("cwd")
    if isinstance(session, str) and session and state.session is None:
        state.session = session
    if isinstance(cwd, str) and cwd and state.cwd is None:
        state.cwd = cwd


def _totals(value: object) -> Totals | None:
    if not isinstance(value, dict):
        return None
    return Totals(
        count(value.get("input_tokens")),
        count(value.get("cached_input_tokens", value.get("cache_read_input_tokens"))),
        count(value.get("output_tokens")),
        count(value.get("reasoning_output_tokens")),
    )


def _usage_of(
    obj: dict[str, Any], payload: dict[str, Any], state: CodexState, offset: int
) -> CodexUsage | bool | None:
    """The new usage of a token_count event: the difference of its running totals from the
    last ones (Codex writes each event twice with equal totals; the repeat brings nothing).
    None: nothing new (`info: null`, a repeat); False: usage that cannot be dated."""
    info = payload.get("info")
    if not isinstance(info, dict):
        return None
    # `last_token_usage` is read only where the running totals cannot say: they tell most
    # events, and every other event is a repeat.
    total = _totals(info.get("total_token_usage"))
    if total is not None:
        previous, state.totals = state.totals, total
        if total == previous:
            return None
        delta = total if previous is None else total.minus(previous)
        if min(delta) < 0:  # the running totals started again: this event's own usage
            last = _totals(info.get("last_token_usage"))
            delta = last if last is not None else total
    else:
        last = _totals(info.get("last_token_usage"))
        if last is None:
            return None
        delta = last
    if not any(delta):
        return None
    stamp = obj.get("timestamp")
    ms = parse_iso_ms(stamp) if isinstance(stamp, str) else None
    if ms is None:
        return False
    model = info.get("model", state.model)
    assumed = not (isinstance(model, str) and model)
    inp, cached, out, reasoning = delta
    cached = min(cached, inp)
    return CodexUsage(
        offset,
        ms,
        FALLBACK_MODEL if assumed else str(model),
        assumed,
        inp - cached,
        cached,
        out,
        reasoning,
    )


def rollout_id(path: str) -> str | None:
    """The session id a rollout's file name ends with (`rollout-<local time>-<id>.jsonl`)."""
    found = _ROLLOUT_ID.search(path)
    return found.group(1).lower() if found else None


def codex_session(path: str, state: CodexState) -> str:
    """A rollout's session: its id (from `session_meta`, else its file name)."""
    return state.session or rollout_id(path) or path


def codex_calls(path: str, state: CodexState, usages: list[CodexUsage]) -> list[Call]:
    """The priced calls of one rollout; session: the rollout's id, project: its cwd."""
    session = codex_session(path, state)
    project = path_project(state.cwd) if state.cwd else UNKNOWN_PROJECT
    calls = []
    for usage in usages:
        cost, priced = cost_of(
            usage.model, usage.input_tokens, usage.output_tokens, 0, usage.cache_read_tokens
        )
        calls.append(
            Call(
                f"{CODEX}:{session}@{usage.offset}",
                CODEX,
                usage.model,
                project,
                session,
                usage.timestamp_ms,
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                0,
                cost,
                estimated=False,
                billed=False,
                priced=priced,
            )
        )
    return calls
