"""Cursor's agent conversation graph (`agent.v1.ConversationStateStructure`) → turns → calls.

Shared by the IDE database (root in `composerData.conversationState`, blobs in
`agentKv:blob:<sha256>` rows) and the Cursor Agent CLI (`store.db`, table `blobs`). Field
numbers come from public decompiled descriptors (docs/cursor-3-layout.md); none are official.

Root: 1 prompt-history blob refs (JSON `{role, content, providerOptions}`), 5 token details
(1 = used tokens), 8 turn blob refs, 9 workspace URIs, 14 turn timings (2 = timestamp ms),
26 conversation start (ms). Turn blob: 1 = agent turn {1 user blob ref, 2 step blob refs}.
User blob: 1 text, 5 simulated, 18 text blob ref, 25 timestamp ms. Step blob: 1 = assistant
{1 text, 2 timestamp ms}, 2 tool call, 3 thinking. A blob ref is a raw 32-byte sha256.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from codeburn.providers import protobuf_wire as pb
from codeburn.providers.agent_stream import (
    StreamRequest,
    content_chars,
    estimate_tokens,
    tool_calls,
)
from codeburn.providers.calls import Call
from codeburn.providers.cursor_emit import display_model
from codeburn.providers.localtime import LATEST_MS, parse_iso_ms
from codeburn.providers.pricing import cost_of

# Epoch ms accepted as a date: after 1970, before the year 10000.
MAX_MS: Final = LATEST_MS
# Blobs fetched for one root at most (a damaged graph must not walk a whole database).
MAX_BLOBS: Final = 200_000

Lookup = Callable[[str], bytes | None]


@dataclass(frozen=True, slots=True)
class GraphTurn:
    """One user turn and what answered it."""

    timestamp_ms: int | None  # turn_timings[i].timestamp_ms, else message timestamps
    user_chars: int
    context_chars: int
    assistant_chars: int
    model: str | None  # providerOptions.cursor.modelName of the turn's assistant blobs
    tools: tuple[str, ...]
    commands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Graph:
    """A decoded conversation."""

    turns: tuple[GraphTurn, ...]
    used_tokens: int  # token_details.used_tokens (the context meter)
    started_ms: int | None  # field 26
    workspace_uris: tuple[str, ...]
    skipped_blobs: int  # missing / encrypted / undecodable blobs skipped
    reached: frozenset[str] = frozenset()  # hex ids of every blob the root references
    request_ids: frozenset[str] = frozenset()  # providerOptions.cursor.requestId of its blobs
    missing_blobs: int = 0  # of skipped_blobs, those not in the store (they may come later)


class GraphUnreadable(Exception):
    """A root that exists but cannot be read; `reason` is what the warnings count."""

    def __init__(self, reason: str, used_tokens: int = 0, missing_blobs: int = 0) -> None:
        super().__init__(f"conversation graph unreadable: {reason}")
        self.reason = reason
        self.used_tokens = used_tokens
        self.missing_blobs = missing_blobs


def valid_ms(value: Any) -> int | None:
    """An epoch-ms date, or None for anything that cannot be one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 < value < MAX_MS:  # also NaN
        return None
    return int(value)


def blob_id(ref: bytes) -> str | None:
    """Hex id of a blob reference (raw 32-byte sha256; a 64-digit hex string also occurs)."""
    if len(ref) == 32:
        return ref.hex()
    if len(ref) == 64:
        text = ref.decode("ascii", "replace").lower()
        if all(c in "0123456789abcdef" for c in text):
            return text
    return None


def _load_json(raw: bytes) -> dict[str, Any] | None:
    if raw[:1] != b"{":
        return None
    try:
        value = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass(slots=True)
class _TurnBlob:
    user_chars: int = 0
    context_chars: int = 0
    assistant_chars: int = 0
    user_ms: int | None = None
    assistant_ms: int | None = None


