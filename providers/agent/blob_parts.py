"""A conversation graph's blobs decoded in the role the graph gives them: prompt records,
turns, user messages, assistant steps (field numbers: `graph`).

A reference is made its blob id (`blob_key`) once, where it is decoded: a cold parse follows
~120,000 of them, each looked up in the pass and again in the walk, by the same string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, NamedTuple, Protocol

from codeburn.providers.agent import protobuf as pb
from codeburn.providers.agent.stream import Record, record_of
from codeburn.providers.localtime import valid_ms

Lookup = Callable[[str], bytes | None]

# What a blob is read as: the role a graph gives it decides how its bytes are decoded.
PROMPT: Final = 1  # a prompt-history JSON record (root field 1)
TURN: Final = 2  # a turn (root field 8)
USER: Final = 4  # a turn's user message
STEP: Final = 8  # an assistant step
TEXT: Final = 16  # a user message's text (field 18)
FLAT_TURN: Final = 32  # a turn of an Aug 2025 CLI store (root field 2): `{1 user, 2* steps}`
ROLES: Final = (PROMPT, TURN, USER, STEP, TEXT, FLAT_TURN)


class Bad:
    """A blob that is there but cannot be read in the role asked (encrypted, malformed)."""


BAD: Final = Bad()


@dataclass(slots=True)  # not frozen: a frozen __init__ costs several times more
class UserPart:
    """A user message blob. The flags keep where decoding failed: what came before still counts."""

    failed_early: bool = False  # fields 1 or 18 malformed: nothing counts
    text_chars: int = 0  # field 1
    text_key: str | None = None  # field 18, as a blob id (`blob_key`)
    failed_flag: bool = False  # field 5 malformed: the text does not count either
    simulated: bool = False
    failed_time: bool = False  # field 25 malformed
    timestamp_ms: int | None = None


# What an assistant step is (step field 1 / 2 / 3, docs/cursor-3-layout.md).
ASSISTANT_STEP: Final = 1  # an assistant message `{1 text, 2 timestamp ms}`
TOOL_STEP: Final = 2  # a tool call (its arguments are never counted)
THINKING_STEP: Final = 3  # thinking `{1 text}`
# The steps whose text is a turn's output (docs/cursor-3-layout.md#how-a-graph-becomes-calls):
# the one place that says which texts of a turn count.
OUTPUT_STEPS: Final = frozenset({ASSISTANT_STEP})


@dataclass(slots=True)  # not frozen: a frozen __init__ costs several times more
class StepPart:
    """An assistant step blob: its kind, and its text when that counts as output."""

    kind: int = 0  # ASSISTANT_STEP, TOOL_STEP, THINKING_STEP; 0: none of these
    # Its kind is in OUTPUT_STEPS: its text is output (a failed one is counted unreadable).
    # A field, not a property: the walk asks it of every step.
    output: bool = False
    failed: bool = False  # the step or its counted text is malformed: nothing counts
    chars: int = 0  # characters of its text, when it is output
    failed_time: bool = False  # an assistant message's field 2 malformed
    timestamp_ms: int | None = None  # an assistant message's time


class TurnPart(NamedTuple):
    """A turn blob: its user message and steps, as blob ids (`blob_key`)."""

    user: str | None
    steps: list[str]


Part = Record | TurnPart | UserPart | StepPart | int | Bad


def _text_len(raw: bytes | None) -> int:
    if not raw:
        return 0
    return len(raw) if raw.isascii() else len(raw.decode("utf-8", "replace"))


def _turn_part(data: bytes) -> TurnPart | Bad:
    plain = _plain_turn(data)
    return plain if plain is not None else _parsed_turn(data)


def _parsed_turn(data: bytes) -> TurnPart | Bad:
    try:
        turn = pb.nested(data, 1)
        agent_raw = pb.first_bytes(turn, 1)
        agent = pb.nested(agent_raw, 2) if agent_raw is not None else {}
        return _turn_keys(pb.first_bytes(agent, 1), pb.all_bytes(agent, 2))
    except pb.WireError:
        return BAD


def _turn_keys(user: bytes | None, steps: list[bytes]) -> TurnPart:
    return TurnPart(None if user is None else blob_key(user), blob_keys(steps))


def _plain_turn(data: bytes) -> TurnPart | None:
    """The common turn, `{1: {1: ref, 2*: ref}}` with refs under 128 bytes and nothing else,
    read without parsing each message into a dict; None for any other shape (then `parse`
    decides, with the same answer for this one)."""
    size = len(data)
    if size < 2 or data[0] != 0x0A:
        return None
    pos = 2
    length = data[1]
    if length >= 0x80:
        if size < 3 or data[2] >= 0x80:
            return None
        length, pos = (length & 0x7F) | data[2] << 7, 3
    if pos + length != size:
        return None
    user: str | None = None
    steps: list[str] = []
    while pos < size:
        tag = data[pos]
        if pos + 1 >= size:
            return None
        n = data[pos + 1]
        start = pos + 2
        pos = start + n
        if n >= 0x80 or pos > size:
            return None
        if tag == 0x12:
            steps.append(blob_key(data[start:pos]))
        elif tag == 0x0A:
            if user is None:
                user = blob_key(data[start:pos])
        else:
            return None
    return TurnPart(user, steps)


def _flat_turn_part(data: bytes) -> TurnPart | Bad:
    try:
        turn = pb.nested(data, 1)
        return _turn_keys(pb.first_bytes(turn, 1), pb.all_bytes(turn, 2))
    except pb.WireError:
        return BAD


def _user_part(data: bytes) -> UserPart | Bad:
    """(`parse_first`: only first values are read; a value of the wrong wire type fails
    where `first_bytes`/`first_int` would)"""
    try:
        user = pb.parse_first(data)  # (three levels below a root: within MAX_DEPTH)
    except pb.WireError:
        return BAD
    text, text_ref = user.get(1), user.get(18)
    if isinstance(text, int) or isinstance(text_ref, int):
        return UserPart(failed_early=True)
    text_chars = _text_len(text)
    text_key = None if text_ref is None else blob_key(text_ref)
    flag = user.get(5)
    if isinstance(flag, bytes):
        return UserPart(text_chars=text_chars, text_key=text_key, failed_flag=True)
    simulated = bool(flag)
    ms = user.get(25)
    if isinstance(ms, bytes):
        return UserPart(
            text_chars=text_chars, text_key=text_key, simulated=simulated, failed_time=True
        )
    return UserPart(
        text_chars=text_chars, text_key=text_key, simulated=simulated, timestamp_ms=valid_ms(ms)
    )


def _plain_step(data: bytes) -> StepPart | None:
    """The common step, `{1: {1: text, 2?: timestamp}}` and nothing else, read in place (the
    text is neither copied nor decoded when the blob is ASCII); None for any other shape."""
    size = len(data)
    if size < 2 or data[0] != 0x0A:  # field 1, length-delimited
        return None
    try:
        # (varints of one and two bytes inline: the lengths of nearly every step)
        length, start = data[1], 2
        if length >= 0x80:
            if size > 2 and data[2] < 0x80:
                length, start = (length & 0x7F) | data[2] << 7, 3
            else:
                length, start = pb.read_varint(data, 1)
        if start + length != size or start + 1 >= size or data[start] != 0x0A:
            return None
        text_len, text_at = data[start + 1], start + 2
        if text_len >= 0x80:
            if text_at < size and data[text_at] < 0x80:
                text_len, text_at = (text_len & 0x7F) | data[text_at] << 7, text_at + 1
            else:
                text_len, text_at = pb.read_varint(data, start + 1)
        end = text_at + text_len
        if end > size:
            return None
        ms = None
        if end < size:
            if data[end] != 0x10:  # field 2, varint
                return None
            value, after = pb.read_varint(data, end + 1)
            if after != size:
                return None
            ms = valid_ms(value)
    except pb.WireError:
        return None
    if data.isascii():
        chars = text_len
    else:  # decoded from a view: a step's bytes are not copied first (copies add up in a parse)
        chars = len(str(memoryview(data)[text_at:end], "utf-8", "replace"))
    return StepPart(ASSISTANT_STEP, ASSISTANT_STEP in OUTPUT_STEPS, chars=chars, timestamp_ms=ms)


def _step_part(data: bytes) -> StepPart | Bad:
    plain = _plain_step(data)
    return plain if plain is not None else _parsed_step(data)


def _parsed_step(data: bytes) -> StepPart | Bad:
    try:
        step = pb.nested(data, 3)
    except pb.WireError:
        return BAD
    kind = (
        ASSISTANT_STEP if ASSISTANT_STEP in step
        else TOOL_STEP if TOOL_STEP in step
        else THINKING_STEP if THINKING_STEP in step
        else 0
    )  # fmt: skip
    if kind not in OUTPUT_STEPS:  # nothing of it is read
        return StepPart(kind)
    try:
        message = pb.nested(pb.first_bytes(step, kind) or b"", 4)
        chars = _text_len(pb.first_bytes(message, 1))
    except pb.WireError:
        return StepPart(kind, True, failed=True)
    if kind != ASSISTANT_STEP:  # only an assistant message carries a time
        return StepPart(kind, True, chars=chars)
    try:
        ms = valid_ms(pb.first_int(message, 2))
    except pb.WireError:
        return StepPart(kind, True, chars=chars, failed_time=True)
    return StepPart(kind, True, chars=chars, timestamp_ms=ms)


def part_of(data: bytes, role: int) -> Part:
    """What a blob's bytes are in one role (`BAD` when they cannot be that)."""
    return decoder(role)(data)


