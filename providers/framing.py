"""The framing of our own memo files: a magic line, the body's CRC-32 in hex on a line of its
own, then the body (JSON text, or the memo's own bytes). A damaged file fails the checksum and
is no memo at all."""

from __future__ import annotations

import json
import zlib
from typing import Any


def framed(magic: bytes, body: bytes) -> bytes:
    """The file content for a body (JSON text in UTF-8, or the memo's own bytes)."""
    return b"".join((magic, b"%08x\n" % zlib.crc32(body), body))


def body_at(magic: bytes) -> int:
    """Where a framed file's body starts."""
    return len(magic) + 9


def unframed_body(magic: bytes, data: bytes | None, max_bytes: int) -> memoryview | None:
    """A framed file's body; None unless the magic and the checksum match. The body is trusted
    once its checksum matches: the file is ours (0600, written atomically whole)."""
    if not data or len(data) > max_bytes or not data.startswith(magic):
        return None
    at = len(magic)
    body = memoryview(data)[body_at(magic) :]
    if data[at + 8 : at + 9] != b"\n" or b"%08x" % zlib.crc32(body) != data[at : at + 8]:
        return None
    return body


def unframed(magic: bytes, data: bytes | None, max_bytes: int) -> Any:
    """The JSON value of a framed file's body; None unless the magic and the checksum match
    and the body is JSON (the caller checks its shape)."""
    body = unframed_body(magic, data, max_bytes)
    if body is None:
        return None
    try:
        return json.loads(body.tobytes().decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):
        return None