@dataclass(slots=True)
class _Walk:
    """Fetches blobs for one root, counting what is missing or unreadable."""

    lookup: Lookup
    reached: set[str] = field(default_factory=set)
    fetched: int = 0
    missing: int = 0
    unreadable: int = 0
    request_ids: set[str] = field(default_factory=set)

    def prefetch(self, refs: list[bytes]) -> None:
        """Tell a lookup that can read many blobs at once (a `prefetch` method) what comes."""
        many = getattr(self.lookup, "prefetch", None)
        if many is not None:
            many([key for key in map(blob_id, refs) if key is not None])

    def fetch(self, ref: bytes) -> bytes | None:
        key = blob_id(ref)
        if key is None:
            self.unreadable += 1
            return None
        self.reached.add(key)
        self.fetched += 1
        if self.fetched > MAX_BLOBS:
            raise GraphUnreadable("too-large")
        data = self.lookup(key)
        if data is None:
            self.missing += 1
        return data

    def message(self, ref: bytes, depth: int) -> dict[int, list[pb.Value]] | None:
        data = self.fetch(ref)
        if data is None:
            return None
        try:
            return pb.nested(data, depth)
        except pb.WireError:
            self.unreadable += 1  # encrypted blobs end up here
            return None

    def json(self, ref: bytes) -> dict[str, Any] | None:
        data = self.fetch(ref)
        if data is None:
            return None
        record = _load_json(data)
        if record is None:
            self.unreadable += 1
        return record


def _segments(walk: _Walk, refs: list[bytes]) -> tuple[int, list[StreamRequest], list[int | None]]:
    """The JSON prompt history split at user messages: (context before the first, turns, times)."""
    before = 0
    turns: list[StreamRequest] = []
    times: list[int | None] = []
    answered = True  # the current turn has seen an assistant or tool message
    for ref in refs:
        record = walk.json(ref)
        if record is None:
            continue
        options = record.get("providerOptions")
        cursor = options.get("cursor") if isinstance(options, dict) else None
        cursor = cursor if isinstance(cursor, dict) else {}
        request_id = cursor.get("requestId")
        if isinstance(request_id, str) and request_id:
            walk.request_ids.add(request_id)
        role, content = record.get("role"), record.get("content")
        if role == "user" and answered:
            turns.append(StreamRequest(""))
            times.append(None)
            answered = False
        current = turns[-1] if turns else None
        if role == "user" and current is not None:
            current.user_chars += content_chars(content)
        elif current is None or role == "system":
            if current is None:
                before += content_chars(content)
            else:
                current.context_chars += content_chars(content)
        elif role == "tool":
            current.context_chars += content_chars(content)
            answered = True
        elif role == "assistant":
            answered = True
            current.assistant_chars += content_chars(content)
            for name, command in tool_calls(content):
                current.add_tool(name, command)
            model = cursor.get("modelName")
            if isinstance(model, str) and model and not current.model:
                current.model = model
            created = record.get("createdAt")
            ms = parse_iso_ms(created) if isinstance(created, str) else valid_ms(created)
            if times[-1] is None and ms is not None:
                times[-1] = valid_ms(ms)
    return before, turns, times


def _text_len(raw: bytes | None) -> int:
    return len(raw.decode("utf-8", "replace")) if raw else 0


_TurnRefs = tuple[bytes | None, list[bytes]]


def _turn_refs(walk: _Walk, ref: bytes) -> _TurnRefs | None:
    """(user message ref, step refs) of a turn blob."""
    turn = walk.message(ref, 1)
    if turn is None:
        return None
    try:
        agent_raw = pb.first_bytes(turn, 1)
        agent = pb.nested(agent_raw, 2) if agent_raw is not None else {}
        return pb.first_bytes(agent, 1), pb.all_bytes(agent, 2)
    except pb.WireError:
        walk.unreadable += 1
        return None


def _turn_blobs(walk: _Walk, turn_refs: list[bytes]) -> list[_TurnBlob | None]:
    """Every turn, one level of blobs at a time (a lookup may fetch a level in one read)."""
    refs = [_turn_refs(walk, ref) for ref in turn_refs]
    walk.prefetch([r for t in refs if t is not None for r in (t[0], *t[1]) if r is not None])
    users = [walk.message(t[0], 3) if t is not None and t[0] is not None else None for t in refs]
    walk.prefetch([r for u in users if u is not None for r in _text_refs(u)])
    return [
        _turn_blob(walk, user, t[1]) if t is not None else None
        for user, t in zip(users, refs, strict=True)
    ]


