"""Cursor's agent conversation graph (`agent.v1.ConversationStateStructure`) → turns → calls.

Shared by the IDE database (root in `composerData.conversationState`, blobs in
`agentKv:blob:<sha256>` rows) and the Cursor Agent CLI (`store.db`, table `blobs`). Field
numbers come from public decompiled descriptors (docs/cursor-3-layout.md); none are official.

Root: 1 prompt-history blob refs (JSON `{role, content, providerOptions}`), 5 token details
(1 = used tokens), 8 turn blob refs (Aug 2025 CLI stores: 2, each `{1 user, 2* steps}`),
9 workspace URIs, 14 turn timings (2 = timestamp ms), 26 conversation start (ms), 27 IANA
time zone. Turn blob: 1 = agent turn {1 user blob ref, 2 step blob refs}.
User blob: 1 text, 5 simulated, 18 text blob ref, 25 timestamp ms. Step blob: 1 = assistant
{1 text, 2 timestamp ms}, 2 tool call, 3 thinking. A blob ref is a raw 32-byte sha256.

Here the root is read and its blobs walked into turns; the blobs are decoded in `blob_parts`,
the calls made in `graph_to_calls`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from codeburn.providers.agent import protobuf as pb
from codeburn.providers.agent.blob_parts import (
    BAD,
    FLAT_TURN,
    PROMPT,
    STEP,
    TEXT,
    TURN,
    USER,
    BytesParts,
    Lookup,
    Parts,
    StepPart,
    TurnPart,
    UserPart,
    blob_keys,
)
from codeburn.providers.agent.stream import Record, StreamRequest
from codeburn.providers.localtime import valid_ms

# Blobs fetched for one root at most (a damaged graph must not walk a whole database).
MAX_BLOBS: Final = 200_000


class GraphTurn(NamedTuple):
    """One user turn and what answered it (a tuple: a cold parse makes one per turn, and a
    forked transcripts reader sends thousands)."""

    timestamp_ms: int | None  # turn_timings[i].timestamp_ms, else message timestamps
    user_chars: int
    context_chars: int
    assistant_chars: int
    model: str | None  # providerOptions.cursor.modelName of the turn's assistant blobs
    tools: tuple[str, ...]
    commands: tuple[str, ...]
    served: str | None = None  # the model named inside the turn's content blocks (it wins)
    end_ms: int | None = None  # the turn's last recorded message time (docs/attribution.md)


class Graph(NamedTuple):
    """A decoded conversation."""

    turns: tuple[GraphTurn, ...]
    used_tokens: int  # token_details.used_tokens (the context meter)
    started_ms: int | None  # field 26
    workspace_uris: tuple[str, ...]
    skipped_blobs: int  # missing / encrypted / undecodable blobs skipped
    # The 64-digit hex ids of every blob the root references, one after the other (one string
    # a graph, not one per blob: the blob memo checks they are all still stored).
    reached: str = ""
    request_ids: frozenset[str] = frozenset()  # providerOptions.cursor.requestId of its blobs
    missing_blobs: int = 0  # of skipped_blobs, those not in the store (they may come later)


class GraphUnreadable(Exception):
    """A root that exists but cannot be read; `reason` is what the warnings count."""

    def __init__(self, reason: str, used_tokens: int = 0, missing_blobs: int = 0) -> None:
        super().__init__(f"conversation graph unreadable: {reason}")
        self.reason = reason
        self.used_tokens = used_tokens
        self.missing_blobs = missing_blobs


def reached_ids(graph: Graph) -> list[str]:
    """The hex ids of every blob a graph's root references (`Graph.reached`)."""
    reached = graph.reached
    return [reached[i : i + 64] for i in range(0, len(reached), 64)]


@dataclass(slots=True)
class _TurnBlob:
    user_chars: int = 0
    context_chars: int = 0
    assistant_chars: int = 0
    user_ms: int | None = None
    assistant_ms: int | None = None
    last_ms: int | None = None  # the latest message time of the turn


@dataclass(slots=True)
class _Walk:
    """Fetches the parts of one root, counting what is missing or unreadable."""

    parts: Parts
    reached: dict[str, None] = field(default_factory=dict)  # in the order first reached
    fetched: int = 0
    missing: int = 0
    unreadable: int = 0
    request_ids: set[str] = field(default_factory=set)

    def prefetch(self, keys: list[str], role: int) -> None:
        if self.parts.reads_ahead:
            self.parts.prefetch([key for key in keys if key], role)

    def fetch(self, key: str, role: int) -> Any:
        """The part, or None when the blob is missing or unreadable (both counted)."""
        if not key:  # a reference that names no blob
            self.unreadable += 1
            return None
        self.reached[key] = None
        self.fetched += 1
        if self.fetched > MAX_BLOBS:
            raise GraphUnreadable("too-large")
        found = self.parts.part(key, role)
        if found is None:
            self.missing += 1
        elif found is BAD:
            self.unreadable += 1  # encrypted blobs end up here
            return None
        return found


