"""Protobuf wire format without a schema: a small reader, and an encoder for fixtures.

Cursor 3.x stores conversations as protobuf messages whose `.proto` files are not public, so
fields are read by number (see docs/cursor-3-layout.md). Only the four wire types still in
use are accepted; groups and anything malformed raise `WireError`, never another exception.
Nested messages are plain bytes: a caller decodes them with `fields()` again, and `MAX_DEPTH`
bounds how deep such a walk may go (`nested`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, cast

VARINT: Final = 0
FIXED64: Final = 1
LENGTH: Final = 2
FIXED32: Final = 5

MAX_DEPTH: Final = 32
_MAX_VARINT_BYTES: Final = 10
_MAX_FIELD: Final = (1 << 29) - 1

Value = int | bytes
Field = tuple[int, int, Value]  # (field number, wire type, value)


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it."""
    result = shift = 0
    end = min(len(buf), pos + _MAX_VARINT_BYTES)
    while pos < end:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> 64:
                raise WireError("varint longer than 64 bits")
            return result, pos
        shift += 7
    raise WireError("truncated or overlong varint")


def fields(buf: bytes) -> Iterator[Field]:
    """Every field of one message, in wire order."""
    pos, size = 0, len(buf)
    while pos < size:
        tag = buf[pos]
        if tag < 0x80:  # one-byte tags and lengths are the common case: no call
            pos += 1
        else:
            tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number < 1 or number > _MAX_FIELD:
            raise WireError(f"invalid field number {number}")
        value: Value
        if wire == VARINT:
            value, pos = read_varint(buf, pos)
        elif wire == LENGTH:
            if pos < size and buf[pos] < 0x80:
                length, pos = buf[pos], pos + 1
            else:
                length, pos = read_varint(buf, pos)
            if length > size - pos:
                raise WireError("length-delimited field runs past the end")
            value, pos = buf[pos : pos + length], pos + length
        elif wire == FIXED64:
            if pos + 8 > size:
                raise WireError("truncated 64-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == FIXED32:
            if pos + 4 > size:
                raise WireError("truncated 32-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise WireError(f"unsupported wire type {wire}")
        yield number, wire, value


def parse(buf: bytes) -> dict[int, list[Value]]:  # noqa: PLR0915 - the wire loop, inlined for speed
    """Field number → its values in wire order (the whole message is checked first).

    The loop of `fields`, inlined for speed (graphs parse ~100k messages, and a generator per
    message and a tuple per field are a large share of decoding); property-tested equal to
    `fields` field by field (tests/providers/test_protobuf_wire.py)."""
    out: dict[int, list[Value]] = {}
    pos, size = 0, len(buf)
    while pos < size:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number < 1 or number > _MAX_FIELD:
            raise WireError(f"invalid field number {number}")
        value: Value
        if wire == LENGTH:
            if pos < size and buf[pos] < 0x80:
                length, pos = buf[pos], pos + 1
            else:
                length, pos = read_varint(buf, pos)
            if length > size - pos:
                raise WireError("length-delimited field runs past the end")
            value, pos = buf[pos : pos + length], pos + length
            if length == _REF and tag < 0x80 and buf[pos : pos + 2] == bytes((tag, _REF)):
                pos = _ref_run(buf, pos, out.setdefault(number, []), value)
                continue
        elif wire == VARINT:
            if pos < size and buf[pos] < 0x80:
                value, pos = buf[pos], pos + 1
            else:
                value, pos = read_varint(buf, pos)
        elif wire == FIXED64:
            if pos + 8 > size:
                raise WireError("truncated 64-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == FIXED32:
            if pos + 4 > size:
                raise WireError("truncated 32-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise WireError(f"unsupported wire type {wire}")
        values = out.get(number)
        if values is None:
            out[number] = [value]
        else:
            values.append(value)
    return out


_REF: Final = 32  # the length of a blob reference (a raw sha256)
_REF_FIELD: Final = 2 + _REF  # a one-byte tag, the length, the reference


def _ref_run(buf: bytes, pos: int, values: list[Value], first: bytes) -> int:
    """`parse` of a 32-byte value `first` and of the fields at `pos` that repeat its one-byte
    tag and length (a root lists its ~100 blob references so): all appended to `values`, the
    position after them returned. Tags and lengths are read by stride, not field by field:
    the run ends at the first element whose tag or length differs (or that would pass the
    end), where `parse` goes on as usual."""
    values.append(first)
    most = (len(buf) - pos) // _REF_FIELD
    tags = buf[pos : pos + _REF_FIELD * most : _REF_FIELD]
    lengths = buf[pos + 1 : pos + _REF_FIELD * most : _REF_FIELD]
    run = min(len(tags) - len(tags.lstrip(tags[:1])), len(lengths) - len(lengths.lstrip(b" ")))
    end = pos + _REF_FIELD * run
    values += [buf[at : at + _REF] for at in range(pos + 2, end, _REF_FIELD)]
    return end


def parse_first(buf: bytes) -> dict[int, Value]:
    """Field number → its first value (`parse` without lists: the whole message is checked
    the same way, and `first_bytes`/`first_int` of `parse` are the type checks of this).
    The wire loop is `parse`'s, kept inline for speed (a call per field cost a third of the
    decoding): change the two together (tests/providers/test_agent_graph.py compares them)."""
    out: dict[int, Value] = {}
    pos, size = 0, len(buf)
    while pos < size:
        tag = buf[pos]
        if tag < 0x80:
            pos += 1
        else:
            tag, pos = read_varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if number < 1 or number > _MAX_FIELD:
            raise WireError(f"invalid field number {number}")
        value: Value
        if wire == LENGTH:
            if pos < size and buf[pos] < 0x80:
                length, pos = buf[pos], pos + 1
            else:
                length, pos = read_varint(buf, pos)
            if length > size - pos:
                raise WireError("length-delimited field runs past the end")
            value, pos = buf[pos : pos + length], pos + length
        elif wire == VARINT:
            if pos < size and buf[pos] < 0x80:
                value, pos = buf[pos], pos + 1
            else:
                value, pos = read_varint(buf, pos)
        elif wire == FIXED64:
            if pos + 8 > size:
                raise WireError("truncated 64-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == FIXED32:
            if pos + 4 > size:
                raise WireError("truncated 32-bit field")
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise WireError(f"unsupported wire type {wire}")
        if number not in out:
            out[number] = value
    return out


def nested(buf: bytes, depth: int) -> dict[int, list[Value]]:
    """`parse` for a message found `depth` levels below a root; refuses to go past MAX_DEPTH."""
    if depth > MAX_DEPTH:
        raise WireError(f"messages nested deeper than {MAX_DEPTH} levels")
    return parse(buf)


def first_bytes(msg: dict[int, list[Value]], number: int) -> bytes | None:
    """The first length-delimited value of a field, or None (a varint there is malformed)."""
    for value in msg.get(number, ()):
        if isinstance(value, bytes):
            return value
        raise WireError(f"field {number} is not length-delimited")
    return None


def first_int(msg: dict[int, list[Value]], number: int) -> int | None:
    """The first numeric value of a field, or None (bytes there are malformed)."""
    for value in msg.get(number, ()):
        if isinstance(value, int):
            return value
        raise WireError(f"field {number} is not a number")
    return None


def all_bytes(msg: dict[int, list[Value]], number: int) -> list[bytes]:
    """Every length-delimited value of a repeated field (a new list)."""
    values = msg.get(number, [])
    if int in set(map(type, values)):  # (a value is an int or bytes: one check in C)
        raise WireError(f"field {number} is not length-delimited")
    return cast(list[bytes], values[:])


# -- encoder (fixtures and sample data) --------------------------------------------------------


def encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # two's complement, as protobuf encodes negative int64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return encode_varint(number << 3 | wire)


def varint_field(number: int, value: int) -> bytes:
    return _tag(number, VARINT) + encode_varint(value)


def bytes_field(number: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _tag(number, LENGTH) + encode_varint(len(data)) + data


def fixed64_field(number: int, value: int) -> bytes:
    return _tag(number, FIXED64) + value.to_bytes(8, "little")


def fixed32_field(number: int, value: int) -> bytes:
    return _tag(number, FIXED32) + value.to_bytes(4, "little")


def message(*parts: bytes) -> bytes:
    """Concatenated fields form a message."""
    return b"".join(parts)