def _text_refs(user: dict[int, list[pb.Value]]) -> list[bytes]:
    """The field-18 text blob ref of a user message, when well-formed (read ahead)."""
    ref = user.get(18, ())
    return [ref[0]] if ref and isinstance(ref[0], bytes) else []


def _turn_blob(
    walk: _Walk, user: dict[int, list[pb.Value]] | None, step_refs: list[bytes]
) -> _TurnBlob:
    out = _TurnBlob()
    if user is not None:
        try:
            text = _text_len(pb.first_bytes(user, 1))
            text_ref = pb.first_bytes(user, 18)
            if text_ref is not None:
                text = max(text, _text_len(walk.fetch(text_ref)))
            if pb.first_int(user, 5):
                out.context_chars += text  # a message Cursor inserted, not the user's
            else:
                out.user_chars += text
            out.user_ms = valid_ms(pb.first_int(user, 25))
        except pb.WireError:
            walk.unreadable += 1
    for step_ref in step_refs:
        step = walk.message(step_ref, 3)
        if step is None:
            continue
        try:
            assistant_raw = pb.first_bytes(step, 1)
            if assistant_raw is None:
                continue
            assistant = pb.nested(assistant_raw, 4)
            out.assistant_chars += _text_len(pb.first_bytes(assistant, 1))
            if out.assistant_ms is None:
                out.assistant_ms = valid_ms(pb.first_int(assistant, 2))
        except pb.WireError:
            walk.unreadable += 1
    return out


def _root_fields(root: bytes) -> dict[int, list[pb.Value]]:
    try:
        msg = pb.parse(root)
        for number in (1, 8, 5, 9, 14):
            pb.all_bytes(msg, number)
        pb.first_int(msg, 26)
    except pb.WireError as exc:
        raise GraphUnreadable("undecodable") from exc
    return msg


def _used_tokens(msg: dict[int, list[pb.Value]]) -> int:
    raw = pb.first_bytes(msg, 5)
    if raw is None:
        return 0
    try:
        used = pb.first_int(pb.nested(raw, 1), 1)
    except pb.WireError:
        return 0
    return used if used is not None and 0 < used < 1 << 53 else 0


def _timings(msg: dict[int, list[pb.Value]]) -> list[int | None]:
    times: list[int | None] = []
    for raw in pb.all_bytes(msg, 14):
        try:
            times.append(valid_ms(pb.first_int(pb.nested(raw, 1), 2)))
        except pb.WireError:
            times.append(None)
    return times


def decode_root(root: bytes, blob: Lookup) -> Graph:
    """Decode a root and walk its blobs; raises GraphUnreadable when nothing can be read."""
    msg = _root_fields(root)
    used = _used_tokens(msg)
    walk = _Walk(blob)
    prompt_refs, turn_refs = pb.all_bytes(msg, 1), pb.all_bytes(msg, 8)
    walk.prefetch(prompt_refs + turn_refs)
    before, segments, segment_ms = _segments(walk, prompt_refs)
    blobs = _turn_blobs(walk, turn_refs)
    referenced = len(prompt_refs) + len(turn_refs)
    if referenced and not segments and not any(blobs):
        reason = "encrypted" if walk.unreadable else "missing-blobs"
        raise GraphUnreadable(reason, used, walk.missing)
    timings = _timings(msg)
    turns: list[GraphTurn] = []
    for i in range(max(len(blobs), len(segments))):
        tb = blobs[i] if i < len(blobs) else None
        seg = segments[i] if i < len(segments) else None
        if tb is None and seg is None:
            continue
        context = (seg.context_chars if seg else 0) + (tb.context_chars if tb else 0)
        ms = timings[i] if i < len(timings) else None
        if ms is None and tb is not None:
            ms = tb.user_ms or tb.assistant_ms
        if ms is None and i < len(segment_ms):
            ms = segment_ms[i]
        turns.append(
            GraphTurn(
                timestamp_ms=ms,
                user_chars=tb.user_chars if tb else seg.user_chars if seg else 0,
                context_chars=context + (before if i == 0 else 0),
                assistant_chars=tb.assistant_chars if tb else seg.assistant_chars if seg else 0,
                model=seg.model if seg else None,
                tools=tuple(seg.tools) if seg else (),
                commands=tuple(seg.commands) if seg else (),
            )
        )
    uris = tuple(u.decode("utf-8", "replace") for u in pb.all_bytes(msg, 9) if u)
    return Graph(
        turns=tuple(turns),
        used_tokens=used,
        started_ms=valid_ms(pb.first_int(msg, 26)),
        workspace_uris=uris,
        skipped_blobs=walk.missing + walk.unreadable,
        reached=frozenset(walk.reached),
        request_ids=frozenset(walk.request_ids),
        missing_blobs=walk.missing,
    )


