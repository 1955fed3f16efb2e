"""Complete lines of a JSONL chunk, shared by the Claude Code and Codex decoders.

A tool appends one JSON object per line. A read may catch the last line while it is being
written: that torn tail is not a line yet, and the caller reads it again with the bytes that
follow (docs/other-tools.md). No line is skipped for its size: real lines with large tool
output carry real usage. A tail without its newline that already parses as one JSON
object is complete (a file its writer ended without a newline): an object's proper prefix
never parses, so no later byte can change it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

# The C scanner of `json.loads`, called on a line's text directly: a line that is one whole
# JSON object in UTF-8 (nearly every line) is decoded without `loads`' encoding detection and
# checks; every other line takes `json.loads` itself, which decides it (equal, by test).
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def complete_end(data: bytes) -> int:
    """How many leading bytes of `data` are whole lines (the rest is a torn tail)."""
    cut = data.rfind(b"\n") + 1
    if cut == len(data):
        return cut
    tail = data[cut:]
    # (only a tail ending in `}` can be an object: a torn 100 MB line is not parsed again)
    if tail.rstrip().endswith(b"}") and parse_object(tail) is not None:
        return len(data)
    return cut


class MarkedLines:
    """(file offset, line) of each line of `data[:end]` that holds one of `markers`, in order,
    found with `bytes.find`: a line that holds none (tool output, most of the bytes) is never
    copied. `drop(marker)` stops looking for one (the lines after that need only the others)."""

    def __init__(self, data: bytes, end: int, base: int, markers: tuple[bytes, ...]) -> None:
        self.data, self.end, self.base = data, end, base
        self.next = {m: data.find(m, 0, end) for m in markers}  # -1: no more

    def drop(self, marker: bytes) -> None:
        self.next[marker] = -1

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        data, end, found = self.data, self.end, self.next
        pos = 0
        while True:
            at = min((i for i in found.values() if i >= 0), default=-1)
            if at < 0:
                return
            before = data.rfind(b"\n", pos, at)
            start = pos if before < 0 else before + 1
            stop = data.find(b"\n", at, end)
            if stop < 0:
                stop = end
            yield self.base + start, data[start:stop]
            pos = stop + 1
            for marker, i in found.items():
                if 0 <= i < pos:
                    found[marker] = data.find(marker, pos, end)


def parse_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object of one line, or None for anything else (garbage, binary, a list)."""
    try:
        text = line.decode()
        value, stop = _SCAN(text, 0)
        if stop == len(text) and type(value) is dict:
            return value
    except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
        pass
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


MAX_COUNT: Final = (1 << 53) - 1  # the largest integer every JSON reader holds exactly


def count(value: object) -> int:
    """A token count as the logs write it; anything that is not an int from 0 to `MAX_COUNT`
    is 0 (no count is larger: a larger one is garbage, and it would not fit the columns)."""
    return value if type(value) is int and 0 <= value <= MAX_COUNT else 0