def _segments(walk: _Walk, keys: list[str]) -> tuple[int, list[StreamRequest], list[int | None]]:
    """The JSON prompt history split at user messages: (context before the first, turns, times)."""
    before = 0
    turns: list[StreamRequest] = []
    times: list[int | None] = []
    answered = True  # the current turn has seen an assistant or tool message
    for key in keys:
        record: Record | None = walk.fetch(key, PROMPT)
        if record is None:
            continue
        role, chars, request_id, model, tools, created_ms, served = record
        if request_id is not None:
            walk.request_ids.add(request_id)
        if role == "user" and answered:
            turns.append(StreamRequest(""))
            times.append(None)
            answered = False
        current = turns[-1] if turns else None
        if role == "user" and current is not None:
            current.user_chars += chars
        elif current is None or role == "system":
            if current is None:
                before += chars
            else:
                current.context_chars += chars
        elif role == "tool":
            current.context_chars += chars
            answered = True
        elif role == "assistant":
            answered = True
            current.assistant_chars += chars
            for name, command in tools:
                current.add_tool(name, command)
            if model is not None and not current.model:
                current.model = model
            if served is not None:
                current.served = served
            if times[-1] is None and created_ms is not None:
                times[-1] = created_ms
    return before, turns, times


def _turn_blobs(walk: _Walk, turn_keys: list[str], role: int = TURN) -> list[_TurnBlob | None]:
    """Every turn, one level of blobs at a time (a lookup may fetch a level in one read)."""
    turns: list[TurnPart | None] = [walk.fetch(key, role) for key in turn_keys]
    walk.prefetch([t.user for t in turns if t is not None and t.user is not None], USER)
    walk.prefetch([k for t in turns if t is not None for k in t.steps], STEP)
    users: list[UserPart | None] = [
        walk.fetch(t.user, USER) if t is not None and t.user is not None else None for t in turns
    ]
    walk.prefetch([u.text_key for u in users if u is not None and u.text_key is not None], TEXT)
    return [
        _turn_blob(walk, user, t.steps) if t is not None else None
        for user, t in zip(users, turns, strict=True)
    ]


def _turn_blob(walk: _Walk, user: UserPart | None, step_keys: list[str]) -> _TurnBlob:
    out = _TurnBlob()
    if user is not None:
        if user.failed_early:
            walk.unreadable += 1
        else:
            text = user.text_chars
            if user.text_key is not None:
                text = max(text, walk.fetch(user.text_key, TEXT) or 0)
            if user.failed_flag:
                walk.unreadable += 1
            else:
                if user.simulated:
                    out.context_chars += text  # a message Cursor inserted, not the user's
                else:
                    out.user_chars += text
                if user.failed_time:
                    walk.unreadable += 1
                else:
                    out.user_ms = user.timestamp_ms
    for step_key in step_keys:
        step: StepPart | None = walk.fetch(step_key, STEP)
        if step is None or not step.output:
            continue
        if step.failed:
            walk.unreadable += 1
            continue
        out.assistant_chars += step.chars
        if not step.failed_time and step.timestamp_ms is not None:
            out.last_ms = max(out.last_ms or 0, step.timestamp_ms)
        if out.assistant_ms is None:
            if step.failed_time:
                walk.unreadable += 1
            else:
                out.assistant_ms = step.timestamp_ms
    if out.user_ms is not None:
        out.last_ms = max(out.last_ms or 0, out.user_ms)
    return out


class RootFields(NamedTuple):
    """The fields of a root that the walk needs."""

    prompt_keys: list[str]  # field 1, as blob ids (`blob_key`)
    turn_keys: list[str]  # field 8 (or 2)
    used_tokens: int
    timings: list[int | None]
    workspace_uris: tuple[str, ...]
    started_ms: int | None
    turn_role: int = TURN  # FLAT_TURN: the turns of an Aug 2025 CLI store (root field 2)


def root_fields(root: bytes) -> RootFields:
    """A root's fields; raises GraphUnreadable("undecodable") when it is malformed."""
    try:
        msg = pb.parse(root)
        prompt_refs, turn_refs = pb.all_bytes(msg, 1), pb.all_bytes(msg, 8)
        turn_role = TURN
        if not turn_refs and 2 in msg:  # Aug 2025 CLI stores: no field 8, turns in field 2
            turn_refs, turn_role = pb.all_bytes(msg, 2), FLAT_TURN
        pb.all_bytes(msg, 5)
        uris = tuple(filter(None, map(_workspace_uri, pb.all_bytes(msg, 9))))
        raw_timings = pb.all_bytes(msg, 14)
        started = valid_ms(pb.first_int(msg, 26))
    except pb.WireError as exc:
        raise GraphUnreadable("undecodable") from exc
    return RootFields(
        blob_keys(prompt_refs), blob_keys(turn_refs), _used_tokens(msg), _timings(raw_timings),
        uris, started, turn_role,
    )  # fmt: skip


