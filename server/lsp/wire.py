"""LSP framing below pygls: `Content-Length` header blocks, strictly (no pygls import here).

pygls 2.1 waits forever on a header block without `Content-Length` (it keeps reading "headers").
Here any framing error ends the session with a logged reason: the stream cannot be resynchronised.
The handshake in `lsp_bootstrap` reads with the same rules before pygls is imported.
"""

from __future__ import annotations

import logging
import re
from typing import Final, Protocol

log = logging.getLogger(__name__)

MAX_HEADER_LINE: Final = 8 * 1024
MAX_HEADER_LINES: Final = 32
MAX_BODY: Final = 64 * 1024 * 1024
READ_CHUNK: Final = 1024 * 1024
_TOKEN: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_DIGITS: Final = re.compile(rb"[0-9]+")


class FramingError(ValueError):
    """The byte stream is not LSP's `header block, blank line, body` framing."""


class LineReader(Protocol):
    def readline(self, size: int, /) -> bytes: ...

    def read(self, size: int, /) -> bytes: ...


def _header_lines(stream: LineReader) -> tuple[bytes, list[bytes]] | None:
    """The raw header block and its lines (without line ends); None at end of input."""
    raw, lines = b"", list[bytes]()
    while True:
        line = stream.readline(MAX_HEADER_LINE)
        if not line or (not line.endswith(b"\n") and len(line) < MAX_HEADER_LINE):
            return None  # the client closed the stream
        if not line.endswith(b"\n"):
            raise FramingError(f"a header line longer than {MAX_HEADER_LINE} bytes")
        raw += line
        text = line.rstrip(b"\n").removesuffix(b"\r")
        if not text:
            if lines:
                return raw, lines
            continue  # a stray blank line between messages
        lines.append(text)
        if len(lines) > MAX_HEADER_LINES:
            raise FramingError(f"more than {MAX_HEADER_LINES} header lines")


def _content_length(lines: list[bytes]) -> int:
    length: int | None = None
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise FramingError(f"not a header line: {line[:60]!r}")
        if name.lower() != b"content-length":
            continue
        value = value.strip()
        if not _DIGITS.fullmatch(value) or (length is not None and int(value) != length):
            raise FramingError(f"Content-Length is not one number: {value[:30]!r}")
        length = int(value)
    if length is None:
        raise FramingError("a header block without Content-Length")
    if length > MAX_BODY:
        raise FramingError(f"a message of {length} bytes (this server accepts up to 64 MiB)")
    return length


def read_frame(stream: LineReader) -> tuple[bytes, bytes] | None:
    """One framed message: its raw bytes (to replay) and its body; None at end of input.

    Header names are case-insensitive and a bare `\\n` ends a line, as in HTTP; anything else
    that is not `Content-Length: N` framing raises `FramingError`.
    """
    header = _header_lines(stream)
    if header is None:
        return None
    raw, lines = header
    length = _content_length(lines)
    body = b""
    while len(body) < length:  # in chunks: a huge length must not allocate it up front
        chunk = stream.read(min(READ_CHUNK, length - len(body)))
        if not chunk:
            return None
        body += chunk
    return raw + body, body


class FrameReader:
    """What pygls reads: every message re-framed canonically; a framing error reads as the end."""

    def __init__(self, stream: LineReader) -> None:
        self._stream = stream
        self._pending = b""
        self.error: FramingError | None = None

    def _fill(self) -> bool:
        if self.error is not None:
            return False
        try:
            frame = read_frame(self._stream)
        except FramingError as exc:
            self.error = exc
            log.error("closing the connection: the client sent %s (LSP framing)", exc)
            return False
        if frame is None:
            return False
        body = frame[1]
        self._pending = b"Content-Length: %d\r\n\r\n" % len(body) + body
        return True

    def readline(self) -> bytes:
        if not self._pending and not self._fill():
            return b""
        end = self._pending.find(b"\n") + 1 or len(self._pending)
        line, self._pending = self._pending[:end], self._pending[end:]
        return line

    def read(self, n: int) -> bytes:
        if not self._pending and not self._fill():
            return b""
        chunk, self._pending = self._pending[:n], self._pending[n:]
        return chunk