def decoder(role: int) -> Callable[[bytes], Part]:
    """`part_of` in one role, as a function (a loop over many blobs of that role calls it)."""
    return _DECODERS.get(role, _text_len)


def _prompt_part(data: bytes) -> Record | Bad:
    record = record_of(data)
    return BAD if record is None else record


_DECODERS: Final[dict[int, Callable[[bytes], Part]]] = {
    PROMPT: _prompt_part,
    TURN: _turn_part,
    FLAT_TURN: _flat_turn_part,
    USER: _user_part,
    STEP: _step_part,
}


class Parts(Protocol):
    """Where a walk gets blobs from, already decoded in the role asked; None = not stored."""

    reads_ahead: bool  # `prefetch` does something (else the walk does not call it)

    def part(self, key: str, role: int) -> Part | None: ...

    def prefetch(self, keys: list[str], role: int) -> None: ...


class BytesParts:
    """Parts decoded from a bytes lookup as they are asked for (a `prefetch` method of the
    lookup, when it has one, is told what comes)."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self._prefetch = getattr(lookup, "prefetch", None)
        self.reads_ahead = self._prefetch is not None

    def part(self, key: str, role: int) -> Part | None:
        data = self.lookup(key)
        return None if data is None else part_of(data, role)

    def prefetch(self, keys: list[str], role: int) -> None:
        if self._prefetch is not None:
            self._prefetch(keys)


def blob_id(ref: bytes) -> str | None:
    """Hex id of a blob reference (raw 32-byte sha256; a 64-digit hex string also occurs)."""
    if len(ref) == 32:
        return ref.hex()
    if len(ref) == 64:
        text = ref.decode("ascii", "replace").lower()
        if all(c in "0123456789abcdef" for c in text):
            return text
    return None


def blob_key(ref: bytes) -> str:
    """`blob_id`, or "" for a reference that names no blob (a walk counts it unreadable)."""
    return ref.hex() if len(ref) == 32 else blob_id(ref) or ""


def blob_keys(refs: list[bytes]) -> list[str]:
    """`blob_key` of each (one hex conversion when all are 32 bytes: a root's ~100)."""
    if set(map(len, refs)) != {32}:  # (none, or some other length: one by one)
        return [blob_key(ref) for ref in refs]
    joined = b"".join(refs).hex()
    return [joined[at : at + 64] for at in range(0, len(joined), 64)]