def _workspace_uri(raw: bytes) -> str | None:
    """A root field 9 value as a workspace URI or path, decided by its content: a value of 32
    bytes is the length of a blob reference, and a real 3.7 URI is 32 bytes too."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.isprintable() or not ("://" in text or text.startswith("/") or text[1:3] == ":\\"):
        return None
    return text


def _used_tokens(msg: dict[int, list[pb.Value]]) -> int:
    raw = pb.first_bytes(msg, 5)
    if raw is None:
        return 0
    try:
        used = pb.first_int(pb.nested(raw, 1), 1)
    except pb.WireError:
        return 0
    return used if used is not None and 0 < used < 1 << 53 else 0


def _timings(raw_timings: list[bytes]) -> list[int | None]:
    times: list[int | None] = []
    for raw in raw_timings:
        size = len(raw)
        # The common timings, `{1: duration, 2?: timestamp}` with varints of at most 9 bytes
        # (no overflow) and nothing else, read in place, `read_varint`'s loop inline (~16,000
        # a cold 3.x parse); any other shape is parsed (the same answer).
        if size > 1 and raw[0] == 0x08:
            at = 1
            while at < size and raw[at] >= 0x80:
                at += 1
            at += 1  # past the duration's last byte
            if at == size and at <= 10:
                times.append(None)
                continue
            if at < size and at <= 10 and raw[at] == 0x10:
                ms = shift = 0
                end = at + 1
                while end < size:
                    byte = raw[end]
                    end += 1
                    ms |= (byte & 0x7F) << shift
                    if byte < 0x80:
                        break
                    shift += 7
                if end == size and raw[end - 1] < 0x80 and end - at <= 10:
                    times.append(valid_ms(ms))
                    continue
        try:
            first = pb.parse_first(raw).get(2)  # (one level below the root)
        except pb.WireError:
            times.append(None)
            continue
        times.append(None if isinstance(first, bytes) else valid_ms(first))
    return times


def decode_root(root: bytes, blob: Lookup) -> Graph:
    """Decode a root and walk its blobs; raises GraphUnreadable when nothing can be read."""
    return decode_parts(root, BytesParts(blob))


def decode_parts(root: bytes | RootFields, parts: Parts) -> Graph:
    """`decode_root` over blobs already decoded by role (see `Parts`); the root may come
    parsed already (`root_fields`)."""
    fields = root if isinstance(root, RootFields) else root_fields(root)
    if parts.reads_ahead:  # told the prompts first, as one walk reading them first
        _prefetch_prompts(fields, parts)
    return finish_turns(walk_turns(fields, parts))


def _prefetch_prompts(fields: RootFields, parts: Parts) -> None:
    parts.prefetch([key for key in fields.prompt_keys if key], PROMPT)


@dataclass(slots=True)
class TurnsWalked:
    """A root whose turn blobs are walked and whose prompt history is not yet (`walk_turns`):
    a full parse walks the turns while the JSON prompt records are still on their way from
    another process, then `finish_turns` reads the prompts and makes the graph."""

    fields: RootFields
    walk: _Walk
    blobs: list[_TurnBlob | None]
    error: GraphUnreadable | None = None  # raised by `finish_turns`


def walk_turns(fields: RootFields, parts: Parts) -> TurnsWalked:
    """The first half of `decode_parts`: the turn blobs (no prompt record is asked for)."""
    walk = _Walk(parts)
    try:
        walk.prefetch(fields.turn_keys, fields.turn_role)
        blobs = _turn_blobs(walk, fields.turn_keys, fields.turn_role)
    except GraphUnreadable as exc:  # too many blobs: the graph is unreadable whatever follows
        return TurnsWalked(fields, walk, [], exc)
    return TurnsWalked(fields, walk, blobs)


def finish_turns(walked: TurnsWalked) -> Graph:
    """The second half of `decode_parts`: the prompt history, then the graph (the same graph,
    blob counts and reached order as one walk reading the prompts first)."""
    if walked.error is not None:
        raise walked.error
    fields, walk, blobs = walked.fields, walked.walk, walked.blobs
    used = fields.used_tokens
    turns_reached, walk.reached = walk.reached, {}
    before, segments, segment_ms = _segments(walk, fields.prompt_keys)
    walk.reached.update(turns_reached)  # prompts first, as one walk reaches them
    referenced = len(fields.prompt_keys) + len(fields.turn_keys)
    if referenced and not segments and not any(blobs):
        reason = "encrypted" if walk.unreadable else "missing-blobs"
        raise GraphUnreadable(reason, used, walk.missing)
    timings = fields.timings
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
                served=seg.served if seg else None,
                end_ms=tb.last_ms if tb is not None else None,
            )
        )
    return Graph(
        turns=tuple(turns),
        used_tokens=used,
        started_ms=fields.started_ms,
        workspace_uris=fields.workspace_uris,
        skipped_blobs=walk.missing + walk.unreadable,
        reached="".join(walk.reached),
        request_ids=frozenset(walk.request_ids),
        missing_blobs=walk.missing,
    )