def spread_times(known: list[int | None], lo: int | None, hi: int | None) -> list[int | None]:
    """Dates for turns: known ones kept; the others spread between their neighbours, the
    conversation's start (`lo`) and its last update (`hi`) — inferred, never the file mtime."""
    n = len(known)
    if all(t is None for t in known):
        if lo is None or hi is None or hi <= lo or n < 2:
            anchor = lo if lo is not None else hi
            return [anchor] * n
        return [lo + (hi - lo) * i // (n - 1) for i in range(n)]
    out = list(known)
    i = 0
    while i < n:
        if out[i] is not None:
            i += 1
            continue
        j = i
        while j < n and known[j] is None:
            j += 1
        k = j - i
        prev = out[i - 1] if i > 0 else None
        nxt = known[j] if j < n else None
        for step in range(k):
            if prev is not None and nxt is not None:
                out[i + step] = prev + (nxt - prev) * (step + 1) // (k + 1)
            elif nxt is not None:  # leading run: from the start up to the first known time
                start = lo if lo is not None and lo <= nxt else nxt
                out[i + step] = start + (nxt - start) * step // k
            elif prev is not None:  # trailing run: up to the last update
                end = hi if hi is not None and hi >= prev else prev
                out[i + step] = prev + (end - prev) * (step + 1) // k
        i = j
    return out


def _call(
    key: str, model: str, inp: int, out: int, ts: int, where: tuple[str, str, str],
    tools: tuple[str, ...] = (), commands: tuple[str, ...] = (),
) -> Call:  # fmt: skip
    provider, project, session = where
    cost, priced = cost_of(model, inp, out)
    return Call(
        key, provider, model, project, session, ts, inp, out, 0, 0, cost, True, False, priced,
        tools, commands,
    )  # fmt: skip


def graph_calls(
    graph: Graph,
    *,
    conversation_id: str,
    provider: str,
    project: str,
    fallback_model: str | None,
    created_ms: int | None,
    updated_ms: int | None,
    key_prefix: str,
    meter_tokens: int = 0,
) -> list[Call]:
    """Calls of a decoded conversation: one per turn (`<key_prefix><id>:<i>`), plus at most one
    meter record (`<key_prefix><id>:input`).

    Like SPEC §2.4 the input source is chosen once: the meter (`graph.used_tokens`, else
    `meter_tokens` from composerData) credits input once, dated at the conversation's start;
    without a meter each turn's input is `ceil((user + context chars) / 4)`. Output is
    `ceil(assistant chars / 4)` per turn. Undatable turns are left out.
    """
    lo = valid_ms(created_ms) or graph.started_ms
    hi = valid_ms(updated_ms)
    times = spread_times([t.timestamp_ms for t in graph.turns], lo, hi)
    meter = graph.used_tokens or max(meter_tokens, 0)
    where = (provider, project, conversation_id)
    calls: list[Call] = []
    for i, (turn, ts) in enumerate(zip(graph.turns, times, strict=True)):
        inp = 0 if meter else estimate_tokens(turn.user_chars + turn.context_chars)
        out = estimate_tokens(turn.assistant_chars)
        if ts is None or not (inp or out):
            continue
        model = display_model(turn.model or fallback_model)
        key = f"{key_prefix}{conversation_id}:{i}"
        calls.append(_call(key, model, inp, out, ts, where, turn.tools, turn.commands))
    dated = [t for t in times if t is not None]
    meter_ts = lo if lo is not None else dated[0] if dated else hi
    if meter and meter_ts is not None:
        first = next((t.model for t in graph.turns if t.model), None)
        model = display_model(first or fallback_model)
        key = f"{key_prefix}{conversation_id}:input"
        calls.append(_call(key, model, meter, 0, meter_ts, where))
    return calls
